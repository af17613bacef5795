//! `WorkloadAntiAffinity` (filter, gate `WorkloadAffinity`): a ResourceBinding in an
//! anti-affinity group (`spec.workloadAffinityGroups.antiAffinityGroup`) does not go to a
//! cluster that a peer of its group (same namespace, same group) is scheduled to. A cluster the
//! binding already targets always passes, so the filter never takes a placed workload away.
//!
//! Behaviour of Karmada's `pkg/scheduler/framework/plugins/workloadantiaffinity`.

use crate::framework::{FilterPlugin, PluginContext, PluginResult};

/// Registry name.
pub const NAME: &str = "WorkloadAntiAffinity";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkloadAntiAffinity;

impl FilterPlugin for WorkloadAntiAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        let Some(peers) = super::workload_peers(ctx, |g| &g.anti_affinity_group) else {
            return PluginResult::success();
        };
        let cluster = ctx.cluster.name();
        if peers.anti_affinity.contains(cluster) {
            return PluginResult::unschedulable(
                "cluster already has workload with the same anti-affinity group",
            );
        }
        PluginResult::success()
    }
}

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::{Placement, ResourceBindingStatus};
    use serde_json::json;

    use super::*;
    use crate::framework::{Prepared, WorkloadPeers};
    use crate::plugins::testing::{cluster, spec};

    fn run(spec_json: serde_json::Value, peers: &WorkloadPeers, name: &str) -> bool {
        let s = spec(spec_json);
        let c = cluster(name, json!({}), json!({}));
        let prepared = Prepared {
            workload_peers: Some(peers),
            ..Prepared::default()
        };
        let ctx = PluginContext {
            spec: &s,
            status: &ResourceBindingStatus::default(),
            placement: &Placement::default(),
            cluster: &c,
            prepared: &prepared,
        };
        let result = WorkloadAntiAffinity.filter(&ctx);
        if !result.is_success() {
            assert_eq!(
                result.reasons,
                ["cluster already has workload with the same anti-affinity group"]
            );
        }
        result.is_success()
    }

    #[test]
    fn a_cluster_holding_a_peer_is_refused_unless_already_targeted() {
        let peers = WorkloadPeers {
            anti_affinity: ["m1".to_owned(), "m2".to_owned()].into(),
            ..WorkloadPeers::default()
        };
        let grouped = json!({"workloadAffinityGroups": {"antiAffinityGroup": "ha=a"}});
        assert!(!run(grouped.clone(), &peers, "m1"));
        assert!(!run(grouped.clone(), &peers, "m2"));
        assert!(run(grouped, &peers, "m3"));
        let placed = json!({"workloadAffinityGroups": {"antiAffinityGroup": "ha=a"},
            "clusters": [{"name": "m1", "replicas": 1}]});
        assert!(run(placed, &peers, "m1"));
        let affinity_only = json!({"workloadAffinityGroups": {"affinityGroup": "ha=a"}});
        assert!(run(affinity_only, &peers, "m1"));
    }
}
