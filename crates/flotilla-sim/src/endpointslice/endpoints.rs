//! The v1 Endpoints a Service with a selector gets, after kube-controller-manager's `endpoint`
//! controller (`pkg/controller/endpoint`, Kubernetes v1.33, behaviour only): what
//! `kubectl get endpoints` and `kubectl describe svc` show in a member.
//!
//! The Endpoints is named as its Service and carries the Service's labels
//! (`service.kubernetes.io/headless` for a headless one, removed otherwise). Each selected pod of
//! the namespace with an IPv4 `podIP`, not finished and (unless the Service publishes not-ready
//! addresses) not being deleted is an address (`ip`, `nodeName`, `hostname` for a pod of the
//! Service's subdomain, `targetRef`): in `addresses` when Ready or when the Service publishes
//! not-ready addresses, else in `notReadyAddresses`. Every Service port that resolves on a pod
//! (`FindPort`) is a port of that pod; pods with the same ports share a subset (kube's
//! `RepackSubsets`); a headless Service without ports lists its pods with no ports. Addresses
//! are ordered by IP, subsets by their first address. kube orders ports and subsets by a hash;
//! here ports keep the Service's order. No `endpoints.kubernetes.io/last-change-trigger-time`
//! annotation and no truncation at 1,000 addresses (`over-capacity`).
//!
//! The controller writes it when the Service or its pods change, writes it again when it is
//! deleted, deletes it with its Service, and leaves the Endpoints of Services without a selector
//! (`default/kubernetes`, hand-written ones) alone.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference, Service,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{HEADLESS_LABEL, find_port, protocol_of};
use crate::pod::Pod;

/// What a Service's Endpoints should hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    pub labels: BTreeMap<String, String>,
    pub subsets: Vec<EndpointSubset>,
}

impl Wanted {
    /// Whether `endpoints` holds it already.
    pub fn matches(&self, endpoints: &Endpoints) -> bool {
        let labels = endpoints.metadata.labels.clone().unwrap_or_default();
        let subsets = endpoints.subsets.as_deref().unwrap_or_default();
        labels == self.labels && subsets == self.subsets.as_slice()
    }

    pub fn apply(&self, endpoints: &mut Endpoints) {
        endpoints.metadata.labels = (!self.labels.is_empty()).then(|| self.labels.clone());
        endpoints.subsets = (!self.subsets.is_empty()).then(|| self.subsets.clone());
    }

    /// A new Endpoints `namespace/name` holding it.
    pub fn object(&self, namespace: &str, name: &str) -> Endpoints {
        let mut endpoints = Endpoints {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            ..Endpoints::default()
        };
        self.apply(&mut endpoints);
        endpoints
    }
}

