//! Shared informers: one watch per resource per cluster (kube-runtime's watcher), a cache every
//! component reads ([`Cache`]), and handlers that turn changes into queue keys. Components of
//! one simulated cluster share them, as kube-controller-manager's controllers share informers.

use std::collections::hash_map::RandomState;
use std::fmt::Debug;
use std::hash::BuildHasher;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use hashbrown::HashTable;
use std::borrow::Cow;

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, DaemonSetStatus, Deployment, DeploymentSpec, DeploymentStatus,
    ReplicaSet, ReplicaSetSpec, ReplicaSetStatus, StatefulSet, StatefulSetSpec, StatefulSetStatus,
};
use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, CronJobStatus, Job, JobSpec, JobStatus};
use k8s_openapi::api::core::v1::{Service, ServiceSpec, ServiceStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::Lookup;
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt};
use parking_lot::RwLock;
use serde::de::DeserializeOwned;

/// What an informer caches: an object as its watch decodes it (`Wire`), or a slimmer form
/// made from that (the sim's [`crate::pod::Pod`]).
pub trait Cached: Lookup<DynamicType = ()> + Clone + Debug + Send + Sync + 'static {
    /// The type the watch decodes.
    type Wire: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + 'static;

    fn from_wire(wire: Self::Wire) -> Self;
}

/// Types cached as decoded.
macro_rules! cached_as_decoded {
    ($($kind:ty),* $(,)?) => {
        $(impl $crate::informer::Cached for $kind {
            type Wire = $kind;

            fn from_wire(wire: $kind) -> $kind {
                wire
            }
        })*
    };
}

cached_as_decoded!(
    crate::node::Node,
    k8s_openapi::api::discovery::v1::EndpointSlice,
    k8s_openapi::api::core::v1::ConfigMap,
    k8s_openapi::api::core::v1::Secret,
    k8s_openapi::api::core::v1::Endpoints,
    k8s_openapi::api::core::v1::Namespace,
    k8s_openapi::api::core::v1::ServiceAccount,
);

/// Workload kinds whose watch decodes them without `metadata.managedFields`, skipped while
/// parsing ([`flotilla_api::meta`]): dropped after decoding they had been built first, and the
/// Deployments a control plane creates carry an entry as large as their spec.
macro_rules! cached_without_managed_fields {
    ($($wire:ident: $kind:ident { $spec:ty, $status:ty }),* $(,)?) => {
        $(
            #[doc = concat!("A `", stringify!($kind), "` as its watch decodes it (see [`Cached`]).")]
            #[derive(Debug, Clone, Default, serde::Deserialize)]
            pub struct $wire {
                #[serde(default, deserialize_with = "flotilla_api::meta::without_managed_fields")]
                metadata: ObjectMeta,
                #[serde(default)]
                spec: Option<$spec>,
                #[serde(default)]
                status: Option<$status>,
            }

            impl Resource for $wire {
                type DynamicType = ();
                type Scope = <$kind as Resource>::Scope;

                fn kind(dt: &()) -> Cow<'_, str> {
                    <$kind as Resource>::kind(dt)
                }
                fn group(dt: &()) -> Cow<'_, str> {
                    <$kind as Resource>::group(dt)
                }
                fn version(dt: &()) -> Cow<'_, str> {
                    <$kind as Resource>::version(dt)
                }
                fn plural(dt: &()) -> Cow<'_, str> {
                    <$kind as Resource>::plural(dt)
                }
                fn meta(&self) -> &ObjectMeta {
                    &self.metadata
                }
                fn meta_mut(&mut self) -> &mut ObjectMeta {
                    &mut self.metadata
                }
            }

            impl Cached for $kind {
                type Wire = $wire;

                fn from_wire(wire: $wire) -> $kind {
                    $kind::from(wire)
                }
            }

            impl From<$wire> for $kind {
                fn from(wire: $wire) -> $kind {
                    $kind {
                        metadata: wire.metadata,
                        spec: wire.spec,
                        status: wire.status,
                    }
                }
            }
        )*
    };
}

cached_without_managed_fields!(
    WireService: Service { ServiceSpec, ServiceStatus },
    WireDeployment: Deployment { DeploymentSpec, DeploymentStatus },
    WireReplicaSet: ReplicaSet { ReplicaSetSpec, ReplicaSetStatus },
    WireStatefulSet: StatefulSet { StatefulSetSpec, StatefulSetStatus },
    WireDaemonSet: DaemonSet { DaemonSetSpec, DaemonSetStatus },
    WireJob: Job { JobSpec, JobStatus },
    WireCronJob: CronJob { CronJobSpec, CronJobStatus },
);

impl Cached for crate::pod::Pod {
    type Wire = crate::pod::WirePod;

