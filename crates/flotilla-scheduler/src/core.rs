//! The pure deterministic core: `schedule(snapshot, binding, options)` = filter → score →
//! select → assign, with the clusterAffinities fallback loop and Karmada's error messages.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::karmada::{
    Cluster, Placement, ResourceBindingSpec, ResourceBindingStatus, TargetCluster,
};

use crate::assign::{AssignInput, Mode, assign_replicas, overflow_order};
use crate::estimator::topology::{AlignedEstimator, GpuTopologyLevel, gpus_per_replica};
use crate::estimator::{
    AccurateEstimator, GeneralRequest, ReplicaEstimator, SummaryFigures, UNAUTHENTIC_REPLICA,
};
use crate::framework::{Framework, PluginContext, Prepared};
use crate::select::{ClusterDetail, select_best_clusters, sort_candidates};

/// A point-in-time copy of the clusters the scheduler knows, with their resource summaries
/// digested once for the general estimator. The clusters are shared with the informer's cache:
/// a new snapshot (after any Cluster change) copies pointers, not Clusters.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    clusters: Vec<Arc<Cluster>>,
    figures: Vec<SummaryFigures>,
}

impl Snapshot {
    /// A snapshot of `clusters`.
    pub fn new(clusters: Vec<Cluster>) -> Self {
        Self::shared(clusters.into_iter().map(Arc::new).collect())
    }

    /// A snapshot of clusters shared with their owner (the scheduler's informer cache).
    pub fn shared(clusters: Vec<Arc<Cluster>>) -> Self {
        let figures = clusters.iter().map(|c| SummaryFigures::new(c)).collect();
        Self { clusters, figures }
    }

    /// All clusters (including deleting ones, which count in FitError's total).
    pub fn clusters(&self) -> impl ExactSizeIterator<Item = &Cluster> {
        self.clusters.iter().map(|c| &**c)
    }

    /// The cluster named `name`.
    pub fn get(&self, name: &str) -> Option<&Cluster> {
        self.clusters
            .iter()
            .find(|c| c.name() == name)
            .map(|c| &**c)
    }
}

/// Options of one scheduling run.
#[derive(Debug, Clone, Copy)]
pub struct ScheduleOptions<'a> {
    /// The enabled plugins.
    pub framework: &'a Framework,
    /// Estimators besides the always-on general estimator (e.g. the accurate one).
    pub estimators: &'a [&'a dyn ReplicaEstimator],
    /// Karmada's `--enable-empty-workload-propagation`: selected clusters that got no replicas
    /// are listed with 0.
    pub enable_empty_workload_propagation: bool,
    /// Flotilla extension (`flotilla.io/replica-division: NodeCount`): Weighted placements
    /// divide by the number of nodes that fit a replica in each cluster, counted by this
    /// estimator. `None` = Karmada's behaviour.
    pub divide_by_node_count: Option<&'a AccurateEstimator>,
    /// Flotilla extension (`flotilla.io/gpu-topology`): place GPU replicas counting only
    /// capacity where each replica's GPUs share a NUMA node / PCIe switch, falling back to
    /// Karmada's counting when that does not fit. `None` = Karmada's behaviour.
    pub gpu_topology: Option<(&'a AccurateEstimator, GpuTopologyLevel)>,
    /// Gate `WorkloadAffinity`: the binding's group peers, for the WorkloadAffinity and
    /// WorkloadAntiAffinity filters.
    pub workload_peers: Option<&'a crate::framework::WorkloadPeers>,
    /// Gate `SchedulingOvercommitProtection`: the assumed in-flight workloads by cluster, which
    /// every estimator deducts ([`crate::assume`]).
    pub assumed: Option<&'a crate::assume::AssumedByCluster>,
}

/// A successful schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleResult {
    /// The new `spec.clusters`, sorted by name.
    pub clusters: Vec<TargetCluster>,
    /// The clusterAffinities term that succeeded (to store in
    /// `status.schedulerObservingAffinityName`), if the placement uses clusterAffinities.
    pub affinity_name: Option<String>,
}

/// No cluster passed the filters. `Display` is Karmada's condition message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitError {
    /// Clusters in the snapshot.
    pub num_all_clusters: usize,
    /// Per filtered cluster, the reasons of the plugin that rejected it.
    pub diagnosis: BTreeMap<String, Vec<String>>,
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.num_all_clusters == 0 || self.diagnosis.is_empty() {
            return write!(
                f,
                "0/{} clusters are available: no cluster exists.",
                self.num_all_clusters
            );
        }
        let mut histogram: BTreeMap<&str, usize> = BTreeMap::new();
        for reason in self.diagnosis.values().flatten() {
            *histogram.entry(reason).or_default() += 1;
        }
        // Go sorts the "<count> <reason>" strings themselves.
        let mut parts: Vec<String> = histogram
            .into_iter()
            .map(|(reason, count)| format!("{count} {reason}"))
            .collect();
        parts.sort();
        write!(
            f,
            "0/{} clusters are available: {}.",
            self.num_all_clusters,
            parts.join(", ")
        )
    }
}

