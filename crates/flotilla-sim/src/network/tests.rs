//! Resolution over a fixed world: Services, slices and their provenance, pods with listeners.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::{Value, json};

use super::{Caller, World, provenance, reach};
use crate::pod::Pod;
use crate::runtime::shell::{Protocol, Reach};

#[derive(Default)]
struct Fixture {
    services: BTreeMap<String, Vec<Arc<Service>>>,
    slices: BTreeMap<String, Vec<Arc<EndpointSlice>>>,
    pods: BTreeMap<String, Vec<Arc<Pod>>>,
}

impl World for Fixture {
    fn clusters(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .pods
            .keys()
            .chain(self.services.keys())
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }
    fn services(&self, cluster: &str) -> Vec<Arc<Service>> {
        self.services.get(cluster).cloned().unwrap_or_default()
    }
    fn slices(&self, cluster: &str) -> Vec<Arc<EndpointSlice>> {
        self.slices.get(cluster).cloned().unwrap_or_default()
    }
    fn pod(&self, cluster: &str, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.pods(cluster).into_iter().find(|p| {
            p.metadata.namespace.as_deref() == Some(namespace)
                && p.metadata.name.as_deref() == Some(name)
        })
    }
    fn pods(&self, cluster: &str) -> Vec<Arc<Pod>> {
        self.pods.get(cluster).cloned().unwrap_or_default()
    }
}

impl Fixture {
    fn service(&mut self, cluster: &str, name: &str, ip: &str) {
        let service: Service = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "demo"},
            "spec": {"clusterIP": ip, "ports": [
                {"name": "tcp", "port": 42, "protocol": "TCP"},
                {"name": "udp", "port": 42, "protocol": "UDP"}]}}))
        .expect("a Service");
        self.services
            .entry(cluster.into())
            .or_default()
            .push(Arc::new(service));
    }

    fn slice(&mut self, cluster: &str, metadata: Value, service: &str, endpoints: Value) {
        let mut metadata = metadata;
        metadata["namespace"] = json!("demo");
        metadata["labels"] = json!({"kubernetes.io/service-name": service});
        let slice: EndpointSlice = serde_json::from_value(json!({
            "metadata": metadata, "addressType": "IPv4", "endpoints": endpoints,
            "ports": [{"name": "tcp", "port": 42, "protocol": "TCP"},
                      {"name": "udp", "port": 42, "protocol": "UDP"}]}))
        .expect("a slice");
        self.slices
            .entry(cluster.into())
            .or_default()
            .push(Arc::new(slice));
    }

    fn add_pod(&mut self, cluster: &str, name: &str, ip: &str, containers: Value, running: bool) {
        let statuses: Vec<Value> = containers
            .as_array()
            .expect("containers")
            .iter()
            .map(|c| {
                let state = if running {
                    json!({"running": {"startedAt": "2024-01-01T00:00:00Z"}})
                } else {
                    json!({"waiting": {"reason": "ContainerCreating"}})
                };
                json!({"name": c["name"], "state": state})
            })
            .collect();
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "demo"},
            "spec": {"nodeName": "n1", "containers": containers},
            "status": {"phase": "Running", "podIP": ip, "containerStatuses": statuses}}))
        .expect("a pod");
        self.pods
            .entry(cluster.into())
            .or_default()
            .push(Arc::new(pod));
    }
}

fn hello_containers() -> Value {
    json!([
        {"name": "tcp", "image": "busybox", "args": ["nc", "-lk", "-p", "42", "-v", "-e", "echo", "hello"]},
        {"name": "udp", "image": "busybox", "args": ["nc", "-lk", "-p", "42", "-u", "-v", "-e", "echo", "hello"]},
    ])
}

fn caller(cluster: &str) -> Caller {
    Caller {
        cluster: cluster.into(),
        namespace: "demo".into(),
        pod: "request-abc".into(),
    }
}

fn endpoint(ip: &str, pod: &str, ready: bool) -> Value {
    json!({"addresses": [ip], "conditions": {"ready": ready},
        "targetRef": {"kind": "Pod", "namespace": "demo", "name": pod}})
}

/// Member A (`cn-shanghai`) runs the listeners at 10.0.0.2; member B (`us-west-2`) has the
/// derived Service and the imported slice, and a pod of its own at the same 10.0.0.2.
fn exported() -> Fixture {
    let mut world = Fixture::default();
    world.add_pod(
        "cn-shanghai",
        "hello-1",
        "10.0.0.2",
        hello_containers(),
        true,
    );
    world.add_pod(
        "us-west-2",
        "local-1",
        "10.0.0.2",
        json!([{"name": "c", "image": "busybox", "args": ["sleep", "3600"]}]),
        true,
    );
    world.service("us-west-2", "derived-hello", "10.96.0.7");
    world.slice(
        "us-west-2",
        json!({"name": "imported-cn-shanghai-hello-x7k2p"}),
        "derived-hello",
        json!([endpoint("10.0.0.2", "hello-1", true)]),
    );
    world
}

