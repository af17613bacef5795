//! What the run loop writes: the merge patches for `spec.clusters` + the applied-placement
//! annotation and for the status (the `Scheduled` condition, observed generation, last
//! scheduled time, observed affinity term), and the event messages.

use flotilla_api::karmada::{
    ANNOTATION_APPLIED_PLACEMENT, CONDITION_SCHEDULED, Placement, ResourceBindingStatus,
    TargetCluster,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use serde_json::{Value, json};

/// The merge patch recording a schedule result on the binding: `spec.clusters` replaced (removed
/// when empty) and the placement it was computed for.
pub fn result_patch(placement: &Placement, clusters: &[TargetCluster]) -> Value {
    let placement = serde_json::to_string(placement).unwrap_or_default();
    let clusters = if clusters.is_empty() {
        Value::Null
    } else {
        serde_json::to_value(clusters).unwrap_or(Value::Null)
    };
    json!({
        "metadata": {"annotations": {ANNOTATION_APPLIED_PLACEMENT: placement}},
        "spec": {"clusters": clusters},
    })
}

/// Whether the binding already carries this result (then nothing is written).
pub fn result_unchanged(
    current_annotation: Option<&str>,
    current: &[TargetCluster],
    placement: &Placement,
    clusters: &[TargetCluster],
) -> bool {
    let placement = serde_json::to_string(placement).unwrap_or_default();
    current_annotation == Some(placement.as_str()) && current == clusters
}

/// The `Scheduled` condition to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: bool,
    pub reason: String,
    pub message: String,
}

/// The status merge patch after an attempt. `observed` is set on success only (with the
/// binding's generation, the affinity term that won and the time), as Karmada does.
pub fn status_patch(
    current: &ResourceBindingStatus,
    outcome: &Outcome,
    now: Time,
    observed: Option<(i64, Option<&str>)>,
) -> Option<Value> {
    let mut conditions = current.conditions.clone();
    let changed = set_condition(&mut conditions, outcome, &now);
    let mut status = serde_json::Map::new();
    if changed {
        status.insert(
            "conditions".into(),
            serde_json::to_value(&conditions).unwrap_or(Value::Null),
        );
    }
    if let Some((generation, affinity)) = observed {
        status.insert("schedulerObservedGeneration".into(), generation.into());
        status.insert(
            "lastScheduledTime".into(),
            serde_json::to_value(&now).unwrap_or(Value::Null),
        );
        if let Some(affinity) = affinity {
            status.insert("schedulerObservingAffinityName".into(), affinity.into());
        }
    }
    (!status.is_empty()).then(|| json!({"status": status}))
}

/// Only the observed generation (a binding that needed no scheduling).
pub fn observed_generation_patch(generation: i64) -> Value {
    json!({"status": {"schedulerObservedGeneration": generation}})
}

/// Sets the `Scheduled` condition; `lastTransitionTime` moves only when the status flips.
/// Returns whether anything changed.
fn set_condition(conditions: &mut Vec<Condition>, outcome: &Outcome, now: &Time) -> bool {
    let status = if outcome.status { "True" } else { "False" };
    match conditions
        .iter_mut()
        .find(|c| c.type_ == CONDITION_SCHEDULED)
    {
        Some(existing) => {
            if existing.status == status
                && existing.reason == outcome.reason
                && existing.message == outcome.message
            {
                return false;
            }
            if existing.status != status {
                existing.last_transition_time = now.clone();
            }
            existing.status = status.to_owned();
            existing.reason.clone_from(&outcome.reason);
            existing.message.clone_from(&outcome.message);
            true
        }
        None => {
            conditions.push(Condition {
                type_: CONDITION_SCHEDULED.to_owned(),
                status: status.to_owned(),
                reason: outcome.reason.clone(),
                message: outcome.message.clone(),
                last_transition_time: now.clone(),
                observed_generation: None,
            });
            true
        }
    }
}

/// Karmada's success event text: `Binding has been scheduled successfully. Result: {a:2, b:3}`
/// (`Result {…}` for cluster-scoped bindings).
pub fn success_event_message(cluster_scoped: bool, clusters: &[TargetCluster]) -> String {
    let result = clusters
        .iter()
        .map(|t| format!("{}:{}", t.name, t.replicas))
        .collect::<Vec<_>>()
        .join(", ");
    if cluster_scoped {
        format!("Binding has been scheduled successfully. Result {{{result}}}")
    } else {
        format!("Binding has been scheduled successfully. Result: {{{result}}}")
    }
}