/// Why scheduling failed. `Display` is the exact text Karmada puts in the `Scheduled`
/// condition; [`ScheduleError::reason`] is the condition's reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// No cluster fits: Karmada clears `spec.clusters` and reports `NoClusterFit`.
    #[error("{0}")]
    NoClusterFit(FitError),
    /// Not enough capacity: nothing is written, reason `Unschedulable`.
    #[error("{0}")]
    Unschedulable(String),
    /// Anything else (selection errors, unsupported strategies): reason `SchedulerError`.
    #[error("{0}")]
    Scheduler(String),
}

impl ScheduleError {
    /// The `Scheduled` condition reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NoClusterFit(_) => flotilla_api::karmada::REASON_NO_CLUSTER_FIT,
            Self::Unschedulable(_) => flotilla_api::karmada::REASON_UNSCHEDULABLE,
            Self::Scheduler(_) => flotilla_api::karmada::REASON_SCHEDULER_ERROR,
        }
    }

    fn wrap(self, prefix: &str) -> Self {
        match self {
            Self::NoClusterFit(e) => Self::NoClusterFit(e),
            Self::Unschedulable(m) => Self::Unschedulable(format!("{prefix}{m}")),
            Self::Scheduler(m) => Self::Scheduler(format!("{prefix}{m}")),
        }
    }
}

/// Whether an explicit reschedule is due: `rescheduleTriggeredAt` after `lastScheduledTime`
/// (both set).
pub fn reschedule_required(spec: &ResourceBindingSpec, status: &ResourceBindingStatus) -> bool {
    match (&spec.reschedule_triggered_at, &status.last_scheduled_time) {
        (Some(trigger), Some(last)) => trigger.0 > last.0,
        _ => false,
    }
}

/// Schedules a binding: Karmada's `scheduleResourceBinding` without the writes. `spec.clusters`
/// is the previous result. With `clusterAffinities` the terms are tried from the observed one (or
/// the first on a Fresh reschedule); the first error is returned when all fail.
pub fn schedule(
    snapshot: &Snapshot,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    options: &ScheduleOptions<'_>,
) -> Result<ScheduleResult, ScheduleError> {
    schedule_traced(snapshot, spec, status, options).result
}

/// A clusterAffinities term that failed before the run ended (Karmada records a
/// `ScheduleBindingFailed` event for each, whatever the final outcome).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermFailure {
    /// The term's index in `placement.clusterAffinities`.
    pub index: usize,
    /// Why the term failed.
    pub error: ScheduleError,
}

/// The outcome of [`schedule_traced`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracedSchedule {
    /// What [`schedule`] returns.
    pub result: Result<ScheduleResult, ScheduleError>,
    /// The clusterAffinities terms tried and failed, in order (empty without clusterAffinities).
    pub failed_terms: Vec<TermFailure>,
}

/// [`schedule`], also reporting each clusterAffinities term that failed on the way.
pub fn schedule_traced(
    snapshot: &Snapshot,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    options: &ScheduleOptions<'_>,
) -> TracedSchedule {
    let untraced = |result| TracedSchedule {
        result,
        failed_terms: Vec::new(),
    };
    let Some(placement) = &spec.placement else {
        return untraced(Err(ScheduleError::Scheduler(format!(
            "failed to get placement from resourceBinding({})",
            spec.resource.name
        ))));
    };
    // An empty list is no list: Karmada's `clusterAffinities` is `omitempty`, so `[]` in a policy
    // never reaches the scheduler (the binding the detector writes omits it) and the binding is
    // scheduled as without affinity.
    let Some(terms) = placement
        .cluster_affinities
        .as_ref()
        .filter(|t| !t.is_empty())
    else {
        return untraced(
            schedule_once(snapshot, spec, status, placement, options).map(|clusters| {
                ScheduleResult {
                    clusters,
                    affinity_name: None,
                }
            }),
        );
    };
    let mut index = if reschedule_required(spec, status) {
        0
    } else {
        terms
            .iter()
            .position(|t| t.affinity_name == status.scheduler_observing_affinity_name)
            .unwrap_or(0)
    };
    let mut failed_terms: Vec<TermFailure> = Vec::new();
    let mut trial = status.clone();
    while index < terms.len() {
        trial
            .scheduler_observing_affinity_name
            .clone_from(&terms[index].affinity_name);
        match schedule_once(snapshot, spec, &trial, placement, options) {
            Ok(clusters) => {
                return TracedSchedule {
                    result: Ok(ScheduleResult {
                        clusters,
                        affinity_name: Some(terms[index].affinity_name.clone()),
                    }),
                    failed_terms,
                };
            }
            Err(error) => failed_terms.push(TermFailure { index, error }),
        }
        index += 1;
    }
    // Every term from the start index failed: the first error is the result.
    let first = failed_terms
        .first()
        .map(|f| f.error.clone())
        .unwrap_or_else(|| {
            ScheduleError::Scheduler("no clusterAffinities term was tried".to_owned())
        });
    TracedSchedule {
        result: Err(first),
        failed_terms,
    }
}