fn program(found: &Reach) -> Option<(Ipv4Addr, Vec<String>, String)> {
    match found {
        Reach::Open(address, listener) => Some((
            *address,
            listener.program.clone(),
            listener.context.hostname.clone(),
        )),
        _ => None,
    }
}

#[test]
fn a_cluster_ip_reaches_the_listener_in_the_cluster_the_slice_came_from() {
    let world = exported();
    for protocol in [Protocol::Tcp, Protocol::Udp] {
        let found = reach(&world, &caller("us-west-2"), "10.96.0.7", 42, protocol);
        assert_eq!(
            program(&found),
            Some((
                Ipv4Addr::new(10, 96, 0, 7),
                vec!["echo".into(), "hello".into()],
                "hello-1".into()
            )),
            "{protocol:?}: the pod of cn-shanghai, not us-west-2's pod at the same address"
        );
    }
    // By name too.
    for name in [
        "derived-hello",
        "derived-hello.demo",
        "derived-hello.demo.svc.cluster.local",
    ] {
        let found = reach(&world, &caller("us-west-2"), name, 42, Protocol::Tcp);
        assert!(program(&found).is_some(), "{name}: {found:?}");
    }
}

#[test]
fn dispatched_slices_name_their_provider_in_an_annotation() {
    let mut world = Fixture::default();
    world.add_pod(
        "cn-shanghai",
        "hello-1",
        "10.0.0.2",
        hello_containers(),
        true,
    );
    world.add_pod(
        "us-west-2",
        "local-1",
        "10.0.0.2",
        json!([{"name": "c", "image": "busybox", "args": ["sleep", "3600"]}]),
        true,
    );
    world.service("us-west-2", "hello", "10.96.0.9");
    world.slice(
        "us-west-2",
        json!({"name": "cn-shanghai-hello-x7k2p",
            "annotations": {"endpointslice.karmada.io/provision-cluster": "cn-shanghai"}}),
        "hello",
        json!([endpoint("10.0.0.2", "hello-1", true)]),
    );
    let found = reach(&world, &caller("us-west-2"), "hello", 42, Protocol::Tcp);
    assert_eq!(program(&found).map(|p| p.2), Some("hello-1".into()));
}

#[test]
fn provenance_takes_the_longest_cluster_name_that_fits() {
    let clusters: Vec<String> = ["us-west", "us-west-2"].map(String::from).to_vec();
    let slice = |name: &str| -> EndpointSlice {
        serde_json::from_value(
            json!({"metadata": {"name": name}, "addressType": "IPv4", "endpoints": []}),
        )
        .expect("a slice")
    };
    assert_eq!(
        provenance(&slice("imported-us-west-2-web-abcde"), "here", &clusters),
        "us-west-2"
    );
    assert_eq!(
        provenance(&slice("imported-us-west-web-abcde"), "here", &clusters),
        "us-west"
    );
    assert_eq!(
        provenance(&slice("imported-elsewhere-web-abcde"), "here", &clusters),
        "here"
    );
    assert_eq!(provenance(&slice("web-abcde"), "here", &clusters), "here");
}

#[test]
fn no_ready_endpoint_no_listener_or_no_host_fail_as_a_network_would() {
    let mut world = exported();
    // A Service whose only endpoint is not ready: refused (kube-proxy rejects).
    world.service("us-west-2", "empty", "10.96.0.8");
    world.slice(
        "us-west-2",
        json!({"name": "imported-cn-shanghai-empty-aaaaa"}),
        "empty",
        json!([endpoint("10.0.0.2", "hello-1", false)]),
    );
    let found = reach(&world, &caller("us-west-2"), "10.96.0.8", 42, Protocol::Tcp);
    assert!(matches!(found, Reach::Refused(_)), "{found:?}");
    // A port the Service does not serve: nothing answers.
    let found = reach(&world, &caller("us-west-2"), "10.96.0.7", 80, Protocol::Tcp);
    assert!(matches!(found, Reach::Silent(_)), "{found:?}");
    // A pod of the caller's cluster, directly: nothing listens on 42 there.
    let found = reach(&world, &caller("us-west-2"), "10.0.0.2", 42, Protocol::Tcp);
    assert!(matches!(found, Reach::Refused(_)), "{found:?}");
    // The same address from the exporting cluster: its own listener.
    let found = reach(
        &world,
        &caller("cn-shanghai"),
        "10.0.0.2",
        42,
        Protocol::Udp,
    );
    assert_eq!(program(&found).map(|p| p.2), Some("hello-1".into()));
    // No such host; no such name.
    let found = reach(&world, &caller("us-west-2"), "10.9.9.9", 42, Protocol::Tcp);
    assert!(matches!(found, Reach::Silent(_)), "{found:?}");
    let found = reach(&world, &caller("us-west-2"), "nowhere", 42, Protocol::Tcp);
    assert!(matches!(found, Reach::BadAddress), "{found:?}");
    // A listener whose container is not running yet refuses.
    let mut world = Fixture::default();
    world.add_pod("a", "hello-1", "10.0.0.2", hello_containers(), false);
    let found = reach(&world, &caller("a"), "10.0.0.2", 42, Protocol::Tcp);
    assert!(matches!(found, Reach::Refused(_)), "{found:?}");
}
