//! The execution namespace follows the Cluster: created with it, deleted (with its Works)
//! before the finalizer lets the Cluster go; a cluster without a usable Secret is
//! `StatusCollectionFailed` with a message that names what is wrong and never the token.

use base64::Engine as _;
use flotilla_api::karmada::Cluster;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::support::{PATIENCE, World, eventually, ready, ready_message, taint_keys};

const SIM: &str = "seed: 5\nstartLatency: '0'\nclusters:\n- name: m1\n  nodePools: [{name: p, count: 1, profile: cpu}]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_execution_space_lives_and_dies_with_the_cluster() {
    let world = World::start(SIM).await;
    world.join("m1").await;
    let namespaces = Api::<Namespace>::all(world.client.clone());
    let ns = eventually(PATIENCE, "the execution space exists", || async {
        namespaces.get_opt("karmada-es-m1").await.ok().flatten()
    })
    .await;
    assert_eq!(
        ns.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("karmada.io/system"))
            .map(String::as_str),
        Some("true")
    );
    world
        .cluster_until("m1", "Ready", |c| {
            ready(c).is_some_and(|(s, _)| s == "True")
        })
        .await;
    // Something inside the execution space goes with it.
    let cm: ConfigMap = serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "inside", "namespace": "karmada-es-m1"}}))
    .expect("a configmap");
    Api::<ConfigMap>::namespaced(world.client.clone(), "karmada-es-m1")
        .create(&PostParams::default(), &cm)
        .await
        .expect("created");

    Api::<Cluster>::all(world.client.clone())
        .delete("m1", &DeleteParams::default())
        .await
        .expect("delete accepted");
    eventually(PATIENCE, "the cluster is gone", || async {
        world.cluster("m1").await.is_none().then_some(())
    })
    .await;
    assert!(
        namespaces
            .get_opt("karmada-es-m1")
            .await
            .expect("read")
            .is_none(),
        "the finalizer held the cluster until the execution space was gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_secret_is_reported_without_the_token_and_a_fixed_one_is_picked_up() {
    let world = World::start(SIM).await;
    world.join("m1").await;
    world
        .cluster_until("m1", "Ready", |c| {
            ready(c).is_some_and(|(s, _)| s == "True")
        })
        .await;
    let secrets = Api::<Secret>::namespaced(world.client.clone(), "karmada-cluster");
    let good = secrets.get("m1").await.expect("the secret");
    let token =
        String::from_utf8(good.data.as_ref().expect("data")["token"].0.clone()).expect("UTF-8");
    // No token at all: the client cannot be built.
    secrets
        .patch(
            "m1",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"token": null}})),
        )
        .await
        .expect("patched");
    let cluster = world
        .cluster_until("m1", "StatusCollectionFailed and tainted not-ready", |c| {
            ready(c) == Some(("False".into(), "StatusCollectionFailed".into()))
                && taint_keys(c) == ["cluster.karmada.io/not-ready"]
        })
        .await;
    let message = ready_message(&cluster);
    assert!(
        message.contains("karmada-cluster/m1") && message.contains("token"),
        "{message}"
    );
    assert!(!message.contains(&token), "the token never appears");
    // Restoring the Secret rebuilds the client.
    secrets
        .patch("m1", &PatchParams::default(), &Patch::Merge(json!({"data": {"token": base64::engine::general_purpose::STANDARD.encode(&token)}})))
        .await
        .expect("patched");
    world
        .cluster_until("m1", "Ready again", |c| {
            ready(c).is_some_and(|(s, _)| s == "True")
        })
        .await;
}
