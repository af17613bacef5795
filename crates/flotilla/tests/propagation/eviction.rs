//! Evictions on the in-process control plane (no members: the test plays the execution
//! controller by releasing Work finalizers): a cluster evicted with purge mode `Directly` loses
//! its Work before the binding's new cluster gets one, as Karmada's binding controller orders it.

use std::time::Duration;

use flotilla_api::karmada::{ResourceBinding, Work};
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::world::{World, deployment, eventually};

const NS: &str = "evict-directly";

/// The Deployment's Work in `cluster`'s execution space, if any.
async fn work_in(client: &kube::Client, cluster: &str) -> Option<Work> {
    Api::<Work>::namespaced(client.clone(), &format!("karmada-es-{cluster}"))
        .list(&ListParams::default())
        .await
        .expect("list works")
        .items
        .into_iter()
        .find(|w| {
            w.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with("web-"))
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_evicted_directly_loses_its_work_before_the_new_cluster_gets_one() {
    let world = World::start(&["member1", "member2"]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                    "spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}]}}}))
        .await;
    world.apply(deployment(NS, "web")).await;
    let bindings = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    let from = eventually("scheduled to one cluster", || async {
        let b = bindings.get_opt("web-deployment").await.ok()??;
        (b.spec.clusters.len() == 1).then(|| b.spec.clusters[0].name.clone())
    })
    .await;
    let to = if from == "member1" {
        "member2"
    } else {
        "member1"
    };
    let old = eventually("the Work in the first cluster", || async {
        work_in(&world.client, &from).await
    })
    .await;

    // What the taint manager writes: the cluster leaves spec.clusters for a Directly task.
    bindings
        .patch(
            "web-deployment",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"clusters": null, "gracefulEvictionTasks": [
                {"fromCluster": from, "purgeMode": "Directly", "reason": "TaintUntolerated",
                    "producer": "TaintManager"}]}})),
        )
        .await
        .expect("evicted");
    eventually("rescheduled to the other cluster", || async {
        let b = bindings.get_opt("web-deployment").await.ok()??;
        (b.spec.clusters.len() == 1 && b.spec.clusters[0].name == to).then_some(())
    })
    .await;
    eventually("the old Work deleted (its finalizer holds it)", || async {
        work_in(&world.client, &from)
            .await?
            .metadata
            .deletion_timestamp
            .map(|_| ())
    })
    .await;
    // Let the binding controller act on the new placement; with the old Work still there it
    // must not write the new one.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        work_in(&world.client, to).await.is_none(),
        "a Directly eviction writes the new Work only once the old one is gone"
    );

    // The execution controller (not running here) releases the finalizer once the member
    // object is deleted.
    Api::<Work>::namespaced(world.client.clone(), &format!("karmada-es-{from}"))
        .patch(
            old.metadata.name.as_deref().expect("name"),
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("finalizer released");
    eventually("the new Work written", || async {
        work_in(&world.client, to).await.map(|_| ())
    })
    .await;
}
