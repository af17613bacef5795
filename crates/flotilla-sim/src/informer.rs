//! Shared informers: one watch per resource per cluster (kube-runtime's watcher and reflector),
//! a cache every component reads, and handlers that turn changes into queue keys. Components of
//! one simulated cluster share them, as kube-controller-manager's controllers share informers.

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event};
use serde::de::DeserializeOwned;

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
pub struct Informer<K: Resource + 'static> {
    api: Api<K>,
    handlers: Vec<Handler<K>>,
}

impl<K: Resource> Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("handlers", &self.handlers.len())
            .finish()
    }
}

impl<K> Informer<K>
where
    K: Resource + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    pub fn new(api: Api<K>) -> Self {
        Informer {
            api,
            handlers: Vec::new(),
        }
    }

    pub fn on(&mut self, handler: impl Fn(Change<'_, K>) + Send + Sync + 'static) {
        self.handlers.push(Box::new(handler));
    }

    /// Starts watching; returns the cache and the task.
    pub fn start(self) -> (Store<K>, tokio::task::JoinHandle<()>) {
        let (reader, writer) = reflector::store();
        let handlers: Arc<Vec<Handler<K>>> = Arc::new(self.handlers);
        let stream = reflector::reflector(
            writer,
            watcher::watcher(self.api, watcher::Config::default().any_semantic()).default_backoff(),
        );
        let task = tokio::spawn(async move {
            futures::pin_mut!(stream);
            while let Some(event) = stream.next().await {
                let event = match event {
                    Ok(event) => event,
                    Err(error) => {
                        tracing::debug!(%error, "watch error; retrying");
                        continue;
                    }
                };
                for handler in handlers.iter() {
                    match &event {
                        Event::Apply(k) | Event::InitApply(k) => handler(Change::Applied(k)),
                        Event::Delete(k) => handler(Change::Deleted(k)),
                        Event::InitDone => handler(Change::Synced),
                        Event::Init => {}
                    }
                }
            }
        });
        (reader, task)
    }
}
