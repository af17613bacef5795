use flotilla_api::karmada::{Cluster, OverridePolicy, ResourceBindingSpec};
use serde_json::{Value, json};

use super::*;

// Karmada's own existing-cluster cases (`binding_test.go`), restated.
mod karmada_clusters;
// Karmada's binding controller cases (`pkg/controllers/binding/common_test.go`), restated.
mod karmada_common;

fn template() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "uid": "u-1", "generation": 4,
            "resourceVersion": "77", "labels": {"app": "nginx"},
            "annotations": {"deployment.kubernetes.io/revision": "3"},
            "managedFields": [{"manager": "kubectl"}], "finalizers": ["x"]},
        "spec": {"replicas": 10, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}},
        "status": {"readyReplicas": 10}})
}

fn spec(value: Value) -> ResourceBindingSpec {
    serde_json::from_value(value).expect("spec")
}

fn cluster(name: &str) -> Cluster {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("cluster")
}

fn binding() -> BindingRef {
    BindingRef::Namespaced {
        namespace: "default".into(),
        name: "nginx-deployment".into(),
        id: "rb-1".into(),
    }
}

#[test]
fn the_work_carries_karmadas_names_labels_and_annotations() {
    let spec = spec(
        json!({"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"},
        "replicas": 10, "clusters": [{"name": "member1", "replicas": 6}]}),
    );
    let binding = binding();
    let cluster = cluster("member1");
    let input = RenderInput {
        binding: &binding,
        spec: &spec,
        cluster: &cluster,
        replicas: Some(6),
        cluster_overrides: vec![],
        overrides: vec![],
        injected_labels: None,
    };
    let work = render_work(&template(), &input).expect("renders");
    assert_eq!(work.metadata.name.as_deref(), Some("nginx-687f7fb96f"));
    assert_eq!(
        work.metadata.namespace.as_deref(),
        Some("karmada-es-member1")
    );
    assert_eq!(
        work.metadata.finalizers,
        Some(vec!["karmada.io/execution-controller".to_owned()])
    );
    assert_eq!(
        serde_json::to_value(&work.metadata.labels).expect("json"),
        json!({"resourcebinding.karmada.io/permanent-id": "rb-1"})
    );
    assert_eq!(
        serde_json::to_value(&work.metadata.annotations).expect("json"),
        json!({"resourcebinding.karmada.io/name": "nginx-deployment",
            "resourcebinding.karmada.io/namespace": "default",
            "work.karmada.io/conflict-resolution": "abort"})
    );
    let manifest = work.spec.workload.manifests[0].to_value();
    assert_eq!(manifest["spec"]["replicas"], 6);
    assert!(manifest.get("status").is_none());
    assert_eq!(
        manifest["metadata"],
        json!({"name": "nginx", "namespace": "default",
            "labels": {"app": "nginx", "karmada.io/managed": "true",
                "resourcebinding.karmada.io/permanent-id": "rb-1"},
            "annotations": {
                "resourcetemplate.karmada.io/uid": "u-1",
                "work.karmada.io/name": "nginx-687f7fb96f",
                "work.karmada.io/namespace": "karmada-es-member1",
                "resourcebinding.karmada.io/namespace": "default",
                "resourcebinding.karmada.io/name": "nginx-deployment",
                "resourcetemplate.karmada.io/generation": "4",
                "work.karmada.io/conflict-resolution": "abort"}})
    );
    assert_eq!(work.spec.suspend_dispatching, Some(false));
    assert_eq!(work.spec.preserve_resources_on_deletion, Some(false));
}

