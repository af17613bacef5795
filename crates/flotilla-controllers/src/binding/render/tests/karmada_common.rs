//! Karmada's binding controller cases (`pkg/controllers/binding/common_test.go`) restated
//! against rendering: target clusters, the binding's labels and annotations on the Work and its
//! manifest, conflict resolution, suspension and Job completions. Not restated:
//! `TestBuildJobCompletionsMap` (a Go map helper), the error cases of
//! `Test_divideReplicasByJobCompletions` (`spec` not an object) and `TestApplyJobCompletions`
//! (a cluster missing from the completions map), which cannot happen here: shares are
//! computed for every target, and a Job's `spec` is an object.

use super::*;

fn rb(id: &str) -> BindingRef {
    BindingRef::Namespaced {
        namespace: "fake-ns".into(),
        name: "fake-bindingName".into(),
        id: id.into(),
    }
}

fn crb(id: &str) -> BindingRef {
    BindingRef::Cluster {
        name: "fake-bindingName".into(),
        id: id.into(),
    }
}

fn rendered(template: &Value, binding: &BindingRef, spec: &ResourceBindingSpec) -> Work {
    let cluster = cluster("member1");
    let input = RenderInput {
        binding,
        spec,
        cluster: &cluster,
        replicas: None,
        cluster_overrides: vec![],
        overrides: vec![],
        injected_labels: None,
    };
    render_work(template, &input).expect("renders")
}

#[test]
fn required_by_clusters_not_scheduled_are_appended() {
    let table = [
        (
            "the same cluster",
            json!({"clusters": [{"name": "foo", "replicas": 1}],
                "requiredBy": [{"clusters": [{"name": "foo", "replicas": 1}]}]}),
            vec![("foo", 1)],
        ),
        (
            "different clusters",
            json!({"clusters": [{"name": "foo", "replicas": 1}],
                "requiredBy": [{"clusters": [{"name": "bar", "replicas": 1}]}]}),
            vec![("foo", 1), ("bar", 1)],
        ),
    ];
    for (desc, value, want) in table {
        let want: Vec<(String, Option<i32>)> = want
            .into_iter()
            .map(|(n, r)| (n.to_owned(), Some(r)))
            .collect();
        assert_eq!(render_targets(&spec(value)), want, "{desc}");
    }
}

const RB_ID: &str = "93162d3c-ee8e-4995-9034-05f4d5d2c2b9";

#[test]
fn a_resource_bindings_work_carries_its_id_namespace_and_name() {
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "demo-deployment", "namespace": "fake-ns"}});
    let work = rendered(&deployment, &rb(RB_ID), &spec(json!({})));
    assert_eq!(
        serde_json::to_value(&work.metadata.labels).expect("json"),
        json!({"resourcebinding.karmada.io/permanent-id": RB_ID})
    );
    assert_eq!(
        serde_json::to_value(&work.metadata.annotations).expect("json"),
        json!({"resourcebinding.karmada.io/namespace": "fake-ns",
            "resourcebinding.karmada.io/name": "fake-bindingName",
            "work.karmada.io/conflict-resolution": "abort"})
    );
    let name = work_name("Deployment", "demo-deployment", "fake-ns");
    assert_eq!(work.metadata.name.as_deref(), Some(name.as_str()));
    assert_eq!(
        work.spec.workload.manifests[0].to_value()["metadata"],
        json!({"name": "demo-deployment", "namespace": "fake-ns",
            "labels": {"karmada.io/managed": "true",
                "resourcebinding.karmada.io/permanent-id": RB_ID},
            "annotations": {"resourcetemplate.karmada.io/uid": "",
                "work.karmada.io/name": name,
                "work.karmada.io/namespace": "karmada-es-member1",
                "resourcebinding.karmada.io/namespace": "fake-ns",
                "resourcebinding.karmada.io/name": "fake-bindingName",
                "work.karmada.io/conflict-resolution": "abort"}})
    );
}

