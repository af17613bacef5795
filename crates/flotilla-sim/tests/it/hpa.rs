//! HorizontalPodAutoscalers act in a simulated cluster as kube-controller-manager's do: the
//! target is brought within `minReplicas`/`maxReplicas`, CPU utilization is computed from the
//! cluster's usage model, the status carries the replicas, the metric and the conditions, and
//! a rescale is recorded as `SuccessfulRescale` (what Karmada's member-HPA features rely on:
//! `deploymentReplicasSyncer` reads the replicas member HPAs set). Paused clock.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually};

fn condition(hpa: &HorizontalPodAutoscaler, type_: &str) -> Option<(String, String)> {
    let c = hpa
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)?;
    Some((c.status.clone(), c.reason.clone().unwrap_or_default()))
}

#[tokio::test(start_paused = true)]
async fn an_hpa_keeps_its_target_within_bounds_and_reports_utilization() {
    let world = World::cpu(2, "").await;
    let client = world.client();
    create::<Deployment>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
               "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                         "resources": {"requests": {"cpu": "100m"}}}]}}}}),
    )
    .await;
    create::<HorizontalPodAutoscaler>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                        "minReplicas": 3, "maxReplicas": 6,
                        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 80}}}]}}),
    )
    .await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let hpas: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    let replicas = |wanted: i32| {
        let deployments = deployments.clone();
        async move {
            eventually(PATIENCE, &format!("web scaled to {wanted}"), || async {
                let d = deployments.get("web").await.ok()?;
                (d.spec?.replicas? == wanted).then_some(())
            })
            .await
        }
    };
    // Below the minimum: scaled up at once.
    replicas(3).await;
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let rescaled = eventually(PATIENCE, "a SuccessfulRescale event", || async {
        let listed = events.list(&ListParams::default()).await.ok()?;
        listed
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("SuccessfulRescale"))
    })
    .await;
    assert_eq!(
        rescaled.message.as_deref(),
        Some("New size: 3; reason: Current number of replicas below Spec.MinReplicas")
    );
    assert_eq!(
        rescaled.involved_object.kind.as_deref(),
        Some("HorizontalPodAutoscaler")
    );

    // Idle pods use 1 % of their request: the metric asks for fewer, the minimum holds.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let hpa = eventually(PATIENCE, "the HPA computes from its metric", || async {
        let hpa = hpas.get("web").await.ok()?;
        (condition(&hpa, "ScalingActive")? == ("True".into(), "ValidMetricFound".into()))
            .then_some(hpa)
    })
    .await;
    assert_eq!(
        condition(&hpa, "ScalingLimited"),
        Some(("True".into(), "TooFewReplicas".into()))
    );
    let status = hpa.status.expect("status");
    assert_eq!(status.current_replicas, Some(3));
    assert_eq!(status.desired_replicas, 3);
    let cpu = status.current_metrics.expect("metrics")[0]
        .resource
        .clone()
        .expect("the cpu metric");
    assert_eq!(cpu.name, "cpu");
    assert_eq!(cpu.current.average_utilization, Some(1));

    // A lower minimum: the idle target shrinks to it.
    hpas.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"minReplicas": 2}})),
    )
    .await
    .expect("minReplicas lowered");
    replicas(2).await;
    // A maximum below the replicas: scaled down to it.
    hpas.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"minReplicas": 1, "maxReplicas": 1}})),
    )
    .await
    .expect("maxReplicas lowered");
    replicas(1).await;
}

/// A metric the cluster has no source for (custom metrics) is reported as kube reports an
/// unavailable metrics API, keeps its place in `currentMetrics`, and never lets the target
/// shrink even when the CPU metric asks for fewer.
#[tokio::test(start_paused = true)]
async fn a_metric_without_a_source_is_reported_and_blocks_scaling_down() {
    let world = World::cpu(2, "").await;
    let client = world.client();
    create::<Deployment>(
        &client,
        "default",
        json!({"metadata": {"name": "q"},
               "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "q"}},
                        "template": {"metadata": {"labels": {"app": "q"}},
                                     "spec": {"containers": [{"name": "q", "image": "nginx:1.27",
                                         "resources": {"requests": {"cpu": "100m"}}}]}}}}),
    )
    .await;
    create::<HorizontalPodAutoscaler>(
        &client,
        "default",
        json!({"metadata": {"name": "q"},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "q"},
                        "minReplicas": 1, "maxReplicas": 5,
                        "metrics": [
                            {"type": "Pods", "pods": {"metric": {"name": "qps"},
                                "target": {"type": "AverageValue", "averageValue": "10"}}},
                            {"type": "Resource", "resource": {"name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 50}}}]}}),
    )
    .await;
    let hpas: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    tokio::time::sleep(Duration::from_secs(120)).await;
    let hpa = eventually(
        PATIENCE,
        "the cpu metric computed beside the missing one",
        || async {
            let hpa = hpas.get("q").await.ok()?;
            let metrics = hpa.status.as_ref()?.current_metrics.clone()?;
            (metrics.len() == 2 && metrics[1].resource.is_some()).then_some(hpa)
        },
    )
    .await;
    assert_eq!(
        condition(&hpa, "ScalingActive"),
        Some(("False".into(), "FailedGetPodsMetric".into()))
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let replicas = deployments
        .get("q")
        .await
        .expect("q")
        .spec
        .and_then(|s| s.replicas);
    assert_eq!(
        replicas,
        Some(3),
        "idle, but a metric is missing: no scale-down"
    );
    // Every sync reports it again: one Event, counted (kubectl's `(x8 over 2m)`).
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let listed = events.list(&ListParams::default()).await.expect("events");
    let reported: Vec<&Event> = listed
        .items
        .iter()
        .filter(|e| {
            e.involved_object.name.as_deref() == Some("q")
                && e.reason.as_deref() == Some("FailedComputeMetricsReplicas")
                && e.message
                    .as_deref()
                    .is_some_and(|m| m.starts_with("unable to get pods metric"))
        })
        .collect();
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].count.unwrap_or(0) > 1, "{:?}", reported[0]);
}
