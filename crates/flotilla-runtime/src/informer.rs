//! One watch and one cache per kind for every controller of a process: [`Informers`] hands out
//! a [`Shared`] informer per kind (and namespace scope); each watch event is decoded once,
//! applied once to the one [`Store`], then given by reference to every subscribed handler.
//!
//! A handler that subscribes after the watch listed gets the cache replayed first (`Init`, an
//! `InitApply` per cached object, `InitDone`), one that subscribes while a list is under way
//! gets the whole list replayed when it is done: either way it sees every object once before
//! the live events that follow, and every `Delete` after it subscribed.
//!
//! A list's `InitApply` events reach the handlers when the list is done, after the cache took
//! it: kube-runtime's store keeps a list aside until its `InitDone`, so a worker woken by an
//! `InitApply` of a re-list (a watch that fell out of the server's window, 410) would otherwise
//! read the cache from before the watch broke, and nothing would wake it again. Objects the
//! re-list no longer has are handed out as `Delete` then (client-go's informers do the same).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::{self, Debug};
use std::hash::Hash;
use std::sync::{Arc, Weak};

use futures::StreamExt as _;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::Api;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use kube::runtime::watcher;
use parking_lot::Mutex;
use tokio::task::JoinHandle;

/// A subscriber's event handler: the event after the shared cache applied it, by reference.
type Handler<K> = Box<dyn FnMut(watcher::Event<&K>) + Send>;

/// The shared informers of one process (or one leader term): one per kind and namespace scope,
/// each watch started when its informer is first asked for. Cheap to clone; the watches stop
/// when the last clone is dropped or on [`Informers::stop`].
#[derive(Clone)]
pub struct Informers(Arc<Registry>);

struct Registry {
    client: kube::Client,
    /// `Shared<K>` by (`K`, namespace), with its watch task.
    informers: Mutex<HashMap<(TypeId, Option<String>), Entry>>,
}

/// A `Shared<K>` (type-erased) and the task of its watch.
type Entry = (Box<dyn Any + Send + Sync>, JoinHandle<()>);

impl Informers {
    /// Informers watching through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self(Arc::new(Registry {
            client,
            informers: Mutex::new(HashMap::new()),
        }))
    }

    /// The informer of every `K` (all namespaces).
    pub fn all<K>(&self) -> Shared<K>
    where
        K: kube::Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
    {
        self.get(None, || Api::all(self.0.client.clone()))
    }

    /// The informer of the `K`s of `namespace`.
    pub fn namespaced<K>(&self, namespace: &str) -> Shared<K>
    where
        K: kube::Resource<Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
        K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
    {
        self.get(Some(namespace), || {
            Api::namespaced(self.0.client.clone(), namespace)
        })
    }

    fn get<K>(&self, namespace: Option<&str>, api: impl FnOnce() -> Api<K>) -> Shared<K>
    where
        K: kube::Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
    {
        let mut informers = self.0.informers.lock();
        let key = (TypeId::of::<K>(), namespace.map(str::to_owned));
        if let Some((shared, _)) = informers.get(&key)
            && let Some(shared) = shared.downcast_ref::<Shared<K>>()
        {
            return shared.clone();
        }
        let shared = Shared::<K>::new();
        let task = tokio::spawn(watch(api(), Arc::downgrade(&shared.0)));
        informers.insert(key, (Box::new(shared.clone()), task));
        shared
    }

    /// Stops every watch (their caches keep what they hold).
    pub fn stop(&self) {
        for (_, (_, task)) in self.0.informers.lock().drain() {
            task.abort();
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        for (_, task) in self.informers.get_mut().values() {
            task.abort();
        }
    }
}

impl Debug for Informers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Informers")
            .field("watches", &self.0.informers.lock().len())
            .finish_non_exhaustive()
    }
}