#[test]
fn a_cluster_resource_bindings_work_carries_its_id_and_name() {
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "demo-ns", "uid": "ns-uid", "generation": 0}});
    let work = rendered(&namespace, &crb(RB_ID), &spec(json!({})));
    assert_eq!(
        serde_json::to_value(&work.metadata.labels).expect("json"),
        json!({"clusterresourcebinding.karmada.io/permanent-id": RB_ID})
    );
    assert_eq!(
        serde_json::to_value(&work.metadata.annotations).expect("json"),
        json!({"clusterresourcebinding.karmada.io/name": "fake-bindingName",
            "work.karmada.io/conflict-resolution": "abort"})
    );
    let name = work_name("Namespace", "demo-ns", "");
    assert_eq!(
        work.spec.workload.manifests[0].to_value()["metadata"],
        json!({"name": "demo-ns",
            "labels": {"karmada.io/managed": "true",
                "clusterresourcebinding.karmada.io/permanent-id": RB_ID},
            "annotations": {"resourcetemplate.karmada.io/uid": "ns-uid",
                "work.karmada.io/name": name,
                "work.karmada.io/namespace": "karmada-es-member1",
                "clusterresourcebinding.karmada.io/name": "fake-bindingName",
                "work.karmada.io/conflict-resolution": "abort"}})
    );
}

#[test]
fn the_templates_valid_conflict_resolution_wins_over_the_bindings() {
    let table = [
        ("EmptyInRT_OverwriteInRB", None, "Overwrite", "overwrite"),
        ("EmptyInRT_AbortInRB", None, "Abort", "abort"),
        (
            "OverwriteInRT_AbortInPP",
            Some("overwrite"),
            "Abort",
            "overwrite",
        ),
        (
            "AbortInRT_OverwriteInPP",
            Some("abort"),
            "Overwrite",
            "abort",
        ),
        (
            "InvalidInRT_OverwriteInPP",
            Some("unknown"),
            "Overwrite",
            "overwrite",
        ),
    ];
    for (desc, in_template, in_binding, want) in table {
        let mut workload = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "test-deployment", "namespace": "fake-ns"}});
        if let Some(value) = in_template {
            workload["metadata"]["annotations"] =
                json!({"work.karmada.io/conflict-resolution": value});
        }
        let spec = spec(json!({"conflictResolution": in_binding}));
        assert_eq!(conflict_resolution(&workload, &spec), want, "{desc}");
        // The Work and its manifest both carry it.
        let work = rendered(&workload, &rb("rb-1"), &spec);
        assert_eq!(
            work.metadata.annotations.as_ref().expect("annotations")["work.karmada.io/conflict-resolution"],
            want,
            "{desc}"
        );
        assert_eq!(
            work.spec.workload.manifests[0].to_value()["metadata"]["annotations"]["work.karmada.io/conflict-resolution"],
            want,
            "{desc}"
        );
    }
}

#[test]
fn dispatching_is_suspended_by_the_flag_or_by_naming_the_cluster() {
    let table = [
        ("false for nil suspension", json!(null), "", false),
        ("false for nil dispatching", json!({}), "", false),
        (
            "false for not suspension",
            json!({"dispatching": false}),
            "",
            false,
        ),
        (
            "true for suspension",
            json!({"dispatching": true}),
            "",
            true,
        ),
        (
            "true for matching cluster",
            json!({"dispatchingOnClusters": {"clusterNames": ["clusterA"]}}),
            "clusterA",
            true,
        ),
        (
            "false for mismatched cluster",
            json!({"dispatchingOnClusters": {"clusterNames": ["clusterB"]}}),
            "clusterA",
            false,
        ),
    ];
    for (desc, suspension, cluster, want) in table {
        let spec = spec(json!({"suspension": suspension}));
        assert_eq!(dispatching_suspended(&spec, cluster), want, "{desc}");
    }
}

