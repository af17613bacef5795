//! The `default/kubernetes` Service and its endpoints, as kube-apiserver keeps them
//! (`pkg/controlplane/controller/kubernetesservice` and the endpoint reconcilers of
//! `pkg/controlplane/reconcilers`, Kubernetes v1.33, behaviour only).
//!
//! Every cluster has this Service: the first address of the service range, port `https` 443
//! forwarded to the API server's port, no selector, labels `component=apiserver` and
//! `provider=kubernetes`. Its Endpoints (labelled `endpointslice.kubernetes.io/skip-mirror`,
//! so the mirroring controller leaves it alone) and its EndpointSlice (`kubernetes`, labelled
//! with the service name) list the API server's address; kube refuses loopback endpoints, so a
//! server listening on loopback lists the address of the host's default route, as
//! kube-apiserver picks its advertise address. The loop runs at start and then every 10 s
//! (kube's `--endpoint-reconciler` interval): whatever is missing is created again, endpoints
//! that do not name this server are corrected; the Service's ports and type are corrected only
//! at start, as kube does.
//!
//! Endpoints with several servers: a server that is the store's only writer (memory or redb)
//! lists exactly its own address, as a single kube-apiserver does. Servers sharing a store
//! (etcd) each add their address to those listed, so they never undo each other; an address no
//! server serves any more stays until the Endpoints is deleted (it is written again within
//! 10 s with the live servers). kube tracks live servers with leases of its own in etcd; that
//! difference is in `docs/apiserver.md`.

use std::net::{IpAddr, Ipv4Addr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::registry::write::Part;
use crate::registry::{Registry, WriteOptions};

pub const NAME: &str = "kubernetes";
pub const NAMESPACE: &str = "default";
/// kube-apiserver's `EndpointInterval`.
const INTERVAL: Duration = Duration::from_secs(10);
/// The manager of the writes (kube-apiserver's own, as `kubectl get -o yaml --show-managed-fields`
/// shows on a kind cluster).
const MANAGER: &str = "kube-apiserver";
const SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";
const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// What the loop keeps.
#[derive(Clone, Debug)]
pub struct Config {
    /// The Service's cluster IP: the first address of the service range.
    pub service_ip: Ipv4Addr,
    /// The API server's port: the Service's target port and the endpoints' port.
    pub port: u16,
    /// The address the endpoints list for this server ([`endpoint_address`]); `None` keeps the
    /// Service only.
    pub address: Option<IpAddr>,
    /// This server is the store's only writer: the endpoints list exactly its address.
    pub exclusive: bool,
}

/// The address to list in the endpoints for a server reached at `ip`: `ip` itself unless it is
/// loopback or unspecified (which kube's validation refuses in endpoints), else the address of
/// the interface of this host's default route, as kube-apiserver chooses its advertise address
/// (`ChooseHostInterface`); `None` when the host has no route (then only the Service is kept).
pub fn endpoint_address(ip: IpAddr) -> Option<IpAddr> {
    if !(ip.is_loopback() || ip.is_unspecified()) {
        return Some(ip);
    }
    // Connecting a UDP socket sends nothing; it only picks the route's source address.
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    let local = socket.local_addr().ok()?.ip();
    (!local.is_loopback() && !local.is_unspecified()).then_some(local)
}

/// Runs until dropped.
pub async fn run(registry: Registry, config: Config) {
    let kinds = Kinds::new(&registry);
    let mut first = true;
    loop {
        match sync(&registry, &kinds, &config, first).await {
            Ok(()) => first = false,
            // Conflicts and races with another writer: the next round sees the new version.
            Err(e) if e.code == 409 || e.code == 404 => {}
            Err(e) => tracing::warn!(error = %e.message, "cannot sync the kubernetes service"),
        }
        tokio::time::sleep(INTERVAL).await;
    }
}

struct Kinds {
    services: Arc<ResourceInfo>,
    endpoints: Arc<ResourceInfo>,
    slices: Arc<ResourceInfo>,
}

impl Kinds {
    fn new(registry: &Registry) -> Kinds {
        let catalog = registry.catalog();
        Kinds {
            services: catalog.get("", "v1", "services").expect("built in"),
            endpoints: catalog.get("", "v1", "endpoints").expect("built in"),
            slices: catalog
                .get("discovery.k8s.io", "v1", "endpointslices")
                .expect("built in"),
        }
    }
}

async fn sync(
    registry: &Registry,
    kinds: &Kinds,
    config: &Config,
    reconcile: bool,
) -> Result<(), ApiError> {
    let options = WriteOptions {
        field_manager: Some(MANAGER.to_owned()),
        ..WriteOptions::default()
    };
    let desired = service(config);
    match cached(registry, "core/services") {
        None => create(registry, &kinds.services, desired, &options).await?,
        Some((current, revision)) if reconcile => {
            if let Some(fixed) = service_corrected(&current, &desired) {
                update(registry, &kinds.services, fixed, revision, &options).await?;
            }
        }
        Some(_) => {}
    }
    let Some(own) = config.address else {
        return Ok(());
    };
    let endpoints = match cached(registry, "core/endpoints") {
        None => {
            let endpoints = endpoints_wanted(None, own, config);
            create(registry, &kinds.endpoints, endpoints.clone(), &options).await?;
            endpoints
        }
        Some((current, revision)) => match endpoints_wanted(Some(&current), own, config) {
            wanted if wanted != current => {
                update(
                    registry,
                    &kinds.endpoints,
                    wanted.clone(),
                    revision,
                    &options,
                )
                .await?;
                wanted
            }
            _ => current,
        },
    };
    let slice = slice_of(&endpoints);
    match cached(registry, "discovery.k8s.io/endpointslices") {
        None => create(registry, &kinds.slices, slice, &options).await?,
        Some((current, revision)) => {
            if slice_differs(&current, &slice) {
                let mut updated = current;
                for field in ["addressType", "endpoints", "ports"] {
                    updated[field] = slice[field].clone();
                }
                updated["metadata"]["labels"][SERVICE_NAME_LABEL] = json!(NAME);
                update(registry, &kinds.slices, updated, revision, &options).await?;
            }
        }
    }
    Ok(())
}

fn cached(registry: &Registry, resource: &str) -> Option<(Value, flotilla_store::Revision)> {
    let key = format!("/registry/{resource}/{NAMESPACE}/{NAME}");
    let object = registry.cache().get(key.as_bytes())?;
    Some((object.value(), object.revision))
}

async fn create(
    registry: &Registry,
    info: &ResourceInfo,
    body: Value,
    options: &WriteOptions,
) -> Result<(), ApiError> {
    match registry.create(info, Some(NAMESPACE), body, options).await {
        Ok(_) => Ok(()),
        Err(e) if e.reason == "AlreadyExists" => Ok(()),
        Err(e) => Err(e),
    }
}

async fn update(
    registry: &Registry,
    info: &ResourceInfo,
    mut body: Value,
    revision: flotilla_store::Revision,
    options: &WriteOptions,
) -> Result<(), ApiError> {
    crate::object::set_resource_version(&mut body, revision);
    registry
        .update(info, Some(NAMESPACE), NAME, body, Part::Main, options)
        .await
        .map(|_| ())
}

fn port_of(config: &Config) -> Value {
    json!({"name": "https", "port": config.port, "protocol": "TCP"})
}

/// The Service kube-apiserver creates.
pub fn service(config: &Config) -> Value {
    let ip = config.service_ip.to_string();
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ip,
            "clusterIPs": [ip],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{
                "name": "https",
                "port": 443,
                "protocol": "TCP",
                "targetPort": config.port,
            }],
            "sessionAffinity": "None",
        },
    })
}