/// The Endpoints `service` should have, given the pods its selector selects (in any order).
pub fn wanted(service: &Service, pods: &[Arc<Pod>]) -> Wanted {
    let namespace = service.metadata.namespace.as_deref().unwrap_or("");
    let name = service.metadata.name.as_deref().unwrap_or("");
    let spec = service.spec.as_ref();
    let headless = spec.and_then(|s| s.cluster_ip.as_deref()) == Some("None");
    let mut labels = service.metadata.labels.clone().unwrap_or_default();
    if headless {
        labels.insert(HEADLESS_LABEL.into(), String::new());
    } else {
        labels.remove(HEADLESS_LABEL);
    }
    let publish_not_ready = spec
        .and_then(|s| s.publish_not_ready_addresses)
        .unwrap_or(false);
    let service_ports = spec.and_then(|s| s.ports.as_deref()).unwrap_or_default();
    // A pod's resolved ports → the Ready and not-ready addresses with exactly those ports.
    let mut groups: BTreeMap<PortSet, (Vec<Address>, Vec<Address>)> = BTreeMap::new();
    let mut ports_of: BTreeMap<PortSet, Vec<EndpointPort>> = BTreeMap::new();
    for pod in pods {
        if pod.metadata.namespace.as_deref() != Some(namespace)
            || crate::scheduler::is_terminal(pod)
            || (pod.metadata.deletion_timestamp.is_some() && !publish_not_ready)
        {
            continue;
        }
        let Some(ip) = pod
            .status
            .as_ref()
            .and_then(|s| s.pod_ip)
            .filter(IpAddr::is_ipv4)
        else {
            continue;
        };
        let ports: Vec<EndpointPort> = service_ports
            .iter()
            .filter_map(|port| {
                Some(EndpointPort {
                    name: port.name.clone().filter(|n| !n.is_empty()),
                    port: find_port(pod, port)?,
                    protocol: Some(protocol_of(port.protocol.as_deref()).to_owned()),
                    app_protocol: port.app_protocol.clone(),
                })
            })
            .collect();
        // A pod none of whose ports resolve is no endpoint, but for a headless Service
        // without ports.
        if ports.is_empty() && !(service_ports.is_empty() && headless) {
            continue;
        }
        let key: PortSet = ports
            .iter()
            .map(|p| {
                (
                    p.name.clone().unwrap_or_default(),
                    p.port,
                    p.protocol.clone().unwrap_or_default(),
                )
            })
            .collect();
        let node = pod.node_name();
        let address = Address {
            ip,
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            address: EndpointAddress {
                ip: ip.to_string(),
                hostname: pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.hostname.clone())
                    .filter(|h| {
                        !h.is_empty()
                            && pod.spec.as_ref().and_then(|s| s.subdomain.as_deref()) == Some(name)
                    }),
                node_name: (!node.is_empty()).then(|| node.to_owned()),
                target_ref: Some(ObjectReference {
                    kind: Some("Pod".into()),
                    namespace: pod.metadata.namespace.clone(),
                    name: pod.metadata.name.clone(),
                    uid: pod.metadata.uid.clone(),
                    ..ObjectReference::default()
                }),
            },
        };
        let (ready, not_ready) = groups.entry(key.clone()).or_default();
        if publish_not_ready || crate::workloads::is_ready(pod) {
            ready.push(address);
        } else {
            not_ready.push(address);
        }
        ports_of.entry(key).or_insert(ports);
    }
    let mut subsets: Vec<(Address, EndpointSubset)> = groups
        .into_iter()
        .map(|(key, (mut ready, mut not_ready))| {
            ready.sort_by(|a, b| (a.ip, &a.uid).cmp(&(b.ip, &b.uid)));
            not_ready.sort_by(|a, b| (a.ip, &a.uid).cmp(&(b.ip, &b.uid)));
            let first = ready
                .first()
                .or(not_ready.first())
                .cloned()
                .expect("a group holds a pod");
            let ports = ports_of.remove(&key).unwrap_or_default();
            let subset = EndpointSubset {
                addresses: (!ready.is_empty())
                    .then(|| ready.into_iter().map(|a| a.address).collect()),
                not_ready_addresses: (!not_ready.is_empty())
                    .then(|| not_ready.into_iter().map(|a| a.address).collect()),
                ports: (!ports.is_empty()).then_some(ports),
            };
            (first, subset)
        })
        .collect();
    subsets.sort_by(|a, b| (a.0.ip, &a.0.uid).cmp(&(b.0.ip, &b.0.uid)));
    Wanted {
        labels,
        subsets: subsets.into_iter().map(|(_, s)| s).collect(),
    }
}

/// Resolved ports (name, number, protocol): pods with the same share a subset.
type PortSet = Vec<(String, i32, String)>;

