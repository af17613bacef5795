//! `TaintToleration` (filter): a NoSchedule or NoExecute cluster taint must be tolerated by
//! `placement.clusterTolerations`, unless the binding already targets the cluster (evicting
//! from tainted clusters is the taint manager's job).

use crate::framework::{FilterPlugin, PluginContext, PluginResult};
use crate::lifted::taints::{find_untolerated_taint, is_do_not_schedule, taint_to_string};

/// Registry name.
pub const NAME: &str = "TaintToleration";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaintToleration;

impl FilterPlugin for TaintToleration {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        if ctx.spec.target_contains(ctx.cluster.name()) {
            return PluginResult::success();
        }
        match find_untolerated_taint(
            &ctx.cluster.spec.taints,
            &ctx.placement.cluster_tolerations,
            is_do_not_schedule,
        ) {
            None => PluginResult::success(),
            Some(taint) => PluginResult::unschedulable(format!(
                "cluster(s) had untolerated taint {{{}}}",
                taint_to_string(taint)
            )),
        }
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
        let taints = json!({"taints": [
            {"key": "soft", "effect": "PreferNoSchedule"},
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            {"key": "gone", "effect": "NoExecute"}]});
        let tolerate = |t: serde_json::Value| -> Placement {
            serde_json::from_value(json!({"clusterTolerations": t})).expect("placement")
        };
        let table = [
            (
                tolerate(json!([])),
                false,
                Some("cluster(s) had untolerated taint {k=v:NoSchedule}"),
            ),
            (
                tolerate(
                    json!([{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]),
                ),
                false,
                Some("cluster(s) had untolerated taint {gone:NoExecute}"),
            ),
            (
                tolerate(
                    json!([{"key": "k", "operator": "Exists"}, {"key": "gone", "operator": "Exists", "effect": "NoExecute"}]),
                ),
                false,
                None,
            ),
            (tolerate(json!([{"operator": "Exists"}])), false, None),
            (
                tolerate(
                    json!([{"key": "k", "value": "other"}, {"key": "gone", "operator": "Exists"}]),
                ),
                false,
                Some("cluster(s) had untolerated taint {k=v:NoSchedule}"),
            ),
            // Already scheduled there: untouched.
            (tolerate(json!([])), true, None),
        ];
        let c = cluster("m", taints, json!({}));
        for (p, targeted, want) in table {
            let s = if targeted {
                spec(json!({"clusters": [{"name": "m", "replicas": 1}]}))
            } else {
                spec(json!({}))
            };
            let ctx = PluginContext {
                spec: &s,
                status: &ResourceBindingStatus::default(),
                placement: &p,
                cluster: &c,
                prepared: &crate::framework::Prepared::default(),
            };
            let result = TaintToleration.filter(&ctx);
            assert_eq!(result.reasons.first().map(String::as_str), want, "{p:?}");
        }
    }
}
