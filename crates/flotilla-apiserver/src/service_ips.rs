//! ClusterIP and NodePort allocation for Services, as kube-apiserver's service REST storage
//! does (`pkg/registry/core/service/storage/alloc.go` and `storage.go`, behaviour only): a
//! Service of type ClusterIP, NodePort or LoadBalancer created without `spec.clusterIP` gets an
//! address of the service range in `clusterIP` and `clusterIPs`; a headless (`None`) or
//! ExternalName Service gets none, and an address the client chose is kept (and not handed out
//! again). A NodePort Service, or a LoadBalancer one unless `allocateLoadBalancerNodePorts:
//! false`, gets a `nodePort` of 30000–32767 (kube's default `--service-node-port-range`) for
//! each port without one. On update (kube's `patchAllocatedValues`) a Service that still needs
//! them keeps its cluster IP and its ports' node ports (by port name) when the new body leaves
//! them out, gets new ones for what it newly needs (a type change), and loses them when its
//! type no longer needs them.
//!
//! Unlike kube, addresses and ports are handed out in order (deterministic, for the simulator),
//! are not released when a Service is deleted, and a chosen address or port already in use is
//! not refused. Off unless [`crate::Builder::service_cluster_ip_range`] (`flotilla up` and the
//! simulator's clusters set it). The first address is the `default/kubernetes` Service's
//! ([`crate::kubernetes_service`]); at start the addresses and node ports of the stored Services
//! are reserved ([`ServiceIps::reserve_stored`]), as kube's repair loops rebuild their bitmaps,
//! so a durable store's Services keep theirs across restarts.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use parking_lot::Mutex;
use serde_json::{Value, json};

/// The first and last node port (kube's default `--service-node-port-range`).
const NODE_PORTS: (u16, u16) = (30000, 32767);

/// An IPv4 service range and the addresses handed out of it, and the node ports.
#[derive(Debug)]
pub struct ServiceIps {
    network: u32,
    size: u32,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next: u32,
    used: HashSet<u32>,
    next_port: u16,
    ports: HashSet<u16>,
}

impl ServiceIps {
    /// A range in CIDR notation (`10.96.0.0/12`); `None` if it does not parse or holds fewer
    /// than four addresses.
    pub fn parse(cidr: &str) -> Option<ServiceIps> {
        let (address, bits) = cidr.split_once('/')?;
        let address: Ipv4Addr = address.parse().ok()?;
        let bits: u32 = bits.parse().ok().filter(|b| *b <= 30)?;
        let size = 1u32 << (32 - bits);
        let network = u32::from(address) & !(size - 1);
        Some(ServiceIps {
            network,
            size,
            state: Mutex::new(State {
                // The network address is never handed out.
                next: 1,
                used: HashSet::new(),
                next_port: NODE_PORTS.0,
                ports: HashSet::new(),
            }),
        })
    }