#[test]
fn preserving_resources_on_deletion_is_always_written() {
    for (preserve, want) in [
        (json!(null), false),
        (json!(false), false),
        (json!(true), true),
    ] {
        let spec = spec(json!({"preserveResourcesOnDeletion": preserve}));
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "fake-ns"}});
        let work = rendered(&config, &rb("rb-1"), &spec);
        assert_eq!(
            work.spec.preserve_resources_on_deletion,
            Some(want),
            "{preserve}"
        );
    }
}

fn completions_job(completions: i64) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "test-job"},
        "spec": {"completions": completions, "parallelism": 2}})
}

#[test]
fn completions_are_divided_only_for_a_divided_job_with_replicas() {
    let divided = json!({"replicaScheduling": {"replicaSchedulingType": "Divided"}});
    let duplicated = json!({"replicaScheduling": {"replicaSchedulingType": "Duplicated"}});
    let table = [
        ("replicas is zero", 0, divided.clone(), false),
        ("placement is nil", 1, json!(null), false),
        (
            "replica scheduling type is not divided",
            1,
            duplicated,
            false,
        ),
        ("replica scheduling type is divided", 1, divided, true),
    ];
    for (desc, replicas, placement, want) in table {
        let spec = spec(json!({"replicas": replicas, "placement": placement,
            "clusters": [{"name": "member1", "replicas": 1}]}));
        let share = divided_job_completions(&completions_job(10), &spec, "member1");
        assert_eq!(share.is_some(), want, "{desc}");
    }
}

#[test]
fn completions_are_spread_by_the_clusters_replicas() {
    let spec = spec(json!({"replicas": 10,
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}},
        "clusters": [{"name": "cluster1", "replicas": 5}, {"name": "cluster2", "replicas": 5}]}));
    for cluster in ["cluster1", "cluster2"] {
        assert_eq!(
            divided_job_completions(&completions_job(10), &spec, cluster),
            Some(5),
            "{cluster}"
        );
    }
    // `TestApplyJobCompletions`: cluster-a's share (6 of 10) replaces the template's 10.
    let spec = spec_with_clusters(&[("cluster-a", 6), ("cluster-b", 4)]);
    let binding = rb("rb-1");
    let cluster = cluster("cluster-a");
    let input = RenderInput {
        binding: &binding,
        spec: &spec,
        cluster: &cluster,
        replicas: None,
        cluster_overrides: vec![],
        overrides: vec![],
        injected_labels: None,
    };
    let manifest = render_work(&completions_job(10), &input)
        .expect("renders")
        .spec
        .workload
        .manifests[0]
        .to_value();
    assert_eq!(manifest["spec"]["completions"], 6);
    assert_eq!(manifest["spec"]["parallelism"], 2);
}

fn spec_with_clusters(clusters: &[(&str, i32)]) -> ResourceBindingSpec {
    let clusters: Vec<Value> = clusters
        .iter()
        .map(|(name, replicas)| json!({"name": name, "replicas": replicas}))
        .collect();
    spec(json!({"replicas": 10,
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}},
        "clusters": clusters}))
}

#[test]
fn preserved_labels_of_a_failover_cannot_unset_the_managed_label() {
    let preserved = BTreeMap::from([
        ("karmada.io/managed".to_owned(), "false".to_owned()),
        ("app.io/leader".to_owned(), "member2".to_owned()),
    ]);
    let spec = spec(json!({}));
    let binding = rb("rb-1");
    let cluster = cluster("member1");
    let input = RenderInput {
        binding: &binding,
        spec: &spec,
        cluster: &cluster,
        replicas: None,
        cluster_overrides: vec![],
        overrides: vec![],
        injected_labels: Some(&preserved),
    };
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "fake-ns"}});
    let manifest = render_work(&config, &input)
        .expect("renders")
        .spec
        .workload
        .manifests[0]
        .to_value();
    assert_eq!(
        manifest["metadata"]["labels"],
        json!({"karmada.io/managed": "true", "app.io/leader": "member2",
            "resourcebinding.karmada.io/permanent-id": "rb-1"})
    );
}
