//! `ClusterAffinity` (filter + score): the cluster must match `placement.clusterAffinity`, or the
//! clusterAffinities term being tried (or, for workloads, one of its overflow affinities). Scores
//! are always 0.

use crate::framework::{FilterPlugin, MIN_CLUSTER_SCORE, PluginContext, PluginResult, ScorePlugin};

/// Registry name.
pub const NAME: &str = "ClusterAffinity";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterAffinity;

impl FilterPlugin for ClusterAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        let Some(affinities) = &ctx.prepared.affinities else {
            return PluginResult::success();
        };
        if affinities.iter().any(|a| a.matches(ctx.cluster)) {
            PluginResult::success()
        } else {
            PluginResult::unschedulable(
                "cluster(s) did not match the placement cluster affinity constraint",
            )
        }
    }
}

impl ScorePlugin for ClusterAffinity {
    fn name(&self) -> &'static str {
        NAME
    }

    fn score(&self, _ctx: &PluginContext<'_>) -> Result<i64, PluginResult> {
        Ok(MIN_CLUSTER_SCORE)
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
        let affinities = json!({"clusterAffinities": [
            {"affinityName": "primary", "clusterNames": ["m1"],
             "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["m2"]}]},
            {"affinityName": "backup", "clusterNames": ["m3"]}]});
        let single = json!({"clusterAffinity": {"clusterNames": ["m1"]}});
        let workload = json!({"replicas": 2});
        let config = json!({});
        let table = [
            (single.clone(), "", &workload, "m1", true),
            (single, "", &workload, "m2", false),
            (affinities.clone(), "primary", &workload, "m1", true),
            (affinities.clone(), "primary", &workload, "m2", true),
            (affinities.clone(), "primary", &config, "m2", false),
            (affinities.clone(), "primary", &workload, "m3", false),
            (affinities.clone(), "backup", &workload, "m3", true),
            // No term named like the observed one: no constraint.
            (affinities, "nope", &workload, "m9", true),
            (json!({}), "", &workload, "m9", true),
        ];
        for (placement, observed, binding, name, want) in table {
            let p: Placement = serde_json::from_value(placement).expect("placement");
            let s = spec(binding.clone());
            let status = ResourceBindingStatus {
                scheduler_observing_affinity_name: observed.to_owned(),
                ..ResourceBindingStatus::default()
            };
            let c = cluster(name, json!({}), json!({}));
            let prepared = crate::framework::Prepared::new(&s, &status, &p);
            let ctx = PluginContext {
                spec: &s,
                status: &status,
                placement: &p,
                cluster: &c,
                prepared: &prepared,
            };
            let result = FilterPlugin::filter(&ClusterAffinity, &ctx);
            assert_eq!(result.is_success(), want, "{observed} {name}");
            if !want {
                assert_eq!(
                    result.reasons,
                    ["cluster(s) did not match the placement cluster affinity constraint"]
                );
            }
            assert_eq!(ScorePlugin::score(&ClusterAffinity, &ctx), Ok(0));
        }
    }
}
