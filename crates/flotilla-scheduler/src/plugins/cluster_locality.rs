//! `ClusterLocality` (score): clusters the binding already targets score 100, others 0 (all 0
//! when the binding targets nothing yet).

use crate::framework::{
    MAX_CLUSTER_SCORE, MIN_CLUSTER_SCORE, PluginContext, PluginResult, ScorePlugin,
};

/// Registry name.
pub const NAME: &str = "ClusterLocality";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterLocality;

impl ScorePlugin for ClusterLocality {
    fn name(&self) -> &'static str {
        NAME
    }

    fn score(&self, ctx: &PluginContext<'_>) -> Result<i64, PluginResult> {
        if ctx.spec.target_contains(ctx.cluster.name()) {
            Ok(MAX_CLUSTER_SCORE)
        } else {
            Ok(MIN_CLUSTER_SCORE)
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
        let targeted = spec(json!({"clusters": [{"name": "m1", "replicas": 2}]}));
        let empty = spec(json!({}));
        for (s, name, want) in [
            (&targeted, "m1", 100),
            (&targeted, "m2", 0),
            (&empty, "m1", 0),
        ] {
            let c = cluster(name, json!({}), json!({}));
            let ctx = PluginContext {
                spec: s,
                status: &ResourceBindingStatus::default(),
                placement: &Placement::default(),
                cluster: &c,
                prepared: &crate::framework::Prepared::default(),
            };
            assert_eq!(ClusterLocality.score(&ctx), Ok(want), "{name}");
        }
    }
}
