//! Faults through the control endpoint recorded in the kubeconfig (down, blackhole, slow,
//! readyz-fail over real HTTPS) and nodes-notready with eviction (paused clock).

use std::sync::Arc;
use std::time::Duration;

use flotilla_sim::control::{self, FaultRequest};
use flotilla_sim::kubeconfig;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually, pods};

async fn client_for(path: &std::path::Path, context: &str) -> kube::Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("a kubeconfig");
    let options = KubeConfigOptions {
        context: Some(context.to_owned()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .expect("a config");
    kube::Client::try_from(config).expect("a client")
}

async fn fault(
    control: &kubeconfig::ControlAddress,
    cluster: &str,
    fault: &str,
    delay: Option<&str>,
) -> serde_json::Value {
    let request = FaultRequest {
        cluster: cluster.into(),
        fault: fault.into(),
        delay: delay.map(str::to_owned),
        count: None,
    };
    control::call(
        control,
        "POST",
        "/v1/faults",
        Some(serde_json::to_value(&request).expect("JSON")),
    )
    .await
    .expect("the fault is applied")
}

#[tokio::test]
async fn network_faults_through_the_control_endpoint_in_the_kubeconfig() {
    let world = World::from_yaml("seed: 5\nstartLatency: '0'\nclusters:\n- {name: east, nodePools: [{name: p, count: 1, profile: cpu}]}\n- {name: west, nodePools: [{name: p, count: 1, profile: cpu}]}\n").await;
    let sim = Arc::new(world.sim);
    let (address, _task) = control::start(sim.clone())
        .await
        .expect("the control endpoint");
    let path = world.dir.path().join("sim.kubeconfig");
    kubeconfig::write(&path, &sim.clusters, Some(&address)).expect("written");
    let control = kubeconfig::read_control(&path).expect("the endpoint is recorded");
    assert_eq!(control, address);
    let east = client_for(&path, "east").await;
    let nodes: Api<Node> = Api::all(east.clone());
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .expect("nodes over HTTPS")
            .items
            .len(),
        1
    );
    let endpoint = sim.cluster("east").expect("east").address;

    // down: connections refused; up: back.
    let answer = fault(&control, "east", "down", None).await;
    assert_eq!(answer["network"], "down");
    assert!(
        tokio::net::TcpStream::connect(endpoint).await.is_err(),
        "down refuses connections"
    );
    let west = client_for(&path, "west").await;
    Api::<Node>::all(west)
        .list(&ListParams::default())
        .await
        .expect("other clusters are unaffected");
    fault(&control, "east", "up", None).await;
    let nodes: Api<Node> = Api::all(client_for(&path, "east").await);
    eventually(Duration::from_secs(30), "east answers again", || async {
        nodes.list(&ListParams::default()).await.ok().map(|_| ())
    })
    .await;

    // blackhole: the connection is accepted and nothing ever comes back.
    fault(&control, "east", "blackhole", None).await;
    let mut stream = tokio::net::TcpStream::connect(endpoint)
        .await
        .expect("blackhole accepts");
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"\x16\x03\x01\x00\x05hello")
        .await
        .expect("written");
    let mut buffer = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buffer)).await;
    assert!(read.is_err(), "a blackholed cluster must not answer");
    fault(&control, "east", "up", None).await;

    // slow: every response is delayed.
    fault(&control, "east", "slow", Some("1s")).await;
    let nodes: Api<Node> = Api::all(client_for(&path, "east").await);
    let started = std::time::Instant::now();
    nodes
        .list(&ListParams::default())
        .await
        .expect("slow still answers");
    assert!(started.elapsed() >= Duration::from_secs(1));
    fault(&control, "east", "up", None).await;

    // readyz-fail: /readyz is 500, the API works.
    fault(&control, "east", "readyz-fail", None).await;
    let client = client_for(&path, "east").await;
    let request = http::Request::get("/readyz")
        .body(Vec::new())
        .expect("a request");
    let error = client
        .request_text(request)
        .await
        .expect_err("readyz fails");
    assert!(
        error.to_string().contains("500") || format!("{error:?}").contains("500"),
        "{error:?}"
    );
    let request = http::Request::get("/livez")
        .body(Vec::new())
        .expect("a request");
    assert_eq!(client.request_text(request).await.expect("livez"), "ok");
    Api::<Node>::all(client)
        .list(&ListParams::default())
        .await
        .expect("the API still works");

    let unknown = control::call(
        &control,
        "POST",
        "/v1/faults",
        Some(json!({"cluster": "north", "fault": "down"})),
    )
    .await;
    assert!(
        unknown
            .expect_err("unknown cluster")
            .to_string()
            .contains("north")
    );
    let bad_token = kubeconfig::ControlAddress {
        url: control.url.clone(),
        token: "wrong".into(),
    };
    assert!(
        control::call(&bad_token, "GET", "/v1/clusters", None)
            .await
            .is_err()
    );
}

#[tokio::test(start_paused = true)]
async fn nodes_notready_evicts_pods_after_the_toleration_and_they_are_replaced() {
    let world = World::cpu(3, "evictionTimeout: 60s").await;
    let client = world.client();
    create::<Deployment>(&client, "default", json!({
        "metadata": {"name": "app"},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c", "image": "app"}]}}},
    }))
    .await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    eventually(PATIENCE, "6 available", || async {
        let d = deployments.get("app").await.ok()?;
        (d.status?.available_replicas == Some(6)).then_some(())
    })
    .await;
    let answer = world
        .sim
        .apply_fault(&FaultRequest {
            cluster: "c1".into(),
            fault: "nodes-notready".into(),
            delay: None,
            count: Some(1),
        })
        .await
        .expect("applied");
    let down = answer["notReadyNodes"][0]
        .as_str()
        .expect("a node")
        .to_owned();
    let nodes: Api<Node> = Api::all(client.clone());
    let node = nodes.get(&down).await.expect("the node");
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref()),
        ("Unknown", Some("NodeStatusUnknown"))
    );
    let taints: Vec<(String, String)> = node
        .spec
        .and_then(|s| s.taints)
        .unwrap_or_default()
        .into_iter()
        .map(|t| (t.key, t.effect))
        .collect();
    assert!(taints.contains(&("node.kubernetes.io/unreachable".into(), "NoExecute".into())));
    let on_down = |list: &[Pod]| {
        list.iter()
            .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(down.as_str()))
            .count()
    };
    let before = on_down(&pods(&client, "default").await);
    assert!(before > 0, "the spread put pods on every node");
    let started = tokio::time::Instant::now();
    eventually(
        PATIENCE * 5,
        "pods leave the NotReady node and are replaced",
        || async {
            let listed = pods(&client, "default").await;
            let d = deployments.get("app").await.ok()?;
            (on_down(&listed) == 0 && d.status?.available_replicas == Some(6)).then_some(())
        },
    )
    .await;
    assert!(
        tokio::time::Instant::now() - started >= Duration::from_secs(60),
        "evicted only after the toleration"
    );
    world
        .sim
        .apply_fault(&FaultRequest {
            cluster: "c1".into(),
            fault: "up".into(),
            delay: None,
            count: None,
        })
        .await
        .expect("applied");
    let node = nodes.get(&down).await.expect("the node");
    assert!(
        node.spec
            .and_then(|s| s.taints)
            .unwrap_or_default()
            .iter()
            .all(|t| t.key != "node.kubernetes.io/unreachable")
    );
}
