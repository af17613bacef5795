//! Replica assignment (Karmada's `AssignReplicas`): Duplicated, StaticWeight, DynamicWeight and
//! Aggregated, in Steady or Fresh mode, with overflow tiers.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_api::karmada::affinity::{CompiledAffinity, cluster_matches};
use flotilla_api::karmada::{
    ClusterAffinity, DIVISION_AGGREGATED, DIVISION_WEIGHTED, Placement, REPLICA_SCHEDULING_DIVIDED,
    REPLICA_SCHEDULING_DUPLICATED, ResourceBindingSpec, ResourceBindingStatus, TargetCluster,
    TargetComponent,
};

use crate::core::ScheduleError;
use crate::select::ClusterDetail;
use crate::webster::{spread_replicas_by_static_weights, spread_replicas_by_weights};

/// The assignment strategy a placement asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Every cluster gets all replicas.
    Duplicated,
    /// Fewest clusters by available replicas.
    Aggregated,
    /// Static weights (stateless).
    StaticWeight,
    /// Weights = available replicas.
    DynamicWeight,
}

/// Whether the previous result is kept (Steady) or recomputed (Fresh, on an explicit trigger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Only the difference is assigned.
    Steady,
    /// Everything is recomputed.
    Fresh,
}

/// The strategy of a placement, or the "unsupported" error Karmada reports.
pub fn strategy(placement: &Placement) -> Result<Strategy, ScheduleError> {
    let scheduling = placement.replica_scheduling.as_ref();
    let preference = scheduling.map_or("", |s| s.replica_division_preference.as_str());
    match placement.replica_scheduling_type() {
        REPLICA_SCHEDULING_DUPLICATED => return Ok(Strategy::Duplicated),
        REPLICA_SCHEDULING_DIVIDED => match preference {
            DIVISION_AGGREGATED => return Ok(Strategy::Aggregated),
            DIVISION_WEIGHTED => {
                let dynamic = scheduling
                    .and_then(|s| s.weight_preference.as_ref())
                    .is_some_and(|w| !w.dynamic_weight.is_empty());
                return Ok(if dynamic {
                    Strategy::DynamicWeight
                } else {
                    Strategy::StaticWeight
                });
            }
            _ => {}
        },
        _ => {}
    }
    Err(ScheduleError::Scheduler(format!(
        "unsupported replica scheduling strategy, replicaSchedulingType: {}, \
         replicaDivisionPreference: {preference}, please try another scheduling strategy",
        placement.replica_scheduling_type()
    )))
}

/// Inputs of one assignment.
#[derive(Debug, Clone, Copy)]
pub struct AssignInput<'a, 'c> {
    /// Selected candidates in candidate order.
    pub candidates: &'a [ClusterDetail<'c>],
    /// The binding spec (previous result in `clusters`).
    pub spec: &'a ResourceBindingSpec,
    /// The binding status (observed affinity term).
    pub status: &'a ResourceBindingStatus,
    /// The placement.
    pub placement: &'a Placement,
    /// Steady or Fresh.
    pub mode: Mode,
    /// Flotilla's node-count division: per cluster, the nodes that fit a replica. When set,
    /// Weighted placements divide by these weights instead.
    pub node_weights: Option<&'a BTreeMap<String, i64>>,
}

/// Karmada's `isMultiTemplateSchedulingApplicable`: the binding has components and a spread
/// constraint asks for exactly one cluster (the only placement a multi-component workload can
/// take whole).
pub fn multi_template_applicable(spec: &ResourceBindingSpec) -> bool {
    !spec.components.is_empty()
        && spec.placement.as_ref().is_some_and(|p| {
            p.spread_constraints
                .iter()
                .any(|c| c.spread_by_field == "cluster" && c.min_groups == 1 && c.max_groups == 1)
        })
}

/// Karmada's `AssignReplicas`. Errors are not yet wrapped with "failed to assign replicas:".
pub fn assign_replicas(input: AssignInput<'_, '_>) -> Result<Vec<TargetCluster>, ScheduleError> {
    if input.candidates.is_empty() {
        return Err(ScheduleError::Scheduler(
            "no clusters available to schedule".to_owned(),
        ));
    }
    let spec = input.spec;
    if (spec.replicas > 0 || spec.replica_requirements.is_some()) && spec.components.len() <= 1 {
        return assign_workload(input);
    }
    // Non-workloads and multi-component workloads go to every candidate; a multi-component
    // workload placed on exactly one cluster records its components there (Karmada's
    // `isMultiTemplateSchedulingApplicable`; components exist only under gate
    // `MultiplePodTemplatesScheduling`).
    let components: Vec<TargetComponent> =
        if spec.components.len() > 1 && multi_template_applicable(spec) {
            spec.components
                .iter()
                .map(|c| TargetComponent {
                    name: c.name.clone(),
                    replicas: c.replicas,
                })
                .collect()
        } else {
            Vec::new()
        };
    Ok(input
        .candidates
        .iter()
        .map(|c| TargetCluster {
            components: components.clone(),
            ..TargetCluster::new(c.name, 0)
        })
        .collect())
}

