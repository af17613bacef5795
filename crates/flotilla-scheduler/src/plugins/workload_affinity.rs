//! `WorkloadAffinity` (filter, gate `WorkloadAffinity`): a ResourceBinding in an affinity group
//! (`spec.workloadAffinityGroups.affinityGroup`) goes only to clusters that every scheduled
//! peer of its group (same namespace, same group) also targets. The first workload of a group,
//! with no scheduled peer yet, may go anywhere; a cluster the binding already targets always
//! passes, so the filter never takes a placed workload away.
//!
//! Behaviour of Karmada's `pkg/scheduler/framework/plugins/workloadaffinity`.

use crate::framework::{FilterPlugin, PluginContext, PluginResult};

/// Registry name.
pub const NAME: &str = "WorkloadAffinity";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkloadAffinity;

impl FilterPlugin for WorkloadAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        let Some(peers) = super::workload_peers(ctx, |g| &g.affinity_group) else {
            return PluginResult::success();
        };
        let cluster = ctx.cluster.name();
        if peers
            .affinity
            .iter()
            .any(|clusters| !clusters.contains(cluster))
        {
            return PluginResult::unschedulable(
                "ResourceBinding with the same affinity group does not target this cluster",
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

    fn run(spec_json: serde_json::Value, peers: Option<&WorkloadPeers>, name: &str) -> bool {
        let s = spec(spec_json);
        let c = cluster(name, json!({}), json!({}));
        let prepared = Prepared {
            workload_peers: peers,
            ..Prepared::default()
        };
        let ctx = PluginContext {
            spec: &s,
            status: &ResourceBindingStatus::default(),
            placement: &Placement::default(),
            cluster: &c,
            prepared: &prepared,
        };
        let result = WorkloadAffinity.filter(&ctx);
        if !result.is_success() {
            assert_eq!(
                result.reasons,
                ["ResourceBinding with the same affinity group does not target this cluster"]
            );
        }
        result.is_success()
    }

    #[test]
    fn a_cluster_must_be_a_target_of_every_scheduled_peer() {
        let grouped = json!({"workloadAffinityGroups": {"affinityGroup": "app=train"}});
        let peers = WorkloadPeers {
            affinity: vec![
                ["m1".to_owned(), "m2".to_owned()].into(),
                ["m2".to_owned(), "m3".to_owned()].into(),
            ],
            ..WorkloadPeers::default()
        };
        assert!(run(grouped.clone(), Some(&peers), "m2"));
        assert!(!run(grouped.clone(), Some(&peers), "m1"));
        assert!(!run(grouped.clone(), Some(&peers), "m4"));
        // The first of its group goes anywhere.
        assert!(run(grouped.clone(), Some(&WorkloadPeers::default()), "m4"));
    }

    #[test]
    fn current_targets_and_ungrouped_bindings_pass() {
        let peers = WorkloadPeers {
            affinity: vec![["m2".to_owned()].into()],
            ..WorkloadPeers::default()
        };
        let placed = json!({"workloadAffinityGroups": {"affinityGroup": "app=train"},
            "clusters": [{"name": "m1", "replicas": 1}]});
        assert!(run(placed, Some(&peers), "m1"));
        let anti_only = json!({"workloadAffinityGroups": {"antiAffinityGroup": "app=train"}});
        assert!(run(anti_only, Some(&peers), "m1"));
        assert!(run(json!({}), Some(&peers), "m1"));
    }
}
