//! Push-mode execution end to end: a control plane (in-process API server) with the execution
//! and work-status controllers, and two simulated members whose workload controllers and
//! kubelets drive real status. Works created in `karmada-es-<cluster>` appear in the member,
//! their status and health come back, member drift is repaired, conflicts follow Karmada.

mod execution {
    pub mod metrics;
    pub mod support;
}

/// `flotilla up`'s `/metrics` endpoint, served by the metrics test.
#[path = "../src/metrics.rs"]
#[allow(dead_code)]
mod endpoint;

use std::collections::BTreeMap;

use flotilla_api::karmada::Work;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use execution::support::{World, deployment_manifest, eventually};

fn applied(work: &Work) -> Option<(String, String, String)> {
    work.condition("Applied")
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

fn labels(d: &Deployment) -> BTreeMap<String, String> {
    d.metadata.labels.clone().unwrap_or_default()
}

fn image(d: &Deployment) -> String {
    d.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_runs_in_the_member_and_its_status_comes_back_healthy() {
    let world = World::start().await;
    world
        .create_work("m1", "web", deployment_manifest("web", 2, "nginx:1"))
        .await;
    let member: Api<Deployment> = Api::namespaced(world.member("m1"), "default");
    let deployment = eventually("the member runs 2 ready replicas", || async {
        let d = member.get_opt("web").await.ok()??;
        (d.status.as_ref()?.ready_replicas == Some(2)).then_some(d)
    })
    .await;
    assert_eq!(labels(&deployment)["karmada.io/managed"], "true");
    // The other member got nothing.
    let other: Api<Deployment> = Api::namespaced(world.member("m2"), "default");
    assert!(other.get_opt("web").await.expect("get").is_none());

    let work = eventually(
        "the Work reports the member's status as Healthy",
        || async {
            let work = world.work("m1", "web").await?;
            let status = work.status.as_ref()?.manifest_statuses.first()?.clone();
            (status.health == "Healthy" && status.status.as_ref()?.to_value()["readyReplicas"] == 2)
                .then_some(work)
        },
    )
    .await;
    assert_eq!(
        applied(&work),
        Some((
            "True".into(),
            "AppliedSuccessful".into(),
            "Manifest has been successfully applied".into()
        ))
    );
    assert_eq!(
        work.condition("Dispatching").map(|c| c.reason.clone()),
        Some("Dispatching".into())
    );
    assert_eq!(
        work.metadata.finalizers,
        Some(vec!["karmada.io/execution-controller".to_owned()])
    );
    let status = &work.status.as_ref().expect("status").manifest_statuses[0];
    assert_eq!(
        serde_json::to_value(&status.identifier).expect("json"),
        json!({"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
            "resource": "", "namespace": "default", "name": "web"})
    );
    let reflected = status.status.as_ref().expect("reflected").to_value();
    assert_eq!(reflected["resourceTemplateGeneration"], 1);
    assert_eq!(reflected["replicas"], 2);
    assert_eq!(reflected["availableReplicas"], 2);
    assert!(reflected.get("conditions").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updated_work_updates_the_member_and_keeps_member_owned_fields() {
    let world = World::start().await;
    let mut manifest = deployment_manifest("web", 2, "nginx:1");
    manifest["metadata"]["labels"]["resourcetemplate.karmada.io/retain-replicas"] = json!("true");
    world.create_work("m1", "web", manifest.clone()).await;
    let member: Api<Deployment> = Api::namespaced(world.member("m1"), "default");
    eventually("the deployment is applied", || async {
        member.get_opt("web").await.ok()?
    })
    .await;
    // In the member, an HPA scales to 3 and a controller adds a label.
    let patch = json!({"metadata": {"labels": {"member.example/team": "blue"}},
        "spec": {"replicas": 3}});
    member
        .patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("member edit");
    // The template changes its image.
    manifest["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    world.update_work("m1", "web", manifest).await;
    let deployment = eventually("the new image reaches the member", || async {
        let d = member.get_opt("web").await.ok()??;
        (image(&d) == "nginx:2").then_some(d)
    })
    .await;
    assert_eq!(labels(&deployment)["member.example/team"], "blue");
    assert_eq!(deployment.spec.as_ref().and_then(|s| s.replicas), Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_in_the_member_is_repaired() {
    let world = World::start().await;
    world
        .create_work("m1", "web", deployment_manifest("web", 1, "nginx:1"))
        .await;
    let member: Api<Deployment> = Api::namespaced(world.member("m1"), "default");
    eventually("the deployment is applied", || async {
        member.get_opt("web").await.ok()?
    })
    .await;
    let edit = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "evil:1"}]}}}});
    member
        .patch("web", &PatchParams::default(), &Patch::Strategic(&edit))
        .await
        .expect("member edit");
    eventually("the edit is reverted", || async {
        let d = member.get_opt("web").await.ok()??;
        (image(&d) == "nginx:1").then_some(())
    })
    .await;
    let uid = member.get("web").await.expect("get").metadata.uid;
    member
        .delete("web", &DeleteParams::default())
        .await
        .expect("member delete");
    eventually("the deleted deployment is recreated", || async {
        let d = member.get_opt("web").await.ok()??;
        (d.metadata.uid != uid).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_refuses_a_pre_existing_member_object_and_overwrite_takes_it_over() {
    let world = World::start().await;
    let member: Api<Deployment> = Api::namespaced(world.member("m1"), "default");
    let existing: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "legacy", "namespace": "default", "labels": {"owner": "team-a"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "legacy"}},
            "template": {"metadata": {"labels": {"app": "legacy"}},
                "spec": {"containers": [{"name": "app", "image": "legacy:1"}]}}}}))
    .expect("deployment");
    member
        .create(&PostParams::default(), &existing)
        .await
        .expect("pre-existing object");
    let mut manifest = deployment_manifest("legacy", 1, "nginx:1");
    manifest["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] = json!("abort");
    world.create_work("m1", "legacy", manifest.clone()).await;
    let work = eventually("the Work reports the conflict", || async {
        let work = world.work("m1", "legacy").await?;
        applied(&work).filter(|a| a.0 == "False").map(|_| work)
    })
    .await;
    assert_eq!(
        applied(&work),
        Some((
            "False".into(),
            "AppliedFailed".into(),
            "Failed to apply all manifests (0/1): resource(kind=Deployment, default/legacy) already \
             exists in the cluster m1 and the work.karmada.io/conflict-resolution strategy value \
             is empty, Karmada will not manage this resource"
                .into()
        ))
    );
    let untouched = member.get("legacy").await.expect("get");
    assert_eq!(image(&untouched), "legacy:1");
    assert!(!labels(&untouched).contains_key("karmada.io/managed"));

    manifest["metadata"]["annotations"]["work.karmada.io/conflict-resolution"] = json!("overwrite");
    world.update_work("m1", "legacy", manifest).await;
    let taken = eventually("overwrite takes the object over", || async {
        let d = member.get_opt("legacy").await.ok()??;
        (image(&d) == "nginx:1").then_some(d)
    })
    .await;
    assert_eq!(labels(&taken)["karmada.io/managed"], "true");
    // Labels the member had and the template does not manage are kept.
    assert_eq!(labels(&taken)["owner"], "team-a");
    eventually("the Work is Applied", || async {
        let work = world.work("m1", "legacy").await?;
        applied(&work).filter(|a| a.0 == "True").map(|_| ())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_work_deletes_the_member_object_unless_preserved() {
    let world = World::start().await;
    world
        .create_work("m1", "gone", deployment_manifest("gone", 1, "nginx:1"))
        .await;
    let mut kept = deployment_manifest("kept", 1, "nginx:1");
    kept["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"] = json!("pp-id");
    world
        .create_work_with(
            "m1",
            "kept",
            kept,
            json!({"preserveResourcesOnDeletion": true}),
        )
        .await;
    let member: Api<Deployment> = Api::namespaced(world.member("m1"), "default");
    for name in ["gone", "kept"] {
        eventually("both deployments are applied", || async {
            member.get_opt(name).await.ok()?
        })
        .await;
    }
    for name in ["gone", "kept"] {
        world.delete_work("m1", name).await;
    }
    eventually("both Works are gone (finalizer removed)", || async {
        let none =
            world.work("m1", "gone").await.is_none() && world.work("m1", "kept").await.is_none();
        none.then_some(())
    })
    .await;
    assert!(
        member.get_opt("gone").await.expect("get").is_none()
            || member
                .get_opt("gone")
                .await
                .expect("get")
                .is_some_and(|d| d.metadata.deletion_timestamp.is_some())
    );
    let preserved = member
        .get("kept")
        .await
        .expect("the preserved object stays");
    let labels = labels(&preserved);
    assert!(!labels.contains_key("karmada.io/managed"));
    assert!(!labels.contains_key("propagationpolicy.karmada.io/permanent-id"));
    assert_eq!(labels["app"], "kept");
    let annotations = preserved.metadata.annotations.clone().unwrap_or_default();
    assert!(!annotations.contains_key("work.karmada.io/name"));
    assert!(!annotations.contains_key("resourcetemplate.karmada.io/managed-labels"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspended_dispatching_is_honoured_and_resumed() {
    let world = World::start().await;
    world
        .create_work_with(
            "m1",
            "web",
            deployment_manifest("web", 1, "nginx:1"),
            json!({"suspendDispatching": true}),
        )
        .await;
    let work = eventually("the Work says it is suspended", || async {
        let work = world.work("m1", "web").await?;
        work.condition("Dispatching").is_some().then_some(work)
    })
    .await;
    let dispatching = work.condition("Dispatching").expect("condition");
    assert_eq!(
        (
            dispatching.status.as_str(),
            dispatching.reason.as_str(),
            dispatching.message.as_str()
        ),
        (
            "False",
            "SuspendDispatching",
            "Work dispatching is in a suspended state."
        )
    );
    assert!(applied(&work).is_none());
    let member: Api<Deployment> = Api::namespaced(world.member("m1"), "default");
    assert!(member.get_opt("web").await.expect("get").is_none());

    let api: Api<Work> = Api::namespaced(world.control.clone(), "karmada-es-m1");
    let resume = json!({"spec": {"suspendDispatching": false}});
    api.patch(
        &world.work_name("web"),
        &PatchParams::default(),
        &Patch::Merge(&resume),
    )
    .await
    .expect("resume");
    eventually("the resumed Work is applied", || async {
        member.get_opt("web").await.ok()?
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_is_not_ready_gets_its_works_once_ready() {
    let world = World::start().await;
    world.set_ready("m2", false).await;
    // A Work applied in m1 afterwards means the controller has seen the change.
    world
        .create_work("m1", "probe", deployment_manifest("probe", 1, "nginx:1"))
        .await;
    eventually("the probe Work is applied", || async {
        world.work("m1", "probe").await?.is_applied().then_some(())
    })
    .await;
    world
        .create_work("m2", "web", deployment_manifest("web", 1, "nginx:1"))
        .await;
    // The finalizer is added before readiness matters: wait for it, then check nothing ran.
    eventually("the Work holds the finalizer", || async {
        world
            .work("m2", "web")
            .await?
            .metadata
            .finalizers
            .map(|_| ())
    })
    .await;
    let member: Api<Deployment> = Api::namespaced(world.member("m2"), "default");
    assert!(member.get_opt("web").await.expect("get").is_none());
    world.set_ready("m2", true).await;
    eventually("the Work is applied once the cluster is Ready", || async {
        member.get_opt("web").await.ok()?
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_clusters_are_left_to_their_agent() {
    let world = World::start().await;
    world.set_sync_mode("m2", "Pull").await;
    // A first Push Work applied means the controller manager has been running past the switch.
    world
        .create_work("m1", "first", deployment_manifest("first", 1, "nginx:1"))
        .await;
    let applied_in_m1 = |name: &'static str| {
        let world = &world;
        async move {
            eventually("the Push cluster's Work is applied", || async {
                world.work("m1", name).await?.is_applied().then_some(())
            })
            .await
        }
    };
    applied_in_m1("first").await;
    world
        .create_work("m2", "pulled", deployment_manifest("pulled", 1, "nginx:1"))
        .await;
    world
        .create_work("m1", "second", deployment_manifest("second", 1, "nginx:1"))
        .await;
    applied_in_m1("second").await;
    // The controller manager did not touch the Pull cluster's Work.
    let pulled = world.work("m2", "pulled").await.expect("the Work exists");
    assert!(pulled.metadata.finalizers.is_none());
    assert!(pulled.status.is_none());
    let m2: Api<Deployment> = Api::namespaced(world.member("m2"), "default");
    assert!(m2.get_opt("pulled").await.expect("get").is_none());

    world.start_agent("m2");
    let work = eventually(
        "the agent applies its cluster's Work and reflects status",
        || async {
            let work = world.work("m2", "pulled").await?;
            let health = work
                .status
                .as_ref()?
                .manifest_statuses
                .first()?
                .health
                .clone();
            (health == "Healthy").then_some(work)
        },
    )
    .await;
    assert!(work.is_applied());
    assert!(m2.get_opt("pulled").await.expect("get").is_some());
}