fn overflow_enabled(placement: &Placement, status: &ResourceBindingStatus) -> bool {
    if placement.cluster_affinity.is_some() || status.scheduler_observing_affinity_name.is_empty() {
        return false;
    }
    placement.cluster_affinities.iter().flatten().any(|t| {
        t.affinity_name == status.scheduler_observing_affinity_name
            && !t.overflow_affinities.is_empty()
    })
}

fn assign_workload(input: AssignInput<'_, '_>) -> Result<Vec<TargetCluster>, ScheduleError> {
    if !overflow_enabled(input.placement, input.status) {
        return assign_to_clusters(input, input.spec.replicas);
    }
    let mut tiers: BTreeMap<i32, (Vec<ClusterDetail<'_>>, i64)> = BTreeMap::new();
    for c in input.candidates {
        let tier = tiers.entry(c.overflow_order).or_default();
        tier.0.push(c.clone());
        tier.1 += c.available_replicas;
    }
    let mut results = Vec::new();
    let mut remaining = input.spec.replicas;
    for (clusters, capacity) in tiers.values() {
        let replicas = i64::from(remaining).min(*capacity) as i32;
        let tier_input = AssignInput {
            candidates: clusters,
            ..input
        };
        results.extend(assign_to_clusters(tier_input, replicas)?);
        remaining -= replicas;
        if remaining <= 0 {
            break;
        }
    }
    if remaining > 0 {
        return Err(ScheduleError::Unschedulable(
            "Clusters available replicas are not enough to schedule.".to_owned(),
        ));
    }
    Ok(results)
}

/// One strategy over `candidates` for `replicas` replicas; zero-replica entries removed.
fn assign_to_clusters(
    input: AssignInput<'_, '_>,
    replicas: i32,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    let strategy = strategy(input.placement)?;
    if let Some(node_weights) = input.node_weights
        && matches!(strategy, Strategy::StaticWeight | Strategy::DynamicWeight)
    {
        return by_node_count(input, replicas, node_weights);
    }
    let result = match strategy {
        Strategy::Duplicated => input
            .candidates
            .iter()
            .map(|c| TargetCluster::new(c.name, replicas))
            .collect(),
        Strategy::StaticWeight => static_weight(input, replicas),
        strategy @ (Strategy::DynamicWeight | Strategy::Aggregated) => {
            dynamic(input, replicas, strategy == Strategy::Aggregated)?
        }
    };
    Ok(result.into_iter().filter(|c| c.replicas > 0).collect())
}

/// Static weights: each candidate's weight is the largest weight of the rules matching it;
/// weightless clusters are no party; without any positive weight every candidate weighs 1.
fn static_weight(input: AssignInput<'_, '_>, replicas: i32) -> Vec<TargetCluster> {
    let rules = input
        .placement
        .replica_scheduling
        .as_ref()
        .and_then(|s| s.weight_preference.as_ref());
    let compiled: Vec<(CompiledAffinity<'_>, i64)> = rules
        .iter()
        .flat_map(|r| &r.static_weight_list)
        .map(|r| (CompiledAffinity::new(&r.target_cluster), r.weight))
        .collect();
    let mut weights: BTreeMap<String, i64> = BTreeMap::new();
    for c in input.candidates {
        let weight = match rules {
            // Karmada's default preference: weight 1 for each candidate by name.
            None => 1,
            Some(_) => compiled
                .iter()
                .filter(|(affinity, _)| affinity.matches(c.cluster))
                .map(|(_, weight)| *weight)
                .fold(0, i64::max),
        };
        if weight > 0 {
            weights.insert(c.name.to_owned(), weight);
        }
    }
    if weights.values().sum::<i64>() == 0 {
        weights = input
            .candidates
            .iter()
            .map(|c| (c.name.to_owned(), 1))
            .collect();
    }
    spread_replicas_by_static_weights(replicas, &weights, &input.spec.resource.uid)
}

/// Division by node count: weights = nodes that fit a replica in each candidate.
fn by_node_count(
    input: AssignInput<'_, '_>,
    replicas: i32,
    node_weights: &BTreeMap<String, i64>,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    let weights: BTreeMap<String, i64> = input
        .candidates
        .iter()
        .filter_map(|c| {
            let w = node_weights.get(c.name).copied().unwrap_or(0);
            (w > 0).then(|| (c.name.to_owned(), w))
        })
        .collect();
    if weights.is_empty() {
        return Err(ScheduleError::Unschedulable(
            "no node of the selected clusters fits a replica".to_owned(),
        ));
    }
    Ok(
        spread_replicas_by_static_weights(replicas, &weights, &input.spec.resource.uid)
            .into_iter()
            .filter(|c| c.replicas > 0)
            .collect(),
    )
}

/// Karmada's `sort.Sort(TargetClustersList)`: by replicas descending with Go's unstable sort
/// (stable up to 12 clusters), so equal weights end up where Karmada's would.
fn sort_desc(list: &mut [TargetCluster]) {
    crate::lifted::go_sort::sort(list, |a, b| a.replicas > b.replicas);
}

/// DynamicWeight and Aggregated. Aggregated puts the clusters already holding replicas first
/// only on a Steady scale-up; a Fresh reschedule divides as a first schedule does (Karmada's
/// `dynamicFreshScale` drops the previous result before dividing), so the clusters are ordered
/// by allocatable + held replicas alone and the workload may move.
fn dynamic(
    input: AssignInput<'_, '_>,
    replicas: i32,
    aggregated: bool,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    let candidate_names: BTreeSet<&str> = input.candidates.iter().map(|c| c.name).collect();
    let scheduled: Vec<TargetCluster> = input
        .spec
        .clusters
        .iter()
        .filter(|c| candidate_names.contains(c.name.as_str()))
        .cloned()
        .collect();
    let assigned: i32 = scheduled.iter().map(|c| c.replicas).sum();
    let allocatable = || -> Vec<TargetCluster> {
        input
            .candidates
            .iter()
            .map(|c| TargetCluster::new(c.name, c.allocatable_replicas))
            .collect()
    };
    let (wrapper, target, mut weights, previous) = if input.mode == Mode::Fresh {
        let mut weights = allocatable();
        for s in &scheduled {
            if let Some(w) = weights.iter_mut().find(|w| w.name == s.name) {
                w.replicas += s.replicas;
            }
        }
        ("failed to do fresh scale: ", replicas, weights, Vec::new())
    } else if assigned > replicas {
        (
            "failed to scale down: ",
            replicas,
            scheduled.clone(),
            Vec::new(),
        )
    } else if assigned < replicas {
        (
            "failed to scale up: ",
            replicas - assigned,
            allocatable(),
            scheduled.clone(),
        )
    } else {
        return Ok(scheduled);
    };
    sort_desc(&mut weights);
    let available: i64 = weights.iter().map(|w| i64::from(w.replicas)).sum();
    if available < i64::from(target) {
        return Err(ScheduleError::Unschedulable(format!(
            "{wrapper}Clusters available replicas {available} are not enough to schedule."
        )));
    }
    if aggregated {
        // On a scale-up, clusters already holding replicas first (relative order kept), then
        // the shortest prefix whose weights cover the target. `previous` is empty for Fresh
        // and scale-down, as Karmada's `scheduledClusters` is.
        let prior: BTreeSet<&str> = previous
            .iter()
            .filter(|c| c.replicas > 0)
            .map(|c| c.name.as_str())
            .collect();
        if !prior.is_empty() {
            let (mut front, back): (Vec<_>, Vec<_>) = weights
                .into_iter()
                .partition(|w| prior.contains(w.name.as_str()));
            front.extend(back);
            weights = front;
        }
        let mut sum = 0i64;
        if let Some(end) = weights.iter().position(|w| {
            sum += i64::from(w.replicas);
            sum >= i64::from(target)
        }) {
            weights.truncate(end + 1);
        }
    }
    let divided = spread_replicas_by_weights(target, &weights, &[], &input.spec.resource.uid);
    Ok(merge_target_clusters(previous, divided))
}

/// Karmada's `MergeTargetClusters`: per-cluster sums.
pub fn merge_target_clusters(
    old: Vec<TargetCluster>,
    mut new: Vec<TargetCluster>,
) -> Vec<TargetCluster> {
    if old.is_empty() {
        return new;
    }
    if new.is_empty() {
        return old;
    }
    let mut old: BTreeMap<String, i32> = old.into_iter().map(|c| (c.name, c.replicas)).collect();
    for c in &mut new {
        if let Some(v) = old.remove(&c.name) {
            c.replicas += v;
        }
    }
    new.extend(
        old.into_iter()
            .map(|(name, replicas)| TargetCluster::new(name, replicas)),
    );
    new
}

/// The overflow tier of a cluster: 0 for the term's inline affinity, `1 + i` for the first
/// matching overflow affinity `i`, 1000 otherwise; 0 without clusterAffinities.
pub fn overflow_order(
    cluster: &flotilla_api::karmada::Cluster,
    placement: &Placement,
    status: &ResourceBindingStatus,
) -> i32 {
    if placement.cluster_affinity.is_some() {
        return 0;
    }
    let Some(terms) = placement
        .cluster_affinities
        .as_ref()
        .filter(|t| !t.is_empty())
    else {
        return 0;
    };
    let Some(term) = terms
        .iter()
        .find(|t| t.affinity_name == status.scheduler_observing_affinity_name)
    else {
        return 1000;
    };
    if cluster_matches(cluster, &term.cluster_affinity) {
        return 0;
    }
    let overflow: Vec<&ClusterAffinity> = term
        .overflow_affinities
        .iter()
        .map(|o| &o.cluster_affinity)
        .collect();
    overflow
        .iter()
        .position(|a| cluster_matches(cluster, a))
        .map_or(1000, |i| i as i32 + 1)
}

#[cfg(test)]
mod tests;
