//! The taint manager's eviction-queue metrics, with the names, labels, help and buckets of
//! Karmada's `pkg/metrics/cluster.go` (exported unprefixed, as Karmada's controller manager
//! does): `eviction_queue_depth{name}`, `eviction_kind_total{member_cluster,resource_kind}`,
//! `eviction_processing_latency_seconds{name}`, `eviction_processing_total{name,result}`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The eviction queue's name (`binding-eviction`, `cluster-binding-eviction`).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct QueueLabels {
    pub name: String,
}

/// `eviction_kind_total`'s labels.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub member_cluster: String,
    pub resource_kind: String,
}

/// `eviction_processing_total`'s labels.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProcessedLabels {
    pub name: String,
    pub result: String,
}

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Every eviction metric; clones share their values.
#[derive(Debug, Clone)]
pub struct EvictionMetrics {
    pub queue_depth: Family<QueueLabels, Gauge>,
    pub kind_total: Family<KindLabels, Gauge>,
    pub processing_latency: Family<QueueLabels, Histogram, fn() -> Histogram>,
    pub processing_total: Family<ProcessedLabels, Counter>,
}

impl Default for EvictionMetrics {
    fn default() -> Self {
        Self {
            queue_depth: Family::default(),
            kind_total: Family::default(),
            processing_latency: Family::new_with_constructor(latency_histogram),
            processing_total: Family::default(),
        }
    }
}

impl EvictionMetrics {
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "eviction_queue_depth",
            "Current depth of the eviction queue",
            self.queue_depth.clone(),
        );
        registry.register(
            "eviction_kind_total",
            "Number of resources in the eviction queue by resource kind",
            self.kind_total.clone(),
        );
        registry.register(
            "eviction_processing_latency_seconds",
            "Latency of processing an eviction task in seconds",
            self.processing_latency.clone(),
        );
        // A counter: the encoder adds `_total`.
        registry.register(
            "eviction_processing",
            "Total number of evictions processed",
            self.processing_total.clone(),
        );
    }

    /// The depth of queue `name`.
    pub fn set_depth(&self, name: &str, depth: usize) {
        self.queue_depth
            .get_or_create(&QueueLabels { name: name.into() })
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// A binding of `kind` on `cluster` entered (`+1`) or left (`-1`) the queue.
    pub fn count_kind(&self, cluster: &str, kind: &str, delta: i64) {
        self.kind_total
            .get_or_create(&KindLabels {
                member_cluster: cluster.into(),
                resource_kind: kind.into(),
            })
            .inc_by(delta);
    }

    /// One processed item of queue `name`.
    pub fn processed(&self, name: &str, ok: bool, seconds: f64) {
        self.processing_latency
            .get_or_create(&QueueLabels { name: name.into() })
            .observe(seconds);
        self.processing_total
            .get_or_create(&ProcessedLabels {
                name: name.into(),
                result: if ok { "success" } else { "error" }.into(),
            })
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposed_with_karmadas_names_and_labels() {
        let metrics = EvictionMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.set_depth("binding-eviction", 2);
        metrics.count_kind("member1", "ResourceBinding", 1);
        metrics.count_kind("member1", "ResourceBinding", 1);
        metrics.count_kind("member1", "ResourceBinding", -1);
        metrics.processed("binding-eviction", true, 0.003);
        metrics.processed("binding-eviction", false, 0.003);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            "eviction_queue_depth{name=\"binding-eviction\"} 2",
            "eviction_kind_total{member_cluster=\"member1\",resource_kind=\"ResourceBinding\"} 1",
            "eviction_processing_total{name=\"binding-eviction\",result=\"success\"} 1",
            "eviction_processing_total{name=\"binding-eviction\",result=\"error\"} 1",
            "eviction_processing_latency_seconds_bucket{le=\"0.004\",name=\"binding-eviction\"} 2",
            "eviction_processing_latency_seconds_count{name=\"binding-eviction\"} 2",
        ] {
            assert!(text.contains(line), "{line} not in:\n{text}");
        }
    }
}