    /// The range's first address, kept for the `default/kubernetes` Service.
    pub fn first(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.network + 1)
    }

    /// Reserves the first address, and the cluster IPs and node ports of the Services in
    /// `services` (stored objects, as at start).
    pub fn reserve_stored<'a>(&self, services: impl IntoIterator<Item = &'a Value>) {
        self.reserve(self.first());
        for service in services {
            let spec = &service["spec"];
            let ips = spec["clusterIPs"].as_array().into_iter().flatten();
            for ip in ips.chain(std::iter::once(&spec["clusterIP"])) {
                if let Some(Ok(address)) = ip.as_str().map(str::parse::<Ipv4Addr>) {
                    self.reserve(address);
                }
            }
            let ports = spec["ports"].as_array().into_iter().flatten();
            for port in ports.filter_map(Value::as_object) {
                if let Some(node_port) = node_port(port) {
                    self.state.lock().ports.insert(node_port);
                }
            }
        }
    }

    /// The next free address (skipping the network and broadcast addresses), or `None` when the
    /// range is full.
    fn allocate(&self) -> Option<Ipv4Addr> {
        let mut state = self.state.lock();
        for _ in 0..self.size {
            let offset = state.next;
            state.next = if offset + 2 >= self.size {
                1
            } else {
                offset + 1
            };
            let address = self.network + offset;
            if state.used.insert(address) {
                return Some(Ipv4Addr::from(address));
            }
        }
        None
    }

    /// Records an address a client chose (inside the range or not).
    fn reserve(&self, address: Ipv4Addr) {
        self.state.lock().used.insert(u32::from(address));
    }

    /// The next free node port, or `None` when all are taken.
    fn allocate_port(&self) -> Option<u16> {
        let mut state = self.state.lock();
        for _ in NODE_PORTS.0..=NODE_PORTS.1 {
            let port = state.next_port;
            state.next_port = if port >= NODE_PORTS.1 {
                NODE_PORTS.0
            } else {
                port + 1
            };
            if state.ports.insert(port) {
                return Some(port);
            }
        }
        None
    }

    /// Fills in `spec.clusterIP`, `spec.clusterIPs` and the ports' `nodePort` of a defaulted
    /// Service being created.
    pub fn on_create(&self, service: &mut Value) {
        let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        if !needs_cluster_ip(spec) {
            return;
        }
        match spec.get("clusterIP").and_then(Value::as_str) {
            Some("None") => {}
            Some(chosen) if !chosen.is_empty() => {
                if let Ok(address) = chosen.parse() {
                    self.reserve(address);
                }
            }
            _ => self.assign_ip(spec),
        }
        self.assign_node_ports(spec);
    }

    /// Keeps what `old` was allocated and `new` leaves out, allocates what `new` newly needs,
    /// drops what its type no longer needs (both defaulted).
    pub fn on_update(&self, old: &Value, new: &mut Value) {
        let old_spec = old.get("spec").and_then(Value::as_object);
        let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let empty = serde_json::Map::new();
        let old_spec = old_spec.unwrap_or(&empty);
        if needs_cluster_ip(spec) {
            let unset = spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if unset {
                match old_spec.get("clusterIP").and_then(Value::as_str) {
                    Some(ip) if !ip.is_empty() && needs_cluster_ip(old_spec) => {
                        spec.insert("clusterIP".into(), json!(ip));
                        if let Some(ips) = old_spec.get("clusterIPs") {
                            spec.insert("clusterIPs".into(), ips.clone());
                        }
                    }
                    _ => self.assign_ip(spec),
                }
            }
        } else if needs_cluster_ip(old_spec) {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
        if needs_node_ports(spec) {
            if needs_node_ports(old_spec) {
                // By port name, unless another new port already uses the old value.
                let used: HashSet<u16> =
                    ports_of(spec).iter().filter_map(|p| node_port(p)).collect();
                let old_ports: Vec<(String, u16)> = ports_of(old_spec)
                    .iter()
                    .filter_map(|p| Some((name_of(p), node_port(p)?)))
                    .collect();
                for port in ports_mut(spec) {
                    if node_port(port).is_some() {
                        continue;
                    }
                    let name = name_of(port);
                    if let Some((_, value)) = old_ports
                        .iter()
                        .find(|(n, v)| *n == name && !used.contains(v))
                    {
                        port.insert("nodePort".into(), json!(value));
                    }
                }
            }
            self.assign_node_ports(spec);
        } else if needs_node_ports(old_spec) {
            for port in ports_mut(spec) {
                port.remove("nodePort");
            }
        }
    }

    fn assign_ip(&self, spec: &mut serde_json::Map<String, Value>) {
        if let Some(address) = self.allocate() {
            let text = address.to_string();
            spec.insert("clusterIP".into(), json!(text));
            spec.insert("clusterIPs".into(), json!([text]));
        }
    }

    /// Reserves the node ports given and allocates the missing ones, when the type needs them.
    fn assign_node_ports(&self, spec: &mut serde_json::Map<String, Value>) {
        if !needs_node_ports(spec) {
            return;
        }
        for port in ports_mut(spec) {
            match node_port(port) {
                Some(chosen) => {
                    self.state.lock().ports.insert(chosen);
                }
                None => {
                    if let Some(allocated) = self.allocate_port() {
                        port.insert("nodePort".into(), json!(allocated));
                    }
                }
            }
        }
    }
}

fn type_of(spec: &serde_json::Map<String, Value>) -> &str {
    spec.get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP")
}

fn needs_cluster_ip(spec: &serde_json::Map<String, Value>) -> bool {
    matches!(type_of(spec), "ClusterIP" | "NodePort" | "LoadBalancer")
}

/// kube's `needsNodePort`: NodePort, or LoadBalancer unless it turned node ports off.
fn needs_node_ports(spec: &serde_json::Map<String, Value>) -> bool {
    match type_of(spec) {
        "NodePort" => true,
        "LoadBalancer" => spec.get("allocateLoadBalancerNodePorts") != Some(&Value::Bool(false)),
        _ => false,
    }
}

fn ports_of(spec: &serde_json::Map<String, Value>) -> Vec<&serde_json::Map<String, Value>> {
    spec.get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .collect()
}

fn ports_mut(
    spec: &mut serde_json::Map<String, Value>,
) -> Vec<&mut serde_json::Map<String, Value>> {
    spec.get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
        .collect()
}