#[test]
fn conflict_resolution_suspension_and_preservation_come_from_the_binding() {
    let spec = spec(json!({"replicas": 10, "conflictResolution": "Overwrite",
        "preserveResourcesOnDeletion": true,
        "suspension": {"dispatchingOnClusters": {"clusterNames": ["member2"]}}}));
    let binding = binding();
    let render = |name: &str| {
        let cluster = cluster(name);
        let input = RenderInput {
            binding: &binding,
            spec: &spec,
            cluster: &cluster,
            replicas: Some(1),
            cluster_overrides: vec![],
            overrides: vec![],
            injected_labels: None,
        };
        render_work(&template(), &input).expect("renders")
    };
    let one = render("member1");
    assert_eq!(one.spec.suspend_dispatching, Some(false));
    assert_eq!(one.spec.preserve_resources_on_deletion, Some(true));
    assert_eq!(
        one.spec.workload.manifests[0].to_value()["metadata"]["annotations"]["work.karmada.io/conflict-resolution"],
        "overwrite"
    );
    assert_eq!(render("member2").spec.suspend_dispatching, Some(true));
    // A valid template annotation wins over the binding.
    let mut annotated = template();
    annotated["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] = json!("abort");
    assert_eq!(conflict_resolution(&annotated, &spec), "abort");
    annotated["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] = json!("bogus");
    assert_eq!(conflict_resolution(&annotated, &spec), "overwrite");
}

#[test]
fn overrides_are_applied_and_recorded_and_failures_name_the_policy() {
    let spec = spec(json!({"replicas": 10}));
    let binding = binding();
    let cluster = cluster("member1");
    let good: OverridePolicy = serde_json::from_value(json!({
        "metadata": {"name": "images", "namespace": "default"},
        "spec": {"overrideRules": [{"targetCluster": {"clusterNames": ["member1"]},
            "overriders": {"imageOverrider": [{"component": "Registry", "operator": "replace", "value": "mirror.example.com"}]}}]}}))
    .expect("op");
    let input = RenderInput {
        binding: &binding,
        spec: &spec,
        cluster: &cluster,
        replicas: Some(10),
        cluster_overrides: vec![],
        overrides: vec![PolicyRef::from(&good)],
        injected_labels: None,
    };
    let work = render_work(&template(), &input).expect("renders");
    assert_eq!(
        work.spec.workload.manifests[0].to_value()["spec"]["template"]["spec"]["containers"][0]["image"],
        "mirror.example.com/nginx"
    );
    assert!(
        work.metadata
            .annotations
            .as_ref()
            .expect("annotations")
            .contains_key("policy.karmada.io/applied-overrides")
    );
    let bad: OverridePolicy = serde_json::from_value(json!({
        "metadata": {"name": "broken", "namespace": "default"},
        "spec": {"overrideRules": [{"overriders": {"plaintext": [
            {"path": "/spec/nothing/here", "operator": "replace", "value": 1}]}}]}}))
    .expect("op");
    let input = RenderInput {
        overrides: vec![PolicyRef::from(&bad)],
        injected_labels: None,
        ..input
    };
    let error = render_work(&template(), &input).expect_err("fails");
    assert!(error.to_string().contains("policy broken"), "{error}");
}

#[test]
fn non_workloads_keep_their_spec() {
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default"}, "data": {"a": "b"}});
    let spec = spec(json!({}));
    let binding = binding();
    let cluster = cluster("member1");
    let input = RenderInput {
        binding: &binding,
        spec: &spec,
        cluster: &cluster,
        replicas: Some(0),
        cluster_overrides: vec![],
        overrides: vec![],
        injected_labels: None,
    };
    let work = render_work(&config, &input).expect("renders");
    assert_eq!(
        work.spec.workload.manifests[0].to_value()["data"],
        json!({"a": "b"})
    );
    assert!(
        work.spec.workload.manifests[0]
            .to_value()
            .get("spec")
            .is_none()
    );
}

fn configmap_input<'a>(
    binding: &'a BindingRef,
    spec: &'a ResourceBindingSpec,
    cluster: &'a Cluster,
) -> RenderInput<'a> {
    RenderInput {
        binding,
        spec,
        cluster,
        replicas: None,
        cluster_overrides: vec![],
        overrides: vec![],
        injected_labels: None,
    }
}

/// Karmada's `mergeAnnotations` writes `resourcetemplate.karmada.io/generation` only when the
/// template's generation is positive (a ConfigMap has none).
#[test]
fn a_template_without_generation_gets_no_generation_annotation() {
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default", "uid": "u-2"}, "data": {"a": "b"}});
    let spec = spec(json!({}));
    let binding = binding();
    let cluster = cluster("member1");
    let work = render_work(&config, &configmap_input(&binding, &spec, &cluster)).expect("renders");
    let manifest = work.spec.workload.manifests[0].to_value();
    let annotations = manifest["metadata"]["annotations"]
        .as_object()
        .expect("annotations");
    assert!(
        !annotations.contains_key("resourcetemplate.karmada.io/generation"),
        "{annotations:?}"
    );
    assert_eq!(annotations["resourcetemplate.karmada.io/uid"], "u-2");
}

