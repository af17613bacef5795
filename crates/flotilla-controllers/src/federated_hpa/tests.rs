use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::DynamicObject;
use serde_json::json;

use super::gather::{member_pod_metrics, parse_group_version, pod_facts};
use super::state::{rules, set_condition};
use crate::lifted::hpa::Tunables;
use flotilla_api::karmada::FederatedHPA;

fn time(s: &str) -> Time {
    Time(s.parse().unwrap())
}

#[test]
fn member_pods_become_facts_with_requests_in_milli_units() {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-1", "namespace": "ns"},
        "spec": {"containers": [
            {"name": "nginx", "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}}},
            {"name": "sidecar"}
        ]},
        "status": {"phase": "Running", "startTime": "2026-12-06T10:00:00Z",
            "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": "2026-12-06T10:00:02Z"}]}
    }))
    .unwrap();
    let facts = pod_facts("member1", &pod);
    assert_eq!(facts.key, "member1/web-1");
    assert_eq!(facts.phase, "Running");
    assert_eq!(
        facts.ready,
        Some((true, "2026-12-06T10:00:02Z".parse().unwrap()))
    );
    assert_eq!(facts.containers[0].1["cpu"], 10);
    assert_eq!(facts.containers[0].1["memory"], 10 * 1024 * 1024 * 1000);
    assert!(facts.containers[1].1.is_empty());
}

#[test]
fn pod_metrics_are_read_as_metrics_server_writes_them() {
    let item: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
        "metadata": {"name": "web-1", "namespace": "ns"},
        "timestamp": "2026-12-06T10:01:00Z", "window": "15.5s",
        "containers": [{"name": "nginx", "usage": {"cpu": "2500000n", "memory": "10240Ki"}}]
    }))
    .unwrap();
    let m = member_pod_metrics(&item).unwrap();
    assert_eq!(m.pod, "web-1");
    assert_eq!(m.window, jiff::SignedDuration::from_millis(15_500));
    assert_eq!(m.containers[0].0, "nginx");
    // 2.5 m CPU rounds up to 3 m, as Quantity.MilliValue does.
    assert_eq!(m.containers[0].1["cpu"], 3);
    assert_eq!(m.containers[0].1["memory"], 10_485_760_000);
    let broken: DynamicObject = serde_json::from_value(json!({
        "metadata": {"name": "x"}, "timestamp": "yesterday", "containers": []
    }))
    .unwrap();
    assert!(member_pod_metrics(&broken).is_none());
}

#[test]
fn group_versions_parse_as_go_parses_them() {
    assert!(parse_group_version("apps/v1").is_ok());
    assert!(parse_group_version("v1").is_ok());
    assert_eq!(
        parse_group_version("apps/v1/x").unwrap_err(),
        "unexpected GroupVersion string: apps/v1/x"
    );
}

#[test]
fn conditions_keep_their_transition_time_until_their_status_changes() {
    let mut status = HorizontalPodAutoscalerStatus::default();
    let t1 = time("2026-12-06T10:00:00Z");
    let t2 = time("2026-12-06T10:00:15Z");
    set_condition(&mut status, "AbleToScale", "True", "A", "a".into(), &t1);
    set_condition(&mut status, "ScalingActive", "False", "B", "b".into(), &t1);
    set_condition(&mut status, "AbleToScale", "True", "C", "c".into(), &t2);
    let conditions = status.conditions.as_ref().unwrap();
    assert_eq!(conditions.len(), 2);
    assert_eq!(conditions[0].type_, "AbleToScale");
    assert_eq!(conditions[0].reason.as_deref(), Some("C"));
    assert_eq!(conditions[0].last_transition_time, Some(t1.clone()));
    set_condition(&mut status, "AbleToScale", "False", "D", "d".into(), &t2);
    assert_eq!(
        status.conditions.as_ref().unwrap()[0].last_transition_time,
        Some(t2)
    );
}

#[test]
fn behavior_rules_take_the_autoscaling_defaults_and_the_controller_window() {
    let fhpa: FederatedHPA = serde_json::from_value(json!({
        "metadata": {"name": "f", "namespace": "ns"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 6,
            "behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}
    }))
    .unwrap();
    let (up, down) = rules(&fhpa, &Tunables::default()).unwrap();
    assert_eq!(up.stabilization_window_seconds, 0);
    assert_eq!(up.select_policy, "Max");
    assert_eq!(up.policies.len(), 2);
    assert_eq!(down.stabilization_window_seconds, 300);
    assert_eq!(down.policies[0].kind, "Pods");
    let without: FederatedHPA = serde_json::from_value(json!({
        "metadata": {"name": "f"}, "spec": {"maxReplicas": 1}, "status": {}
    }))
    .unwrap();
    assert!(rules(&without, &Tunables::default()).is_none());
    // An empty status (nobody wrote it yet) reads as desiredReplicas 0.
    assert_eq!(without.status.unwrap().desired_replicas, 0);
}
