use serde_json::json;

use super::*;

#[test]
fn cluster_round_trips_with_karmada_field_names() {
    let input = json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "member1"},
        "spec": {"syncMode": "Push", "apiEndpoint": "https://x", "proxyURL": "http://p",
                 "insecureSkipTLSVerification": true,
                 "zones": ["a"], "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
                 "resourceModels": [{"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}]}]},
        "status": {
            "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
            "resourceSummary": {"allocatable": {"cpu": "10", "pods": "110"},
                                 "allocatableModelings": [{"grade": 0, "count": 2}]}
        }
    });
    let cluster: Cluster = serde_json::from_value(input.clone()).expect("decode");
    assert_eq!(cluster.spec.proxy_url, "http://p");
    assert!(cluster.spec.insecure_skip_tls_verification);
    assert_eq!(serde_json::to_value(&cluster).expect("encode"), input);
}

#[test]
fn binding_round_trips_odd_names() {
    let input = json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "nginx-deployment", "namespace": "default"},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx", "uid": "u"},
            "replicas": 3,
            "clusters": [{"name": "m1", "replicas": 2}, {"name": "m2"}],
            "placement": {"clusterAffinities": [{"affinityName": "a", "clusterNames": ["m1"],
                "exclude": ["m3"], "overflowAffinities": [{"affinityName": "o", "clusterNames": ["m2"]}]}]},
            "rescheduleTriggeredAt": "2026-01-01T00:00:00Z",
            "suspension": {"dispatching": true, "scheduling": false},
            "schedulePriority": {"priority": 5}
        },
        "status": {"schedulerObservingAffinityName": "a", "schedulerObservedGeneration": 2}
    });
    let rb: ResourceBinding = serde_json::from_value(input.clone()).expect("decode");
    let terms = rb
        .spec
        .placement
        .as_ref()
        .and_then(|p| p.cluster_affinities.as_ref())
        .expect("terms");
    assert_eq!(terms[0].cluster_affinity.exclude, ["m3"]);
    assert_eq!(
        terms[0].overflow_affinities[0]
            .cluster_affinity
            .cluster_names,
        ["m2"]
    );
    assert_eq!(serde_json::to_value(&rb).expect("encode"), input);
}

#[test]
fn kinds_implement_k8s_openapi_resource() {
    use k8s_openapi::{ListableResource, Resource};
    assert_eq!(Cluster::API_VERSION, "cluster.karmada.io/v1alpha1");
    assert_eq!(Cluster::URL_PATH_SEGMENT, "clusters");
    assert_eq!(
        ClusterPropagationPolicy::LIST_KIND,
        "ClusterPropagationPolicyList"
    );
    assert_eq!(ResourceBinding::GROUP, "work.karmada.io");
    assert_eq!(ClusterResourceBinding::VERSION, "v1alpha2");
    assert_eq!(PropagationPolicy::URL_PATH_SEGMENT, "propagationpolicies");
}

#[test]
fn policy_defaults_match_the_webhook() {
    let mut spec: PropagationSpec = serde_json::from_value(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"},
                      "spreadConstraints": [{"maxGroups": 2}, {"spreadByField": "region", "minGroups": 2}]}
    }))
    .expect("decode");
    spec.apply_defaults();
    let strategy = spec
        .placement
        .replica_scheduling
        .as_ref()
        .expect("strategy");
    assert_eq!(strategy.replica_division_preference, DIVISION_WEIGHTED);
    assert_eq!(
        spec.placement.spread_constraints[0].spread_by_field,
        SPREAD_BY_CLUSTER
    );
    assert_eq!(spec.placement.spread_constraints[0].min_groups, 1);
    assert_eq!(spec.placement.spread_constraints[1].min_groups, 2);
    let duplicated = Placement::default();
    assert_eq!(
        duplicated.replica_scheduling_type(),
        REPLICA_SCHEDULING_DUPLICATED
    );
}