/// `current` with the desired ports and type, if they differ (kube's
/// `getMasterServiceUpdateIfNeeded`: the cluster IP is never changed).
pub fn service_corrected(current: &Value, desired: &Value) -> Option<Value> {
    let same_ports = current["spec"]["ports"] == desired["spec"]["ports"];
    let same_type = current["spec"]["type"] == desired["spec"]["type"];
    if same_ports && same_type {
        return None;
    }
    let mut fixed = current.clone();
    fixed["spec"]["ports"] = desired["spec"]["ports"].clone();
    fixed["spec"]["type"] = desired["spec"]["type"].clone();
    Some(fixed)
}

/// The Endpoints to have, given the current one: this server's address `own` (and, sharing the
/// store, the addresses already listed), its port, the skip-mirror label; other fields kept.
pub fn endpoints_wanted(current: Option<&Value>, own: IpAddr, config: &Config) -> Value {
    let mut endpoints = current.cloned().unwrap_or_else(|| {
        json!({
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": NAME, "namespace": NAMESPACE},
        })
    });
    let mut addresses: Vec<IpAddr> = vec![own];
    if !config.exclusive {
        let listed = current
            .and_then(|c| c["subsets"][0]["addresses"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|a| a["ip"].as_str()?.parse::<IpAddr>().ok());
        addresses.extend(listed);
    }
    addresses.sort();
    addresses.dedup();
    let addresses: Vec<Value> = addresses
        .iter()
        .map(|ip| json!({"ip": ip.to_string()}))
        .collect();
    endpoints["subsets"] = json!([{"addresses": addresses, "ports": [port_of(config)]}]);
    endpoints["metadata"]["labels"][SKIP_MIRROR] = json!("true");
    endpoints
}

/// The EndpointSlice kube derives from the Endpoints (`endpointSliceFromEndpoints`).
pub fn slice_of(endpoints: &Value) -> Value {
    let subset = &endpoints["subsets"][0];
    let ready = subset["addresses"].as_array().into_iter().flatten();
    let not_ready = subset["notReadyAddresses"].as_array().into_iter().flatten();
    let entry = |address: &Value, ready: bool| json!({"addresses": [address["ip"].clone()], "conditions": {"ready": ready}});
    let items: Vec<Value> = ready
        .map(|a| entry(a, true))
        .chain(not_ready.map(|a| entry(a, false)))
        .collect();
    let family = if items.iter().all(|e| {
        e["addresses"][0]
            .as_str()
            .is_some_and(|ip| ip.contains(':'))
    }) && !items.is_empty()
    {
        "IPv6"
    } else {
        "IPv4"
    };
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {SERVICE_NAME_LABEL: NAME},
        },
        "addressType": family,
        "endpoints": items,
        "ports": subset["ports"].clone(),
    })
}

