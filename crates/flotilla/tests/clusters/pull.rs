//! A `Pull` cluster's health is its Lease: while the agent renews it the cluster stays as it
//! reported; when renewals stop for the grace period (40 s) the cluster controller marks it
//! Ready=Unknown and taints it unreachable. On tokio's paused clock with Karmada's timings.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::Cluster;
use flotilla_controllers::Context;
use flotilla_controllers::cluster::ClusterOptions;
use flotilla_runtime::Shutdown;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::support::{admin, ready, taint_keys};

async fn until(api: &Api<Cluster>, what: &str, check: impl Fn(&Cluster) -> bool) -> Cluster {
    for _ in 0..2_000 {
        if let Some(c) = api.get_opt("edge").await.expect("read")
            && check(&c)
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never: {what}");
}

#[tokio::test(start_paused = true)]
async fn a_pull_cluster_whose_lease_stops_goes_unknown_and_unreachable() {
    let store = Arc::new(flotilla_store::MemoryStore::new());
    let running = flotilla_apiserver::Builder::new(store)
        .start()
        .await
        .expect("the control plane starts");
    let client = admin(&running, "pull-test");
    let shutdown = Shutdown::new();
    let context = Context::new(
        admin(&running, "controller-manager"),
        Arc::new(flotilla_member::StaticMemberClients::new()),
        None,
    );
    tokio::spawn(flotilla_controllers::cluster::run(
        context,
        ClusterOptions::default(),
        shutdown.clone(),
    ));
    let api = Api::<Cluster>::all(client.clone());
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "edge"},
        "spec": {"syncMode": "Pull", "apiEndpoint": "https://edge.example:6443"},
    }))
    .expect("a cluster");
    api.create(&PostParams::default(), &cluster)
        .await
        .expect("created");
    until(&api, "a new cluster is not-ready until it reports", |c| {
        taint_keys(c) == ["cluster.karmada.io/not-ready"]
    })
    .await;

    // The agent reports Ready and renews its Lease every 10 s.
    let status = json!({"status": {"conditions": [{"type": "Ready", "status": "True",
        "reason": "ClusterReady", "message": "cluster is healthy and ready to accept workloads",
        "lastTransitionTime": "2026-12-03T00:00:00Z"}]}});
    api.patch_status("edge", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    let agent = shutdown.child();
    tokio::spawn(flotilla_controllers::cluster_status::lease::renew(
        client.clone(),
        "edge".into(),
        Duration::from_secs(40),
        0.25,
        agent.clone(),
    ));
    until(&api, "Ready clears the taint", |c| taint_keys(c).is_empty()).await;
    // Two minutes of renewals: still Ready.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let c = api.get("edge").await.expect("read");
    assert_eq!(ready(&c), Some(("True".into(), "ClusterReady".into())));

    // The agent goes away.
    agent.cancel();
    let c = until(&api, "Unknown after the grace period", |c| {
        ready(c).is_some_and(|(s, _)| s == "Unknown")
    })
    .await;
    assert_eq!(
        ready(&c),
        Some(("Unknown".into(), "ClusterStatusUnknown".into()))
    );
    until(&api, "unreachable taint", |c| {
        taint_keys(c) == ["cluster.karmada.io/unreachable"]
    })
    .await;
    shutdown.cancel();
}
