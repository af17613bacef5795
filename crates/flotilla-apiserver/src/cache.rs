//! The watch cache: every object of the store in memory, serialized once per revision, and a
//! window of recent events. One store watch feeds it; lists and watches of every resource are
//! served from it (a resource is a key prefix).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{Event, EventKind, KeyRange, RangeRequest, Revision, Store, StoreError};
use futures::StreamExt;
use parking_lot::RwLock;
use tokio::sync::{broadcast, watch};

use crate::object;

/// One object as served: its JSON with `resourceVersion` set, and what filters look at.
#[derive(Debug)]
pub struct CachedObject {
    pub key: Bytes,
    pub json: Bytes,
    pub revision: Revision,
    pub labels: BTreeMap<String, String>,
}

impl CachedObject {
    /// Builds the served form of stored bytes at `revision`.
    pub fn from_stored(key: Bytes, bytes: &[u8], revision: Revision) -> Option<Self> {
        let value = match object::decode_at(bytes, revision) {
            Ok(value) => value,
            Err(error) => {
                tracing::error!(key = %String::from_utf8_lossy(&key), %error, "skipping undecodable object");
                return None;
            }
        };
        let labels = object::labels(&value);
        let json = serde_json::to_vec(&value).ok()?.into();
        Some(CachedObject {
            key,
            json,
            revision,
            labels,
        })
    }

    pub fn value(&self) -> serde_json::Value {
        serde_json::from_slice(&self.json).expect("cached JSON was serialized by us")
    }
}

/// Whether a change created, changed or removed an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One change, shared by every watcher.
#[derive(Debug)]
pub struct Change {
    pub kind: ChangeKind,
    pub revision: Revision,
    /// The object after the change; for a deletion, the last state with the deleting revision.
    pub object: Arc<CachedObject>,
    /// The object before the change (`None` for an addition).
    pub prev: Option<Arc<CachedObject>>,
}

/// How the cache answers a watch that starts too far back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooOld {
    pub requested: Revision,
    pub oldest: Revision,
}

/// The cache, shared by all handlers.
#[derive(Debug)]
pub struct WatchCache {
    state: RwLock<State>,
    changes: broadcast::Sender<Arc<Change>>,
    revision: watch::Sender<Revision>,
}

#[derive(Debug)]
struct State {
    objects: BTreeMap<Bytes, Arc<CachedObject>>,
    /// The store revision the cache reflects.
    revision: Revision,
    window: VecDeque<Arc<Change>>,
    capacity: usize,
    /// The window holds every change after this revision.
    window_start: Revision,
}

/// A consistent starting point for a watch: the current objects under a prefix and a feed of
/// every later change.
#[derive(Debug)]
pub struct Subscription {
    pub revision: Revision,
    pub backlog: Vec<Arc<Change>>,
    pub live: broadcast::Receiver<Arc<Change>>,
}

impl WatchCache {
    /// An empty cache keeping `capacity` recent changes for watches that resume.
    pub fn new(capacity: usize) -> Arc<Self> {
        let (changes, _) = broadcast::channel(4096);
        let (revision, _) = watch::channel(0);
        Arc::new(WatchCache {
            state: RwLock::new(State {
                objects: BTreeMap::new(),
                revision: 0,
                window: VecDeque::new(),
                capacity,
                window_start: 0,
            }),
            changes,
            revision,
        })
    }

    /// The store revision the cache reflects.
    pub fn revision(&self) -> Revision {
        self.state.read().revision
    }

    /// Waits until the cache reflects at least `revision`; false on timeout.
    pub async fn wait_for(&self, revision: Revision, timeout: Duration) -> bool {
        let mut receiver = self.revision.subscribe();
        let result = tokio::time::timeout(timeout, receiver.wait_for(|r| *r >= revision)).await;
        matches!(result, Ok(Ok(_)))
    }

    /// Current objects under `prefix` starting at `start` (inclusive), in key order, and the
    /// revision they are at.
    pub fn list(&self, prefix: &[u8], start: Option<&[u8]>) -> (Vec<Arc<CachedObject>>, Revision) {
        let state = self.state.read();
        let range = KeyRange::prefix(Bytes::copy_from_slice(prefix));
        let lower = Bound::Included(Bytes::copy_from_slice(start.unwrap_or(prefix)));
        let upper = match range.end {
            Some(end) => Bound::Excluded(end),
            None => Bound::Unbounded,
        };
        let objects = state
            .objects
            .range((lower, upper))
            .map(|(_, object)| object.clone())
            .collect();
        (objects, state.revision)
    }

    /// One object, if present.
    pub fn get(&self, key: &[u8]) -> Option<Arc<CachedObject>> {
        self.state.read().objects.get(key).cloned()
    }