/// One scheduling pass; with the GPU topology preference, first with aligned capacity only.
fn schedule_once(
    snapshot: &Snapshot,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    placement: &Placement,
    options: &ScheduleOptions<'_>,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    if let Some((accurate, level)) = options.gpu_topology
        && gpus_per_replica(spec.replica_requirements.as_ref()) > 0
    {
        let aligned = AlignedEstimator { accurate, level };
        let mut estimators: Vec<&dyn ReplicaEstimator> = options.estimators.to_vec();
        estimators.push(&aligned);
        let trial = ScheduleOptions {
            estimators: &estimators,
            gpu_topology: None,
            ..*options
        };
        if let Ok(clusters) = generic_schedule(snapshot, spec, status, placement, &trial) {
            return Ok(clusters);
        }
    }
    generic_schedule(snapshot, spec, status, placement, options)
}

/// Karmada's `genericScheduler.Schedule`.
fn generic_schedule(
    snapshot: &Snapshot,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    placement: &Placement,
    options: &ScheduleOptions<'_>,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    let mut prepared = Prepared::new(spec, status, placement);
    prepared.workload_peers = options.workload_peers;
    // Filter.
    let mut feasible: Vec<&Cluster> = Vec::new();
    let mut feasible_figures: Vec<&SummaryFigures> = Vec::new();
    let mut diagnosis = BTreeMap::new();
    for (cluster, figures) in snapshot.clusters().zip(&snapshot.figures) {
        if cluster.is_deleting() {
            continue;
        }
        let ctx = PluginContext {
            spec,
            status,
            placement,
            cluster,
            prepared: &prepared,
        };
        let result = options.framework.run_filters(&ctx);
        if result.is_success() {
            feasible.push(cluster);
            feasible_figures.push(figures);
        } else {
            diagnosis.insert(cluster.name().to_owned(), result.reasons);
        }
    }
    if feasible.is_empty() {
        return Err(ScheduleError::NoClusterFit(FitError {
            num_all_clusters: snapshot.clusters.len(),
            diagnosis,
        }));
    }
    // Score.
    let scores = options
        .framework
        .run_scores(spec, status, placement, &prepared, &feasible)
        .map_err(|e| ScheduleError::Scheduler(format!("failed to prioritize clusters: {e}")))?;
    // Select. A multi-component workload placed on exactly one cluster is estimated in whole
    // component sets and needs one (Karmada's multi-template scheduling).
    let multi_template = crate::assign::multi_template_applicable(spec);
    // Assumed in-flight workloads count as allocating in the summaries.
    let deducted: Vec<Option<SummaryFigures>> = feasible
        .iter()
        .zip(&feasible_figures)
        .map(|(cluster, figures)| {
            options
                .assumed
                .and_then(|a| a.get(cluster.name()))
                .map(|workloads| figures.deducted(workloads))
        })
        .collect();
    let feasible_figures: Vec<&SummaryFigures> = feasible_figures
        .iter()
        .zip(&deducted)
        .map(|(figures, deducted)| deducted.as_ref().unwrap_or(figures))
        .collect();
    let estimates = if multi_template {
        available_sets(&feasible, &feasible_figures, spec, options)
    } else {
        available_replicas_assuming(
            &feasible,
            &feasible_figures,
            spec,
            options.estimators,
            options.assumed,
        )
    };
    let mut candidates: Vec<ClusterDetail<'_>> = feasible
        .iter()
        .zip(scores)
        .zip(estimates)
        .map(|((&cluster, score), estimate)| ClusterDetail {
            name: cluster.name(),
            score,
            overflow_order: overflow_order(cluster, placement, status),
            available_replicas: i64::from(estimate)
                + i64::from(spec.assigned_replicas_for_cluster(cluster.name())),
            allocatable_replicas: estimate,
            cluster,
        })
        .collect();
    sort_candidates(&mut candidates);
    let need = if multi_template { 1 } else { spec.replicas };
    let selected = select_best_clusters(placement, spec, &candidates, need)
        .map_err(|e| ScheduleError::Scheduler(format!("failed to select clusters: {e}")))?;
    // Assign.
    let mode = if reschedule_required(spec, status) {
        Mode::Fresh
    } else {
        Mode::Steady
    };
    let node_weights: Option<BTreeMap<String, i64>> = options.divide_by_node_count.map(|e| {
        selected
            .iter()
            .map(|c| {
                let n = e.fitting_nodes(c.name, spec.replica_requirements.as_ref());
                (c.name.to_owned(), n.unwrap_or(0))
            })
            .collect()
    });
    let mut clusters = assign_replicas(AssignInput {
        candidates: &selected,
        spec,
        status,
        placement,
        mode,
        node_weights: node_weights.as_ref(),
    })
    .map_err(|e| e.wrap("failed to assign replicas: "))?;
    if options.enable_empty_workload_propagation {
        for c in &selected {
            if !clusters.iter().any(|t| t.name == c.name) {
                clusters.push(TargetCluster::new(c.name, 0));
            }
        }
    }
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(clusters)
}

