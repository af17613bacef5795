use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use serde_json::{Value, json};

use super::model::{self, Client};
use super::*;

const JOB_ARGS: &str = "apk add curl; while true; do for i in `seq 200`; do curl http://nginx.ns1:80; done; sleep 1; done";

fn at(seconds: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(1_700_000_000 + seconds).expect("a valid time")
}

/// A running, Ready pod started at `at(0)`.
fn pod(
    namespace: &str,
    name: &str,
    labels: Value,
    annotations: Value,
    containers: Value,
) -> Arc<Pod> {
    let statuses: Vec<Value> = containers
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| json!({"name": c["name"], "state": {"running": {"startedAt": at(0).to_string()}}}))
        .collect();
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": namespace, "uid": format!("uid-{namespace}-{name}"),
                         "labels": labels, "annotations": annotations},
            "spec": {"nodeName": "n1", "containers": containers},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at(0).to_string()}],
                       "containerStatuses": statuses},
        }))
        .expect("a pod"),
    )
}

fn nginx(name: &str) -> Arc<Pod> {
    pod(
        "ns1",
        name,
        json!({"app": "nginx"}),
        json!({}),
        json!([{"name": "nginx", "image": "nginx",
                "resources": {"limits": {"cpu": "10m", "memory": "10Mi"}}}]),
    )
}

fn job_client(namespace: &str, args: &str, annotations: Value) -> Arc<Pod> {
    pod(
        namespace,
        "load",
        json!({"job-name": "load"}),
        annotations,
        json!([{"name": "c", "image": "alpine:3.19.1", "command": ["/bin/sh"], "args": ["-c", args]}]),
    )
}

fn service(namespace: &str, name: &str, selector: Value) -> Arc<Service> {
    Arc::new(
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector, "ports": [{"port": 80}]}}))
        .expect("a service"),
    )
}

fn services(list: Vec<Arc<Service>>) -> impl Fn(&str, &str) -> Option<Arc<Service>> {
    move |ns, name| {
        list.iter()
            .find(|s| {
                s.metadata.namespace.as_deref() == Some(ns)
                    && s.metadata.name.as_deref() == Some(name)
            })
            .cloned()
    }
}

fn running_client(namespace: &str, host: &str, rate: f64) -> Client {
    Client {
        namespace: namespace.into(),
        hosts: vec![host.into()],
        rate,
        start: at(0),
        end: None,
    }
}

#[test]
fn urls_in_commands_name_hosts() {
    assert_eq!(model::url_hosts(JOB_ARGS), ["nginx.ns1"]);
    assert_eq!(
        model::url_hosts(
            "wget -qO- https://web/x && curl http://api.shop.svc.cluster.local:8080/v1?q=1"
        ),
        ["web", "api.shop.svc.cluster.local"]
    );
    assert!(model::url_hosts("http:// and httpx and ftp://x").is_empty());
    let client = job_client("ns1", JOB_ARGS, json!({}));
    assert_eq!(model::pod_url_hosts(&client), ["nginx.ns1"]);
    assert!(model::pod_url_hosts(&nginx("a")).is_empty());
}

#[test]
fn hosts_resolve_as_cluster_dns_does_from_the_clients_namespace() {
    let key = |ns: &str, name: &str| Some((ns.to_owned(), name.to_owned()));
    assert_eq!(model::resolve("web", "shop"), key("shop", "web"));
    assert_eq!(model::resolve("web.other", "shop"), key("other", "web"));
    assert_eq!(model::resolve("web.other.svc", "shop"), key("other", "web"));
    assert_eq!(
        model::resolve("web.other.svc.cluster.local", "shop"),
        key("other", "web")
    );
    assert_eq!(
        model::resolve("Web.Other.svc.cluster.local.", "shop"),
        key("other", "web")
    );
    assert_eq!(model::resolve("web.other.pod", "shop"), None);
    assert_eq!(model::resolve("web.other.svc.example.org", "shop"), None);
    assert_eq!(model::resolve("a..b", "shop"), None);
}

#[test]
fn requests_are_shared_evenly_among_ready_backends_of_existing_services() {
    let mut not_ready = (*nginx("nginx-3")).clone();
    not_ready.status = not_ready.status.map(|mut s| {
        s.conditions = Some(
            vec![k8s_openapi::api::core::v1::PodCondition {
                type_: "Ready".into(),
                status: "False".into(),
                ..Default::default()
            }]
            .into(),
        );
        s
    });
    let pods = vec![nginx("nginx-1"), nginx("nginx-2"), Arc::new(not_ready)];
    let lookup = services(vec![service("ns1", "nginx", json!({"app": "nginx"}))]);
    let window = Duration::from_secs(15);
    let clients = [
        running_client("ns2", "nginx.ns1", 100.0),
        // From ns1 itself, the short name resolves too.
        running_client("ns1", "nginx", 20.0),
        // No such Service: nobody serves it; unqualified from another namespace: not ns1's.
        running_client("ns1", "web", 1000.0),
        running_client("ns2", "nginx", 1000.0),
    ];
    let served = model::traffic(&pods, &lookup, &clients, at(60), window);
    let rate = |name: &str| served.get(&("ns1".to_owned(), name.to_owned())).copied();
    assert_eq!(rate("nginx-1"), Some(60.0));
    assert_eq!(rate("nginx-2"), Some(60.0));
    assert_eq!(rate("nginx-3"), None, "not Ready: no share");
    assert_eq!(served.len(), 2);
}