#[derive(Debug, Clone)]
struct Address {
    ip: IpAddr,
    uid: String,
    address: EndpointAddress,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn service(spec: Value) -> Service {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"}},
            "spec": spec,
        }))
        .expect("a service")
    }

    fn pod(name: &str, ip: &str, ready: bool, port_name: &str) -> Arc<Pod> {
        pod_on(name, ip, ready, port_name, 8080)
    }

    fn pod_on(name: &str, ip: &str, ready: bool, port_name: &str, number: i32) -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
                "spec": {"nodeName": "node-1", "hostname": name, "subdomain": "web",
                    "containers": [{"name": "c", "image": "nginx",
                    "ports": [{"name": port_name, "containerPort": number}]}]},
                "status": {"phase": "Running", "podIP": ip, "conditions": [
                    {"type": "Ready", "status": if ready { "True" } else { "False" }}]},
            }))
            .expect("a pod"),
        )
    }

    fn json_of(wanted: &Wanted) -> Value {
        serde_json::to_value(&wanted.subsets).expect("JSON")
    }

    #[test]
    fn ready_and_not_ready_pods_with_the_same_ports_share_a_subset() {
        let svc = service(json!({"selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}));
        let pods = [
            pod("b", "10.0.0.9", true, "http"),
            pod("a", "10.0.0.10", true, "http"),
            pod("c", "10.0.0.2", false, "http"),
        ];
        let wanted = wanted(&svc, &pods);
        assert_eq!(
            wanted.labels,
            BTreeMap::from([("app".into(), "web".into())])
        );
        let address = |ip: &str, name: &str| {
            json!({"ip": ip, "hostname": name, "nodeName": "node-1", "targetRef":
                {"kind": "Pod", "namespace": "ns", "name": name, "uid": format!("uid-{name}")}})
        };
        assert_eq!(
            json_of(&wanted),
            json!([{
                "addresses": [address("10.0.0.9", "b"), address("10.0.0.10", "a")],
                "notReadyAddresses": [address("10.0.0.2", "c")],
                "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            }])
        );
        let endpoints = wanted.object("ns", "web");
        assert!(wanted.matches(&endpoints));
    }

    #[test]
    fn pods_whose_named_ports_differ_get_subsets_of_their_own() {
        let svc = service(json!({"selector": {"app": "web"}, "clusterIP": "None",
            "ports": [{"port": 80, "targetPort": "http"}]}));
        let pods = [
            pod("a", "10.0.0.4", true, "http"),
            pod_on("b", "10.0.0.3", true, "http", 9090),
            pod("c", "10.0.0.5", true, "metrics"),
        ];
        let wanted = wanted(&svc, &pods);
        assert_eq!(
            wanted.labels.get(HEADLESS_LABEL).map(String::as_str),
            Some("")
        );
        let subsets = json_of(&wanted);
        assert_eq!(subsets.as_array().expect("subsets").len(), 2, "{subsets}");
        assert_eq!(subsets[0]["addresses"][0]["ip"], "10.0.0.3");
        assert_eq!(
            subsets[0]["ports"],
            json!([{"port": 9090, "protocol": "TCP"}])
        );
        assert_eq!(subsets[1]["addresses"][0]["ip"], "10.0.0.4");
        assert_eq!(
            subsets[1]["ports"],
            json!([{"port": 8080, "protocol": "TCP"}])
        );
    }

    #[test]
    fn a_headless_service_without_ports_lists_its_pods_and_deleting_pods_go() {
        let svc = service(json!({"selector": {"app": "web"}, "clusterIP": "None"}));
        let mut leaving: Pod = (*pod("b", "10.0.0.3", true, "http")).clone();
        leaving.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
        );
        let pods = [pod("a", "10.0.0.4", true, "http"), Arc::new(leaving)];
        let subsets = json_of(&wanted(&svc, &pods));
        assert_eq!(subsets.as_array().expect("subsets").len(), 1);
        assert_eq!(
            subsets[0]["addresses"].as_array().expect("addresses").len(),
            1
        );
        assert!(subsets[0].get("ports").is_none());
        let mut published = svc.clone();
        published
            .spec
            .as_mut()
            .expect("spec")
            .publish_not_ready_addresses = Some(true);
        let subsets = json_of(&wanted(&published, &pods));
        assert_eq!(
            subsets[0]["addresses"].as_array().expect("addresses").len(),
            2
        );
        // A Service with ports none of which resolves has no endpoints.
        let unresolved = service(json!({"selector": {"app": "web"},
            "ports": [{"port": 80, "targetPort": "grpc"}]}));
        assert!(wanted(&unresolved, &pods).subsets.is_empty());
    }
}
