use flotilla_api::karmada::AggregatedStatusItem;
use serde_json::{Value, json};

use super::*;

fn item(cluster: &str, status: Option<Value>) -> AggregatedStatusItem {
    AggregatedStatusItem {
        cluster_name: cluster.to_owned(),
        status: status.map(Into::into),
        applied: true,
        health: "Healthy".to_owned(),
        ..AggregatedStatusItem::default()
    }
}

fn deployment(generation: i64, status: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "status": status})
}

fn member(
    replicas: i64,
    ready: i64,
    observed: i64,
    generation: i64,
    template_generation: i64,
) -> Value {
    json!({"replicas": replicas, "updatedReplicas": replicas, "readyReplicas": ready,
        "availableReplicas": ready, "observedGeneration": observed, "generation": generation,
        "resourceTemplateGeneration": template_generation})
}

#[test]
fn deployment_counters_are_summed_and_generation_advances_when_all_caught_up() {
    let template = deployment(3, json!({"observedGeneration": 2}));
    let items = [
        item("a", Some(member(5, 5, 4, 4, 3))),
        item("b", Some(member(3, 2, 7, 7, 3))),
    ];
    let status = aggregate_status(&template, &items).expect("deployment has a hook");
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "replicas": 8, "updatedReplicas": 8,
            "readyReplicas": 7, "availableReplicas": 7})
    );
}

#[test]
fn deployment_generation_is_kept_while_a_member_lags_or_has_no_status() {
    let template = deployment(3, json!({"observedGeneration": 2}));
    // Rendered from an older template.
    let lagging = [item("a", Some(member(5, 5, 4, 4, 2)))];
    assert_eq!(
        aggregate_status(&template, &lagging).expect("hook")["observedGeneration"],
        2
    );
    // The member controller has not observed its own generation.
    let unobserved = [item("a", Some(member(5, 5, 3, 4, 3)))];
    assert_eq!(
        aggregate_status(&template, &unobserved).expect("hook")["observedGeneration"],
        2
    );
    // A cluster without a collected status counts as not caught up.
    let missing = [item("a", Some(member(5, 5, 4, 4, 3))), item("b", None)];
    let status = aggregate_status(&template, &missing).expect("hook");
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(status["replicas"], 5);
}

#[test]
fn zero_counters_are_omitted_like_go_omitempty() {
    let template = deployment(1, json!({}));
    let status =
        aggregate_status(&template, &[item("a", Some(member(0, 0, 1, 1, 1)))]).expect("hook");
    assert_eq!(status, json!({"observedGeneration": 1}));
}

#[test]
fn statefulset_compares_template_generation_with_the_member_generation() {
    let template = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"generation": 5}, "status": {"replicas": 0}});
    let status = aggregate_status(
        &template,
        &[item(
            "a",
            Some(
                json!({"replicas": 2, "readyReplicas": 2, "currentReplicas": 2,
            "updatedReplicas": 2, "availableReplicas": 2,
            "observedGeneration": 1, "generation": 1, "resourceTemplateGeneration": 1}),
            ),
        )],
    )
    .expect("hook");
    assert_eq!(status["observedGeneration"], 5);
    assert_eq!(status["readyReplicas"], 2);
}

#[test]
fn load_balancer_ingress_is_the_sorted_union() {
    let service = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer"}});
    let status = aggregate_status(
        &service,
        &[
            item(
                "a",
                Some(json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}]}})),
            ),
            item(
                "b",
                Some(
                    json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}}),
                ),
            ),
        ],
    )
    .expect("hook");
    assert_eq!(
        status["loadBalancer"]["ingress"],
        json!([{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}])
    );
    let cluster_ip = json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP"}});
    assert!(aggregate_status(&cluster_ip, &[]).is_none());
}

#[test]
fn job_completes_only_when_every_member_completed() {
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"generation": 1}});
    let complete = json!({"succeeded": 2, "startTime": "2026-01-01T00:00:05Z",
        "completionTime": "2026-01-01T00:01:00Z",
        "conditions": [{"type": "Complete", "status": "True"}]});
    let running = json!({"active": 1, "startTime": "2026-01-01T00:00:01Z"});
    let status = aggregate_status(
        &job,
        &[item("a", Some(complete.clone())), item("b", Some(running))],
    )
    .expect("hook");
    assert_eq!(status["active"], 1);
    assert_eq!(status["succeeded"], 2);
    assert_eq!(status["startTime"], "2026-01-01T00:00:01Z");
    assert!(status.get("conditions").is_none());
    let status = aggregate_status(
        &job,
        &[item("a", Some(complete.clone())), item("b", Some(complete))],
    )
    .expect("hook");
    assert_eq!(status["conditions"][0]["type"], "Complete");
    assert_eq!(status["completionTime"], "2026-01-01T00:01:00Z");
}

#[test]
fn pod_phase_comes_from_the_member_phases() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod"});
    let phase = |phases: &[Option<&str>]| {
        let items: Vec<_> = phases
            .iter()
            .enumerate()
            .map(|(i, p)| item(&i.to_string(), p.map(|p| json!({"phase": p}))))
            .collect();
        aggregate_status(&pod, &items).expect("hook")["phase"].clone()
    };
    assert_eq!(phase(&[Some("Running"), Some("Running")]), "Running");
    assert_eq!(phase(&[Some("Running"), None]), "Pending");
    assert_eq!(phase(&[Some("Succeeded"), Some("Failed")]), "Failed");
    assert_eq!(phase(&[Some("Succeeded"), Some("Succeeded")]), "Succeeded");
}

#[test]
fn kinds_without_a_hook_are_left_alone() {
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    assert!(aggregate_status(&config, &[item("a", Some(json!({})))]).is_none());
}
