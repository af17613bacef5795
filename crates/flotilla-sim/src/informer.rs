//! Shared informers: one watch per resource per cluster (kube-runtime's watcher and reflector),
//! a cache every component reads, and handlers that turn changes into queue keys. Components of
//! one simulated cluster share them, as kube-controller-manager's controllers share informers.

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Lookup, ObjectRef, Store};
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt};
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
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
    crate::node::Node
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
    Applied(&'a K),
    Deleted(&'a K),
    /// A (re)list finished: handlers that keep derived state should resynchronise.
    Synced,
}

type Handler<K> = Box<dyn Fn(Change<'_, K>) + Send + Sync>;

/// An informer being assembled: handlers are added before it starts.
pub struct Informer<K: Cached> {
    api: Api<K::Wire>,
    handlers: Vec<Handler<K>>,
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
        }
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
    pub fn start(self) -> (Store<K>, tokio::task::JoinHandle<()>) {
        let (reader, writer) = reflector::store();
        let handlers: Arc<Vec<Handler<K>>> = Arc::new(self.handlers);
        // One unpaged list from the API server's watch cache (rv=0, no limit: pages would be
        // read from the store at the list's revision, which compaction may have removed), and
        // no managedFields in the cache: no loop reads them, and as typed trees they are the
        // largest part of a cached pod.
        let mut config = watcher::Config::default().any_semantic();
        config.page_size = None;
        let stream = reflector::reflector(
            writer,
            watcher::watcher(self.api, config)
                .default_backoff()
                .modify(|object| object.managed_fields_mut().clear())
                .map_ok(map_event::<K>),
        );
        let cache = reader.clone();
        let task = tokio::spawn(async move {
            futures::pin_mut!(stream);
            // What the cache held when the current relist began, and the keys listed so far.
            let mut before: Vec<Arc<K>> = Vec::new();
            let mut listed: Vec<ObjectRef<K>> = Vec::new();
            while let Some(event) = stream.next().await {
                let event = match event {
                    Ok(event) => event,
                    Err(error) => {
                        tracing::debug!(%error, "watch error; retrying");
                        continue;
                    }
                };
                match event {
                    Event::Apply(k) => dispatch(&handlers, Change::Applied(&k)),
                    Event::Delete(k) => dispatch(&handlers, Change::Deleted(&k)),
                    Event::Init => {
                        // The reflector keeps serving the old state until the list is done.
                        before = cache.state();
                        listed.clear();
                    }
                    Event::InitApply(k) => listed.push(ObjectRef::from_obj(&k)),
                    Event::InitDone => {
                        let present: HashSet<&ObjectRef<K>> = listed.iter().collect();
                        for old in std::mem::take(&mut before) {
                            if !present.contains(&ObjectRef::from_obj(&*old)) {
                                dispatch(&handlers, Change::Deleted(&old));
                            }
                        }
                        for key in listed.drain(..) {
                            // The cache now holds the list (the reflector swapped it in).
                            if let Some(k) = cache.get(&key) {
                                dispatch(&handlers, Change::Applied(&k));
                            }
                        }
                        dispatch(&handlers, Change::Synced);
                    }
                }
            }
        });
        (reader, task)
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
