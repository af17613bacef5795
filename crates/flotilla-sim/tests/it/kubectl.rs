//! The real kubectl against a simulated cluster: nodes, pods with IPs and nodes, and why a pod
//! is Pending.

use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use serde_json::json;

use crate::support::{PATIENCE, World, create, eventually};

const KUBECTL_DIRS: &[&str] = &[
    "/usr/lib/google-cloud-sdk/bin",
    "/usr/bin",
    "/usr/local/bin",
];

/// `kubectl.<version>`; fails when missing (never skips).
pub(crate) fn kubectl_binary(version: &str) -> PathBuf {
    let name = format!("kubectl.{version}");
    KUBECTL_DIRS
        .iter()
        .map(|d| Path::new(d).join(&name))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("{name} not found in {KUBECTL_DIRS:?}: install Debian's kubectl package")
        })
}

pub(crate) fn kubectl(dir: &Path, kubeconfig: &Path, args: &[&str]) -> String {
    let output = Command::new(kubectl_binary("1.33"))
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", dir)
        .env("KUBECACHEDIR", dir.join("cache"))
        .output()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_nodes_pods_and_describes_a_pending_pod() {
    let world = World::from_yaml("seed: 9\nstartLatency: '0'\nclusters:\n- {name: m1, zones: [z1], nodePools: [{name: p, count: 3, profile: cpu}]}\n- {name: m2, nodePools: [{name: p, count: 1, profile: cpu}]}\n").await;
    let path = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&path, &world.sim.clusters, None).expect("written");
    let client = world.client();
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .await;
    create::<Pod>(&client, "default", json!({"metadata": {"name": "trainer"},
        "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})).await;
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    eventually(PATIENCE, "web runs and trainer is refused", || async {
        let web = api.get("web").await.ok()?;
        let trainer = api.get("trainer").await.ok()?;
        let refused = trainer
            .status?
            .conditions?
            .iter()
            .any(|c| c.type_ == "PodScheduled" && c.status == "False");
        (web.status?.phase.as_deref() == Some("Running") && refused).then_some(())
    })
    .await;
    let dir = world.dir.path();
    let nodes = kubectl(dir, &path, &["--context", "m1", "get", "nodes"]);
    assert_eq!(
        nodes.lines().filter(|l| l.starts_with("m1-p-")).count(),
        3,
        "{nodes}"
    );
    assert!(
        nodes
            .lines()
            .skip(1)
            .all(|l| l.split_whitespace().nth(1) == Some("Ready")),
        "{nodes}"
    );
    let other = kubectl(
        dir,
        &path,
        &["--context", "m2", "get", "nodes", "-o", "name"],
    );
    assert_eq!(
        other.lines().count(),
        1,
        "contexts are separate clusters: {other}"
    );
    let wide = kubectl(
        dir,
        &path,
        &["--context", "m1", "get", "pods", "-o", "wide"],
    );
    let web = wide
        .lines()
        .find(|l| l.starts_with("web "))
        .expect("web is listed");
    let columns: Vec<&str> = web.split_whitespace().collect();
    assert_eq!(columns[2], "Running", "{wide}");
    assert!(columns[5].starts_with("10."), "pod IP: {wide}");
    assert!(columns[6].starts_with("m1-p-"), "node: {wide}");
    let trainer = wide
        .lines()
        .find(|l| l.starts_with("trainer "))
        .expect("trainer is listed");
    assert!(
        trainer.contains("Pending") && trainer.contains("<none>"),
        "{wide}"
    );
    let described = kubectl(
        dir,
        &path,
        &["--context", "m1", "describe", "pod", "trainer"],
    );
    assert!(described.contains("PodScheduled   False"), "{described}");
    assert!(described.contains("FailedScheduling"), "{described}");
    assert!(described.contains("default-scheduler"), "{described}");
    assert!(
        described.contains("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."),
        "{described}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_gets_a_services_endpoint_slice() {
    let world = World::from_yaml(
        "seed: 9\nstartLatency: '0'\nclusters:\n- {name: m1, nodePools: [{name: p, count: 2, profile: cpu}]}\n",
    )
    .await;
    let path = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&path, &world.sim.clusters, None).expect("written");
    let client = world.client();
    for name in ["a", "b"] {
        create::<Pod>(
            &client,
            "default",
            json!({"metadata": {"name": format!("web-{name}"), "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx",
                    "ports": [{"name": "http", "containerPort": 8080}]}]}}),
        )
        .await;
    }
    create::<k8s_openapi::api::core::v1::Service>(
        &client,
        "default",
        json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
            "ports": [{"port": 80, "targetPort": "http"}]}}),
    )
    .await;
    let slices: Api<k8s_openapi::api::discovery::v1::EndpointSlice> =
        Api::namespaced(client.clone(), "default");
    let slice = eventually(PATIENCE, "the slice lists both pods", || async {
        let list = slices
            .list(&kube::api::ListParams::default().labels("kubernetes.io/service-name=web"))
            .await
            .ok()?;
        let slice = list.items.into_iter().next()?;
        (slice.endpoints.len() == 2).then_some(slice)
    })
    .await;
    let ips: Vec<String> = slice
        .endpoints
        .iter()
        .map(|e| e.addresses[0].clone())
        .collect();
    let printed = kubectl(
        world.dir.path(),
        &path,
        &[
            "--context",
            "m1",
            "get",
            "endpointslices",
            "-l",
            "kubernetes.io/service-name=web",
        ],
    );
    let mut lines = printed.lines();
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
        "{printed}"
    );
    let row: Vec<&str> = lines.next().expect("a row").split_whitespace().collect();
    assert_eq!(row[0], slice.metadata.name.as_deref().expect("a name"));
    assert_eq!(
        row[1..4],
        ["IPv4", "8080", ips.join(",").as_str()],
        "{printed}"
    );
    // The Endpoints too, by IP (kube's endpoint controller), beside the API server's own.
    let mut by_ip = ips.clone();
    by_ip.sort_by_key(|ip| ip.parse::<std::net::Ipv4Addr>().expect("IPv4"));
    let endpoints: Vec<String> = by_ip.iter().map(|ip| format!("{ip}:8080")).collect();
    let printed = eventually(PATIENCE, "kubectl lists the Endpoints", || async {
        let printed = kubectl(
            world.dir.path(),
            &path,
            &["--context", "m1", "get", "endpoints"],
        );
        printed.contains(&endpoints.join(",")).then_some(printed)
    })
    .await;
    let names: Vec<&str> = printed
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["kubernetes", "web"], "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_top_reads_the_metrics_api() {
    let world = World::from_yaml(
        "seed: 9\nstartLatency: '0'\nclusters:\n- {name: m1, nodePools: [{name: p, count: 2, profile: cpu}]}\n",
    )
    .await;
    let path = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&path, &world.sim.clusters, None).expect("written");
    let client = world.client();
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "web", "annotations": {
                "flotilla.io/sim-cpu-usage": "250m", "flotilla.io/sim-memory-usage": "64Mi"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .await;
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    eventually(PATIENCE, "web runs", || async {
        let web = api.get("web").await.ok()?;
        (web.status?.phase.as_deref() == Some("Running")).then_some(())
    })
    .await;
    let dir = world.dir.path();
    let pods = kubectl(dir, &path, &["--context", "m1", "top", "pod", "web"]);
    let row: Vec<&str> = pods
        .lines()
        .nth(1)
        .expect("a row")
        .split_whitespace()
        .collect();
    assert_eq!(row, ["web", "250m", "64Mi"], "{pods}");
    let nodes = kubectl(dir, &path, &["--context", "m1", "top", "node"]);
    let rows: Vec<Vec<&str>> = nodes
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{nodes}");
    // 5 % of 32 CPU for the system, plus web's 250m on one of them.
    let mut cpus: Vec<&str> = rows.iter().map(|r| r[1]).collect();
    cpus.sort();
    assert_eq!(cpus, ["1600m", "1850m"], "{nodes}");
    assert!(rows.iter().all(|r| r[2] == "5%"), "{nodes}");
    let table = kubectl(dir, &path, &["--context", "m1", "get", "podmetrics"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .expect("a header")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "CPU", "MEMORY", "WINDOW"], "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["web", "250m", "64Mi", "15s"]),
        "{table}"
    );
}