#[test]
fn api_enablement_needs_complete_condition_to_say_disabled() {
    let mut cluster: Cluster = serde_json::from_value(json!({
        "metadata": {"name": "m"}, "spec": {"syncMode": "Push"},
        "status": {"apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]}
    }))
    .expect("decode");
    assert_eq!(
        cluster.api_enablement("apps/v1", "Deployment"),
        ApiEnablementStatus::Enabled
    );
    assert_eq!(
        cluster.api_enablement("batch/v1", "Job"),
        ApiEnablementStatus::Unknown
    );
    cluster.status.as_mut().expect("status").conditions.push(
        serde_json::from_value(json!({"type": "CompleteAPIEnablements", "status": "True",
            "reason": "Complete", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}))
        .expect("condition"),
    );
    assert_eq!(
        cluster.api_enablement("batch/v1", "Job"),
        ApiEnablementStatus::Disabled
    );
}

#[test]
fn server_defaults_move_zone_and_fill_models() {
    let mut cluster: Cluster = serde_json::from_value(json!({
        "metadata": {"name": "m"}, "spec": {"syncMode": "Push", "zone": "z1"}}))
    .expect("decode");
    cluster.apply_server_defaults();
    assert_eq!(cluster.spec.zones, ["z1"]);
    assert!(cluster.spec.zone.is_empty());
    let models = &cluster.spec.resource_models;
    assert_eq!(models.len(), 9);
    assert_eq!(models[3].ranges[0].min.to_string(), "4");
    assert_eq!(models[3].ranges[1].min.to_string(), "32Gi");
    assert_eq!(models[8].ranges[0].min.to_string(), "128");

    let mut custom: Cluster = serde_json::from_value(json!({
        "metadata": {"name": "m"}, "spec": {"syncMode": "Push", "resourceModels": [
            {"grade": 2, "ranges": [{"name": "cpu", "min": "4", "max": "8"}]},
            {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "4"}]}]}}))
    .expect("decode");
    custom.apply_server_defaults();
    let models = &custom.spec.resource_models;
    assert_eq!(
        (models[0].grade, models[0].ranges[0].min.to_string()),
        (1, "0".to_owned())
    );
    assert_eq!(models[1].ranges[0].max.as_i64(), Some(i64::MAX));
}

#[test]
fn work_manifests_round_trip_as_compact_json_through_any_decoder() {
    let input = json!({
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "w", "namespace": "karmada-es-m1"},
        "spec": {"workload": {"manifests": [
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "d", "namespace": "n"}, "spec": {"replicas": 3}},
            {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}
        ]}}
    });
    let text = input.to_string();
    let from_text: Work = serde_json::from_str(&text).expect("from text");
    let from_value: Work = serde_json::from_value(input.clone()).expect("from value");
    assert_eq!(from_text, from_value);
    let manifest = &from_text.spec.workload.manifests[0];
    assert_eq!(
        manifest.json(),
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"n"},"spec":{"replicas":3}}"#
    );
    assert_eq!(manifest.to_value()["spec"]["replicas"], 3);
    #[derive(serde::Deserialize)]
    struct Kind {
        kind: String,
    }
    assert_eq!(manifest.parse::<Kind>().expect("kind").kind, "Deployment");
    // Back to JSON as it came, whichever way it is written.
    assert_eq!(serde_json::to_value(&from_text).expect("to value"), input);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(
            &serde_json::to_string(&from_text).expect("to text")
        )
        .expect("parse"),
        input
    );
    // Decoders that buffer (untagged enums, YAML) go through a `Value`.
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Either {
        Work(Box<Work>),
    }
    let Either::Work(buffered) = serde_json::from_str(&text).expect("buffered");
    assert_eq!(*buffered, from_text);
    let from_yaml: Work = yaml_serde::from_str(&text).expect("from yaml");
    assert_eq!(from_yaml, from_text);
}

#[test]
fn work_manifests_compare_as_json_documents_not_as_text() {
    let a = Manifest::new(&json!({"kind": "ConfigMap", "data": {"a": "1", "b": "2"}}));
    let reordered: Manifest =
        serde_json::from_str(r#"{"data":{"b":"2","a":"1"},"kind":"ConfigMap"}"#).expect("parse");
    assert_ne!(a.json(), reordered.json());
    assert_eq!(a, reordered);
    assert_ne!(
        a,
        Manifest::new(&json!({"kind": "ConfigMap", "data": {"a": "1"}}))
    );
}

#[test]
fn work_manifests_are_written_as_serde_json_writes_the_same_value() {
    let text = r#"{ "s": "a\"b\\c\n\u00e9\ud83d\ude00 \u0001", "n": [-3, 0, 18446744073709551615,
        1.5, 1e300, 2.0, -0.0], "e": [], "o": {}, "z": null, "t": true, "f": false,
        "deep": [[{"a": [{}]}]] }"#;
    let value: serde_json::Value = serde_json::from_str(text).expect("value");
    let manifest: Manifest = serde_json::from_str(text).expect("manifest");
    assert_eq!(manifest.json(), Manifest::new(&value).json());
    assert_eq!(manifest.to_value(), value);
    // Through a `Value` and through YAML as well.
    let from_value: Manifest = serde_json::from_value(value.clone()).expect("from value");
    assert_eq!(from_value.json(), manifest.json());
    let from_yaml: Manifest = yaml_serde::from_str("a: [1, x, {b: null}]").expect("yaml");
    assert_eq!(from_yaml.json(), r#"{"a":[1,"x",{"b":null}]}"#);
    // JSON keys are strings: a YAML key is read as one, as a `Value` reads it.
    let yaml_key: serde_json::Value = yaml_serde::from_str("{1: a}").expect("value");
    let manifest_key: Manifest = yaml_serde::from_str("{1: a}").expect("manifest");
    assert_eq!(manifest_key.to_value(), yaml_key);
}