/// Whether the stored slice differs from the derived one in what kube compares (endpoints,
/// ports, the service-name label, the address type).
pub fn slice_differs(current: &Value, desired: &Value) -> bool {
    let endpoints = |slice: &Value| -> Vec<(Value, Value)> {
        slice["endpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| (e["addresses"].clone(), e["conditions"]["ready"].clone()))
            .collect()
    };
    endpoints(current) != endpoints(desired)
        || current["ports"] != desired["ports"]
        || current["addressType"] != desired["addressType"]
        || current["metadata"]["labels"][SERVICE_NAME_LABEL] != json!(NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10));

    fn config(exclusive: bool) -> Config {
        Config {
            service_ip: Ipv4Addr::new(10, 96, 0, 1),
            port: 6443,
            address: Some(OWN),
            exclusive,
        }
    }

    #[test]
    fn a_routable_address_is_listed_as_is_loopback_is_replaced() {
        assert_eq!(endpoint_address(OWN), Some(OWN));
        for local in [IpAddr::from([127, 0, 0, 1]), IpAddr::from([0, 0, 0, 0])] {
            if let Some(chosen) = endpoint_address(local) {
                assert!(
                    !chosen.is_loopback() && !chosen.is_unspecified(),
                    "{chosen}"
                );
            }
        }
    }

    #[test]
    fn the_service_forwards_443_to_the_servers_port() {
        let service = service(&config(true));
        assert_eq!(service["spec"]["clusterIP"], "10.96.0.1");
        assert_eq!(service["spec"]["clusterIPs"], json!(["10.96.0.1"]));
        assert_eq!(
            service["spec"]["ports"],
            json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}])
        );
        assert_eq!(
            service["metadata"]["labels"],
            json!({"component": "apiserver", "provider": "kubernetes"})
        );
        assert!(service["spec"].get("selector").is_none());
    }

    #[test]
    fn ports_and_type_are_corrected_but_not_the_cluster_ip() {
        let desired = service(&config(true));
        assert_eq!(service_corrected(&desired, &desired), None);
        let mut edited = desired.clone();
        edited["spec"]["ports"][0]["targetPort"] = json!(8443);
        edited["spec"]["type"] = json!("NodePort");
        edited["spec"]["clusterIP"] = json!("10.96.0.9");
        let fixed = service_corrected(&edited, &desired).expect("a correction");
        assert_eq!(fixed["spec"]["ports"], desired["spec"]["ports"]);
        assert_eq!(fixed["spec"]["type"], "ClusterIP");
        assert_eq!(fixed["spec"]["clusterIP"], "10.96.0.9");
    }

    #[test]
    fn an_exclusive_server_lists_only_itself_a_shared_one_adds_itself() {
        let other = json!({
            "metadata": {"name": NAME, "namespace": NAMESPACE, "resourceVersion": "7"},
            "subsets": [{"addresses": [{"ip": "192.0.2.20"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}],
        });
        let alone = endpoints_wanted(Some(&other), OWN, &config(true));
        assert_eq!(
            alone["subsets"],
            json!([{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}])
        );
        assert_eq!(alone["metadata"]["labels"][SKIP_MIRROR], "true");
        assert_eq!(
            alone["metadata"]["resourceVersion"], "7",
            "other fields kept"
        );
        let shared = endpoints_wanted(Some(&other), OWN, &config(false));
        assert_eq!(
            shared["subsets"][0]["addresses"],
            json!([{"ip": "192.0.2.10"}, {"ip": "192.0.2.20"}])
        );
        // Once listed, a shared server writes nothing more.
        assert_eq!(endpoints_wanted(Some(&shared), OWN, &config(false)), shared);
        let fresh = endpoints_wanted(None, OWN, &config(false));
        assert_eq!(
            fresh["subsets"][0]["addresses"],
            json!([{"ip": "192.0.2.10"}])
        );
    }

    #[test]
    fn the_slice_follows_the_endpoints() {
        let endpoints = endpoints_wanted(None, OWN, &config(true));
        let slice = slice_of(&endpoints);
        assert_eq!(slice["addressType"], "IPv4");
        assert_eq!(
            slice["endpoints"],
            json!([{"addresses": ["192.0.2.10"], "conditions": {"ready": true}}])
        );
        assert_eq!(
            slice["ports"],
            json!([{"name": "https", "port": 6443, "protocol": "TCP"}])
        );
        assert_eq!(slice["metadata"]["labels"][SERVICE_NAME_LABEL], NAME);
        assert!(!slice_differs(&slice, &slice));
        let mut moved = slice.clone();
        moved["endpoints"][0]["addresses"] = json!(["192.0.2.99"]);
        assert!(slice_differs(&moved, &slice));
        let mut unlabelled = slice.clone();
        unlabelled["metadata"]["labels"] = json!({});
        assert!(slice_differs(&unlabelled, &slice));
    }
}
