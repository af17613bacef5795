//! The EndpointSlice controller of a simulated cluster, after kube-controller-manager's
//! `endpointslice` controller: every Service with a non-empty `spec.selector` gets one
//! EndpointSlice (`addressType: IPv4`) listing the pods it selects, which is what Karmada's
//! MultiClusterService controllers collect from a member.
//!
//! The slice is named `<service>-<5 characters>` (kube's `generateName: <service>-`; the
//! characters drawn from the run's seed, one stream per Service) and keeps its name while it
//! exists. It carries the Service's labels (but for the reserved ones), `kubernetes.io/service-name`,
//! `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`
//! (`service.kubernetes.io/headless` for a headless Service) and a controller ownerReference to
//! the Service. Endpoints: one per selected pod of the namespace that has an IPv4 `podIP` and is
//! not finished (Succeeded/Failed), in pod-name order, as kube's `podToEndpoint` writes them
//! (conditions `ready` = Ready and not terminating, or the Service publishes not-ready addresses;
//! `serving` = Ready; `terminating` = being deleted; `nodeName`, `zone` from the node's
//! `topology.kubernetes.io/zone`, `hostname` for a pod of the Service's subdomain, `targetRef`).
//! Ports: the Service's ports, each resolved against the first endpoint's pod (kube's
//! `FindPort`: an integer `targetPort` as is, a named one by the pod's container ports of that
//! name and protocol; a port that does not resolve is left out); no endpoints, no ports (kube's
//! placeholder slice).
//!
//! The slice is rewritten when pods or the Service change and deleted when the Service is
//! deleted (the API server's garbage collector would too) or loses its selector (kube leaves
//! it). Services without a selector are left alone. Only slices labelled managed-by
//! `endpointslice-controller.k8s.io` are watched, written or deleted: slices other controllers
//! manage (Karmada's `endpointslice-dispatch-controller.karmada.io`) are never seen.
//!
//! Unlike kube, one slice per Service: no split at 100 endpoints (beyond the API's 1,000 the
//! rest are left out), no separate slices for pods whose named ports resolve differently, IPv4
//! only, no `endpoints.kubernetes.io/last-change-trigger-time` annotation.
//!
//! The same worker keeps each such Service's v1 Endpoints, as kube's `endpoint` controller does
//! ([`endpoints`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Endpoints, ObjectReference, Service, ServicePort};
use k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, DeleteParams, Preconditions};
use parking_lot::Mutex;

use crate::cluster::{AbortOnDrop, Ctx};
use crate::informer::{Cache, Change, Informer};
use crate::node::Node;
use crate::pod::Pod;
use crate::queue::Queue;
use crate::rng::Rng;
use crate::workloads::{Key, owner_reference};

/// The label naming a slice's Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// The label naming the controller that manages a slice.
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// This controller's value of [`MANAGED_BY_LABEL`] (kube's).
pub const CONTROLLER_NAME: &str = "endpointslice-controller.k8s.io";
/// The label kube puts on the slices of a headless Service.
pub const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// The most endpoints one slice may hold (the API's validation).
pub const MAX_ENDPOINTS: usize = 1_000;
/// How long a failed write waits before its Service is synced again.
const RETRY: Duration = Duration::from_secs(1);

/// A Service with a selector and the pods of its namespace the selector selects.
#[derive(Debug)]
struct Selected {
    selector: BTreeMap<String, String>,
    pods: BTreeSet<String>,
}

/// The EndpointSlice controller of one cluster.
#[derive(Debug)]
pub struct EndpointSlices {
    queue: Arc<Queue<Key>>,
    seed: u64,
    /// Services with a selector: namespace → Service name → what it selects.
    selected: Mutex<HashMap<String, HashMap<String, Selected>>>,
    /// The names of the managed slices seen, by the Service they name.
    slices: Mutex<HashMap<Key, BTreeSet<String>>>,
    /// A slice created for a Service and not yet seen through the watch.
    created: Mutex<HashMap<Key, String>>,
    /// Name streams, one per Service.
    names: Mutex<HashMap<Key, Rng>>,
    /// The cluster's pod cache, once started (a new selector is matched against it).
    pods: OnceLock<Cache<Pod>>,
    /// The Service cache, once started (the metrics model resolves clients' URLs with it).
    services: OnceLock<Cache<Service>>,
    /// The managed-slice cache, once started (the network model reads endpoints from it).
    slice_cache: OnceLock<Cache<EndpointSlice>>,
}

