//! The clusters' own control loops are not recorded in managedFields (unless `trackOwnWrites`),
//! users' writes are, and server-side apply by a user keeps working on objects the loops wrote.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use crate::support::{PATIENCE, World, eventually};

/// A client over HTTPS with the sim's admin certificate (a user, not the control loops).
async fn user_client(world: &World) -> kube::Client {
    let path = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&path, &world.sim.clusters, None).expect("written");
    let kubeconfig = Kubeconfig::read_from(&path).expect("a kubeconfig");
    let options = KubeConfigOptions {
        context: Some("c1".to_owned()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("a config");
    kube::Client::try_from(config).expect("a client")
}

fn deployment(replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }))
    .expect("a deployment")
}

fn managers<K: kube::Resource>(object: &K) -> Vec<String> {
    let mut managers: Vec<String> = object
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            format!(
                "{}/{}{}",
                m.manager.as_deref().unwrap_or(""),
                m.operation.as_deref().unwrap_or(""),
                m.subresource
                    .as_deref()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    managers.sort();
    managers
}

async fn running(pods: &Api<Pod>, count: usize) -> Vec<Pod> {
    eventually(PATIENCE, "the pods run", || async {
        let list = pods.list(&ListParams::default()).await.ok()?.items;
        let running = list
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        (list.len() == count && running == count).then_some(list)
    })
    .await
}

#[tokio::test]
async fn the_loops_writes_are_untracked_and_users_apply_still_works() {
    let world = World::cpu(2, "startLatency: '0'").await;
    let client = user_client(&world).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    deployments
        .create(
            &PostParams {
                field_manager: Some("user".into()),
                ..Default::default()
            },
            &deployment(3),
        )
        .await
        .expect("created");
    for pod in running(&pods, 3).await {
        assert_eq!(managers(&pod), Vec::<String>::new(), "{pod:?}");
    }
    let nodes: Api<Node> = Api::all(client.clone());
    for node in nodes
        .list(&ListParams::default())
        .await
        .expect("nodes")
        .items
    {
        assert_eq!(managers(&node), Vec::<String>::new());
    }
    let web = eventually(PATIENCE, "the deployment's status", || async {
        let d = deployments.get("web").await.ok()?;
        (d.status.as_ref()?.ready_replicas == Some(3)).then_some(d)
    })
    .await;
    // The user's create is recorded, the controller's status writes are not.
    assert_eq!(managers(&web), ["user/Update"]);

    // Server-side apply by a user: conflicts with the earlier writer as in kube, forced it wins
    // and the sim follows.
    let apply = |force: bool| {
        let mut params = PatchParams::apply("team");
        params.force = force;
        params
    };
    let refused = deployments
        .patch("web", &apply(false), &Patch::Apply(deployment(1)))
        .await
        .expect_err("a conflict with the creator's replicas");
    assert!(
        matches!(&refused, kube::Error::Api(e) if e.code == 409),
        "{refused:?}"
    );
    let applied = deployments
        .patch("web", &apply(true), &Patch::Apply(deployment(1)))
        .await
        .expect("applied");
    assert_eq!(managers(&applied), ["team/Apply", "user/Update"]);
    running(&pods, 1).await;
}

#[tokio::test]
async fn track_own_writes_records_the_loops() {
    let world = World::cpu(1, "startLatency: '0'\ntrackOwnWrites: true").await;
    let client = user_client(&world).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .create(&PostParams::default(), &deployment(1))
        .await
        .expect("created");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = running(&pods, 1).await.remove(0);
    assert!(!managers(&pod).is_empty(), "{pod:?}");
    let nodes: Api<Node> = Api::all(client);
    let node = nodes
        .list(&ListParams::default())
        .await
        .expect("nodes")
        .items
        .remove(0);
    assert!(!managers(&node).is_empty(), "{node:?}");
}