/// A simulated member's API server serves what a kube-apiserver does for monitoring: its request
/// metrics on `/metrics` and its health checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_serves_its_request_metrics_and_health_checks() {
    let world = World::from_yaml(
        "seed: 3\nstartLatency: '0'\nclusters:\n- {name: m1, nodePools: [{name: p, count: 2, profile: cpu}]}\n",
    )
    .await;
    let path = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&path, &world.sim.clusters, None).expect("written");
    let dir = world.dir.path();
    kubectl(dir, &path, &["get", "nodes"]);
    let metrics = kubectl(dir, &path, &["get", "--raw", "/metrics"]);
    for prefix in [
        "apiserver_request_total{verb=\"LIST\",dry_run=\"\",group=\"\",version=\"v1\",resource=\"nodes\",subresource=\"\",scope=\"cluster\",component=\"apiserver\",code=\"200\"}",
        "apiserver_storage_objects{resource=\"nodes\"} 2",
    ] {
        assert!(
            metrics.lines().any(|l| l.starts_with(prefix)),
            "no {prefix} in\n{metrics}"
        );
    }
    // `kubectl get nodes` as against kube: a cordoned node says so, wide adds the node's info.
    let node = kubectl(dir, &path, &["get", "nodes", "-o", "name"]);
    let node = node.lines().next().expect("a node").to_owned();
    kubectl(dir, &path, &["cordon", &node]);
    let wide = kubectl(dir, &path, &["get", &node, "-o", "wide", "--no-headers"]);
    let cells: Vec<&str> = wide.split_whitespace().collect();
    assert_eq!(cells.get(1), Some(&"Ready,SchedulingDisabled"), "{wide}");
    assert!(
        cells
            .get(5)
            .is_some_and(|ip| ip.parse::<std::net::Ipv4Addr>().is_ok()),
        "an INTERNAL-IP: {wide}"
    );
    assert_eq!(
        kubectl(dir, &path, &["get", "--raw", "/readyz?verbose"]),
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]shutdown ok\nreadyz check passed\n"
    );
}
