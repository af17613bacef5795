//! karmada-webhook's metrics (controller-runtime's webhook server): Flotilla runs Karmada's
//! admission in process, so each admission step Karmada's webhook configuration would send to
//! karmada-webhook is counted under that webhook's path, as if it had:
//!
//! * `controller_runtime_webhook_requests_total{webhook,code}` (`200` and `500` present from the
//!   start for every path, as controller-runtime initializes them; an admission that refuses
//!   still answers 200, as a webhook's AdmissionReview does)
//! * `controller_runtime_webhook_requests_in_flight{webhook}`
//! * `controller_runtime_webhook_latency_seconds{webhook}` (controller-runtime's buckets, 10 ns …
//!   1000 s)
//!
//! Which writes reach which path follows Karmada's `artifacts/deploy/webhook-configuration.yaml`:
//! the operations and resources of each rule (status writes are another resource, so they are
//! not sent), and for `/validate-resourcedeletionprotection` deletes of objects carrying the
//! `resourcetemplate.karmada.io/deletion-protected` label.

use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A write's admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
}

/// The webhook of the deletion-protection rule.
pub const DELETION_PROTECTION: &str = "/validate-resourcedeletionprotection";

/// Karmada's webhook rules for one resource: (group, resource, mutating path and its
/// operations, validating path and its operations).
type Rule = (
    &'static str,
    &'static str,
    Option<(&'static str, &'static [Operation])>,
    Option<(&'static str, &'static [Operation])>,
);

const CU: &[Operation] = &[Operation::Create, Operation::Update];
const C: &[Operation] = &[Operation::Create];

const RULES: &[Rule] = &[
    (
        "policy.karmada.io",
        "propagationpolicies",
        Some(("/mutate-propagationpolicy", CU)),
        Some(("/validate-propagationpolicy", CU)),
    ),
    (
        "policy.karmada.io",
        "clusterpropagationpolicies",
        Some(("/mutate-clusterpropagationpolicy", CU)),
        Some(("/validate-clusterpropagationpolicy", CU)),
    ),
    (
        "policy.karmada.io",
        "overridepolicies",
        Some(("/mutate-overridepolicy", CU)),
        Some(("/validate-overridepolicy", CU)),
    ),
    (
        "policy.karmada.io",
        "clusteroverridepolicies",
        None,
        Some(("/validate-clusteroverridepolicy", CU)),
    ),
    (
        "policy.karmada.io",
        "federatedresourcequotas",
        None,
        Some(("/validate-federatedresourcequota", CU)),
    ),
    (
        "policy.karmada.io",
        "clustertaintpolicies",
        None,
        Some(("/validate-clustertaintpolicy", CU)),
    ),
    (
        "work.karmada.io",
        "resourcebindings",
        Some(("/mutate-resourcebinding", C)),
        Some(("/validate-resourcebinding", CU)),
    ),
    (
        "work.karmada.io",
        "clusterresourcebindings",
        Some(("/mutate-clusterresourcebinding", C)),
        None,
    ),
    ("work.karmada.io", "works", Some(("/mutate-work", CU)), None),
    (
        "autoscaling.karmada.io",
        "federatedhpas",
        Some(("/mutate-federatedhpa", CU)),
        Some(("/validate-federatedhpa", CU)),
    ),
    (
        "autoscaling.karmada.io",
        "cronfederatedhpas",
        None,
        Some(("/validate-cronfederatedhpa", CU)),
    ),
    (
        "networking.karmada.io",
        "multiclusterservices",
        Some(("/mutate-multiclusterservice", CU)),
        Some(("/validate-multiclusterservice", CU)),
    ),
    (
        "networking.karmada.io",
        "multiclusteringresses",
        None,
        Some(("/validate-multiclusteringress", CU)),
    ),
    (
        "config.karmada.io",
        "resourceinterpreterwebhookconfigurations",
        None,
        Some(("/validate-resourceinterpreterwebhookconfiguration", CU)),
    ),
    (
        "config.karmada.io",
        "resourceinterpretercustomizations",
        None,
        Some(("/validate-resourceinterpretercustomization", CU)),
    ),
];

