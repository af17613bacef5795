//! ClusterIP allocation for Services, as kube-apiserver's service REST storage does on create
//! (`pkg/registry/core/service/storage/alloc.go`, behaviour only): a Service of type
//! ClusterIP, NodePort or LoadBalancer created without `spec.clusterIP` gets an address of the
//! service range in `clusterIP` and `clusterIPs`; a headless (`None`) or ExternalName Service
//! gets none, and an address the client chose is kept (and not handed out again).
//!
//! Unlike kube, addresses are handed out in order (deterministic, for the simulator), are not
//! released when a Service is deleted, and a chosen address already in use is not refused.
//! Off unless [`crate::Builder::service_cluster_ip_range`] (`flotilla up` and the simulator's
//! clusters set it). The first address is the `default/kubernetes` Service's
//! ([`crate::kubernetes_service`]); at start the addresses of the stored Services are reserved
//! ([`ServiceIps::reserve_stored`]), as kube's repair loop rebuilds its bitmap, so a durable
//! store's Services keep theirs across restarts.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use parking_lot::Mutex;
use serde_json::{Value, json};

/// An IPv4 service range and the addresses handed out of it.
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
            }),
        })
    }

    /// The range's first address, kept for the `default/kubernetes` Service.
    pub fn first(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.network + 1)
    }

    /// Reserves the first address and the cluster IPs of the Services in `services` (stored
    /// objects, as at start).
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

    /// Fills in `spec.clusterIP` and `spec.clusterIPs` of a defaulted Service being created.
    pub fn on_create(&self, service: &mut Value) {
        let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let kind = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP");
        if !matches!(kind, "ClusterIP" | "NodePort" | "LoadBalancer") {
            return;
        }
        match spec.get("clusterIP").and_then(Value::as_str) {
            Some("None") => {}
            Some(chosen) if !chosen.is_empty() => {
                if let Ok(address) = chosen.parse() {
                    self.reserve(address);
                }
            }
            _ => {
                if let Some(address) = self.allocate() {
                    let text = address.to_string();
                    spec.insert("clusterIP".into(), json!(text));
                    spec.insert("clusterIPs".into(), json!([text]));
                }
            }
        }
    }
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
