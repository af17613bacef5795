//! CronFederatedHPA on the in-process control plane: a rule scales a Deployment through its
//! `scale` subresource and records the run; a suspended rule stops; a rule sets a FederatedHPA's
//! bounds; admission refuses a Karmada target other than a FederatedHPA; a missing target is a
//! failed run with the API's message and a `ScaleFailed` event.

use flotilla_api::karmada::CronFederatedHPA;
use flotilla_controllers::{ControllerOptions, cron_federated_hpa};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::world::{World, deployment, eventually};

const NS: &str = "cron";

fn cron(name: &str, target: serde_json::Value, rule: serde_json::Value) -> serde_json::Value {
    json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "CronFederatedHPA",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"scaleTargetRef": target, "rules": [rule]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_scale_their_targets_on_schedule_and_record_each_run() {
    let world = World::start(&["member1"]).await;
    world.run_controller(cron_federated_hpa::start, ControllerOptions::default());
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world.apply(deployment(NS, "web")).await;
    let deployments = Api::<Deployment>::namespaced(world.client.clone(), NS);
    let crons = Api::<CronFederatedHPA>::namespaced(world.client.clone(), NS);

    // A workload target: scaled to targetReplicas by its scale subresource.
    world
        .apply(cron(
            "scale-web",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}),
            json!({"name": "up", "schedule": "@every 1s", "targetReplicas": 3}),
        ))
        .await;
    eventually("the Deployment scaled to 3", || async {
        let d = deployments.get("web").await.ok()?;
        (d.spec?.replicas == Some(3)).then_some(())
    })
    .await;
    let history = eventually("the run recorded", || async {
        let c = crons.get("scale-web").await.ok()?;
        let h = c.status.execution_histories.first()?.clone();
        (!h.successful_executions.is_empty()).then_some(h)
    })
    .await;
    assert_eq!(history.rule_name, "up");
    assert_eq!(history.successful_executions[0].applied_replicas, Some(3));
    assert!(history.successful_executions[0].schedule_time.is_some());
    assert!(history.next_execution_time.is_some());
    assert!(
        history.successful_executions.len() <= 3,
        "the default limit"
    );

    // Suspended: no next run, and the replicas someone sets stay.
    crons
        .patch(
            "scale-web",
            &PatchParams::default(),
            &Patch::Json::<()>(
                serde_json::from_value(json!([
                    {"op": "add", "path": "/spec/rules/0/suspend", "value": true}
                ]))
                .expect("patch"),
            ),
        )
        .await
        .expect("suspended");
    eventually("nextExecutionTime cleared", || async {
        let c = crons.get("scale-web").await.ok()?;
        c.status
            .execution_histories
            .first()?
            .next_execution_time
            .is_none()
            .then_some(())
    })
    .await;
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .expect("scaled by hand");
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(
        deployments
            .get("web")
            .await
            .expect("web")
            .spec
            .and_then(|s| s.replicas),
        Some(1),
        "a suspended rule does not run"
    );

    // A FederatedHPA target: its bounds move.
    world
        .apply(json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 5}}))
        .await;
    world
        .apply(cron(
            "bounds",
            json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA", "name": "web"}),
            json!({"name": "peak", "schedule": "@every 1s", "targetMinReplicas": 2, "targetMaxReplicas": 4}),
        ))
        .await;
    let resource = kube::discovery::ApiResource {
        group: "autoscaling.karmada.io".into(),
        version: "v1alpha1".into(),
        api_version: "autoscaling.karmada.io/v1alpha1".into(),
        kind: "FederatedHPA".into(),
        plural: "federatedhpas".into(),
    };
    let fhpas: Api<DynamicObject> = Api::namespaced_with(world.client.clone(), NS, &resource);
    eventually("the FederatedHPA's bounds set", || async {
        let f = fhpas.get("web").await.ok()?;
        let spec = f.data.get("spec")?;
        (spec["minReplicas"] == 2 && spec["maxReplicas"] == 4).then_some(())
    })
    .await;

    // Admission refuses a Karmada target other than a FederatedHPA, as Karmada's webhook does.
    let wrong: CronFederatedHPA = serde_json::from_value(cron(
        "wrong",
        json!({"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "Widget", "name": "web"}),
        json!({"name": "never", "schedule": "@every 1s", "targetReplicas": 2}),
    ))
    .expect("cron");
    match crons.create(&PostParams::default(), &wrong).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422);
            assert!(
                status.message.contains(
                    "spec.scaleTargetRef.kind: Invalid value: \"Widget\": invalid scaleTargetRef kind: Widget, only support FederatedHPA"
                ),
                "{}",
                status.message
            );
        }
        other => panic!("a Widget target was not refused: {other:?}"),
    }

    // A target that does not exist: a failed run with the API's message, and an event.
    world
        .apply(cron(
            "missing",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone"}),
            json!({"name": "up", "schedule": "@every 1s", "targetReplicas": 2, "failedHistoryLimit": 2}),
        ))
        .await;
    let failed = eventually("two failed runs recorded", || async {
        let c = crons.get("missing").await.ok()?;
        let runs = &c.status.execution_histories.first()?.failed_executions;
        (runs.len() == 2).then(|| runs[0].clone())
    })
    .await;
    assert_eq!(failed.message, "deployments.apps \"gone\" not found");
    let events = Api::<Event>::namespaced(world.client.clone(), NS);
    eventually("a ScaleFailed event", || async {
        let list = events.list(&ListParams::default()).await.ok()?;
        list.items
            .iter()
            .any(|e| {
                e.reason.as_deref() == Some("ScaleFailed")
                    && e.involved_object.name.as_deref() == Some("missing")
            })
            .then_some(())
    })
    .await;
    // Kept within failedHistoryLimit as runs go on.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let c = crons.get("missing").await.expect("missing");
    assert_eq!(c.status.execution_histories[0].failed_executions.len(), 2);
}
