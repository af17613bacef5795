//! The network of a simulation: what a pod's `nc` reaches, inside its cluster and across the
//! clusters of the process, as a flat multi-cluster network with overlapping pod CIDRs would
//! carry it (Submariner with Globalnet).
//!
//! A destination resolves, in the caller's cluster: a name (`svc`, `svc.ns`, `svc.ns.svc`,
//! `svc.ns.svc.cluster.local`) to its Service's cluster IP; a Service's cluster IP and port
//! (and protocol) to the Ready endpoints of the Service's EndpointSlices whose port of the same
//! name matches; each slice's endpoints belong to the cluster the slice came from (its
//! **provenance**: the `endpointslice.karmada.io/provision-cluster` annotation of
//! MultiClusterService's dispatched slices, else a name `imported-<cluster>-…` of the
//! ServiceExport flow naming a cluster of the simulation, else the caller's own cluster); one
//! endpoint is chosen by a hash of the caller's pod name (a client's connections go to one
//! backend); its address is a pod of that cluster, whose container running an `nc -l` listener
//! on that port and protocol answers. A pod IP of the caller's own cluster reaches that pod
//! directly. Because pod IPs repeat from cluster to cluster, an address is only ever looked up
//! in one cluster: the provenance is what Globalnet's global IPs give a real network.
//!
//! Nothing is stored: a connection is resolved when it happens, from the clusters' informer
//! caches as they are now (a log computed later sees the endpoints of then, except that a
//! listener whose container started after the connection refuses it). Resolution is pure over a
//! [`World`]; [`Network`] is the process's world, one [`Attached`] set of caches per cluster.
//!
//! Must not depend on anything but the clusters' caches and the shell's [`Net`] seam.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use parking_lot::{Mutex, RwLock};

use crate::endpointslice::SERVICE_NAME_LABEL;
use crate::informer::Cache;
use crate::pod::Pod;
use crate::runtime::shell::{Listener, Net, Protocol, Reach, nc};

/// The annotation naming a dispatched slice's provider (Karmada's MultiClusterService).
pub const PROVISION_CLUSTER_ANNOTATION: &str = "endpointslice.karmada.io/provision-cluster";
/// The name prefix of the ServiceExport flow's imported slices (`imported-<cluster>-<slice>`).
pub const IMPORTED_PREFIX: &str = "imported-";

/// What resolution reads: each cluster's Services, EndpointSlices and pods.
pub trait World {
    /// The clusters' names.
    fn clusters(&self) -> Vec<String>;
    fn services(&self, cluster: &str) -> Vec<Arc<Service>>;
    fn slices(&self, cluster: &str) -> Vec<Arc<EndpointSlice>>;
    fn pod(&self, cluster: &str, namespace: &str, name: &str) -> Option<Arc<Pod>>;
    fn pods(&self, cluster: &str) -> Vec<Arc<Pod>>;
}

/// Who connects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller {
    pub cluster: String,
    pub namespace: String,
    pub pod: String,
}

/// One cluster's caches.
#[derive(Debug, Clone)]
pub struct Attached {
    pub pods: Cache<Pod>,
    pub services: Cache<Service>,
    /// Every EndpointSlice cache (the cluster's own controller's, and the others').
    pub slices: Vec<Cache<EndpointSlice>>,
}

/// The clusters of one process.
#[derive(Debug, Default)]
pub struct Network {
    clusters: RwLock<BTreeMap<String, Attached>>,
}

impl Network {
    pub fn new() -> Arc<Self> {
        Arc::new(Network::default())
    }

    /// Adds (or replaces) a cluster's caches.
    pub fn attach(&self, cluster: &str, caches: Attached) {
        self.clusters.write().insert(cluster.to_owned(), caches);
    }

    fn cluster(&self, name: &str) -> Option<Attached> {
        self.clusters.read().get(name).cloned()
    }

    /// The network as `caller` sees it, for one run of its program (resolutions are
    /// remembered for that run).
    pub fn from_pod(self: &Arc<Self>, caller: Caller) -> Arc<dyn Net> {
        Arc::new(PodNet {
            network: self.clone(),
            caller,
            seen: Mutex::new(HashMap::new()),
        })
    }
}

