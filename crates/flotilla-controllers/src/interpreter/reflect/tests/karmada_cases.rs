//! The cases of Karmada's `reflectstatus_test.go` (pkg/resourceinterpreter/default/native):
//! the same member objects, Karmada's expected reflected status (compared as JSON values, as
//! Karmada compares them with `JSONEq`).

use serde_json::{Value, json};

use super::*;

const GENERATION: &str = "resourcetemplate.karmada.io/generation";
const NOW: &str = "2024-05-06T07:08:09Z";

fn object(api_version: &str, kind: &str, metadata: Value, status: Option<Value>) -> Value {
    let mut object = json!({"apiVersion": api_version, "kind": kind, "metadata": metadata});
    if let Some(status) = status {
        object["status"] = status;
    }
    object
}

fn reflected(object: &Value) -> Option<Value> {
    reflect_status(object).expect("reflects")
}

/// A member workload of generation 2 rendered from template generation 1.
fn workload(kind: &str, status: Option<Value>) -> Value {
    let metadata = json!({"name": "test", "namespace": "test-ns", "generation": 2,
        "annotations": {GENERATION: "1"}});
    object("apps/v1", kind, metadata, status)
}

#[test]
fn deployment_and_replicaset_keep_counters_and_both_generations() {
    let status = json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
        "availableReplicas": 3, "unavailableReplicas": 0, "observedGeneration": 2});
    assert_eq!(
        reflected(&workload("Deployment", Some(status))),
        Some(json!({"generation": 2, "resourceTemplateGeneration": 1,
            "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
            "readyReplicas": 3, "availableReplicas": 3}))
    );
    let status = json!({"replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
        "observedGeneration": 2});
    assert_eq!(
        reflected(&workload("ReplicaSet", Some(status))),
        Some(
            json!({"generation": 2, "resourceTemplateGeneration": 1, "replicas": 3,
            "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 2})
        )
    );
}

#[test]
fn daemonset_and_statefulset_keep_counters_and_both_generations() {
    let status = json!({"currentNumberScheduled": 3, "desiredNumberScheduled": 3,
        "numberAvailable": 3, "numberMisscheduled": 0, "numberReady": 3,
        "updatedNumberScheduled": 3, "numberUnavailable": 0, "observedGeneration": 2});
    assert_eq!(
        reflected(&workload("DaemonSet", Some(status))),
        Some(json!({"generation": 2, "resourceTemplateGeneration": 1,
            "currentNumberScheduled": 3, "numberMisscheduled": 0,
            "desiredNumberScheduled": 3, "numberReady": 3, "observedGeneration": 2,
            "updatedNumberScheduled": 3, "numberAvailable": 3}))
    );
    let status = json!({"replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
        "updatedReplicas": 3, "availableReplicas": 3});
    assert_eq!(
        reflected(&workload("StatefulSet", Some(status))),
        Some(
            json!({"generation": 2, "resourceTemplateGeneration": 1, "replicas": 3,
            "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
            "availableReplicas": 3})
        )
    );
    // Partial: updatedReplicas and availableReplicas missing (the latter is always written).
    let status = json!({"replicas": 2, "readyReplicas": 1, "currentReplicas": 1});
    assert_eq!(
        reflected(&workload("StatefulSet", Some(status))),
        Some(
            json!({"generation": 2, "resourceTemplateGeneration": 1, "replicas": 2,
            "readyReplicas": 1, "currentReplicas": 1, "availableReplicas": 0})
        )
    );
}

#[test]
fn workloads_without_status_are_not_collected() {
    for kind in ["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"] {
        assert_eq!(reflected(&workload(kind, None)), None, "{kind}");
    }
}

#[test]
fn an_unparsable_template_generation_fails_the_reflection() {
    for kind in ["Deployment", "ReplicaSet", "DaemonSet"] {
        let metadata = json!({"name": "test", "namespace": "test-ns", "generation": 1,
            "annotations": {GENERATION: "invalid"}});
        let status = json!({"replicas": 1, "currentNumberScheduled": 1, "numberReady": 1});
        let object = object("apps/v1", kind, metadata, Some(status));
        assert!(
            matches!(
                reflect_status(&object),
                Err(ReflectError::TemplateGeneration { .. })
            ),
            "{kind}"
        );
    }
}

#[test]
fn service_reflects_only_a_load_balancers_status() {
    let cluster_ip = json!({"apiVersion": "v1", "kind": "Service",
        "spec": {"type": "ClusterIP"}});
    assert_eq!(reflected(&cluster_ip), None);
    let mut load_balancer = json!({"apiVersion": "v1", "kind": "Service",
        "spec": {"type": "LoadBalancer"}});
    assert_eq!(reflected(&load_balancer), None);
    load_balancer["status"] = json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}});
    assert_eq!(
        reflected(&load_balancer),
        Some(json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}))
    );
}

