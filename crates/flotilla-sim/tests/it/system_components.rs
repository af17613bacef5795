//! `systemComponents: true`: a simulated cluster looks like a kind cluster in `kube-system` —
//! the tainted control-plane node with kubeadm's static pods, CoreDNS with its `kube-dns`
//! Service, and a kube-proxy pod on every node; workloads stay off the control-plane node.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment};
use k8s_openapi::api::core::v1::{Endpoints, Node, Service};
use kube::api::Api;
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually, pods};

#[tokio::test(start_paused = true)]
async fn a_cluster_with_system_components_looks_like_kind() {
    let world = World::cpu(3, "systemComponents: true").await;
    let client = world.client();
    let node: Node = Api::all(client.clone())
        .get("c1-control-plane")
        .await
        .expect("the control-plane node");
    let labels = node.metadata.labels.clone().expect("labels");
    assert_eq!(labels["node-role.kubernetes.io/control-plane"], "");
    assert_eq!(
        serde_json::to_value(&node.spec.as_ref().expect("spec").taints).expect("json"),
        json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
    );
    let node_ip = node
        .status
        .as_ref()
        .expect("status")
        .addresses
        .as_ref()
        .expect("addresses")[0]
        .address
        .clone();

    // Everything in kube-system runs: 4 static pods, 2 CoreDNS pods, 4 kube-proxy pods.
    let running = eventually(PATIENCE, "the system pods run", || async {
        let system = pods(&client, "kube-system").await;
        let ready = system
            .iter()
            .filter(|p| crate::support::condition(p, "Ready").is_some_and(|c| c.status == "True"))
            .count();
        (system.len() == 10 && ready == 10).then_some(system)
    })
    .await;
    let on = |name: &str| {
        running
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("pod {name}"))
    };
    for component in [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
    ] {
        let pod = on(&format!("{component}-c1-control-plane"));
        let spec = pod.spec.as_ref().expect("spec");
        assert_eq!(spec.node_name.as_deref(), Some("c1-control-plane"));
        assert_eq!(
            pod.status.as_ref().and_then(|s| s.pod_ip.as_deref()),
            Some(node_ip.as_str()),
            "a host-network pod has the node's address"
        );
        let owner = &pod.metadata.owner_references.as_ref().expect("owner")[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("Node", "c1-control-plane")
        );
        assert_eq!(
            pod.metadata.labels.as_ref().expect("labels")["tier"],
            "control-plane"
        );
    }
    let coredns: Vec<_> = running
        .iter()
        .filter(|p| {
            p.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.get("k8s-app").map(String::as_str) == Some("kube-dns"))
        })
        .collect();
    assert_eq!(coredns.len(), 2);
    for pod in &coredns {
        assert_ne!(
            pod.spec.as_ref().and_then(|s| s.node_name.as_deref()),
            Some("c1-control-plane"),
            "the control-plane taint keeps CoreDNS on the workers"
        );
    }
    let proxies: Vec<_> = running
        .iter()
        .filter_map(|p| {
            p.metadata
                .name
                .as_deref()
                .filter(|n| n.starts_with("kube-proxy-"))
                .and(p.spec.as_ref()?.node_name.clone())
        })
        .collect();
    let mut proxy_nodes = proxies.clone();
    proxy_nodes.sort();
    proxy_nodes.dedup();
    assert_eq!(proxy_nodes.len(), 4, "one kube-proxy per node: {proxies:?}");
    let deployment: Deployment = Api::namespaced(client.clone(), "kube-system")
        .get("coredns")
        .await
        .expect("coredns");
    assert_eq!(deployment.status.and_then(|s| s.ready_replicas), Some(2));
    let daemon_set: DaemonSet = Api::namespaced(client.clone(), "kube-system")
        .get("kube-proxy")
        .await
        .expect("kube-proxy");
    assert_eq!(
        daemon_set.status.map(|s| s.desired_number_scheduled),
        Some(4)
    );

    // kube-dns at the range's tenth address, its endpoints the CoreDNS pods.
    let dns: Service = Api::namespaced(client.clone(), "kube-system")
        .get("kube-dns")
        .await
        .expect("kube-dns");
    assert_eq!(
        dns.spec.and_then(|s| s.cluster_ip).as_deref(),
        Some("10.96.0.10")
    );
    let endpoints: Api<Endpoints> = Api::namespaced(client.clone(), "kube-system");
    eventually(PATIENCE, "kube-dns has two endpoints", || async {
        let e = endpoints.get_opt("kube-dns").await.ok()??;
        let addresses = e.subsets?.first()?.addresses.clone()?;
        (addresses.len() == 2).then_some(())
    })
    .await;

    // A workload tolerating nothing goes to the workers only.
    create::<Deployment>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
            "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx",
                        "resources": {"requests": {"cpu": "100m"}}}]}}}}),
    )
    .await;
    let placed = eventually(PATIENCE, "the workload's pods are placed", || async {
        let placed: Vec<String> = pods(&client, "default")
            .await
            .into_iter()
            .filter_map(|p| p.spec?.node_name)
            .collect();
        (placed.len() == 6).then_some(placed)
    })
    .await;
    assert!(
        !placed.iter().any(|n| n == "c1-control-plane"),
        "{placed:?}"
    );
}