/// Watches `api` (re-listing with kube-runtime's default backoff) into `shared` until it is
/// gone. Watch errors are logged and retried.
async fn watch<K>(api: Api<K>, shared: Weak<Inner<K>>)
where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    // Cached objects go without `metadata.managedFields` (as Karmada's controller manager
    // strips them from its informers): no controller reads them, and they can be as large as
    // the rest of the object. An update sent from a cached copy leaves the stored entries as
    // they are.
    let stream = watcher::watcher(api, watcher::Config::default())
        .modify(|object: &mut K| object.meta_mut().managed_fields = None)
        .default_backoff();
    let mut stream = std::pin::pin!(stream);
    let kind = K::kind(&K::DynamicType::default()).into_owned();
    tracing::debug!(%kind, "shared watch started");
    while let Some(event) = stream.next().await {
        let Some(shared) = shared.upgrade() else {
            tracing::debug!(%kind, "shared watch ends: no informer left");
            return;
        };
        if let Ok(watcher::Event::InitDone) = &event {
            tracing::debug!(%kind, "shared watch listed");
        }
        match event {
            Ok(event) => shared.dispatch(&event),
            Err(error) => tracing::warn!(%error, %kind, "watch failed"),
        }
    }
}

/// One kind's shared cache and the handlers its events go to.
pub struct Shared<K: kube::Resource + Clone + 'static>(Arc<Inner<K>>)
where
    K::DynamicType: Eq + Hash + Clone;

struct Inner<K: kube::Resource + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    store: Store<K>,
    /// `true` from the first `InitDone` on. (The `Store`'s own readiness wakes only the last of
    /// several concurrent waiters: kube-runtime's `DelayedInit` sits on a oneshot receiver, which
    /// keeps one waker.)
    ready: tokio::sync::watch::Sender<bool>,
    state: Mutex<State<K>>,
}

struct State<K: kube::Resource + Clone + 'static>
where
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    handlers: Vec<(u64, Handler<K>)>,
    /// Subscribed while a list was under way: replayed the whole list at its `InitDone`.
    pending: Vec<(u64, Handler<K>)>,
    /// Between `Init` and `InitDone`.
    listing: bool,
    /// During a list: the objects listed so far, in the order listed (handed out at `InitDone`).
    listed: Vec<ObjectRef<K>>,
    /// During a list: what the cache held when it began (for the `Delete`s at `InitDone`).
    before: Vec<Arc<K>>,
    /// An `Init` was dispatched: a new handler missed events and needs a replay.
    started: bool,
    next_id: u64,
}

impl<K: kube::Resource + Clone + 'static> Clone for Shared<K>
where
    K::DynamicType: Eq + Hash + Clone,
{
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<K: kube::Resource + Clone + 'static> Debug for Shared<K>
where
    K::DynamicType: Eq + Hash + Clone + Default,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("kind", &K::kind(&K::DynamicType::default()))
            .finish_non_exhaustive()
    }
}

impl<K> Shared<K>
where
    K: kube::Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    /// An informer fed by [`Shared::dispatch`] (by the watch [`Informers`] starts, or a test).
    fn new() -> Self {
        let writer = Writer::new(K::DynamicType::default());
        Self(Arc::new(Inner {
            store: writer.as_reader(),
            ready: tokio::sync::watch::Sender::new(false),
            state: Mutex::new(State {
                writer,
                handlers: Vec::new(),
                pending: Vec::new(),
                listing: false,
                listed: Vec::new(),
                before: Vec::new(),
                started: false,
                next_id: 0,
            }),
        }))
    }

    /// The shared cache (filled once the first list is done). Wait for that with
    /// [`Shared::wait_until_ready`], not the `Store`'s own `wait_until_ready`, which wakes only
    /// one of several tasks waiting at once.
    pub fn store(&self) -> Store<K> {
        self.0.store.clone()
    }

    /// Resolves once the first list is done (at once if it is).
    pub async fn wait_until_ready(&self) {
        let mut ready = self.0.ready.subscribe();
        // The sender lives as long as `self`: `wait_for` cannot fail.
        let _ = ready.wait_for(|ready| *ready).await;
    }

    /// Hands every event, after the cache applied it, to `handler` until the returned
    /// [`Subscription`] is dropped; the objects already listed are replayed to it first. The
    /// handler runs on the watch's task, holding this informer's lock: it must not subscribe to
    /// this informer.
    pub fn subscribe(
        &self,
        handler: impl FnMut(watcher::Event<&K>) + Send + 'static,
    ) -> Subscription {
        let mut handler: Handler<K> = Box::new(handler);
        let mut state = self.0.state.lock();
        let id = state.next_id;
        state.next_id += 1;
        if state.listing {
            state.pending.push((id, handler));
        } else {
            if state.started {
                replay(&self.0.store, &mut handler);
            }
            state.handlers.push((id, handler));
        }
        let weak = Arc::downgrade(&self.0);
        Subscription(Some(Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                let mut state = inner.state.lock();
                state.handlers.retain(|(other, _)| *other != id);
                state.pending.retain(|(other, _)| *other != id);
            }
        })))
    }

    /// Applies `event` to the cache, then hands it to every handler (as the watch does).
    #[cfg(test)]
    fn dispatch(&self, event: &watcher::Event<K>) {
        self.0.dispatch(event);
    }
}

