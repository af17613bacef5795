//! The agent's Prometheus metrics (Karmada's names).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

/// Counters the agent keeps; clone freely (they share their values).
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// `karmada_agent_connection_errors_total`: failed requests to the control plane.
    pub connection_errors: Counter,
    /// The member-side controllers' metrics (`karmada_work_sync_workload_duration_seconds`,
    /// `karmada_{create,update}_resource_to_cluster_total`, ...), as Karmada's agent exposes.
    pub controllers: flotilla_controllers::Metrics,
}

impl Metrics {
    /// Adds the metrics to `registry` under their exported names.
    pub fn register(&self, registry: &mut Registry) {
        registry.sub_registry_with_prefix("karmada_agent").register(
            "connection_errors",
            "Requests from the agent to the control plane that failed (connection lost, refused, timed out or answered with an error).",
            self.connection_errors.clone(),
        );
        self.controllers.register_member_side(registry);
        // The agent's controllers' queues (execution, work status…), as controller-runtime
        // exports them.
        flotilla_runtime::queue::metrics::register(registry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_is_exported_under_karmadas_name() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.connection_errors.inc();
        metrics
            .controllers
            .observe_sync_workload(true, std::time::Duration::from_millis(3));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        assert!(
            text.contains("karmada_agent_connection_errors_total 1"),
            "{text}"
        );
        // The member-side controllers' metrics, as Karmada's agent serves them.
        assert!(
            text.contains(
                "karmada_work_sync_workload_duration_seconds_count{result=\"success\"} 1"
            ),
            "{text}"
        );
    }
}
