//! One seed, one world: node names, zones and placements repeat; another seed changes them.

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually};

async fn run(seed: u64) -> (Vec<(String, String)>, Vec<(String, String)>) {
    let world = World::from_yaml(&format!(
        "seed: {seed}\nstartLatency: '0'\nclusters:\n- name: d\n  zones: [z1, z2, z3]\n  nodePools: [{{name: p, count: 8, profile: cpu}}]\n"
    ))
    .await;
    let client = world.client();
    let nodes: Api<Node> = Api::all(client.clone());
    let mut layout: Vec<(String, String)> = nodes
        .list(&ListParams::default())
        .await
        .expect("nodes")
        .items
        .into_iter()
        .map(|n| {
            let zone =
                n.metadata.labels.as_ref().expect("labels")["topology.kubernetes.io/zone"].clone();
            (n.metadata.name.expect("a name"), zone)
        })
        .collect();
    layout.sort();
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let mut placements = Vec::new();
    for i in 0..6 {
        let name = format!("p{i}");
        create::<Pod>(&client, "default", json!({"metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}))
        .await;
        let node = eventually(PATIENCE, "bound", || async {
            api.get(&name).await.ok()?.spec?.node_name
        })
        .await;
        placements.push((name, node));
    }
    (layout, placements)
}

#[tokio::test(start_paused = true)]
async fn the_same_seed_gives_the_same_names_zones_and_placements() {
    let a = run(11).await;
    let b = run(11).await;
    assert_eq!(a, b);
    let c = run(12).await;
    assert_ne!(a.0, c.0, "another seed, other names");
}
