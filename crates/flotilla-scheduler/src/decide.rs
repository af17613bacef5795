//! Whether a binding needs scheduling (Karmada's `doScheduleBinding` decision, §3.2): placement
//! changed, replicas changed, explicit reschedule, always for Duplicated and non-workloads, or a
//! targeted cluster being deleted.

use std::collections::BTreeMap;

use flotilla_api::karmada::affinity::cluster_matches;
use flotilla_api::karmada::{
    ANNOTATION_APPLIED_PLACEMENT, Cluster, ClusterAffinityTerm, Placement,
    REPLICA_SCHEDULING_DIVIDED, REPLICA_SCHEDULING_DUPLICATED, ResourceBindingSpec,
    ResourceBindingStatus,
};

use crate::core::{Snapshot, reschedule_required};

/// Why a binding is (re)scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleTrigger {
    /// No applied placement yet, or it differs (metric schedule_type `ReconcileSchedule`).
    PlacementChanged,
    /// Replicas differ from the sum of the result (`ScaleSchedule`).
    ReplicasChanged,
    /// `rescheduleTriggeredAt` after `lastScheduledTime` (a Fresh reschedule).
    RescheduleTriggered,
    /// Duplicated placement or a non-workload: always rescheduled.
    Always,
    /// A targeted cluster is being deleted.
    TargetClusterDeleting,
}

/// The decision for a binding given its annotations, spec, status and the clusters. `None` means
/// nothing to do (Karmada then only records `schedulerObservedGeneration`).
pub fn should_schedule(
    annotations: Option<&BTreeMap<String, String>>,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    snapshot: &Snapshot,
) -> Option<ScheduleTrigger> {
    let placement = spec.placement.as_ref()?;
    let applied = annotations
        .and_then(|a| a.get(ANNOTATION_APPLIED_PLACEMENT))
        .map(String::as_str)
        .unwrap_or_default();
    if placement_changed(
        placement,
        applied,
        &status.scheduler_observing_affinity_name,
    ) {
        return Some(ScheduleTrigger::PlacementChanged);
    }
    if replicas_changed(spec, placement) {
        return Some(ScheduleTrigger::ReplicasChanged);
    }
    if reschedule_required(spec, status) {
        return Some(ScheduleTrigger::RescheduleTriggered);
    }
    if !spec.is_workload() || placement.replica_scheduling_type() == REPLICA_SCHEDULING_DUPLICATED {
        return Some(ScheduleTrigger::Always);
    }
    let deleting = spec
        .clusters
        .iter()
        .any(|t| snapshot.get(&t.name).is_some_and(|c| c.is_deleting()));
    deleting.then_some(ScheduleTrigger::TargetClusterDeleting)
}

/// Karmada's `placementChanged`: no annotation ⇒ changed; an unparsable one ⇒ unchanged; equal
/// ⇒ unchanged; a difference in affinity, tolerations, spread constraints or replica scheduling
/// ⇒ changed; otherwise only the observed clusterAffinities term is compared.
pub fn placement_changed(placement: &Placement, applied: &str, observed_affinity: &str) -> bool {
    if applied.is_empty() {
        return true;
    }
    let Ok(mut applied) = serde_json::from_str::<Placement>(applied) else {
        return false;
    };
    // Karmada compares Go structs decoded from JSON, where an empty `clusterAffinities` is absent.
    let empty = |p: &Placement| p.cluster_affinities.as_ref().is_some_and(Vec::is_empty);
    if empty(&applied) {
        applied.cluster_affinities = None;
    }
    let unchanged = if empty(placement) {
        let mut normalized = placement.clone();
        normalized.cluster_affinities = None;
        normalized == applied
    } else {
        *placement == applied
    };
    if unchanged {
        return false;
    }
    if placement.cluster_affinity != applied.cluster_affinity
        || placement.cluster_tolerations != applied.cluster_tolerations
        || placement.spread_constraints != applied.spread_constraints
        || placement.replica_scheduling != applied.replica_scheduling
    {
        return true;
    }
    if observed_affinity.is_empty() {
        return true;
    }
    let find = |terms: &Option<Vec<ClusterAffinityTerm>>| -> Option<ClusterAffinityTerm> {
        terms
            .iter()
            .flatten()
            .find(|t| t.affinity_name == observed_affinity)
            .cloned()
    };
    match (
        find(&placement.cluster_affinities),
        find(&applied.cluster_affinities),
    ) {
        (Some(a), Some(b)) => a != b,
        _ => true,
    }
}

/// Karmada's `IsBindingReplicasChanged` (only with a replicaScheduling strategy).
pub fn replicas_changed(spec: &ResourceBindingSpec, placement: &Placement) -> bool {
    let Some(strategy) = &placement.replica_scheduling else {
        return false;
    };
    match strategy.replica_scheduling_type.as_str() {
        REPLICA_SCHEDULING_DUPLICATED => spec.clusters.iter().any(|c| c.replicas != spec.replicas),
        REPLICA_SCHEDULING_DIVIDED => {
            spec.clusters.iter().map(|c| c.replicas).sum::<i32>() != spec.replicas
        }
        _ => false,
    }
}

/// Karmada's `enqueueAffectedBindings`: whether a change of `cluster` (seen before and after the
/// change) concerns a binding of generation `generation`. With clusterAffinities a binding whose
/// last result is stale (`schedulerObservedGeneration` behind) always is; otherwise the affinity in
/// force (the observed term, or `clusterAffinity`) must be absent or match the cluster.
pub fn affected_by_cluster(
    generation: i64,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    cluster: &Cluster,
) -> bool {
    let Some(placement) = &spec.placement else {
        return false;
    };
    let affinity = match placement.cluster_affinities.as_deref() {
        // An empty list is no list (`omitempty` in Karmada), as in the core.
        Some(terms) if !terms.is_empty() => {
            if status.scheduler_observed_generation != generation {
                return true;
            }
            let index = terms
                .iter()
                .position(|t| t.affinity_name == status.scheduler_observing_affinity_name)
                .unwrap_or(0);
            terms.get(index).map(|t| &t.cluster_affinity)
        }
        _ => placement.cluster_affinity.as_ref(),
    };
    affinity.is_none_or(|affinity| cluster_matches(cluster, affinity))
}

#[cfg(test)]
mod tests;