#[test]
fn member_statuses_on_works_and_bindings_round_trip_as_compact_json() {
    let work = json!({
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": "w", "namespace": "karmada-es-m1"},
        "spec": {"workload": {}},
        "status": {"manifestStatuses": [
            {"identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                "namespace": "n", "name": "d", "resource": ""},
             "status": {"replicas": 2, "readyReplicas": 2, "resourceTemplateGeneration": 3},
             "health": "Healthy"},
            {"identifier": {"ordinal": 1, "version": "v1", "kind": "ConfigMap",
                "namespace": "n", "name": "c", "resource": ""},
             "status": null}
        ]}
    });
    let decoded: Work = serde_json::from_value(work.clone()).expect("work");
    let statuses = &decoded.status.as_ref().expect("status").manifest_statuses;
    let reflected = statuses[0].status.as_ref().expect("reflected");
    assert_eq!(
        reflected.json(),
        r#"{"replicas":2,"readyReplicas":2,"resourceTemplateGeneration":3}"#
    );
    assert_eq!(reflected.to_value()["readyReplicas"], 2);
    // `null` is no status, as it was for a `Value`; absent fields stay absent when written.
    assert!(statuses[1].status.is_none());
    let mut expected = work;
    expected["status"]["manifestStatuses"][1]
        .as_object_mut()
        .expect("object")
        .remove("status");
    assert_eq!(serde_json::to_value(&decoded).expect("to value"), expected);

    let binding = json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "d-deployment", "namespace": "n"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}},
        "status": {"aggregatedStatus": [
            {"clusterName": "m1", "status": {"readyReplicas": 2}, "applied": true,
             "health": "Healthy"}
        ]}
    });
    let text = binding.to_string();
    let decoded: ResourceBinding = serde_json::from_str(&text).expect("binding");
    let items = &decoded.status.as_ref().expect("status").aggregated_status;
    assert_eq!(
        items[0].status.as_ref().map(JsonText::json),
        Some(r#"{"readyReplicas":2}"#)
    );
    let back = serde_json::to_value(&decoded).expect("to value");
    assert_eq!(
        back["status"]["aggregatedStatus"],
        binding["status"]["aggregatedStatus"]
    );
}

#[test]
fn workload_affinity_groups_are_the_templates_values_under_the_policys_keys() {
    let placement: Placement = serde_json::from_value(json!({
        "workloadAffinity": {
            "affinity": {"groupByLabelKey": "app.group"},
            "antiAffinity": {"groupByLabelKey": "ha.group"},
        }
    }))
    .expect("a placement");
    let labels = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    assert_eq!(
        WorkloadAffinityGroups::of(
            &placement,
            &labels(&[("app.group", "train"), ("ha.group", "a")])
        ),
        Some(WorkloadAffinityGroups {
            affinity_group: "app.group=train".into(),
            anti_affinity_group: "ha.group=a".into(),
        })
    );
    // Only the terms whose label the template carries.
    assert_eq!(
        WorkloadAffinityGroups::of(&placement, &labels(&[("ha.group", "")])),
        Some(WorkloadAffinityGroups {
            affinity_group: String::new(),
            anti_affinity_group: "ha.group=".into(),
        })
    );
    assert_eq!(
        WorkloadAffinityGroups::of(&placement, &labels(&[("other", "x")])),
        None
    );
    assert_eq!(
        WorkloadAffinityGroups::of(&Placement::default(), &labels(&[("app.group", "x")])),
        None
    );
    // The binding carries them under Karmada's field names.
    let groups = WorkloadAffinityGroups::of(&placement, &labels(&[("app.group", "train")]));
    assert_eq!(
        serde_json::to_value(groups).expect("encode"),
        json!({"affinityGroup": "app.group=train"})
    );
}
