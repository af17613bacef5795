//! PodDisruptionBudgets get the status kube's disruption controller writes: healthy, desired and
//! expected pods, the disruptions allowed and the `DisruptionAllowed` condition, following the
//! pods as they become Ready and the Deployment as it scales (what Karmada aggregates back onto
//! a propagated budget). Paused clock.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually};

/// (currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed, condition status/reason)
type Figures = (i32, i32, i32, i32, String);

fn figures(budget: &PodDisruptionBudget) -> Option<Figures> {
    let status = budget.status.as_ref()?;
    let condition = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "DisruptionAllowed")?;
    Some((
        status.current_healthy,
        status.desired_healthy,
        status.expected_pods,
        status.disruptions_allowed,
        format!("{}/{}", condition.status, condition.reason),
    ))
}

#[tokio::test(start_paused = true)]
async fn a_budget_follows_its_pods_and_their_deployment() {
    let world = World::cpu(2, "").await;
    let client = world.client();
    create::<Deployment>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
               "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}),
    )
    .await;
    create::<PodDisruptionBudget>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
               "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}),
    )
    .await;
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), "default");
    let wait_for = |wanted: Figures| {
        let budgets = budgets.clone();
        async move {
            eventually(PATIENCE, &format!("budget status {wanted:?}"), || async {
                let budget = budgets.get("web").await.ok()?;
                (figures(&budget)? == wanted).then_some(budget)
            })
            .await
        }
    };
    // Three Ready pods, half of them may go (rounded up): two disruptions.
    let budget = wait_for((3, 1, 3, 2, "True/SufficientPods".into())).await;
    let status = budget.status.expect("status");
    assert_eq!(status.observed_generation, budget.metadata.generation);

    // Scaled to one: one pod expected, none may go.
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .expect("scaled");
    wait_for((1, 0, 1, 1, "True/SufficientPods".into())).await;

    // An integer minAvailable above what runs: no disruption allowed, a new generation seen.
    budgets
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"maxUnavailable": null, "minAvailable": 2}})),
        )
        .await
        .expect("budget changed");
    let budget = wait_for((1, 2, 1, 0, "False/InsufficientPods".into())).await;
    assert_eq!(
        budget.status.expect("status").observed_generation,
        budget.metadata.generation
    );
}