    fn from_wire(wire: crate::pod::WirePod) -> Self {
        wire.into()
    }
}

fn map_event<K: Cached>(event: Event<K::Wire>) -> Event<K> {
    match event {
        Event::Apply(k) => Event::Apply(K::from_wire(k)),
        Event::Delete(k) => Event::Delete(K::from_wire(k)),
        Event::Init => Event::Init,
        Event::InitApply(k) => Event::InitApply(K::from_wire(k)),
        Event::InitDone => Event::InitDone,
    }
}

/// What a handler sees.
#[derive(Debug)]
pub enum Change<'a, K> {
    Applied(&'a Arc<K>),
    Deleted(&'a Arc<K>),
    /// A (re)list finished: handlers that keep derived state should resynchronise.
    Synced,
}

type Handler<K> = Box<dyn Fn(Change<'_, K>) + Send + Sync>;

/// An informer being assembled: handlers are added before it starts.
pub struct Informer<K: Cached> {
    api: Api<K::Wire>,
    handlers: Vec<Handler<K>>,
    /// A label selector the watch is limited to.
    labels: Option<String>,
}

impl<K: Cached> Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("handlers", &self.handlers.len())
            .finish()
    }
}

impl<K: Cached> Informer<K> {
    pub fn new(api: Api<K::Wire>) -> Self {
        Informer {
            api,
            handlers: Vec::new(),
            labels: None,
        }
    }

    /// Watches only the objects `selector` (a label selector) selects.
    pub fn with_labels(mut self, selector: &str) -> Self {
        self.labels = Some(selector.to_owned());
        self
    }

    pub fn on(&mut self, handler: impl Fn(Change<'_, K>) + Send + Sync + 'static) {
        self.handlers.push(Box::new(handler));
    }

    /// Starts watching; returns the cache and the task.
    ///
    /// A (re)list — at start, and whenever the watch is lost (a 410 because this watcher fell
    /// behind the API server, or any other break kube's watcher recovers from by listing) — is
    /// handed to the handlers only once it is complete and the cache has switched to it, as
    /// client-go's `Replace` does: every listed object as [`Change::Applied`] (in the list's
    /// order), every object the cache held before but the list no longer has as
    /// [`Change::Deleted`], then [`Change::Synced`]. A handler that queues a key therefore always
    /// finds the object in the cache, and nothing created or deleted while the watch was down is
    /// missed.
    pub fn start(self) -> (Cache<K>, tokio::task::JoinHandle<()>) {
        let cache = Cache::new();
        let handlers: Arc<Vec<Handler<K>>> = Arc::new(self.handlers);
        // One unpaged list from the API server's watch cache (rv=0, no limit: pages would be
        // read from the store at the list's revision, which compaction may have removed), and
        // no managedFields in the cache: no loop reads them, and as typed trees they are the
        // largest part of a cached pod.
        let mut config = watcher::Config::default().any_semantic();
        config.page_size = None;
        if let Some(selector) = &self.labels {
            config = config.labels(selector);
        }
        let stream = watcher::watcher(self.api, config)
            .default_backoff()
            .modify(|object| object.managed_fields_mut().clear())
            .map_ok(map_event::<K>);
        let task = tokio::spawn({
            let cache = cache.clone();
            async move {
                futures::pin_mut!(stream);
                // The objects of the current relist, swapped in when it is complete, and
                // their order in the list.
                let mut listing: Option<Listing<K>> = None;
                while let Some(event) = stream.next().await {
                    let event = match event {
                        Ok(event) => event,
                        Err(error) => {
                            tracing::debug!(%error, "watch error; retrying");
                            continue;
                        }
                    };
                    match event {
                        Event::Apply(k) => {
                            let k = Arc::new(k);
                            cache.insert(k.clone());
                            dispatch(&handlers, Change::Applied(&k));
                        }
                        Event::Delete(k) => {
                            cache.remove(&k);
                            dispatch(&handlers, Change::Deleted(&Arc::new(k)));
                        }
                        // The cache keeps serving the old state until the list is done.
                        Event::Init => listing = Some(Default::default()),
                        Event::InitApply(k) => {
                            let (table, order) = listing.get_or_insert_with(Default::default);
                            let k = Arc::new(k);
                            order.push(k.clone());
                            cache.insert_into(table, k);
                        }
                        Event::InitDone => {
                            let (table, order) = listing.take().unwrap_or_default();
                            let before = cache.replace(table);
                            for old in &before {
                                if cache.get_like(old).is_none() {
                                    dispatch(&handlers, Change::Deleted(old));
                                }
                            }
                            drop(before);
                            // The cache now holds the list (in the list's order to handlers).
                            for k in &order {
                                dispatch(&handlers, Change::Applied(k));
                            }
                            cache.set_ready();
                            dispatch(&handlers, Change::Synced);
                        }
                    }
                }
            }
        });
        (cache, task)
    }
}

/// A relist in progress: its objects, and their order in the list.
type Listing<K> = (HashTable<Arc<K>>, Vec<Arc<K>>);

/// An informer's cache: the objects of its resource by namespace and name, each held once (an
/// `Arc` of what the watch decoded; nothing is copied to store it) in a table of bare pointers.
/// kube-runtime's reflector store, which this replaces, keyed each object by an `ObjectRef`
/// (four owned strings, ~200 bytes) and stored a clone of every object it was handed.
pub struct Cache<K> {
    shared: Arc<CacheShared<K>>,
}

struct CacheShared<K> {
    table: RwLock<HashTable<Arc<K>>>,
    hasher: RandomState,
    ready: tokio::sync::watch::Sender<bool>,
}

impl<K> Clone for Cache<K> {
    fn clone(&self) -> Self {
        Cache {
            shared: self.shared.clone(),
        }
    }
}

impl<K> Debug for Cache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("objects", &self.shared.table.read().len())
            .finish()
    }
}