#[test]
fn ingress_and_kinds_without_a_rule_reflect_the_whole_status() {
    let status = json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}});
    let ingress = object(
        "networking.k8s.io/v1",
        "Ingress",
        json!({}),
        Some(status.clone()),
    );
    assert_eq!(reflected(&ingress), Some(status));
    assert_eq!(
        reflected(&object("networking.k8s.io/v1", "Ingress", json!({}), None)),
        None
    );
    let whole = json!({"status": {"key": "value", "num": 1}});
    assert_eq!(reflected(&whole), Some(json!({"key": "value", "num": 1})));
    assert_eq!(reflected(&json!({})), None);
}

fn job(status: Option<Value>) -> Value {
    object("batch/v1", "Job", json!({}), status)
}

fn complete() -> Value {
    json!({"type": "Complete", "status": "True", "lastProbeTime": NOW,
        "lastTransitionTime": NOW, "reason": "JobComplete",
        "message": "Job completed successfully"})
}

#[test]
fn job_keeps_counters_times_and_conditions() {
    let all = json!({"active": 1, "succeeded": 2, "failed": 0, "completionTime": NOW,
        "startTime": NOW, "conditions": [complete()]});
    assert_eq!(
        reflected(&job(Some(all))),
        Some(
            json!({"conditions": [complete()], "startTime": NOW, "completionTime": NOW,
            "active": 1, "succeeded": 2})
        )
    );
    // Empty conditions are left out.
    let no_conditions = json!({"active": 1, "succeeded": 2, "completionTime": NOW,
        "startTime": NOW, "conditions": []});
    assert_eq!(
        reflected(&job(Some(no_conditions))),
        Some(json!({"startTime": NOW, "completionTime": NOW, "active": 1, "succeeded": 2}))
    );
    let failed_condition = json!({"type": "Failed", "status": "True", "lastProbeTime": NOW,
        "lastTransitionTime": NOW, "reason": "JobFailed", "message": "Job failed due to error"});
    let failed = json!({"active": 0, "succeeded": 0, "failed": 1, "completionTime": NOW,
        "startTime": NOW, "conditions": [failed_condition.clone()]});
    assert_eq!(
        reflected(&job(Some(failed))),
        Some(json!({"conditions": [failed_condition], "startTime": NOW,
            "completionTime": NOW, "failed": 1}))
    );
    let only_active = json!({"active": 1, "startTime": NOW, "conditions": []});
    assert_eq!(
        reflected(&job(Some(only_active))),
        Some(json!({"startTime": NOW, "active": 1}))
    );
    let no_completion = json!({"active": 1, "succeeded": 2, "startTime": NOW,
        "conditions": [complete()]});
    assert_eq!(
        reflected(&job(Some(no_completion))),
        Some(
            json!({"conditions": [complete()], "startTime": NOW, "active": 1,
            "succeeded": 2})
        )
    );
    let no_start = json!({"active": 1, "succeeded": 2, "completionTime": NOW,
        "conditions": [complete()]});
    assert_eq!(
        reflected(&job(Some(no_start))),
        Some(
            json!({"conditions": [complete()], "completionTime": NOW, "active": 1,
            "succeeded": 2})
        )
    );
}

#[test]
fn job_without_status_or_with_a_mistyped_counter() {
    assert_eq!(reflected(&job(None)), None);
    assert!(matches!(
        reflect_status(&job(Some(json!({"active": "invalid"})))),
        Err(ReflectError::Status { kind: "Job", .. })
    ));
}

#[test]
fn pdb_keeps_its_counters_and_disrupted_pods() {
    let status = json!({"currentHealthy": 2, "desiredHealthy": 3, "disruptionsAllowed": 1,
        "expectedPods": 3, "disruptedPods": {"pod1": NOW}});
    let pdb = object(
        "policy/v1",
        "PodDisruptionBudget",
        json!({}),
        Some(status.clone()),
    );
    assert_eq!(reflected(&pdb), Some(status));
    let none = object("policy/v1", "PodDisruptionBudget", json!({}), None);
    assert_eq!(reflected(&none), None);
}

#[test]
fn hpa_keeps_its_replica_counts_with_go_s_null_metrics() {
    let status = json!({"currentReplicas": 2, "desiredReplicas": 3});
    let hpa = object(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        json!({}),
        Some(status),
    );
    let reflected_status = reflected(&hpa).expect("collected");
    assert_eq!(
        reflected_status,
        json!({"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": null})
    );
    assert_eq!(
        serde_json::to_string(&reflected_status).expect("json"),
        r#"{"currentReplicas":2,"desiredReplicas":3,"currentMetrics":null}"#
    );
    let none = object("autoscaling/v2", "HorizontalPodAutoscaler", json!({}), None);
    assert_eq!(reflected(&none), None);
}
