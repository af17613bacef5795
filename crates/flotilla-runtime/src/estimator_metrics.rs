//! The scheduler estimator's metrics (Karmada's `karmada_scheduler_estimator_*`), shared by the
//! estimating code that runs inside the control plane: the scheduler's accurate estimator
//! (`MaxAvailableReplicas`, `MaxAvailableComponentSets`) and the descheduler's
//! `GetUnschedulableReplicas`. Karmada counts in each member's estimator server, one request per
//! member asked; Flotilla counts the same per member it estimates for.

use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Karmada's estimating types.
pub const MAX_AVAILABLE_REPLICAS: &str = "MaxAvailableReplicas";
pub const MAX_AVAILABLE_COMPONENT_SETS: &str = "MaxAvailableComponentSets";
pub const GET_UNSCHEDULABLE_REPLICAS: &str = "GetUnschedulableReplicas";
/// The step of a whole estimate.
pub const STEP_TOTAL: &str = "Total";

/// `result` (`success` or `error`) and `type`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub result: &'static str,
    pub r#type: &'static str,
}

/// `result`, `type` and `step`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StepLabels {
    pub result: &'static str,
    pub r#type: &'static str,
    pub step: &'static str,
}

fn algorithm_histogram() -> Histogram {
    // Karmada's ExponentialBuckets(0.001, 2, 10).
    Histogram::new(exponential_buckets(0.001, 2.0, 10))
}

/// The estimator's request counter and latency histogram.
#[derive(Debug, Clone)]
pub struct EstimatorMetrics {
    pub requests: Family<RequestLabels, Counter>,
    pub algorithm_duration: Family<StepLabels, Histogram, fn() -> Histogram>,
}

impl Default for EstimatorMetrics {
    fn default() -> Self {
        Self {
            requests: Family::default(),
            algorithm_duration: Family::new_with_constructor(algorithm_histogram),
        }
    }
}

impl EstimatorMetrics {
    /// Registers `karmada_scheduler_estimator_estimating_request_total` and
    /// `karmada_scheduler_estimator_estimating_algorithm_duration_seconds`.
    pub fn register(&self, registry: &mut Registry) {
        let estimator = registry.sub_registry_with_prefix("karmada_scheduler_estimator");
        estimator.register(
            "estimating_request",
            "Number of scheduler estimator requests",
            self.requests.clone(),
        );
        estimator.register(
            "estimating_algorithm_duration_seconds",
            "Estimating algorithm latency in seconds for each step",
            self.algorithm_duration.clone(),
        );
    }

    /// Counts one estimate of `kind` for one member, begun at `start`.
    pub fn record(&self, kind: &'static str, ok: bool, start: Instant) {
        let result = if ok { "success" } else { "error" };
        self.requests
            .get_or_create(&RequestLabels {
                result,
                r#type: kind,
            })
            .inc();
        self.algorithm_duration
            .get_or_create(&StepLabels {
                result,
                r#type: kind,
                step: STEP_TOTAL,
            })
            .observe(start.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_counted_with_karmadas_names_and_labels() {
        let metrics = EstimatorMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.record(MAX_AVAILABLE_REPLICAS, true, Instant::now());
        metrics.record(MAX_AVAILABLE_REPLICAS, true, Instant::now());
        metrics.record(GET_UNSCHEDULABLE_REPLICAS, false, Instant::now());
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(text.contains(
            "karmada_scheduler_estimator_estimating_request_total{result=\"success\",type=\"MaxAvailableReplicas\"} 2"
        ), "{text}");
        assert!(text.contains(
            "karmada_scheduler_estimator_estimating_request_total{result=\"error\",type=\"GetUnschedulableReplicas\"} 1"
        ), "{text}");
        assert!(text.contains(
            "karmada_scheduler_estimator_estimating_algorithm_duration_seconds_count{result=\"success\",type=\"MaxAvailableReplicas\",step=\"Total\"} 2"
        ), "{text}");
    }
}