impl<K: Lookup> Cache<K> {
    fn new() -> Self {
        Cache {
            shared: Arc::new(CacheShared {
                table: RwLock::new(HashTable::new()),
                hasher: RandomState::new(),
                ready: tokio::sync::watch::Sender::new(false),
            }),
        }
    }

    fn hash(&self, namespace: &str, name: &str) -> u64 {
        self.shared.hasher.hash_one((namespace, name))
    }

    fn hash_of(&self, k: &K) -> u64 {
        self.hash(
            k.namespace().as_deref().unwrap_or(""),
            k.name().as_deref().unwrap_or(""),
        )
    }

    fn same(a: &K, b: &K) -> bool {
        a.name() == b.name() && a.namespace() == b.namespace()
    }

    fn is(k: &K, namespace: &str, name: &str) -> bool {
        k.name().as_deref().unwrap_or("") == name
            && k.namespace().as_deref().unwrap_or("") == namespace
    }

    /// The object `name` in `namespace` (`""` for cluster-scoped objects).
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<K>> {
        let hash = self.hash(namespace, name);
        self.shared
            .table
            .read()
            .find(hash, |k| Self::is(k, namespace, name))
            .cloned()
    }

    /// The cached object with the same namespace and name as `k`.
    fn get_like(&self, k: &K) -> Option<Arc<K>> {
        self.get(
            k.namespace().as_deref().unwrap_or(""),
            k.name().as_deref().unwrap_or(""),
        )
    }

    /// Every cached object, in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        self.shared.table.read().iter().cloned().collect()
    }

    /// Returns once the first list is in the cache.
    pub async fn wait_until_ready(&self) {
        let mut ready = self.shared.ready.subscribe();
        // The sender lives as long as this cache, so waiting cannot fail.
        let _ = ready.wait_for(|ready| *ready).await;
    }

    fn set_ready(&self) {
        self.shared.ready.send_replace(true);
    }

    /// A ready cache holding `objects` (tests of code that reads caches).
    #[cfg(test)]
    pub(crate) fn of(objects: impl IntoIterator<Item = K>) -> Self {
        let cache = Cache::new();
        for k in objects {
            cache.insert(Arc::new(k));
        }
        cache.set_ready();
        cache
    }

    fn insert(&self, k: Arc<K>) {
        let mut table = self.shared.table.write();
        self.insert_into(&mut table, k);
    }

    fn insert_into(&self, table: &mut HashTable<Arc<K>>, k: Arc<K>) {
        let hash = self.hash_of(&k);
        match table.find_mut(hash, |old| Self::same(old, &k)) {
            Some(old) => *old = k,
            None => {
                table.insert_unique(hash, k, |k| self.hash_of(k));
            }
        }
    }

    fn remove(&self, k: &K) {
        let hash = self.hash_of(k);
        let mut table = self.shared.table.write();
        if let Ok(entry) = table.find_entry(hash, |old| Self::same(old, k)) {
            entry.remove();
        }
    }

    /// Swaps in a complete list; the objects held before.
    fn replace(&self, listed: HashTable<Arc<K>>) -> Vec<Arc<K>> {
        let before = std::mem::replace(&mut *self.shared.table.write(), listed);
        before.into_iter().collect()
    }
}

fn dispatch<K>(handlers: &[Handler<K>], change: Change<'_, K>) {
    for handler in handlers {
        handler(match &change {
            Change::Applied(k) => Change::Applied(k),
            Change::Deleted(k) => Change::Deleted(k),
            Change::Synced => Change::Synced,
        });
    }
}

#[cfg(test)]
mod tests;
