//! The cases of Karmada's `healthy_test.go` (pkg/resourceinterpreter/default/native): the same
//! objects, Karmada's expected verdict. Karmada calls each kind's function directly, so some of
//! its objects carry no `apiVersion`/`kind`; here they get theirs (Flotilla picks the rule by
//! kind).

use serde_json::{Value, json};

use super::*;

fn verdict(api_version: &str, kind: &str, mut object: Value) -> bool {
    object["apiVersion"] = json!(api_version);
    object["kind"] = json!(kind);
    interpret(&object)
        .expect("the kind has a rule")
        .expect("the object reads as its kind")
}

fn rolled_out(kind: &str, status: Value) -> bool {
    verdict(
        "apps/v1",
        kind,
        json!({"metadata": {"name": "fake", "generation": 1}, "spec": {"replicas": 3},
            "status": status}),
    )
}

#[test]
fn deployment_and_statefulset_are_healthy_once_rolled_out_and_available() {
    for kind in ["Deployment", "StatefulSet"] {
        let rows = [
            (
                json!({"availableReplicas": 3, "updatedReplicas": 3, "observedGeneration": 1}),
                true,
            ),
            // The controller has not seen the latest generation.
            (
                json!({"availableReplicas": 3, "updatedReplicas": 3, "observedGeneration": 2}),
                false,
            ),
            // Fewer updated replicas than desired.
            (
                json!({"updatedReplicas": 1, "observedGeneration": 1}),
                false,
            ),
        ];
        for (status, healthy) in rows {
            assert_eq!(rolled_out(kind, status.clone()), healthy, "{kind} {status}");
        }
    }
    // Fewer available replicas than updated ones.
    let unavailable = |available| json!({"availableReplicas": available, "updatedReplicas": 3, "observedGeneration": 1});
    assert!(!rolled_out("Deployment", unavailable(0)));
    assert!(!rolled_out("StatefulSet", unavailable(1)));
}

#[test]
fn replicaset_is_healthy_once_observed_and_available() {
    let replica_set = |available: i64, observed: i64| {
        json!({"metadata": {"generation": 1}, "spec": {"replicas": 3},
            "status": {"availableReplicas": available, "observedGeneration": observed}})
    };
    assert!(verdict("apps/v1", "ReplicaSet", replica_set(3, 1)));
    assert!(!verdict("apps/v1", "ReplicaSet", replica_set(3, 2)));
    assert!(!verdict("apps/v1", "ReplicaSet", replica_set(2, 2)));
}

#[test]
fn daemonset_is_healthy_once_observed_updated_and_available() {
    let rows = [
        (
            json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1}}),
            true,
        ),
        (
            json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 2}}),
            false,
        ),
        (
            json!({"status": {"updatedNumberScheduled": 3, "desiredNumberScheduled": 5}}),
            false,
        ),
        (
            json!({"status": {"updatedNumberScheduled": 5, "numberAvailable": 3}}),
            false,
        ),
    ];
    for (object, healthy) in rows {
        assert_eq!(
            verdict("apps/v1", "DaemonSet", object.clone()),
            healthy,
            "{object}"
        );
    }
}

#[test]
fn service_is_healthy_unless_a_load_balancer_without_address() {
    let service = |service_type: &str, ingress: Value| {
        verdict(
            "v1",
            "Service",
            json!({"spec": {"type": service_type},
                "status": {"loadBalancer": {"ingress": ingress}}}),
        )
    };
    assert!(service("LoadBalancer", json!([{"ip": "localhost"}])));
    assert!(service("NodePort", json!([{"ip": "localhost"}])));
    assert!(!service("LoadBalancer", json!([])));
}

#[test]
fn ingress_is_healthy_once_it_has_an_address() {
    let ingress = |ingress: Value| {
        verdict(
            "networking.k8s.io/v1",
            "Ingress",
            json!({"status": {"loadBalancer": {"ingress": ingress}}}),
        )
    };
    assert!(ingress(json!([{"ip": "localhost"}])));
    assert!(!ingress(json!([])));
}

#[test]
fn pvc_is_healthy_once_bound() {
    let pvc = |phase: &str| {
        verdict(
            "v1",
            "PersistentVolumeClaim",
            json!({"status": {"phase": phase}}),
        )
    };
    assert!(pvc("Bound"));
    assert!(!pvc("Pending"));
}

#[test]
fn pod_is_healthy_when_succeeded_or_running_and_ready() {
    let pod = |status: Option<Value>| {
        let mut object = json!({"metadata": {"name": "fake-pod"}});
        if let Some(status) = status {
            object["status"] = status;
        }
        verdict("v1", "Pod", object)
    };
    assert!(pod(Some(
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
    )));
    assert!(pod(Some(json!({"phase": "Succeeded"}))));
    assert!(!pod(Some(
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "Unknown"}]})
    )));
    assert!(!pod(Some(json!({"phase": "Failed"}))));
    assert!(!pod(None));
}

#[test]
fn pdb_is_healthy_while_it_has_the_desired_healthy_pods() {
    let pdb = |desired: i64, current: i64| {
        verdict(
            "policy/v1",
            "PodDisruptionBudget",
            json!({"status": {"desiredHealthy": desired, "currentHealthy": current}}),
        )
    };
    assert!(pdb(2, 3));
    assert!(pdb(2, 2));
    assert!(!pdb(2, 1));
}

#[test]
fn the_kinds_with_a_health_rule_are_karmadas() {
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "DaemonSet"),
        ("v1", "Service"),
        ("networking.k8s.io/v1", "Ingress"),
        ("v1", "PersistentVolumeClaim"),
        ("v1", "Pod"),
        ("policy/v1", "PodDisruptionBudget"),
    ] {
        let object = json!({"apiVersion": api_version, "kind": kind, "metadata": {}});
        assert!(interpret(&object).is_some(), "{api_version} {kind}");
        assert!(has_rule(api_version, kind), "{api_version} {kind}");
    }
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {}});
    assert!(interpret(&job).is_none());
}