/// The mutating and validating webhooks Karmada calls for `operation` on `group`/`resource`.
pub fn webhooks(
    group: &str,
    resource: &str,
    operation: Operation,
) -> (Option<&'static str>, Option<&'static str>) {
    let Some((_, _, mutating, validating)) = RULES
        .iter()
        .find(|(g, r, _, _)| *g == group && *r == resource)
    else {
        return (None, None);
    };
    let pick = |hook: &Option<(&'static str, &'static [Operation])>| {
        hook.and_then(|(path, operations)| operations.contains(&operation).then_some(path))
    };
    (pick(mutating), pick(validating))
}

/// `webhook` and `code`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CodeLabels {
    pub webhook: &'static str,
    pub code: &'static str,
}

/// `webhook`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WebhookLabels {
    pub webhook: &'static str,
}

fn latency_histogram() -> Histogram {
    // controller-runtime's prometheus.ExponentialBuckets(10e-9, 10, 12).
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// The webhook server's metrics.
#[derive(Debug, Clone)]
pub struct WebhookMetrics {
    pub requests: Family<CodeLabels, Counter>,
    pub in_flight: Family<WebhookLabels, Gauge>,
    pub latency: Family<WebhookLabels, Histogram, fn() -> Histogram>,
}

impl Default for WebhookMetrics {
    fn default() -> Self {
        let metrics = Self {
            requests: Family::default(),
            in_flight: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
        };
        let paths = RULES
            .iter()
            .flat_map(|(_, _, m, v)| [m.map(|(p, _)| p), v.map(|(p, _)| p)])
            .flatten()
            .chain([DELETION_PROTECTION]);
        for webhook in paths {
            for code in ["200", "500"] {
                let _ = metrics
                    .requests
                    .get_or_create(&CodeLabels { webhook, code });
            }
            let _ = metrics.in_flight.get_or_create(&WebhookLabels { webhook });
        }
        metrics
    }
}

impl WebhookMetrics {
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code.",
            self.requests.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            self.in_flight.clone(),
        );
        registry.register(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            self.latency.clone(),
        );
    }

    /// Runs `step` as the admission request to `webhook` (nothing is counted for `None`).
    pub fn call<T>(&self, webhook: Option<&'static str>, step: impl FnOnce() -> T) -> T {
        let Some(webhook) = webhook else {
            return step();
        };
        let labels = WebhookLabels { webhook };
        self.in_flight.get_or_create(&labels).inc();
        let start = Instant::now();
        let answer = step();
        self.latency
            .get_or_create(&labels)
            .observe(start.elapsed().as_secs_f64());
        self.requests
            .get_or_create(&CodeLabels {
                webhook,
                code: "200",
            })
            .inc();
        self.in_flight.get_or_create(&labels).dec();
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_reach_the_webhooks_karmadas_configuration_names() {
        use Operation::*;
        assert_eq!(
            webhooks("policy.karmada.io", "propagationpolicies", Create),
            (
                Some("/mutate-propagationpolicy"),
                Some("/validate-propagationpolicy")
            )
        );
        // Bindings are mutated on create only, validated on both.
        assert_eq!(
            webhooks("work.karmada.io", "resourcebindings", Update),
            (None, Some("/validate-resourcebinding"))
        );
        assert_eq!(
            webhooks("work.karmada.io", "works", Update),
            (Some("/mutate-work"), None)
        );
        assert_eq!(webhooks("apps", "deployments", Create), (None, None));
        assert_eq!(
            webhooks("policy.karmada.io", "propagationpolicies", Delete),
            (None, None)
        );
    }

    #[test]
    fn every_path_starts_with_200_and_500_at_zero() {
        let metrics = WebhookMetrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.call(Some("/mutate-work"), || ());
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            "controller_runtime_webhook_requests_total{webhook=\"/mutate-work\",code=\"200\"} 1",
            "controller_runtime_webhook_requests_total{webhook=\"/mutate-work\",code=\"500\"} 0",
            "controller_runtime_webhook_requests_total{webhook=\"/validate-clustertaintpolicy\",code=\"200\"} 0",
            "controller_runtime_webhook_requests_total{webhook=\"/validate-resourcedeletionprotection\",code=\"500\"} 0",
            "controller_runtime_webhook_requests_in_flight{webhook=\"/mutate-work\"} 0",
            "controller_runtime_webhook_latency_seconds_count{webhook=\"/mutate-work\"} 1",
        ] {
            assert!(text.contains(line), "no {line} in\n{text}");
        }
    }
}
