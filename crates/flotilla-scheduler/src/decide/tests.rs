use flotilla_api::karmada::{Cluster, ResourceBindingSpec};
use serde_json::{Value, json};

use super::*;

fn spec(replicas: i32, placement: Value, clusters: Value) -> ResourceBindingSpec {
    serde_json::from_value(
        json!({"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"},
        "replicas": replicas, "placement": placement, "clusters": clusters,
        "replicaRequirements": {"resourceRequest": {"cpu": "1"}}}),
    )
    .expect("spec")
}

fn applied(placement: &Value) -> BTreeMap<String, String> {
    [(
        ANNOTATION_APPLIED_PLACEMENT.to_owned(),
        placement.to_string(),
    )]
    .into_iter()
    .collect()
}

fn divided() -> Value {
    json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}})
}

#[test]
fn table() {
    let snapshot = Snapshot::default();
    let status = ResourceBindingStatus::default();
    let steady = spec(3, divided(), json!([{"name": "a", "replicas": 3}]));
    let annotations = applied(&divided());
    assert_eq!(
        should_schedule(None, &steady, &status, &snapshot),
        Some(ScheduleTrigger::PlacementChanged)
    );
    assert_eq!(
        should_schedule(Some(&annotations), &steady, &status, &snapshot),
        None
    );
    let scaled = spec(4, divided(), json!([{"name": "a", "replicas": 3}]));
    assert_eq!(
        should_schedule(Some(&annotations), &scaled, &status, &snapshot),
        Some(ScheduleTrigger::ReplicasChanged)
    );
    let changed = applied(
        &json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}),
    );
    assert_eq!(
        should_schedule(Some(&changed), &steady, &status, &snapshot),
        Some(ScheduleTrigger::PlacementChanged)
    );
    let duplicated = spec(3, json!({}), json!([{"name": "a", "replicas": 3}]));
    assert_eq!(
        should_schedule(Some(&applied(&json!({}))), &duplicated, &status, &snapshot),
        Some(ScheduleTrigger::Always)
    );
    // Unparsable annotation: treated as unchanged.
    let garbage: BTreeMap<String, String> =
        [(ANNOTATION_APPLIED_PLACEMENT.to_owned(), "{".to_owned())]
            .into_iter()
            .collect();
    assert_eq!(
        should_schedule(Some(&garbage), &steady, &status, &snapshot),
        None
    );
}

#[test]
fn reschedule_trigger_and_deleting_targets() {
    let annotations = applied(&divided());
    let mut s = spec(3, divided(), json!([{"name": "a", "replicas": 3}]));
    s.reschedule_triggered_at =
        Some(serde_json::from_value(json!("2026-02-01T00:00:00Z")).expect("t"));
    let mut status = ResourceBindingStatus::default();
    // No lastScheduledTime: the first schedule is still pending, no trigger.
    assert_eq!(
        should_schedule(Some(&annotations), &s, &status, &Snapshot::default()),
        None
    );
    status.last_scheduled_time =
        Some(serde_json::from_value(json!("2026-01-01T00:00:00Z")).expect("t"));
    assert_eq!(
        should_schedule(Some(&annotations), &s, &status, &Snapshot::default()),
        Some(ScheduleTrigger::RescheduleTriggered)
    );
    s.reschedule_triggered_at = None;
    let deleting: Cluster = serde_json::from_value(json!({"metadata": {"name": "a",
        "deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"syncMode": "Push"}}))
    .expect("c");
    assert_eq!(
        should_schedule(
            Some(&annotations),
            &s,
            &status,
            &Snapshot::new(vec![deleting])
        ),
        Some(ScheduleTrigger::TargetClusterDeleting)
    );
}

#[test]
fn affinity_terms_compare_only_the_observed_one() {
    let terms = |second: &str| {
        json!({"clusterAffinities": [
        {"affinityName": "a", "clusterNames": ["x"]},
        {"affinityName": "b", "clusterNames": [second]}]})
    };
    let p: Placement = serde_json::from_value(terms("y")).expect("p");
    let applied = terms("z").to_string();
    assert!(!placement_changed(&p, &applied, "a"));
    assert!(placement_changed(&p, &applied, "b"));
    assert!(placement_changed(&p, &applied, ""));
}

#[test]
fn an_empty_affinity_list_equals_none() {
    // Karmada's `clusterAffinities` is omitempty: `[]` and an absent list are the same placement.
    let empty: Placement = serde_json::from_value(json!({"clusterAffinities": []})).expect("p");
    assert!(!placement_changed(&empty, "{}", ""));
    let none = Placement::default();
    assert!(!placement_changed(&none, r#"{"clusterAffinities":[]}"#, ""));
    let term: Placement = serde_json::from_value(json!({"clusterAffinities": [
        {"affinityName": "a", "clusterNames": ["x"]}]}))
    .expect("p");
    assert!(placement_changed(&term, "{}", "a"));
}

fn member(name: &str, labels: Value) -> Cluster {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "spec": {}}))
        .expect("cluster")
}

/// Karmada's `enqueueAffectedBindings`: a cluster change concerns only the bindings whose
/// affinity in force is absent or matches the cluster.
#[test]
fn cluster_changes_concern_bindings_whose_affinity_matches() {
    let prod = member("m1", json!({"env": "prod"}));
    let dev = member("m2", json!({"env": "dev"}));
    let status = ResourceBindingStatus::default();
    let no_affinity = spec(1, json!({}), json!([]));
    assert!(affected_by_cluster(0, &no_affinity, &status, &dev));
    let by_label = spec(
        1,
        json!({"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}}),
        json!([]),
    );
    assert!(affected_by_cluster(0, &by_label, &status, &prod));
    assert!(!affected_by_cluster(0, &by_label, &status, &dev));

    let terms = spec(
        1,
        json!({"clusterAffinities": [
            {"affinityName": "a", "clusterNames": ["m1"]},
            {"affinityName": "b", "clusterNames": ["m2"]}]}),
        json!([]),
    );
    let observed_b = ResourceBindingStatus {
        scheduler_observed_generation: 3,
        scheduler_observing_affinity_name: "b".into(),
        ..ResourceBindingStatus::default()
    };
    assert!(affected_by_cluster(3, &terms, &observed_b, &dev));
    assert!(!affected_by_cluster(3, &terms, &observed_b, &prod));
    // A stale result is always concerned.
    assert!(affected_by_cluster(4, &terms, &observed_b, &prod));
    // Unknown observed term: the first one is in force.
    let unknown = ResourceBindingStatus {
        scheduler_observed_generation: 3,
        ..ResourceBindingStatus::default()
    };
    assert!(affected_by_cluster(3, &terms, &unknown, &prod));
    assert!(!affected_by_cluster(3, &terms, &unknown, &dev));
    // Without a placement nothing is scheduled.
    let mut none = no_affinity.clone();
    none.placement = None;
    assert!(!affected_by_cluster(0, &none, &status, &dev));
}
