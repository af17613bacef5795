//! The scheduler's Prometheus metrics, with Karmada's names so existing dashboards and alerts
//! keep working.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// `result` and `schedule_type` labels.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AttemptLabels {
    pub result: String,
    pub schedule_type: String,
}

/// `event` label of incoming bindings.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct IncomingLabels {
    pub event: String,
}

/// `schedule_step` label.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    pub schedule_step: String,
}

/// `queue` label of pending bindings.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabels {
    pub queue: String,
}

fn duration_histogram() -> Histogram {
    // 1 ms … ~16 s, as Karmada's exponential buckets.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Every metric of the run loop.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub schedule_attempts: Family<AttemptLabels, Counter>,
    pub e2e_duration: Family<AttemptLabels, Histogram, fn() -> Histogram>,
    pub algorithm_duration: Family<StepLabels, Histogram, fn() -> Histogram>,
    pub incoming_bindings: Family<IncomingLabels, Counter>,
    pub pending: Family<QueueLabels, Gauge>,
    pub pending_workloads: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            schedule_attempts: Family::default(),
            e2e_duration: Family::new_with_constructor(duration_histogram),
            algorithm_duration: Family::new_with_constructor(duration_histogram),
            incoming_bindings: Family::default(),
            pending: Family::default(),
            pending_workloads: Gauge::default(),
        }
    }
}

impl Metrics {
    /// Registers the metrics (names as Karmada's `karmada_scheduler_*`).
    pub fn register(&self, registry: &mut Registry) {
        let karmada = registry.sub_registry_with_prefix("karmada_scheduler");
        karmada.register(
            "schedule_attempts",
            "Number of attempts to schedule resourceBinding",
            self.schedule_attempts.clone(),
        );
        karmada.register(
            "e2e_scheduling_duration_seconds",
            "E2E scheduling latency in seconds",
            self.e2e_duration.clone(),
        );
        karmada.register(
            "scheduling_algorithm_duration_seconds",
            "Scheduling algorithm latency in seconds (the whole pure core)",
            self.algorithm_duration.clone(),
        );
        karmada.register(
            "queue_incoming_bindings",
            "Number of bindings added to scheduling queues by event type",
            self.incoming_bindings.clone(),
        );
        karmada.register(
            "pending_workloads",
            "Bindings waiting to be scheduled (queued, delayed or unschedulable)",
            self.pending_workloads.clone(),
        );
        registry.register(
            "scheduler_pending_bindings",
            "Pending bindings per queue",
            self.pending.clone(),
        );
    }

    pub(crate) fn attempt(&self, result: &str, schedule_type: &str, seconds: f64) {
        let labels = AttemptLabels {
            result: result.to_owned(),
            schedule_type: schedule_type.to_owned(),
        };
        self.schedule_attempts.get_or_create(&labels).inc();
        self.e2e_duration.get_or_create(&labels).observe(seconds);
    }

    pub(crate) fn incoming(&self, event: &str) {
        self.incoming_bindings
            .get_or_create(&IncomingLabels {
                event: event.to_owned(),
            })
            .inc();
    }
}

/// The `result` label of `schedule_attempts_total` for an attempt that ended with `error`.
/// Karmada counts an attempt as `error` only when the error is retried: a NoClusterFit result
/// is recorded (the empty result written) and forgotten, so it counts as `scheduled`.
pub(crate) fn attempt_result(error: Option<&crate::ScheduleError>) -> &'static str {
    match error {
        None | Some(crate::ScheduleError::NoClusterFit(_)) => "scheduled",
        Some(_) => "error",
    }
}

/// Karmada's `queue_incoming_bindings_total` event of a failed attempt that is retried.
pub(crate) const SCHEDULE_ATTEMPT_FAILURE: &str = "ScheduleAttemptFailure";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FitError, ScheduleError};

    #[test]
    fn no_cluster_fit_counts_as_scheduled() {
        let fit = ScheduleError::NoClusterFit(FitError {
            num_all_clusters: 0,
            diagnosis: Default::default(),
        });
        assert_eq!(attempt_result(None), "scheduled");
        assert_eq!(attempt_result(Some(&fit)), "scheduled");
        assert_eq!(
            attempt_result(Some(&ScheduleError::Unschedulable("short".into()))),
            "error"
        );
        assert_eq!(
            attempt_result(Some(&ScheduleError::Scheduler("bad".into()))),
            "error"
        );
    }
}
