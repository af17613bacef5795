//! `ClusterEviction` (filter): a cluster the binding is being gracefully evicted from is not a
//! candidate.

use crate::framework::{FilterPlugin, PluginContext, PluginResult};

/// Registry name.
pub const NAME: &str = "ClusterEviction";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterEviction;

impl FilterPlugin for ClusterEviction {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        if ctx
            .spec
            .cluster_in_graceful_eviction_tasks(ctx.cluster.name())
        {
            return PluginResult::unschedulable("cluster(s) is in the process of eviction");
        }
        PluginResult::success()
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::{Placement, ResourceBindingStatus};
    use serde_json::json;

    use super::*;
    use crate::plugins::testing::{cluster, spec};

    #[test]
    fn table() {
        let s = spec(json!({"gracefulEvictionTasks": [
            {"fromCluster": "m1", "reason": "TaintUntolerated", "producer": "taint-manager"}]}));
        for (name, want) in [("m1", false), ("m2", true)] {
            let c = cluster(name, json!({}), json!({}));
            let ctx = PluginContext {
                spec: &s,
                status: &ResourceBindingStatus::default(),
                placement: &Placement::default(),
                cluster: &c,
                prepared: &crate::framework::Prepared::default(),
            };
            let result = ClusterEviction.filter(&ctx);
            assert_eq!(result.is_success(), want, "{name}");
            if !want {
                assert_eq!(result.reasons, ["cluster(s) is in the process of eviction"]);
            }
        }
    }
}
