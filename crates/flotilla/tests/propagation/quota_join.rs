//! Karmada's `federatedresourcequota_test.go` "join new cluster": a FederatedResourceQuota's
//! ResourceQuota reaches a cluster that joins after the quota only if the quota assigns it
//! (`staticAssignments`), checked on the control plane (the Works in each execution namespace;
//! `tests/quota_e2e.rs` follows Works into members).

use flotilla_api::karmada::Work;
use flotilla_controllers::{ControllerOptions, federated_resource_quota};
use kube::api::{Api, ListParams};
use serde_json::json;

use crate::world::{World, add_cluster, eventually};

async fn quota_works(client: &kube::Client, cluster: &str) -> Vec<String> {
    Api::<Work>::namespaced(client.clone(), &format!("karmada-es-{cluster}"))
        .list(&ListParams::default().labels("federatedresourcequota.karmada.io/name=team"))
        .await
        .expect("list Works")
        .items
        .into_iter()
        .filter_map(|w| w.metadata.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_joining_later_gets_the_quota_only_when_assigned() {
    let world = World::start(&["member1", "member2"]).await;
    world.run_controller(
        federated_resource_quota::sync::start,
        ControllerOptions::default(),
    );
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "FederatedResourceQuota",
            "metadata": {"name": "team", "namespace": "default"},
            "spec": {"overall": {"cpu": "2"}, "staticAssignments": [
                {"clusterName": "member1", "hard": {"cpu": "1"}},
                {"clusterName": "member3", "hard": {"cpu": "1"}}]}}))
        .await;
    let first = eventually("the assigned member's Work", || async {
        let works = quota_works(&world.client, "member1").await;
        (!works.is_empty()).then_some(works)
    })
    .await;
    assert_eq!(first.len(), 1);
    assert!(quota_works(&world.client, "member2").await.is_empty());

    // member4 joins, then member3: member3 is assigned, so it gets the quota; member4 is not.
    add_cluster(&world.client, "member4").await;
    add_cluster(&world.client, "member3").await;
    let joined = eventually("the new assigned member's Work", || async {
        let works = quota_works(&world.client, "member3").await;
        (!works.is_empty()).then_some(works)
    })
    .await;
    assert_eq!(
        joined, first,
        "the same Work name in every execution namespace"
    );
    let work = Api::<Work>::namespaced(world.client.clone(), "karmada-es-member3")
        .get(&joined[0])
        .await
        .expect("the Work");
    let manifest = serde_json::to_value(&work.spec.workload.manifests[0]).expect("a manifest");
    assert_eq!(manifest["kind"], "ResourceQuota");
    assert_eq!(manifest["spec"]["hard"], json!({"cpu": "1"}));
    // The reconcile that wrote member3's Work saw member4's Cluster (created first) too.
    assert!(quota_works(&world.client, "member4").await.is_empty());
    assert!(quota_works(&world.client, "member2").await.is_empty());
}
