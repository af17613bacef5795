use std::collections::BTreeSet;

use flotilla_api::karmada::{ObjectReference, Work};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::*;

mod karmada_workstatus;

fn work(cluster: &str, applied: Option<(&str, &str)>, status: Option<serde_json::Value>) -> Work {
    let mut conditions = Vec::new();
    if let Some((state, message)) = applied {
        conditions.push(json!({"type": "Applied", "status": state, "reason": "x",
            "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z"}));
    }
    let manifest_statuses: Vec<serde_json::Value> = status
        .into_iter()
        .map(|s| {
            json!({"identifier": {"ordinal": 0, "group": "apps", "version": "v1",
            "kind": "Deployment", "resource": "deployments", "namespace": "default", "name": "web"},
            "status": s, "health": "Healthy"})
        })
        .collect();
    serde_json::from_value(
        json!({"metadata": {"name": "web-x", "namespace": format!("karmada-es-{cluster}")},
        "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"}}]}},
        "status": {"conditions": conditions, "manifestStatuses": manifest_statuses}}),
    )
    .expect("work")
}

fn resource() -> ObjectReference {
    ObjectReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: "default".into(),
        name: "web".into(),
        ..ObjectReference::default()
    }
}

#[test]
fn items_are_sorted_and_unapplied_works_report_their_message() {
    let b = work("b", Some(("True", "ok")), Some(json!({"readyReplicas": 2})));
    let a = work(
        "a",
        Some(("False", "Failed to apply all manifests (0/1): boom")),
        None,
    );
    let c = work("c", None, None);
    let items = aggregated_items(&[&b, &a, &c], &resource());
    let summary: Vec<(&str, bool, &str, &str)> = items
        .iter()
        .map(|i| {
            (
                i.cluster_name.as_str(),
                i.applied,
                i.applied_message.as_str(),
                i.health.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "a",
                false,
                "Failed to apply all manifests (0/1): boom",
                "Unknown"
            ),
            ("b", true, "", "Healthy"),
            ("c", false, "", "Unknown"),
        ]
    );
    assert_eq!(items[1].status, Some(json!({"readyReplicas": 2}).into()));
}

#[test]
fn fully_applied_needs_every_expected_cluster_applied() {
    let expected: BTreeSet<String> = ["a", "b"].map(String::from).into();
    let applied = |names: &[&str]| {
        let works: Vec<Work> = names
            .iter()
            .map(|n| work(n, Some(("True", "ok")), None))
            .collect();
        let refs: Vec<&Work> = works.iter().collect();
        aggregated_items(&refs, &resource())
    };
    assert!(fully_applied(&expected, &applied(&["a", "b"])));
    assert!(!fully_applied(&expected, &applied(&["a"])));
    assert!(!fully_applied(&expected, &applied(&["a", "c"])));
    assert!(!fully_applied(&BTreeSet::new(), &[]));
}

#[test]
fn the_transition_time_moves_only_when_the_condition_flips() {
    let t0 = Time(jiff::Timestamp::from_second(1_000).expect("time"));
    let t1 = Time(jiff::Timestamp::from_second(2_000).expect("time"));
    let first = with_fully_applied(&[], false, t0.clone());
    assert_eq!(first[0].reason, "FullyAppliedFailed");
    let same = with_fully_applied(&first, false, t1.clone());
    assert_eq!(same[0].last_transition_time, t0);
    let flipped = with_fully_applied(&same, true, t1.clone());
    assert_eq!(flipped[0].status, "True");
    assert_eq!(
        flipped[0].message,
        "All works have been successfully applied"
    );
    assert_eq!(flipped[0].last_transition_time, t1);
}

#[test]
fn members_report_the_oldest_template_generation_they_run() {
    let item = |cluster: &str, status: Option<serde_json::Value>| AggregatedStatusItem {
        cluster_name: cluster.into(),
        applied: true,
        status: status.map(Into::into),
        ..AggregatedStatusItem::default()
    };
    let at = |g: i64| Some(json!({"generation": 4, "resourceTemplateGeneration": g}));
    assert_eq!(
        members_template_generation(&[item("a", at(3)), item("b", at(2))]),
        Some(2)
    );
    // A member whose status is not reflected yet has not shown its generation.
    assert_eq!(
        members_template_generation(&[item("a", at(3)), item("b", None)]),
        None
    );
    assert_eq!(
        members_template_generation(&[item("a", Some(json!({"replicas": 1})))]),
        None
    );
    assert_eq!(members_template_generation(&[]), None);
}

#[test]
fn binding_state_follows_the_fully_applied_condition() {
    let binding = |conditions: serde_json::Value| {
        let rb: ResourceBinding = serde_json::from_value(json!({
            "metadata": {"name": "web-deployment", "namespace": "default"},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
            "status": {"conditions": conditions}}))
        .expect("binding");
        BindingView::from_rb(&rb)
    };
    let condition = |status: &str| {
        json!([{"type": "FullyApplied", "status": status, "reason": "x", "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}])
    };
    assert_eq!(
        binding_state(&binding(condition("True"))),
        BindingState::Applied
    );
    assert_eq!(
        binding_state(&binding(condition("False"))),
        BindingState::NotApplied
    );
    assert_eq!(binding_state(&binding(json!([]))), BindingState::Pending);
}

#[test]
fn an_empty_aggregate_is_no_change_to_a_template_without_status() {
    let empty = json!({});
    let some = json!({"replicas": 2, "readyReplicas": 1});
    // Nothing reported yet: no write, whether the template has no status or an empty one.
    assert!(!status_changes(None, &empty));
    assert!(!status_changes(Some(&serde_json::Value::Null), &empty));
    assert!(!status_changes(Some(&json!({})), &empty));
    // Anything else is compared as JSON (key order aside).
    assert!(status_changes(None, &some));
    assert!(status_changes(Some(&json!({"replicas": 2})), &some));
    assert!(!status_changes(
        Some(&json!({"readyReplicas": 1, "replicas": 2})),
        &some
    ));
    // A status that drops to empty (members gone) is written.
    assert!(status_changes(Some(&json!({"replicas": 2})), &empty));
}

#[test]
fn a_work_has_reported_once_applied_with_its_status_or_failed() {
    assert!(!work_reported(&work("a", None, None)));
    // Applied, the member's object not yet observed: the status is still to come.
    assert!(!work_reported(&work("a", Some(("True", "")), None)));
    assert!(work_reported(&work(
        "a",
        Some(("True", "")),
        Some(json!({"replicas": 1}))
    )));
    // A failure is a report: there is no status to wait for.
    assert!(work_reported(&work("a", Some(("False", "denied")), None)));
    let mut silent = work("a", None, None);
    silent.status = None;
    assert!(!work_reported(&silent));
}
