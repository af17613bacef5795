//! The cluster status controller's metrics, with the names, labels and help of Karmada's
//! `pkg/metrics/cluster.go` (label `member_cluster`), plus Flotilla's GPU gauges
//! (`flotilla_cluster_gpu_{allocatable,allocated}_number`, from `nvidia.com/gpu` in the resource
//! summary) that Karmada lacks. The agent exposes them for its own cluster, the controller
//! manager for every `Push` cluster; a cluster's series go away with it.

use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use flotilla_api::Quantity;
use flotilla_api::karmada::{CONDITION_READY, Cluster, ResourceList};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// A float gauge.
type FloatGauge = Gauge<f64, AtomicU64>;

/// The one label of most cluster metrics.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClusterLabels {
    pub member_cluster: String,
}

/// `cluster_health_probe_total`'s labels.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProbeLabels {
    pub member_cluster: String,
    pub result: String,
}

/// `cluster_health_transitions_total`'s labels.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TransitionLabels {
    pub member_cluster: String,
    pub from_state: String,
    pub to_state: String,
}

/// The GPU resource the GPU gauges read.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Prometheus' default histogram buckets (Karmada leaves `cluster_sync_status_duration_seconds`
/// on them).
const DEFAULT_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Karmada's buckets of `cluster_health_probe_duration_seconds`.
const PROBE_BUCKETS: [f64; 10] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

fn sync_histogram() -> Histogram {
    Histogram::new(DEFAULT_BUCKETS)
}

fn probe_histogram() -> Histogram {
    Histogram::new(PROBE_BUCKETS)
}

/// Every cluster metric; clones share their values.
#[derive(Debug, Clone)]
pub struct ClusterMetrics {
    pub ready: Family<ClusterLabels, FloatGauge>,
    pub nodes: Family<ClusterLabels, FloatGauge>,
    pub ready_nodes: Family<ClusterLabels, FloatGauge>,
    pub memory_allocatable: Family<ClusterLabels, FloatGauge>,
    pub cpu_allocatable: Family<ClusterLabels, FloatGauge>,
    pub pod_allocatable: Family<ClusterLabels, FloatGauge>,
    pub memory_allocated: Family<ClusterLabels, FloatGauge>,
    pub cpu_allocated: Family<ClusterLabels, FloatGauge>,
    pub pod_allocated: Family<ClusterLabels, FloatGauge>,
    pub gpu_allocatable: Family<ClusterLabels, FloatGauge>,
    pub gpu_allocated: Family<ClusterLabels, FloatGauge>,
    pub sync_status_duration: Family<ClusterLabels, Histogram, fn() -> Histogram>,
    pub probe_success: Family<ClusterLabels, FloatGauge>,
    pub probe_duration: Family<ClusterLabels, Histogram, fn() -> Histogram>,
    pub probe_total: Family<ProbeLabels, Counter>,
    pub ready_since: Family<ClusterLabels, FloatGauge>,
    pub last_transition: Family<ClusterLabels, FloatGauge>,
    pub transitions: Family<TransitionLabels, Counter>,
}

impl Default for ClusterMetrics {
    fn default() -> Self {
        Self {
            ready: Family::default(),
            nodes: Family::default(),
            ready_nodes: Family::default(),
            memory_allocatable: Family::default(),
            cpu_allocatable: Family::default(),
            pod_allocatable: Family::default(),
            memory_allocated: Family::default(),
            cpu_allocated: Family::default(),
            pod_allocated: Family::default(),
            gpu_allocatable: Family::default(),
            gpu_allocated: Family::default(),
            sync_status_duration: Family::new_with_constructor(sync_histogram),
            probe_success: Family::default(),
            probe_duration: Family::new_with_constructor(probe_histogram),
            probe_total: Family::default(),
            ready_since: Family::default(),
            last_transition: Family::default(),
            transitions: Family::default(),
        }
    }
}

fn labels(cluster: &str) -> ClusterLabels {
    ClusterLabels {
        member_cluster: cluster.to_owned(),
    }
}