fn name_of(port: &serde_json::Map<String, Value>) -> String {
    port.get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// A port's node port, when set (not 0).
fn node_port(port: &serde_json::Map<String, Value>) -> Option<u16> {
    port.get("nodePort")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_get_addresses_of_the_range_in_order_and_chosen_ones_are_kept() {
        let ips = ServiceIps::parse("10.96.0.0/12").expect("a range");
        let mut first = json!({"spec": {"type": "ClusterIP"}});
        ips.on_create(&mut first);
        assert_eq!(first["spec"]["clusterIP"], "10.96.0.1");
        assert_eq!(first["spec"]["clusterIPs"], json!(["10.96.0.1"]));
        let mut chosen = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.2"}});
        ips.on_create(&mut chosen);
        assert_eq!(chosen["spec"]["clusterIP"], "10.96.0.2");
        let mut next = json!({"spec": {"type": "NodePort"}});
        ips.on_create(&mut next);
        assert_eq!(
            next["spec"]["clusterIP"], "10.96.0.3",
            "the chosen one is skipped"
        );
        for mut none in [
            json!({"spec": {"type": "ClusterIP", "clusterIP": "None"}}),
            json!({"spec": {"type": "ExternalName", "externalName": "example.com"}}),
        ] {
            let before = none.clone();
            ips.on_create(&mut none);
            assert_eq!(none, before);
        }
    }

    #[test]
    fn stored_services_and_the_first_address_are_not_handed_out_again() {
        let ips = ServiceIps::parse("10.96.0.0/12").expect("a range");
        assert_eq!(ips.first(), Ipv4Addr::new(10, 96, 0, 1));
        let stored = [
            json!({"spec": {"clusterIP": "10.96.0.2", "clusterIPs": ["10.96.0.2"]}}),
            json!({"spec": {"clusterIP": "None"}}),
            json!({"spec": {"type": "ExternalName"}}),
        ];
        ips.reserve_stored(&stored);
        let mut next = json!({"spec": {"type": "ClusterIP"}});
        ips.on_create(&mut next);
        assert_eq!(next["spec"]["clusterIP"], "10.96.0.3");
    }

    #[test]
    fn node_port_services_get_node_ports_in_order_and_keep_them_on_update() {
        let ips = ServiceIps::parse("10.96.0.0/12").expect("a range");
        let mut service = json!({"spec": {"type": "NodePort", "ports": [
            {"name": "http", "port": 80}, {"name": "admin", "port": 81, "nodePort": 30001}]}});
        ips.on_create(&mut service);
        assert_eq!(service["spec"]["ports"][0]["nodePort"], 30000);
        assert_eq!(
            service["spec"]["ports"][1]["nodePort"], 30001,
            "chosen, kept"
        );
        let mut balancer = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 443}]}});
        ips.on_create(&mut balancer);
        assert_eq!(
            balancer["spec"]["ports"][0]["nodePort"], 30002,
            "30001 is taken"
        );
        let mut no_ports = json!({"spec": {"type": "LoadBalancer",
            "allocateLoadBalancerNodePorts": false, "ports": [{"port": 443}]}});
        ips.on_create(&mut no_ports);
        assert!(no_ports["spec"]["ports"][0].get("nodePort").is_none());

        // A replace without the allocated values keeps them (ports by name); a new port gets one.
        let mut replaced = json!({"spec": {"type": "NodePort", "ports": [
            {"name": "http", "port": 80}, {"name": "metrics", "port": 9090}]}});
        ips.on_update(&service, &mut replaced);
        assert_eq!(replaced["spec"]["clusterIP"], service["spec"]["clusterIP"]);
        assert_eq!(
            replaced["spec"]["clusterIPs"],
            service["spec"]["clusterIPs"]
        );
        assert_eq!(replaced["spec"]["ports"][0]["nodePort"], 30000);
        assert_eq!(replaced["spec"]["ports"][1]["nodePort"], 30003);
        // Back to ClusterIP: node ports go, the address stays.
        let mut plain = replaced.clone();
        plain["spec"]["type"] = json!("ClusterIP");
        ips.on_update(&replaced, &mut plain);
        assert!(plain["spec"]["ports"][0].get("nodePort").is_none());
        assert_eq!(plain["spec"]["clusterIP"], service["spec"]["clusterIP"]);
        // ExternalName → ClusterIP gets an address; ClusterIP → ExternalName loses it.
        let external = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}});
        let mut internal = json!({"spec": {"type": "ClusterIP", "ports": [{"port": 5432}]}});
        ips.on_update(&external, &mut internal);
        assert_eq!(
            internal["spec"]["clusterIP"], "10.96.0.4",
            "after the three above"
        );
        let mut away = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com",
            "clusterIP": "10.96.0.4", "clusterIPs": ["10.96.0.4"]}});
        ips.on_update(&internal, &mut away);
        assert!(away["spec"].get("clusterIP").is_none());
        // Stored node ports are reserved at start.
        let restarted = ServiceIps::parse("10.96.0.0/12").expect("a range");
        restarted.reserve_stored([&replaced]);
        let mut next = json!({"spec": {"type": "NodePort", "ports": [{"port": 1}]}});
        restarted.on_create(&mut next);
        assert_eq!(next["spec"]["ports"][0]["nodePort"], 30001);
    }

    #[test]
    fn a_full_range_hands_out_nothing() {
        let ips = ServiceIps::parse("10.0.0.0/30").expect("a range");
        let addresses: Vec<_> = (0..3).map(|_| ips.allocate()).collect();
        assert_eq!(
            addresses,
            [
                Some(Ipv4Addr::new(10, 0, 0, 1)),
                Some(Ipv4Addr::new(10, 0, 0, 2)),
                None
            ]
        );
    }
}
