//! The resource metrics API of a simulated cluster: idle usage, a client's requests raising
//! its Service's backends, a finished Job's load kept for one window, node usage. On the real
//! clock: the model averages over wall-clock windows (a short `metricsWindow`).

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use crate::support::{World, create, eventually};

const PODS: &str = "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods";
const PATIENCE: Duration = Duration::from_secs(60);

async fn get_json(client: &kube::Client, uri: &str) -> Value {
    let request = http::Request::get(uri).body(Vec::new()).expect("a request");
    client
        .request::<Value>(request)
        .await
        .expect("a metrics answer")
}

/// CPU of each listed pod, in millicores, by name.
async fn cpu_of(client: &kube::Client, uri: &str) -> Vec<(String, f64)> {
    let list = get_json(client, uri).await;
    assert_eq!(list["kind"], "PodMetricsList");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|item| {
            let cpu = item["containers"][0]["usage"]["cpu"].as_str().expect("cpu");
            let nanos: f64 = cpu
                .strip_suffix('n')
                .expect("nanocores")
                .parse()
                .expect("a number");
            (
                item["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                nanos / 1e6,
            )
        })
        .collect()
}

async fn namespace(client: &kube::Client) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": "ns"}})).expect("a namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("created");
}

async fn serve_nginx(client: &kube::Client, replicas: i32, cpu_limit: &str) {
    create::<Service>(
        client,
        "ns",
        json!({"metadata": {"name": "x"},
        "spec": {"type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 80}]}}),
    )
    .await;
    create::<Deployment>(
        client,
        "ns",
        json!({
        "metadata": {"name": "nginx"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx",
                    "resources": {"limits": {"cpu": cpu_limit, "memory": "10Mi"}}}]}}}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_raises_its_services_backends_and_stops_raising_them_when_gone() {
    let world = World::from_yaml(
        "seed: 3\nstartLatency: '0'\nmetricsWindow: 2s\nclusters:\n- {name: c1, nodePools: [{name: p, count: 2, profile: cpu}]}\n",
    )
    .await;
    let client = world.client();
    namespace(&client).await;
    serve_nginx(&client, 2, "500m").await;
    let selected = format!("{PODS}?labelSelector=app%3Dx");

    // Idle: 1 % of the 500m request (defaulted from the limit).
    let idle = eventually(PATIENCE, "two running backends reported", || async {
        let cpu = cpu_of(&client, &selected).await;
        (cpu.len() == 2).then_some(cpu)
    })
    .await;
    assert!(
        idle.iter().all(|(_, m)| (*m - 5.0).abs() < 0.01),
        "{idle:?}"
    );
    let one = get_json(&client, &format!("{PODS}/{}", idle[0].0)).await;
    assert_eq!(one["kind"], "PodMetrics");
    assert_eq!(one["window"], "2s");
    assert_eq!(one["metadata"]["labels"]["app"], "x");
    assert_eq!(
        one["containers"][0]["usage"]["memory"], "2560Ki",
        "25 % of 10Mi"
    );

    // 200 req/s shared by two backends at 1 ms each: 100m more on each once a window passed.
    create::<Pod>(
        &client,
        "ns",
        json!({
        "metadata": {"name": "load", "annotations": {"flotilla.io/sim-request-rate": "200"}},
        "spec": {"containers": [{"name": "c", "image": "alpine:3.19.1", "command": ["/bin/sh"],
            "args": ["-c", "while true; do curl http://x.ns.svc.cluster.local:80/; done"]}]}}),
    )
    .await;
    let busy = eventually(PATIENCE, "backends busy", || async {
        let cpu = cpu_of(&client, &selected).await;
        cpu.iter().all(|(_, m)| *m > 100.0).then_some(cpu)
    })
    .await;
    assert!(busy.iter().all(|(_, m)| *m <= 105.0 + 0.01), "{busy:?}");
    // The client itself is reported too (idle, nothing declared).
    let all = cpu_of(&client, PODS).await;
    assert_eq!(all.len(), 3, "{all:?}");

    // Deleted: its load fades within one window.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "ns");
    pods.delete("load", &DeleteParams::default())
        .await
        .expect("deleted");
    eventually(PATIENCE, "backends idle again", || async {
        let cpu = cpu_of(&client, &selected).await;
        cpu.iter()
            .all(|(_, m)| (*m - 5.0).abs() < 0.01)
            .then_some(())
    })
    .await;

    // Nodes: the system's 5 % of 32 CPU at least, on each live node.
    let nodes = get_json(&client, "/apis/metrics.k8s.io/v1beta1/nodes").await;
    assert_eq!(nodes["kind"], "NodeMetricsList");
    let items = nodes["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    for node in items {
        let cpu = node["usage"]["cpu"].as_str().expect("cpu");
        let nanos: u64 = cpu.trim_end_matches('n').parse().expect("nanocores");
        assert!(nanos >= 1_600_000_000, "{node}");
    }
}

/// Karmada's FederatedHPA e2e load: a Job looping over curl against `nginx` (10m CPU limit);
/// the Job's pod finishes after `jobDuration`, and its load must still show afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_jobs_load_still_shows_for_one_window() {
    let world = World::from_yaml(
        "seed: 4\nstartLatency: '0'\njobDuration: 2s\nmetricsWindow: 6s\nclusters:\n- {name: c1, nodePools: [{name: p, count: 1, profile: cpu}]}\n",
    )
    .await;
    let client = world.client();
    namespace(&client).await;
    serve_nginx(&client, 1, "10m").await;
    let selected = format!("{PODS}?labelSelector=app%3Dx");
    eventually(PATIENCE, "the backend reported", || async {
        (cpu_of(&client, &selected).await.len() == 1).then_some(())
    })
    .await;
    create::<Job>(&client, "ns", json!({
        "metadata": {"name": "load"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{
            "name": "load", "image": "alpine:3.19.1", "command": ["/bin/sh"],
            "args": ["-c", "apk add curl; while true; do for i in `seq 200`; do curl http://x.ns:80; done; sleep 1; done"]}]}}}})).await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), "ns");
    eventually(PATIENCE, "the Job completes", || async {
        let job = jobs.get("load").await.ok()?;
        (job.status?.succeeded? == 1).then_some(())
    })
    .await;
    // Finished now; within the window its ~2 s of 100 req/s (33 req/s averaged, 33m) still
    // load the backend: capped at its 10m limit, well above 10 % of it.
    let cpu = cpu_of(&client, &selected).await;
    assert!(cpu[0].1 > 5.0, "{cpu:?}");
    // The Job's pod is no longer reported.
    assert_eq!(cpu_of(&client, PODS).await.len(), 1);
}