/// Karmada's `ensureWork` reads the conflict resolution from the workload after overrides, so
/// an override can set `work.karmada.io/conflict-resolution` for one cluster.
#[test]
fn an_override_can_set_the_conflict_resolution() {
    let spec = spec(json!({"replicas": 10}));
    let binding = binding();
    let cluster = cluster("member1");
    let policy: OverridePolicy = serde_json::from_value(json!({
        "metadata": {"name": "take-over", "namespace": "default"},
        "spec": {"overrideRules": [{"overriders": {"annotationsOverrider": [
            {"operator": "add", "value": {"work.karmada.io/conflict-resolution": "overwrite"}}]}}]}}))
    .expect("op");
    let input = RenderInput {
        binding: &binding,
        spec: &spec,
        cluster: &cluster,
        replicas: Some(10),
        cluster_overrides: vec![],
        overrides: vec![PolicyRef::from(&policy)],
        injected_labels: None,
    };
    let work = render_work(&template(), &input).expect("renders");
    assert_eq!(
        work.metadata.annotations.as_ref().expect("annotations")["work.karmada.io/conflict-resolution"],
        "overwrite"
    );
    assert_eq!(
        work.spec.workload.manifests[0].to_value()["metadata"]["annotations"]["work.karmada.io/conflict-resolution"],
        "overwrite"
    );
}

fn job(completions: Option<i64>) -> Value {
    let mut job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "uid": "u-job", "generation": 1},
        "spec": {"parallelism": 6,
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}}});
    if let Some(completions) = completions {
        job["spec"]["completions"] = completions.into();
    }
    job
}

fn job_spec(scheduling: &str) -> ResourceBindingSpec {
    spec(
        json!({"resource": {"apiVersion": "batch/v1", "kind": "Job", "name": "pi"},
        "replicas": 6,
        "placement": {"replicaScheduling": {"replicaSchedulingType": scheduling}},
        "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 2},
            {"name": "member3", "replicas": 3}]}),
    )
}

fn job_manifest(template: &Value, spec: &ResourceBindingSpec, name: &str, replicas: i32) -> Value {
    let binding = binding();
    let cluster = cluster(name);
    let input = RenderInput {
        replicas: Some(replicas),
        ..configmap_input(&binding, spec, &cluster)
    };
    render_work(template, &input)
        .expect("renders")
        .spec
        .workload
        .manifests[0]
        .to_value()
}

/// Karmada's binding controller divides a Divided Job's completions over the target clusters by
/// their replicas (Webster), so the members run the template's completions between them, not
/// each.
#[test]
fn a_divided_jobs_completions_are_divided_by_the_clusters_replicas() {
    let spec = job_spec("Divided");
    let template = job(Some(10));
    let shares: Vec<_> = ["member1", "member2", "member3"]
        .iter()
        .map(|c| divided_job_completions(&template, &spec, c))
        .collect();
    // Sainte-Laguë over weights 1:2:3 for 10 seats.
    assert_eq!(shares, vec![Some(2), Some(3), Some(5)]);
    let manifest = job_manifest(&template, &spec, "member2", 2);
    assert_eq!(manifest["spec"]["parallelism"], 2);
    assert_eq!(manifest["spec"]["completions"], 3);
    // Karmada's e2e case: completions = parallelism = the sum of the weights.
    let template = job(Some(6));
    for (cluster, share) in [("member1", 1), ("member2", 2), ("member3", 3)] {
        let manifest = job_manifest(&template, &spec, cluster, share);
        assert_eq!(manifest["spec"]["completions"], share, "{cluster}");
        assert_eq!(manifest["spec"]["parallelism"], share, "{cluster}");
    }
}

#[test]
fn completions_stay_whole_when_duplicated_and_absent_when_the_job_has_none() {
    let duplicated = job_spec("Duplicated");
    let pi = job(Some(10));
    assert_eq!(divided_job_completions(&pi, &duplicated, "member1"), None);
    let manifest = job_manifest(&pi, &duplicated, "member1", 6);
    assert_eq!(manifest["spec"]["completions"], 10);
    // A work-queue Job leaves completions unset; so does its Work.
    let divided = job_spec("Divided");
    let manifest = job_manifest(&job(None), &divided, "member3", 3);
    assert!(manifest["spec"].get("completions").is_none(), "{manifest}");
    // Only Jobs: a Deployment's fields are never touched.
    assert_eq!(
        divided_job_completions(&template(), &divided, "member1"),
        None
    );
}

#[test]
fn clusters_of_requiring_bindings_share_the_completions() {
    let mut spec = job_spec("Divided");
    spec.clusters.truncate(1);
    spec.required_by = serde_json::from_value(json!([{"namespace": "default", "name": "a",
        "clusters": [{"name": "member1", "replicas": 5}, {"name": "member4", "replicas": 1}]}]))
    .expect("snapshots");
    let template = job(Some(4));
    // member1 keeps its scheduled weight (1); member4 comes from the requiring binding.
    assert_eq!(
        divided_job_completions(&template, &spec, "member1"),
        Some(2)
    );
    assert_eq!(
        divided_job_completions(&template, &spec, "member4"),
        Some(2)
    );
}