impl World for Network {
    fn clusters(&self) -> Vec<String> {
        self.clusters.read().keys().cloned().collect()
    }
    fn services(&self, cluster: &str) -> Vec<Arc<Service>> {
        self.cluster(cluster)
            .map(|c| c.services.state())
            .unwrap_or_default()
    }
    fn slices(&self, cluster: &str) -> Vec<Arc<EndpointSlice>> {
        self.cluster(cluster)
            .map(|c| c.slices.iter().flat_map(|s| s.state()).collect())
            .unwrap_or_default()
    }
    fn pod(&self, cluster: &str, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.cluster(cluster)?.pods.get(namespace, name)
    }
    fn pods(&self, cluster: &str) -> Vec<Arc<Pod>> {
        self.cluster(cluster)
            .map(|c| c.pods.state())
            .unwrap_or_default()
    }
}

/// The network seen from one pod, for one run.
#[derive(Debug)]
struct PodNet {
    network: Arc<Network>,
    caller: Caller,
    /// A run that loops over `nc` resolves each destination once.
    seen: Mutex<HashMap<(String, u16, Protocol), Reach>>,
}

impl Net for PodNet {
    fn reach(&self, host: &str, port: u16, protocol: Protocol) -> Reach {
        let key = (host.to_owned(), port, protocol);
        if let Some(found) = self.seen.lock().get(&key) {
            return found.clone();
        }
        let found = reach(&*self.network, &self.caller, host, port, protocol);
        self.seen.lock().insert(key, found.clone());
        found
    }
}

/// A Service's IPv4 cluster IP.
fn cluster_ip(service: &Service) -> Option<Ipv4Addr> {
    service.spec.as_ref()?.cluster_ip.as_deref()?.parse().ok()
}

fn protocol_of(protocol: Option<&str>) -> Option<Protocol> {
    match protocol.unwrap_or("TCP") {
        "TCP" => Some(Protocol::Tcp),
        "UDP" => Some(Protocol::Udp),
        _ => None,
    }
}

/// What `caller` reaches at `host`, `port`, `protocol` (see the module docs).
pub fn reach(
    world: &impl World,
    caller: &Caller,
    host: &str,
    port: u16,
    protocol: Protocol,
) -> Reach {
    let local = caller.cluster.as_str();
    let services = world.services(local);
    let address = match host.parse::<Ipv4Addr>() {
        Ok(address) => address,
        Err(_) => {
            let Some((namespace, name)) = crate::metrics::model::resolve(host, &caller.namespace)
            else {
                return Reach::BadAddress;
            };
            let found = services.iter().find(|s| {
                s.metadata.namespace.as_deref() == Some(namespace.as_str())
                    && s.metadata.name.as_deref() == Some(name.as_str())
            });
            match found.and_then(|s| cluster_ip(s)) {
                Some(address) => address,
                // Headless Services' names (their pods' addresses) are not modelled.
                None => return Reach::BadAddress,
            }
        }
    };
    if let Some(service) = services.iter().find(|s| cluster_ip(s) == Some(address)) {
        return through_service(world, caller, service, address, port, protocol);
    }
    let pod = world.pods(local).into_iter().find(|p| {
        p.status.as_ref().and_then(|s| s.pod_ip) == Some(IpAddr::V4(address))
            && !crate::scheduler::is_terminal(p)
    });
    match pod {
        Some(pod) => at_pod(&pod, address, port, protocol),
        None => Reach::Silent(address),
    }
}

/// The cluster a slice's endpoints are in (see the module docs).
pub fn provenance(slice: &EndpointSlice, local: &str, clusters: &[String]) -> String {
    if let Some(provider) = slice
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROVISION_CLUSTER_ANNOTATION))
    {
        return provider.clone();
    }
    let name = slice.metadata.name.as_deref().unwrap_or("");
    if let Some(rest) = name.strip_prefix(IMPORTED_PREFIX) {
        // Cluster names may hold dashes: the longest one that fits.
        if let Some(cluster) = clusters
            .iter()
            .filter(|c| {
                rest.strip_prefix(c.as_str())
                    .is_some_and(|r| r.starts_with('-') && r.len() > 1)
            })
            .max_by_key(|c| c.len())
        {
            return cluster.clone();
        }
    }
    local.to_owned()
}

/// One Ready endpoint of a Service: the cluster it is in, its address and port, and the pod
/// its `targetRef` names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Backend {
    cluster: String,
    address: Ipv4Addr,
    port: u16,
    pod: Option<(String, String)>,
}