impl<K> Inner<K>
where
    K: kube::Resource + Clone + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    fn dispatch(&self, event: &watcher::Event<K>) {
        let mut state = self.state.lock();
        let state = &mut *state;
        if let watcher::Event::Init = event {
            state.before = self.store.state();
            state.listed.clear();
        }
        state.writer.apply_watcher_event(event);
        match event {
            watcher::Event::Init => {
                state.listing = true;
                state.started = true;
                for (_, handler) in &mut state.handlers {
                    handler(watcher::Event::Init);
                }
            }
            watcher::Event::InitApply(object) => {
                // Handed out at `InitDone`, once the cache holds the list.
                state.listed.push(ObjectRef::from_obj(object));
            }
            watcher::Event::InitDone => {
                state.listing = false;
                self.ready.send_replace(true);
                let listed = std::mem::take(&mut state.listed);
                let before = std::mem::take(&mut state.before);
                let gone: Vec<Arc<K>> = if before.is_empty() {
                    Vec::new()
                } else {
                    let present: std::collections::HashSet<&ObjectRef<K>> = listed.iter().collect();
                    before
                        .into_iter()
                        .filter(|o| !present.contains(&ObjectRef::from_obj(o.as_ref())))
                        .collect()
                };
                let objects: Vec<Arc<K>> =
                    listed.iter().filter_map(|r| self.store.get(r)).collect();
                for (_, handler) in &mut state.handlers {
                    for object in &gone {
                        handler(watcher::Event::Delete(object));
                    }
                    for object in &objects {
                        handler(watcher::Event::InitApply(object));
                    }
                    handler(watcher::Event::InitDone);
                }
            }
            watcher::Event::Apply(_) | watcher::Event::Delete(_) => {
                for (_, handler) in &mut state.handlers {
                    handler(borrow(event));
                }
            }
        }
        if !state.listing && !state.pending.is_empty() {
            for (id, mut handler) in std::mem::take(&mut state.pending) {
                replay(&self.store, &mut handler);
                state.handlers.push((id, handler));
            }
        }
    }
}

/// `Init`, an `InitApply` per object in `store`, `InitDone`.
fn replay<K>(store: &Store<K>, handler: &mut Handler<K>)
where
    K: kube::Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    handler(watcher::Event::Init);
    for object in store.state() {
        handler(watcher::Event::InitApply(&object));
    }
    handler(watcher::Event::InitDone);
}

fn borrow<K>(event: &watcher::Event<K>) -> watcher::Event<&K> {
    match event {
        watcher::Event::Apply(object) => watcher::Event::Apply(object),
        watcher::Event::Delete(object) => watcher::Event::Delete(object),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(object) => watcher::Event::InitApply(object),
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

/// A handler's subscription to a [`Shared`] informer: dropping it unsubscribes the handler.
#[must_use = "dropping a Subscription unsubscribes its handler"]
pub struct Subscription(Option<Box<dyn FnOnce() + Send + Sync>>);

impl Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription").finish_non_exhaustive()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(unsubscribe) = self.0.take() {
            unsubscribe();
        }
    }
}

#[cfg(test)]
mod tests;