/// A resource of a list as a float (cores for CPU, bytes for memory); `None` when absent.
fn resource(list: Option<&ResourceList>, name: &str) -> Option<f64> {
    list?.get(name).map(Quantity::as_f64)
}

fn unix_seconds(at: SystemTime) -> f64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64().floor())
        .unwrap_or(0.0)
}

impl ClusterMetrics {
    /// Registers every metric under Karmada's names (unprefixed, as Karmada's components
    /// export them) and the GPU gauges under `flotilla_`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "cluster_ready_state",
            "State of the cluster (1 if ready, 0 otherwise).",
            self.ready.clone(),
        );
        registry.register(
            "cluster_node_number",
            "Number of nodes in the cluster.",
            self.nodes.clone(),
        );
        registry.register(
            "cluster_ready_node_number",
            "Number of ready nodes in the cluster.",
            self.ready_nodes.clone(),
        );
        registry.register(
            "cluster_memory_allocatable_bytes",
            "Allocatable cluster memory resource in bytes.",
            self.memory_allocatable.clone(),
        );
        registry.register(
            "cluster_cpu_allocatable_number",
            "Number of allocatable CPU in the cluster.",
            self.cpu_allocatable.clone(),
        );
        registry.register(
            "cluster_pod_allocatable_number",
            "Number of allocatable pods in the cluster.",
            self.pod_allocatable.clone(),
        );
        registry.register(
            "cluster_memory_allocated_bytes",
            "Allocated cluster memory resource in bytes.",
            self.memory_allocated.clone(),
        );
        registry.register(
            "cluster_cpu_allocated_number",
            "Number of allocated CPU in the cluster.",
            self.cpu_allocated.clone(),
        );
        registry.register(
            "cluster_pod_allocated_number",
            "Number of allocated pods in the cluster.",
            self.pod_allocated.clone(),
        );
        registry.register(
            "cluster_sync_status_duration_seconds",
            "Duration in seconds for syncing the status of the cluster once.",
            self.sync_status_duration.clone(),
        );
        registry.register(
            "cluster_health_probe_success",
            "Result of the last health probe of the member cluster (1 success, 0 failure), before the threshold adjustment.",
            self.probe_success.clone(),
        );
        registry.register(
            "cluster_health_probe_duration_seconds",
            "Duration in seconds of the health probe to the member cluster.",
            self.probe_duration.clone(),
        );
        registry.register(
            "cluster_health_probe",
            "Health probes of the member cluster by result (success or error).",
            self.probe_total.clone(),
        );
        registry.register(
            "cluster_ready_since_timestamp_seconds",
            "Unix time the member cluster last became Ready; 0 while it is not Ready.",
            self.ready_since.clone(),
        );
        registry.register(
            "cluster_condition_last_transition_timestamp_seconds",
            "Unix time of the member cluster's last Ready transition.",
            self.last_transition.clone(),
        );
        registry.register(
            "cluster_health_transitions",
            "Ready transitions of the member cluster (after the threshold adjustment) by from_state and to_state.",
            self.transitions.clone(),
        );
        let flotilla = registry.sub_registry_with_prefix("flotilla");
        flotilla.register(
            "cluster_gpu_allocatable_number",
            "Allocatable nvidia.com/gpu in the cluster (sum over its nodes).",
            self.gpu_allocatable.clone(),
        );
        flotilla.register(
            "cluster_gpu_allocated_number",
            "nvidia.com/gpu requested by the pods bound to the cluster's nodes.",
            self.gpu_allocated.clone(),
        );
    }

    /// One probe's raw outcome and how long it took.
    pub fn probe(&self, cluster: &str, online: bool, healthy: bool, took: Duration) {
        let ok = online && healthy;
        let l = labels(cluster);
        self.probe_success
            .get_or_create(&l)
            .set(if ok { 1.0 } else { 0.0 });
        self.probe_duration
            .get_or_create(&l)
            .observe(took.as_secs_f64());
        self.probe_total
            .get_or_create(&ProbeLabels {
                member_cluster: cluster.to_owned(),
                result: if ok { "success" } else { "error" }.to_owned(),
            })
            .inc();
    }

    /// One status sync took `took`.
    pub fn synced(&self, cluster: &str, took: Duration) {
        self.sync_status_duration
            .get_or_create(&labels(cluster))
            .observe(took.as_secs_f64());
    }

    /// The Ready status moved from `from` to `to` (after the thresholds) at `at`; nothing
    /// happens when it did not move. A first status counts from `Unknown`.
    pub fn transition(&self, cluster: &str, from: Option<&str>, to: &str, at: SystemTime) {
        let from = from.unwrap_or("Unknown");
        if from == to {
            return;
        }
        let l = labels(cluster);
        let now = unix_seconds(at);
        self.ready_since
            .get_or_create(&l)
            .set(if to == "True" { now } else { 0.0 });
        self.last_transition.get_or_create(&l).set(now);
        self.transitions
            .get_or_create(&TransitionLabels {
                member_cluster: cluster.to_owned(),
                from_state: from.to_owned(),
                to_state: to.to_owned(),
            })
            .inc();
    }

    /// The gauges from the cluster's (written) status.
    pub fn status(&self, cluster: &Cluster) {
        let l = labels(cluster.name());
        let status = cluster.status.as_ref();
        let ready = status
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == CONDITION_READY))
            .is_some_and(|c| c.status == "True");
        self.ready
            .get_or_create(&l)
            .set(if ready { 1.0 } else { 0.0 });
        if let Some(nodes) = status.and_then(|s| s.node_summary.as_ref()) {
            self.nodes.get_or_create(&l).set(f64::from(nodes.total_num));
            self.ready_nodes
                .get_or_create(&l)
                .set(f64::from(nodes.ready_num));
        }
        let Some(summary) = status.and_then(|s| s.resource_summary.as_ref()) else {
            return;
        };
        let gauges = [
            (
                summary.allocatable.as_ref(),
                [
                    ("memory", &self.memory_allocatable),
                    ("cpu", &self.cpu_allocatable),
                    ("pods", &self.pod_allocatable),
                    (GPU_RESOURCE, &self.gpu_allocatable),
                ],
            ),
            (
                summary.allocated.as_ref(),
                [
                    ("memory", &self.memory_allocated),
                    ("cpu", &self.cpu_allocated),
                    ("pods", &self.pod_allocated),
                    (GPU_RESOURCE, &self.gpu_allocated),
                ],
            ),
        ];
        for (list, targets) in gauges {
            let Some(list) = list else { continue };
            for (name, family) in targets {
                // Karmada reads a missing resource as zero.
                family
                    .get_or_create(&l)
                    .set(resource(Some(list), name).unwrap_or(0.0));
            }
        }
    }

    /// Removes every series of `cluster` (it was deleted or is no longer served here).
    pub fn forget(&self, cluster: &str) {
        let l = labels(cluster);
        for family in [
            &self.ready,
            &self.nodes,
            &self.ready_nodes,
            &self.memory_allocatable,
            &self.cpu_allocatable,
            &self.pod_allocatable,
            &self.memory_allocated,
            &self.cpu_allocated,
            &self.pod_allocated,
            &self.gpu_allocatable,
            &self.gpu_allocated,
            &self.probe_success,
            &self.ready_since,
            &self.last_transition,
        ] {
            family.remove(&l);
        }
        self.sync_status_duration.remove(&l);
        self.probe_duration.remove(&l);
        for result in ["success", "error"] {
            self.probe_total.remove(&ProbeLabels {
                member_cluster: cluster.to_owned(),
                result: result.to_owned(),
            });
        }
        for from in ["True", "False", "Unknown"] {
            for to in ["True", "False", "Unknown"] {
                self.transitions.remove(&TransitionLabels {
                    member_cluster: cluster.to_owned(),
                    from_state: from.to_owned(),
                    to_state: to.to_owned(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