#[test]
fn usage_is_idle_plus_traffic_capped_by_limits_or_the_node() {
    // 100 req/s at 1 ms each is 100m, capped at the 10m limit; memory 25 % of 10Mi + 10 MiB,
    // capped at 10Mi.
    let usage = model::pod_usage(&nginx("a"), 100.0, Some(32.0));
    assert_eq!(usage[0].0, "nginx");
    assert_eq!(usage[0].1.cpu_nanocores, 10_000_000);
    assert_eq!(usage[0].1.memory_bytes, 10 * 1024 * 1024);
    assert_eq!(usage[0].1.cpu_text(), "10000000n");
    assert_eq!(usage[0].1.memory_text(), "10240Ki");
    // Idle: 1 % of the (limit-defaulted) request, 25 % of the memory limit.
    let idle = model::pod_usage(&nginx("a"), 0.0, Some(32.0));
    assert_eq!(idle[0].1.cpu_nanocores, 100_000);
    assert_eq!(idle[0].1.memory_bytes, 10 * 1024 * 1024 / 4);
    // Annotations set the idle usage, per container; the per-request cost too; only the first
    // container serves; no limit: the node's allocatable caps CPU.
    let annotated = pod(
        "ns1",
        "b",
        json!({}),
        json!({model::CPU_USAGE_ANNOTATION: "250m", model::MEMORY_USAGE_ANNOTATION: "64Mi",
               model::CPU_PER_REQUEST_ANNOTATION: "10m"}),
        json!([{"name": "app", "image": "x"}, {"name": "sidecar", "image": "y"}]),
    );
    let usage = model::pod_usage(&annotated, 50.0, Some(0.5));
    assert_eq!(
        usage[0].1.cpu_nanocores, 500_000_000,
        "250m + 500m, capped at the node's 0.5"
    );
    assert_eq!(usage[0].1.memory_bytes, 64 * 1024 * 1024 + 5 * 1024 * 1024);
    assert_eq!(usage[1].1.cpu_nanocores, 250_000_000);
    assert_eq!(usage[1].1.memory_bytes, 64 * 1024 * 1024);
    // Nothing declared: no idle CPU, 8Mi.
    let bare = pod(
        "ns1",
        "c",
        json!({}),
        json!({}),
        json!([{"name": "c", "image": "x"}]),
    );
    assert_eq!(
        model::pod_usage(&bare, 0.0, None)[0].1,
        model::Usage {
            cpu_nanocores: 0,
            memory_bytes: 8 * 1024 * 1024
        }
    );
    // A node adds 5 % of its allocatable.
    let node = model::node_usage(
        model::Usage {
            cpu_nanocores: 1,
            memory_bytes: 2,
        },
        32.0,
        1000.0,
    );
    assert_eq!(
        node,
        model::Usage {
            cpu_nanocores: 1_600_000_001,
            memory_bytes: 52
        }
    );
}

#[test]
fn a_client_counts_for_the_part_of_the_window_it_ran() {
    let window = Duration::from_secs(15);
    let mut client = running_client("ns1", "nginx", 100.0);
    client.start = at(100);
    assert_eq!(client.share_of_window(at(103), window), 3.0 / 15.0);
    assert_eq!(client.share_of_window(at(200), window), 1.0);
    client.end = Some(at(105));
    assert_eq!(client.share_of_window(at(110), window), 5.0 / 15.0);
    assert_eq!(client.share_of_window(at(115), window), 5.0 / 15.0);
    assert_eq!(client.share_of_window(at(118), window), 2.0 / 15.0);
    assert_eq!(client.share_of_window(at(120), window), 0.0);
    assert_eq!(client.share_of_window(at(99), window), 0.0);
}

#[test]
fn a_finished_client_is_remembered_for_one_window() {
    let window = Duration::from_secs(15);
    let tracker = Tracker::new(window);
    let client = job_client(
        "ns2",
        JOB_ARGS,
        json!({model::REQUEST_RATE_ANNOTATION: "30"}),
    );
    // Not a client: no URL.
    tracker.observe(&nginx("nginx-1"), false, at(1));
    tracker.observe(&client, false, at(1));
    let clients = tracker.clients(at(2));
    assert_eq!(clients.len(), 1);
    assert_eq!(clients[0].start, at(0), "from its containers' start");
    assert_eq!(clients[0].rate, 30.0);
    // The Job's pod succeeds at 5 s.
    let mut finished = (*client).clone();
    finished.status = finished.status.map(|mut s| {
        s.phase = Some("Succeeded".into());
        s
    });
    tracker.observe(&finished, false, at(5));
    // Deleted later: already recorded once.
    tracker.observe(&finished, true, at(7));
    let clients = tracker.clients(at(10));
    assert_eq!(clients.len(), 1);
    assert_eq!(clients[0].end, Some(at(5)));
    // Its load on nginx, averaged over the window ending at 10 s: 30 × 5/15.
    let pods = vec![nginx("nginx-1")];
    let lookup = services(vec![service("ns1", "nginx", json!({"app": "nginx"}))]);
    let served = model::traffic(&pods, &lookup, &clients, at(10), window);
    assert_eq!(served[&("ns1".to_owned(), "nginx-1".to_owned())], 10.0);
    // One window after it stopped, it is forgotten.
    assert!(tracker.clients(at(20)).is_empty());
}

#[test]
fn only_running_pods_with_started_containers_are_reported() {
    assert!(model::is_running(&nginx("a")));
    let mut pending = (*nginx("a")).clone();
    pending.status = pending.status.map(|mut s| {
        s.phase = Some("Pending".into());
        s
    });
    assert!(!model::is_running(&pending));
    let mut not_started = (*nginx("a")).clone();
    not_started.status = not_started.status.map(|mut s| {
        s.container_statuses = Some(Vec::new());
        s
    });
    assert!(!model::is_running(&not_started));
}