/// Karmada's multi-template estimate: whole component sets per cluster, the minimum of the
/// general estimator's and every other estimator's answer (`-1` ignored).
fn available_sets(
    clusters: &[&Cluster],
    figures: &[&SummaryFigures],
    spec: &ResourceBindingSpec,
    options: &ScheduleOptions<'_>,
) -> Vec<i32> {
    let mut available: Vec<i32> = figures
        .iter()
        .map(|figures| crate::estimator::general_max_sets(figures, &spec.components))
        .collect();
    let none = crate::assume::AssumedByCluster::new();
    let assumed = options.assumed.unwrap_or(&none);
    for estimator in options.estimators {
        let answers = estimator.max_available_sets(
            clusters,
            &spec.resource.namespace,
            &spec.components,
            assumed,
        );
        for (slot, answer) in available.iter_mut().zip(answers) {
            if answer != UNAUTHENTIC_REPLICA && answer < *slot {
                *slot = answer;
            }
        }
    }
    available
}

/// Karmada's `calAvailableReplicas`: the minimum over estimators (the general one always), `-1`
/// ignored; non-workloads skip estimation (`i32::MAX`); clusters no estimator answered get
/// `spec.replicas`.
pub fn available_replicas(
    clusters: &[&Cluster],
    figures: &[&SummaryFigures],
    spec: &ResourceBindingSpec,
    extra: &[&dyn ReplicaEstimator],
) -> Vec<i32> {
    available_replicas_assuming(clusters, figures, spec, extra, None)
}

/// [`available_replicas`] with the assumed in-flight workloads deducted by every estimator
/// (`figures` already deducted for the general one).
pub fn available_replicas_assuming(
    clusters: &[&Cluster],
    figures: &[&SummaryFigures],
    spec: &ResourceBindingSpec,
    extra: &[&dyn ReplicaEstimator],
    assumed: Option<&crate::assume::AssumedByCluster>,
) -> Vec<i32> {
    let mut available = vec![i32::MAX; clusters.len()];
    if spec.replicas == 0 && spec.components.is_empty() {
        return available;
    }
    let requirements = spec.replica_requirements.as_ref();
    // The general estimator, over figures digested once per snapshot.
    let request = GeneralRequest::new(requirements);
    for ((slot, cluster), figures) in available.iter_mut().zip(clusters).zip(figures) {
        let answer = figures.estimate(cluster, requirements, &request);
        if answer != UNAUTHENTIC_REPLICA && answer < *slot {
            *slot = answer;
        }
    }
    for estimator in extra {
        let answers = match assumed {
            Some(assumed) => {
                estimator.max_available_replicas_assuming(clusters, requirements, assumed)
            }
            None => estimator.max_available_replicas(clusters, requirements),
        };
        for (slot, answer) in available.iter_mut().zip(answers) {
            if answer != UNAUTHENTIC_REPLICA && answer < *slot {
                *slot = answer;
            }
        }
    }
    for slot in &mut available {
        if *slot == i32::MAX {
            *slot = spec.replicas;
        }
    }
    available
}

#[cfg(test)]
mod tests;