fn through_service(
    world: &impl World,
    caller: &Caller,
    service: &Service,
    address: Ipv4Addr,
    port: u16,
    protocol: Protocol,
) -> Reach {
    let namespace = service.metadata.namespace.as_deref().unwrap_or("");
    let name = service.metadata.name.as_deref().unwrap_or("");
    let Some(service_port) = service.spec.as_ref().and_then(|spec| {
        spec.ports.iter().flatten().find(|p| {
            p.port == i32::from(port) && protocol_of(p.protocol.as_deref()) == Some(protocol)
        })
    }) else {
        // No rule for that port: the cluster IP answers nothing.
        return Reach::Silent(address);
    };
    let port_name = service_port.name.as_deref().unwrap_or("");
    let clusters = world.clusters();
    let mut backends: Vec<Backend> = Vec::new();
    for slice in world.slices(&caller.cluster) {
        let labels = slice.metadata.labels.as_ref();
        if slice.metadata.namespace.as_deref() != Some(namespace)
            || labels
                .and_then(|l| l.get(SERVICE_NAME_LABEL))
                .map(String::as_str)
                != Some(name)
            || slice.address_type != "IPv4"
        {
            continue;
        }
        let Some(target) = slice.ports.iter().flatten().find_map(|p| {
            (p.name.as_deref().unwrap_or("") == port_name
                && protocol_of(p.protocol.as_deref()) == Some(protocol))
            .then_some(p.port)
            .flatten()
            .and_then(|n| u16::try_from(n).ok())
        }) else {
            continue;
        };
        let cluster = provenance(&slice, &caller.cluster, &clusters);
        for endpoint in &slice.endpoints {
            if endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .is_some_and(|ready| !ready)
            {
                continue;
            }
            let Some(address) = endpoint.addresses.first().and_then(|a| a.parse().ok()) else {
                continue;
            };
            let pod = endpoint
                .target_ref
                .as_ref()
                .filter(|r| r.kind.as_deref().is_none_or(|k| k == "Pod"))
                .and_then(|r| Some((r.namespace.clone()?, r.name.clone()?)));
            backends.push(Backend {
                cluster: cluster.clone(),
                address,
                port: target,
                pod,
            });
        }
    }
    backends.sort();
    backends.dedup();
    if backends.is_empty() {
        // kube-proxy rejects traffic to a Service without endpoints.
        return Reach::Refused(address);
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    caller.pod.hash(&mut hasher);
    let chosen = &backends[(hasher.finish() % backends.len() as u64) as usize];
    let pod = chosen
        .pod
        .as_ref()
        .and_then(|(ns, name)| world.pod(&chosen.cluster, ns, name))
        .filter(|p| p.status.as_ref().and_then(|s| s.pod_ip) == Some(IpAddr::V4(chosen.address)))
        .or_else(|| {
            world.pods(&chosen.cluster).into_iter().find(|p| {
                p.status.as_ref().and_then(|s| s.pod_ip) == Some(IpAddr::V4(chosen.address))
            })
        })
        .filter(|p| !crate::scheduler::is_terminal(p));
    match pod.map(|pod| at_pod(&pod, chosen.address, chosen.port, protocol)) {
        Some(Reach::Open(_, listener)) => Reach::Open(address, listener),
        Some(Reach::Refused(_)) => Reach::Refused(address),
        _ => Reach::Silent(address),
    }
}

/// What answers at a pod: a running container listening with `nc -l` on `port`/`protocol`,
/// or a refusal.
fn at_pod(pod: &Pod, address: Ipv4Addr, port: u16, protocol: Protocol) -> Reach {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    for container in pod.spec.iter().flat_map(|s| s.containers.iter()) {
        let Some(started) = statuses
            .iter()
            .find(|s| s.name == container.name)
            .and_then(|s| s.state.as_ref()?.running.as_ref())
        else {
            continue;
        };
        let context = crate::runtime::context_of(pod, container);
        let argv = crate::runtime::argv_of(container, &context);
        let Some(options) = nc::listener(&argv) else {
            continue;
        };
        if options.port != Some(port) || options.udp != (protocol == Protocol::Udp) {
            continue;
        }
        return Reach::Open(
            address,
            Listener {
                context,
                program: options.program,
                since: started.started_at.as_ref().map(|t| t.0),
            },
        );
    }
    Reach::Refused(address)
}

#[cfg(test)]
mod tests;
