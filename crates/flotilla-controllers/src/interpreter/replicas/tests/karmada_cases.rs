//! The cases of Karmada's `replica_test.go` and `revisereplica_test.go`
//! (pkg/resourceinterpreter/default/native): the same workloads, Karmada's expected replicas,
//! requirements and revised objects.

use serde_json::{Value, json};

use super::*;

/// The pod spec of Karmada's replica cases: a node selector, a toleration and a required node
/// affinity, no resources.
fn constrained_pod_spec() -> Value {
    json!({
        "nodeSelector": {"foo": "foo1"},
        "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]}}}})
}

/// Karmada's expected requirements: the node claim only (no resource request).
fn expected_requirements() -> Value {
    json!({"nodeClaim": {
        "hardNodeAffinity": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]},
        "nodeSelector": {"foo": "foo1"},
        "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]}})
}

fn assert_interpreted(object: &Value, replicas: i32) {
    let interpreted = interpret_replica(object).expect("interprets");
    assert_eq!(interpreted.replicas, replicas, "{object}");
    let requirements = interpreted.requirements.expect("requirements");
    assert_eq!(
        serde_json::to_value(&requirements).expect("json"),
        expected_requirements(),
        "{object}"
    );
}

#[test]
fn workloads_ask_for_their_replicas_with_the_pod_templates_node_claim() {
    let template = json!({"spec": constrained_pod_spec()});
    for (kind, replicas) in [("Deployment", 2), ("StatefulSet", 2), ("ReplicaSet", 3)] {
        let object = json!({"apiVersion": "apps/v1", "kind": kind,
            "spec": {"replicas": replicas, "template": template}});
        assert_interpreted(&object, replicas);
    }
}

#[test]
fn a_job_asks_for_no_more_than_its_completions() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job",
        "spec": {"parallelism": 3, "completions": 2,
            "template": {"spec": constrained_pod_spec()}}});
    assert_interpreted(&job, 2);
}

#[test]
fn a_pod_is_one_replica() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": constrained_pod_spec()});
    assert_interpreted(&pod, 1);
}

#[test]
fn the_kinds_with_a_replica_hook_are_karmadas() {
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("batch/v1", "Job"),
    ] {
        assert!(revise_field(api_version, kind).is_some(), "{kind}");
    }
    assert_eq!(revise_field("apps/v1", "DaemonSet"), None);
    assert_eq!(revise_field("v1", "Pod"), None);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": {}});
    assert_eq!(interpret_replica(&pod).expect("interprets").replicas, 1);
    let daemon_set = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {}});
    assert_eq!(
        interpret_replica(&daemon_set).expect("interprets"),
        InterpretedReplicas::default()
    );
}

#[test]
fn revising_sets_the_kinds_replica_field() {
    for (api_version, kind, field) in [
        ("apps/v1", "Deployment", "replicas"),
        ("apps/v1", "ReplicaSet", "replicas"),
        ("apps/v1", "StatefulSet", "replicas"),
        ("batch/v1", "Job", "parallelism"),
    ] {
        let object = |replicas: i64| {
            json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "fake"},
                "spec": {field: replicas}})
        };
        let mut revised = object(1);
        assert!(revise_replica(&mut revised, 3));
        assert_eq!(revised, object(3), "{kind}");
    }
}
