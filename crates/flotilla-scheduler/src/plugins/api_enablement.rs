//! `APIEnablement` (filter): the member must serve the resource's kind, unless the binding
//! already targets it.

use flotilla_api::karmada::ApiEnablementStatus;

use crate::framework::{FilterPlugin, PluginContext, PluginResult};

/// Registry name.
pub const NAME: &str = "APIEnablement";

/// The plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiEnablement;

impl FilterPlugin for ApiEnablement {
    fn name(&self) -> &'static str {
        NAME
    }

    fn filter(&self, ctx: &PluginContext<'_>) -> PluginResult {
        if ctx.spec.target_contains(ctx.cluster.name()) {
            return PluginResult::success();
        }
        let resource = &ctx.spec.resource;
        match ctx
            .cluster
            .api_enablement(&resource.api_version, &resource.kind)
        {
            ApiEnablementStatus::Enabled => PluginResult::success(),
            ApiEnablementStatus::Disabled | ApiEnablementStatus::Unknown => {
                PluginResult::unschedulable("cluster(s) did not have the API resource")
            }
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
        let enabled = json!({"apiEnablements": [{"groupVersion": "apps/v1",
            "resources": [{"name": "deployments", "kind": "Deployment"}]}]});
        let complete = json!({"apiEnablements": [], "conditions": [{"type": "CompleteAPIEnablements",
            "status": "True", "reason": "Complete", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        let deploy =
            json!({"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "n"}});
        let targeted = json!({"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "n"},
            "clusters": [{"name": "m", "replicas": 1}]});
        let table = [
            ("listed", enabled.clone(), deploy.clone(), true),
            ("incomplete list fails", json!({}), deploy.clone(), false),
            ("complete list fails", complete, deploy.clone(), false),
            ("already targeted passes", json!({}), targeted, true),
            (
                "other kind",
                enabled,
                json!({"resource": {"apiVersion": "batch/v1", "kind": "Job", "name": "n"}}),
                false,
            ),
        ];
        for (name, status, binding, want) in table {
            let c = cluster("m", json!({}), status);
            let s = spec(binding);
            let ctx = PluginContext {
                spec: &s,
                status: &ResourceBindingStatus::default(),
                placement: &Placement::default(),
                cluster: &c,
                prepared: &crate::framework::Prepared::default(),
            };
            let result = ApiEnablement.filter(&ctx);
            assert_eq!(result.is_success(), want, "{name}");
            if !want {
                assert_eq!(result.reasons, ["cluster(s) did not have the API resource"]);
            }
        }
    }
}
