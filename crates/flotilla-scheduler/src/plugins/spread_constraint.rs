//! `SpreadConstraint` (filter): spreading by provider, region or zone requires the cluster to
//! have that property.

use flotilla_api::karmada::{SPREAD_BY_PROVIDER, SPREAD_BY_REGION, SPREAD_BY_ZONE};

use crate::framework::{FilterPlugin, PluginContext, PluginResult};

/// Registry name.
pub const NAME: &str = "SpreadConstraint";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpreadConstraint;

impl FilterPlugin for SpreadConstraint {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        let spec = &ctx.cluster.spec;
        for constraint in &ctx.placement.spread_constraints {
            match constraint.spread_by_field.as_str() {
                SPREAD_BY_PROVIDER if spec.provider.is_empty() => {
                    return PluginResult::unschedulable(
                        "cluster(s) did not have provider property",
                    );
                }
                SPREAD_BY_REGION if spec.region.is_empty() => {
                    return PluginResult::unschedulable("cluster(s) did not have region property");
                }
                SPREAD_BY_ZONE if spec.zones.is_empty() => {
                    return PluginResult::unschedulable("cluster(s) did not have zones property");
                }
                _ => {}
            }
        }
        PluginResult::success()
    }
}

#[cfg(test)]
mod karmada_tests;

#[cfg(test)]
mod tests {
    use flotilla_api::karmada::{Placement, ResourceBindingStatus};
    use serde_json::json;

    use super::*;
    use crate::plugins::testing::{cluster, spec};

    #[test]
    fn table() {
        let placement = |fields: &[&str]| -> Placement {
            let constraints: Vec<_> = fields
                .iter()
                .map(|f| json!({"spreadByField": f, "minGroups": 1}))
                .collect();
            serde_json::from_value(json!({"spreadConstraints": constraints})).expect("placement")
        };
        let full = cluster(
            "m",
            json!({"provider": "aws", "region": "r", "zones": ["z"]}),
            json!({}),
        );
        let bare = cluster("m", json!({}), json!({}));
        let zone_only = cluster("m", json!({"zone": "z"}), json!({}));
        let table = [
            (
                &full,
                placement(&["cluster", "provider", "region", "zone"]),
                None,
            ),
            (&bare, placement(&["cluster"]), None),
            (
                &bare,
                placement(&["provider"]),
                Some("cluster(s) did not have provider property"),
            ),
            (
                &bare,
                placement(&["zone", "region"]),
                Some("cluster(s) did not have zones property"),
            ),
            (
                &bare,
                placement(&["region"]),
                Some("cluster(s) did not have region property"),
            ),
            // The deprecated `zone` field does not count: only `zones`.
            (
                &zone_only,
                placement(&["zone"]),
                Some("cluster(s) did not have zones property"),
            ),
        ];
        let s = spec(json!({}));
        for (c, p, want) in table {
            let ctx = PluginContext {
                spec: &s,
                status: &ResourceBindingStatus::default(),
                placement: &p,
                cluster: c,
                prepared: &crate::framework::Prepared::default(),
            };
            let result = SpreadConstraint.filter(&ctx);
            assert_eq!(result.reasons.first().map(String::as_str), want, "{p:?}");
        }
    }
}