/// Karmada's event text for a clusterAffinities term that failed (its spelling
/// "clusterAffiliates" kept): `failed to schedule ResourceBinding(ns/name) with
/// clusterAffiliates index(1): <error>`.
pub fn term_failure_message(
    namespace: Option<&str>,
    name: &str,
    index: usize,
    error: &impl std::fmt::Display,
) -> String {
    match namespace {
        Some(namespace) => format!(
            "failed to schedule ResourceBinding({namespace}/{name}) with clusterAffiliates index({index}): {error}"
        ),
        None => format!(
            "failed to schedule ClusterResourceBinding({name}) with clusterAffiliates index({index}): {error}"
        ),
    }
}

/// Karmada's warning when a binding being deleted reaches the scheduler.
pub fn deleting_binding_message(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) => format!("skip schedule deleting resourceBinding: {namespace}/{name}"),
        None => format!("skip schedule deleting clusterResourceBinding: {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(seconds: i64) -> Time {
        Time(jiff::Timestamp::from_second(seconds).expect("valid time"))
    }

    fn target(name: &str, replicas: i32) -> TargetCluster {
        TargetCluster {
            name: name.to_owned(),
            replicas,
            ..TargetCluster::default()
        }
    }

    #[test]
    fn an_empty_result_removes_spec_clusters() {
        let patch = result_patch(&Placement::default(), &[]);
        assert_eq!(patch["spec"]["clusters"], Value::Null);
        assert!(
            patch["metadata"]["annotations"][ANNOTATION_APPLIED_PLACEMENT]
                .as_str()
                .is_some()
        );
    }

    #[test]
    fn transition_time_moves_only_when_the_status_flips() {
        let failed = Outcome {
            status: false,
            reason: "Unschedulable".into(),
            message: "not enough".into(),
        };
        let patch = status_patch(&ResourceBindingStatus::default(), &failed, time(10), None)
            .expect("a new condition is written");
        let mut status: ResourceBindingStatus =
            serde_json::from_value(patch["status"].clone()).expect("status");
        assert!(status_patch(&status, &failed, time(20), None).is_none());

        let other = Outcome {
            message: "still not enough".into(),
            ..failed.clone()
        };
        let patch = status_patch(&status, &other, time(30), None).expect("message changed");
        status = serde_json::from_value(patch["status"].clone()).expect("status");
        assert_eq!(status.conditions[0].last_transition_time, time(10));

        let ok = Outcome {
            status: true,
            reason: "Success".into(),
            message: "Binding has been scheduled successfully.".into(),
        };
        let patch =
            status_patch(&status, &ok, time(40), Some((7, Some("primary")))).expect("flipped");
        assert_eq!(patch["status"]["schedulerObservedGeneration"], 7);
        assert_eq!(patch["status"]["schedulerObservingAffinityName"], "primary");
        status = serde_json::from_value(patch["status"].clone()).expect("status");
        assert_eq!(status.conditions[0].last_transition_time, time(40));
        assert_eq!(status.last_scheduled_time, Some(time(40)));
    }

    #[test]
    fn success_messages_match_karmada() {
        let clusters = [target("member1", 2), target("member2", 3)];
        assert_eq!(
            success_event_message(false, &clusters),
            "Binding has been scheduled successfully. Result: {member1:2, member2:3}"
        );
        assert_eq!(
            success_event_message(true, &clusters),
            "Binding has been scheduled successfully. Result {member1:2, member2:3}"
        );
    }

    #[test]
    fn failure_messages_match_karmada() {
        assert_eq!(
            term_failure_message(Some("default"), "web-deployment", 1, &"boom"),
            "failed to schedule ResourceBinding(default/web-deployment) with clusterAffiliates index(1): boom"
        );
        assert_eq!(
            term_failure_message(None, "role", 0, &"boom"),
            "failed to schedule ClusterResourceBinding(role) with clusterAffiliates index(0): boom"
        );
        assert_eq!(
            deleting_binding_message(Some("default"), "web"),
            "skip schedule deleting resourceBinding: default/web"
        );
        assert_eq!(
            deleting_binding_message(None, "role"),
            "skip schedule deleting clusterResourceBinding: role"
        );
    }
}