    /// Subscribes to changes after `after` (`None`: after the current revision, with the
    /// current objects under `prefix` returned as the backlog of additions).
    pub fn subscribe(
        &self,
        prefix: &[u8],
        after: Option<Revision>,
    ) -> Result<Subscription, TooOld> {
        // The read lock excludes the feeder, so nothing is published between the snapshot and
        // the subscription.
        let state = self.state.read();
        let live = self.changes.subscribe();
        match after {
            None => {
                let range = KeyRange::prefix(Bytes::copy_from_slice(prefix));
                let backlog = state
                    .objects
                    .iter()
                    .filter(|(key, _)| range.contains(key))
                    .map(|(_, object)| {
                        Arc::new(Change {
                            kind: ChangeKind::Added,
                            revision: object.revision,
                            object: object.clone(),
                            prev: None,
                        })
                    })
                    .collect();
                Ok(Subscription {
                    revision: state.revision,
                    backlog,
                    live,
                })
            }
            Some(after) if after < state.window_start && after < state.revision => Err(TooOld {
                requested: after,
                oldest: state.window_start,
            }),
            Some(after) => {
                let backlog = state
                    .window
                    .iter()
                    .filter(|change| {
                        change.revision > after && change.object.key.starts_with(prefix)
                    })
                    .cloned()
                    .collect();
                Ok(Subscription {
                    revision: state.revision.max(after),
                    backlog,
                    live,
                })
            }
        }
    }

    /// Replaces the whole content with a fresh list at `revision` (start-up, or after the
    /// store watch was lost beyond recovery). The window restarts at `revision`.
    fn reset(&self, objects: BTreeMap<Bytes, Arc<CachedObject>>, revision: Revision) {
        let mut state = self.state.write();
        state.objects = objects;
        state.revision = revision;
        state.window.clear();
        state.window_start = revision;
        drop(state);
        self.revision.send_replace(revision);
    }

    /// Applies the events of one store revision.
    fn apply(&self, revision: Revision, events: Vec<Event>) {
        let mut state = self.state.write();
        // Equal revisions happen when one transaction's events arrive one by one.
        if revision < state.revision {
            return;
        }
        for event in events {
            let key = event.kv.key.clone();
            let change = match event.kind {
                EventKind::Put => {
                    let Some(object) =
                        CachedObject::from_stored(key.clone(), &event.kv.value, revision)
                    else {
                        continue;
                    };
                    let object = Arc::new(object);
                    let prev = state.objects.insert(key, object.clone());
                    Change {
                        kind: if prev.is_some() {
                            ChangeKind::Modified
                        } else {
                            ChangeKind::Added
                        },
                        revision,
                        object,
                        prev,
                    }
                }
                EventKind::Delete => {
                    let Some(prev) = state.objects.remove(&key) else {
                        continue;
                    };
                    let stored = event.prev.as_ref().map(|kv| kv.value.clone());
                    let Some(last) =
                        stored.and_then(|bytes| CachedObject::from_stored(key, &bytes, revision))
                    else {
                        continue;
                    };
                    Change {
                        kind: ChangeKind::Deleted,
                        revision,
                        object: Arc::new(last),
                        prev: Some(prev),
                    }
                }
            };
            let change = Arc::new(change);
            state.window.push_back(change.clone());
            let _ = self.changes.send(change);
        }
        while state.window.len() > state.capacity {
            if let Some(dropped) = state.window.pop_front() {
                state.window_start = dropped.revision;
            }
        }
        state.revision = revision;
        drop(state);
        self.revision.send_replace(revision);
    }

    /// Feeds the cache from `store` until the task is dropped: list everything, then watch
    /// from the list's revision; relist when the watch falls below the store's history.
    pub async fn run(self: Arc<Self>, store: Arc<dyn Store>) {
        let mut backoff = Duration::from_millis(100);
        loop {
            let revision = match self.relist(&*store).await {
                Ok(revision) => revision,
                Err(error) => {
                    tracing::warn!(%error, "watch cache: initial list failed, retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    continue;
                }
            };
            backoff = Duration::from_millis(100);
            let mut from = revision;
            loop {
                match self.follow(&*store, from).await {
                    Ok(()) => return,
                    Err((error, last)) => {
                        from = last;
                        if matches!(error, StoreError::Compacted { .. }) {
                            tracing::warn!(%error, "watch cache: history lost, relisting");
                            break;
                        }
                        tracing::warn!(%error, "watch cache: store watch failed, resuming");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(Duration::from_secs(5));
                    }
                }
            }
        }
    }

    async fn relist(&self, store: &dyn Store) -> Result<Revision, StoreError> {
        let mut request = RangeRequest::new(KeyRange::all()).with_limit(10_000);
        let mut objects = BTreeMap::new();
        let revision = loop {
            let response = store.range(request.clone()).await?;
            for kv in &response.kvs {
                if let Some(object) =
                    CachedObject::from_stored(kv.key.clone(), &kv.value, kv.mod_revision)
                {
                    objects.insert(kv.key.clone(), Arc::new(object));
                }
            }
            match response.next_page(&request) {
                Some(next) => request = next,
                None => break response.revision,
            }
        };
        self.reset(objects, revision);
        Ok(revision)
    }

    /// Follows the store from `from`; returns the error and the last applied revision when the
    /// watch breaks.
    async fn follow(
        &self,
        store: &dyn Store,
        from: Revision,
    ) -> Result<(), (StoreError, Revision)> {
        let mut stream = store
            .watch(KeyRange::all(), from)
            .await
            .map_err(|e| (e, from))?;
        let mut last = from;
        loop {
            match stream.next().await {
                Some(Ok(event)) => {
                    last = event.revision();
                    self.apply(last, vec![event]);
                }
                Some(Err(error)) => return Err((error, last)),
                None => {
                    let error = StoreError::Unavailable {
                        message: "store watch ended".into(),
                        source: None,
                    };
                    return Err((error, last));
                }
            }
        }
    }
}