fn key_of(meta: &ObjectMeta) -> Key {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// A Service's selector, when it has a non-empty one.
fn selector_of(service: &Service) -> Option<&BTreeMap<String, String>> {
    service
        .spec
        .as_ref()
        .and_then(|s| s.selector.as_ref())
        .filter(|s| !s.is_empty())
}

/// Whether every label of `selector` is among `labels` (a Service's equality selector).
fn selects(selector: &BTreeMap<String, String>, labels: Option<&BTreeMap<String, String>>) -> bool {
    let Some(labels) = labels else {
        return selector.is_empty();
    };
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

impl EndpointSlices {
    pub fn new(seed: u64) -> Arc<Self> {
        Arc::new(EndpointSlices {
            queue: Queue::new(),
            seed,
            selected: Mutex::new(HashMap::new()),
            slices: Mutex::new(HashMap::new()),
            created: Mutex::new(HashMap::new()),
            names: Mutex::new(HashMap::new()),
            pods: OnceLock::new(),
            services: OnceLock::new(),
            slice_cache: OnceLock::new(),
        })
    }

    /// The cluster's Services, once [`EndpointSlices::start`] started their informer.
    pub fn services(&self) -> Option<Cache<Service>> {
        self.services.get().cloned()
    }

    /// The slices this controller manages, once [`EndpointSlices::start`] started their
    /// informer.
    pub fn slices(&self) -> Option<Cache<EndpointSlice>> {
        self.slice_cache.get().cloned()
    }

    /// Subscribes to the cluster's pod informer (before it starts): a pod's change queues the
    /// Services that select it or selected it.
    pub fn watch(self: &Arc<Self>, pods: &mut Informer<Pod>) {
        let this = self.clone();
        pods.on(move |change| {
            let (pod, deleted) = match change {
                Change::Applied(p) => (p, false),
                Change::Deleted(p) => (p, true),
                Change::Synced => return,
            };
            this.pod_changed(pod, deleted);
        });
    }

    fn pod_changed(&self, pod: &Pod, deleted: bool) {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
        let name = pod.metadata.name.as_deref().unwrap_or("");
        let mut selected = self.selected.lock();
        let Some(services) = selected.get_mut(namespace) else {
            return;
        };
        for (service, entry) in services.iter_mut() {
            let now = !deleted && selects(&entry.selector, pod.metadata.labels());
            let before = entry.pods.contains(name);
            if now && !before {
                entry.pods.insert(name.to_owned());
            } else if !now && before {
                entry.pods.remove(name);
            }
            if now || before {
                self.queue.add((namespace.to_owned(), service.clone()));
            }
        }
    }

    fn service_changed(&self, service: &Service, deleted: bool) {
        let (namespace, name) = key_of(&service.metadata);
        let selector = selector_of(service).filter(|_| !deleted);
        {
            let mut selected = self.selected.lock();
            match selector {
                Some(selector) => {
                    let services = selected.entry(namespace.clone()).or_default();
                    if services.get(&name).is_none_or(|s| s.selector != *selector) {
                        let pods = self
                            .pods
                            .get()
                            .map(|cache| cache.state())
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|p| {
                                p.metadata.namespace.as_deref() == Some(namespace.as_str())
                                    && selects(selector, p.metadata.labels())
                            })
                            .filter_map(|p| p.metadata.name.clone())
                            .collect();
                        services.insert(
                            name.clone(),
                            Selected {
                                selector: selector.clone(),
                                pods,
                            },
                        );
                    }
                }
                None => {
                    if let Some(services) = selected.get_mut(&namespace) {
                        services.remove(&name);
                        if services.is_empty() {
                            selected.remove(&namespace);
                        }
                    }
                }
            }
        }
        self.queue.add((namespace, name));
    }

    fn slice_changed(&self, slice: &EndpointSlice, deleted: bool) {
        let Some(service) = slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SERVICE_NAME_LABEL))
        else {
            return;
        };
        let (namespace, name) = key_of(&slice.metadata);
        let key = (namespace, service.clone());
        {
            let mut slices = self.slices.lock();
            if deleted {
                if let Some(names) = slices.get_mut(&key) {
                    names.remove(&name);
                    if names.is_empty() {
                        slices.remove(&key);
                    }
                }
            } else {
                slices.entry(key.clone()).or_default().insert(name.clone());
            }
        }
        {
            let mut created = self.created.lock();
            if created.get(&key) == Some(&name) {
                created.remove(&key);
            }
        }
        self.queue.add(key);
    }

    /// Starts the Service and managed-slice informers and the worker; `pods` must be ready
    /// (a Service's selector is matched against it).
    pub fn start(
        self: &Arc<Self>,
        ctx: Arc<Ctx>,
        pods: Cache<Pod>,
        nodes: Cache<Node>,
    ) -> Vec<AbortOnDrop> {
        let _ = self.pods.set(pods.clone());
        let mut services = Informer::<Service>::new(Api::all(ctx.client.clone()));
        let this = self.clone();
        services.on(move |change| match change {
            Change::Applied(s) => this.service_changed(s, false),
            Change::Deleted(s) => this.service_changed(s, true),
            Change::Synced => {}
        });
        let mut slices = Informer::<EndpointSlice>::new(Api::all(ctx.client.clone()))
            .with_labels(&format!("{MANAGED_BY_LABEL}={CONTROLLER_NAME}"));
        let this = self.clone();
        slices.on(move |change| match change {
            Change::Applied(s) => this.slice_changed(s, false),
            Change::Deleted(s) => this.slice_changed(s, true),
            // A relist: the cache is the truth again.
            Change::Synced => this.created.lock().clear(),
        });
        // Endpoints: a deleted one is written again (kube's `onEndpointsDelete`).
        let mut endpoints = Informer::<Endpoints>::new(Api::all(ctx.client.clone()));
        let queue = self.queue.clone();
        endpoints.on(move |change| {
            if let Change::Deleted(e) = change {
                queue.add(key_of(&e.metadata));
            }
        });
        let (services, a) = services.start();
        let _ = self.services.set(services.clone());
        let (slices, b) = slices.start();
        let _ = self.slice_cache.set(slices.clone());
        let (endpoints, c) = endpoints.start();
        let caches = Caches {
            services,
            slices,
            endpoints,
            pods,
            nodes,
        };
        let worker = tokio::spawn(self.clone().run(ctx, caches));
        vec![
            AbortOnDrop(a),
            AbortOnDrop(b),
            AbortOnDrop(c),
            AbortOnDrop(worker),
        ]
    }

    async fn run(self: Arc<Self>, ctx: Arc<Ctx>, caches: Caches) {
        caches.services.wait_until_ready().await;
        caches.slices.wait_until_ready().await;
        caches.endpoints.wait_until_ready().await;
        loop {
            let key = self.queue.pop().await;
            if let Err(error) = self.sync(&ctx, &caches, &key).await {
                tracing::debug!(service = %format!("{}/{}", key.0, key.1), %error,
                    "endpoint slice not written; retrying");
                let queue = self.queue.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(RETRY).await;
                    queue.add(key);
                });
            }
        }
    }

    /// The next name for a slice of `key`'s Service (kube's `generateName: <service>-`).
    fn next_name(&self, key: &Key) -> String {
        let mut names = self.names.lock();
        let rng = names.entry(key.clone()).or_insert_with(|| {
            Rng::derived(self.seed, &format!("endpointslice/{}/{}", key.0, key.1))
        });
        let mut random = [0u8; flotilla_api::validation::GENERATED_NAME_SUFFIX_LENGTH];
        for byte in &mut random {
            *byte = rng.below(flotilla_api::validation::GENERATED_NAME_SUFFIX_ALPHABET.len() as u64)
                as u8;
        }
        flotilla_api::validation::generate_name(&format!("{}-", key.1), random)
    }

    /// The cached pods `key`'s Service selects.
    fn selected_pods(&self, caches: &Caches, key: &Key) -> Vec<Arc<Pod>> {
        let (namespace, name) = key;
        let selected = self.selected.lock();
        selected
            .get(namespace)
            .and_then(|s| s.get(name))
            .map(|s| {
                s.pods
                    .iter()
                    .filter_map(|p| caches.pods.get(namespace, p))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Writes, or deletes with its Service, the Service's v1 Endpoints.
    async fn sync_endpoints(
        &self,
        ctx: &Ctx,
        caches: &Caches,
        key: &Key,
    ) -> Result<(), kube::Error> {
        let (namespace, name) = key;
        let current = caches.endpoints.get(namespace, name);
        let Some(service) = caches.services.get(namespace, name) else {
            if let Some(current) = current {
                let api: Api<Endpoints> = Api::namespaced(ctx.client.clone(), namespace);
                let params = DeleteParams {
                    preconditions: Some(Preconditions {
                        uid: current.metadata.uid.clone(),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                match api.delete(name, &params).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(());
        };
        if selector_of(&service).is_none() || service.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let want = endpoints::wanted(&service, &self.selected_pods(caches, key));
        match current {
            Some(current) if want.matches(&current) => Ok(()),
            Some(current) => {
                let mut object = (*current).clone();
                object.metadata.managed_fields = None;
                want.apply(&mut object);
                crate::writes::replace(ctx, Some(namespace), name, &object).await
            }
            None => {
                let object = want.object(namespace, name);
                match crate::writes::create(ctx, Some(namespace), &object).await {
                    // Written meanwhile: its watch event is not awaited; the next change syncs.
                    Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
                    other => other,
                }
            }
        }
    }

    async fn sync(&self, ctx: &Ctx, caches: &Caches, key: &Key) -> Result<(), kube::Error> {
        self.sync_endpoints(ctx, caches, key).await?;
        let (namespace, name) = key;
        // The managed slices of this Service, as cached.
        let names: Vec<String> = self
            .slices
            .lock()
            .get(key)
            .map(|n| n.iter().cloned().collect())
            .unwrap_or_default();
        let managed: Vec<Arc<EndpointSlice>> = names
            .iter()
            .filter_map(|n| caches.slices.get(namespace, n))
            .filter(|s| {
                let labels = s.metadata.labels.as_ref();
                labels
                    .and_then(|l| l.get(MANAGED_BY_LABEL))
                    .map(String::as_str)
                    == Some(CONTROLLER_NAME)
                    && labels.and_then(|l| l.get(SERVICE_NAME_LABEL)) == Some(name)
            })
            .collect();
        let service = caches
            .services
            .get(namespace, name)
            .filter(|s| selector_of(s).is_some() && s.metadata.deletion_timestamp.is_none());
        let Some(service) = service else {
            // Deleted, or no selector (any more): its slices go.
            for slice in &managed {
                delete(ctx, slice).await?;
            }
            return Ok(());
        };
        let uid = service.metadata.uid.as_deref().unwrap_or("");
        let (mut owned, stale): (Vec<_>, Vec<_>) = managed.into_iter().partition(|s| {
            s.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && o.uid == uid)
        });
        // Slices of an earlier Service of this name, and any beyond the one kept.
        owned.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let extra = if owned.len() > 1 {
            owned.split_off(1)
        } else {
            Vec::new()
        };
        for slice in stale.iter().chain(&extra) {
            delete(ctx, slice).await?;
        }
        let pods = self.selected_pods(caches, key);
        let want = desired(&service, &pods, |node| {
            caches
                .nodes
                .get("", node)
                .and_then(|n| n.metadata.labels.as_ref()?.get(ZONE_LABEL).cloned())
        });
        match owned.first() {
            Some(slice) => {
                if want.matches(slice) {
                    return Ok(());
                }
                let mut object = (**slice).clone();
                // Whatever managedFields the API server keeps, this write does not reset.
                object.metadata.managed_fields = None;
                want.apply(&mut object);
                crate::writes::replace(ctx, Some(namespace), &slice_name(slice), &object).await
            }
            None => {
                if self.created.lock().contains_key(key) {
                    // Created, not yet seen: its watch event queues the Service again.
                    return Ok(());
                }
                let slice_name = self.next_name(key);
                let mut object = EndpointSlice {
                    metadata: ObjectMeta {
                        name: Some(slice_name.clone()),
                        namespace: Some(namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    ..EndpointSlice::default()
                };
                want.apply(&mut object);
                crate::writes::create(ctx, Some(namespace), &object).await?;
                self.created.lock().insert(key.clone(), slice_name);
                Ok(())
            }
        }
    }
}

fn slice_name(slice: &EndpointSlice) -> String {
    slice.metadata.name.clone().unwrap_or_default()
}

/// Deletes a managed slice (that very one: by uid); already gone is fine.
async fn delete(ctx: &Ctx, slice: &EndpointSlice) -> Result<(), kube::Error> {
    let namespace = slice.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<EndpointSlice> = Api::namespaced(ctx.client.clone(), namespace);
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: slice.metadata.uid.clone(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match api.delete(&slice_name(slice), &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// The caches the worker reads.
#[derive(Debug, Clone)]
struct Caches {
    services: Cache<Service>,
    slices: Cache<EndpointSlice>,
    endpoints: Cache<Endpoints>,
    pods: Cache<Pod>,
    nodes: Cache<Node>,
}

/// What a Service's slice should hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Desired {
    pub labels: BTreeMap<String, String>,
    pub owner: OwnerReference,
    pub endpoints: Vec<Endpoint>,
    pub ports: Option<Vec<EndpointPort>>,
}

impl Desired {
    /// Whether `slice` holds it already (after the API server's defaults).
    fn matches(&self, slice: &EndpointSlice) -> bool {
        slice.address_type == "IPv4"
            && slice.metadata.labels.as_ref() == Some(&self.labels)
            && slice.metadata.owner_references.as_deref() == Some(std::slice::from_ref(&self.owner))
            && slice.endpoints == self.endpoints
            && slice.ports == self.ports
    }

    fn apply(&self, slice: &mut EndpointSlice) {
        slice.metadata.labels = Some(self.labels.clone());
        slice.metadata.owner_references = Some(vec![self.owner.clone()]);
        slice.address_type = "IPv4".into();
        slice.endpoints = self.endpoints.clone();
        slice.ports = self.ports.clone();
    }
}

/// The slice `service` should have, given the pods its selector selects (in any order) and
/// the zone of a node (by name).
pub fn desired(
    service: &Service,
    pods: &[Arc<Pod>],
    zone_of: impl Fn(&str) -> Option<String>,
) -> Desired {
    let (namespace, name) = key_of(&service.metadata);
    let spec = service.spec.as_ref();
    let mut labels: BTreeMap<String, String> = service
        .metadata
        .labels
        .iter()
        .flatten()
        .filter(|(k, _)| {
            ![SERVICE_NAME_LABEL, MANAGED_BY_LABEL, HEADLESS_LABEL].contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    labels.insert(SERVICE_NAME_LABEL.into(), name.clone());
    labels.insert(MANAGED_BY_LABEL.into(), CONTROLLER_NAME.into());
    if spec.and_then(|s| s.cluster_ip.as_deref()) == Some("None") {
        labels.insert(HEADLESS_LABEL.into(), String::new());
    }
    let publish_not_ready = spec
        .and_then(|s| s.publish_not_ready_addresses)
        .unwrap_or(false);
    let mut pods: Vec<(&Pod, IpAddr)> = pods
        .iter()
        .filter(|p| {
            p.metadata.namespace.as_deref() == Some(namespace.as_str())
                && !crate::scheduler::is_terminal(p)
        })
        .filter_map(|p| {
            let ip = p.status.as_ref()?.pod_ip.filter(IpAddr::is_ipv4)?;
            Some((&**p, ip))
        })
        .collect();
    pods.sort_by(|a, b| a.0.metadata.name.cmp(&b.0.metadata.name));
    if pods.len() > MAX_ENDPOINTS {
        tracing::debug!(service = %format!("{namespace}/{name}"), pods = pods.len(),
            "more pods than one endpoint slice holds; the rest are left out");
        pods.truncate(MAX_ENDPOINTS);
    }
    let endpoints = pods
        .iter()
        .map(|(pod, ip)| {
            let serving = crate::workloads::is_ready(pod);
            let terminating = pod.metadata.deletion_timestamp.is_some();
            let node = pod.node_name();
            let hostname = pod
                .spec
                .as_ref()
                .and_then(|s| s.hostname.clone())
                .filter(|h| {
                    !h.is_empty()
                        && pod.spec.as_ref().and_then(|s| s.subdomain.as_deref())
                            == Some(name.as_str())
                });
            Endpoint {
                addresses: vec![ip.to_string()],
                conditions: Some(EndpointConditions {
                    ready: Some(publish_not_ready || (serving && !terminating)),
                    serving: Some(serving),
                    terminating: Some(terminating),
                }),
                hostname,
                node_name: (!node.is_empty()).then(|| node.to_owned()),
                target_ref: Some(ObjectReference {
                    kind: Some("Pod".into()),
                    namespace: pod.metadata.namespace.clone(),
                    name: pod.metadata.name.clone(),
                    uid: pod.metadata.uid.clone(),
                    ..ObjectReference::default()
                }),
                zone: if node.is_empty() { None } else { zone_of(node) },
                ..Endpoint::default()
            }
        })
        .collect();
    let ports = pods.first().map(|(pod, _)| {
        spec.and_then(|s| s.ports.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|port| {
                Some(EndpointPort {
                    name: Some(port.name.clone().unwrap_or_default()),
                    port: Some(find_port(pod, port)?),
                    protocol: Some(protocol_of(port.protocol.as_deref()).to_owned()),
                    app_protocol: port.app_protocol.clone(),
                })
            })
            .collect()
    });
    Desired {
        labels,
        owner: owner_reference(service),
        endpoints,
        ports,
    }
}

fn protocol_of(protocol: Option<&str>) -> &str {
    protocol.filter(|p| !p.is_empty()).unwrap_or("TCP")
}

/// The pod's port a Service port sends to (kube's `podutil.FindPort`): an integer `targetPort`
/// as is (absent, 0 or empty: the Service port, as defaulting makes it), a named one the container port of that name and
/// protocol, in the containers, then the sidecar init containers (restartPolicy Always).
pub fn find_port(pod: &Pod, port: &ServicePort) -> Option<i32> {
    let name = match &port.target_port {
        Some(IntOrString::Int(number)) if *number != 0 => return Some(*number),
        Some(IntOrString::String(name)) if !name.is_empty() => name,
        _ => return Some(port.port),
    };
    let protocol = protocol_of(port.protocol.as_deref());
    let spec = pod.spec.as_ref()?;
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    spec.containers
        .iter()
        .chain(sidecars)
        .flat_map(|c| c.ports.iter().flatten())
        .find(|p| {
            p.name.as_deref() == Some(name.as_str())
                && protocol_of(p.protocol.as_deref()) == protocol
        })
        .map(|p| p.container_port)
}

pub mod endpoints;
#[cfg(test)]
mod tests;
