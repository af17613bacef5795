//! The override manager's events on the template: an OverridePolicy that cannot be applied to
//! a cluster is named in a Warning `ApplyOverridePolicyFailed`, as Karmada names it.

use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use serde_json::json;

use crate::world::{World, deployment, eventually, policy};

const NS: &str = "overrides";

#[tokio::test]
async fn an_override_that_cannot_apply_is_reported_on_the_template() {
    let world = World::start(&["member1"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
            "metadata": {"name": "broken", "namespace": NS},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "overrideRules": [{"targetCluster": {"clusterNames": ["member1"]},
                    "overriders": {"plaintext": [
                        {"path": "/spec/missing/field", "operator": "replace", "value": 1}]}}]}}))
        .await;
    world.apply(policy(NS, "web", "web", "member1")).await;
    world.apply(deployment(NS, "web")).await;
    let events = Api::<Event>::namespaced(world.client.clone(), NS);
    let failed = eventually("the failed override is reported", || async {
        let listed = events.list(&ListParams::default()).await.expect("events");
        listed.items.into_iter().find(|e| {
            e.reason.as_deref() == Some("ApplyOverridePolicyFailed")
                && e.involved_object.kind.as_deref() == Some("Deployment")
                && e.involved_object.name.as_deref() == Some("web")
        })
    })
    .await;
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    assert_eq!(
        failed.message.as_deref(),
        Some("Apply override policy(overrides/broken) for cluster(member1) failed.")
    );
}
