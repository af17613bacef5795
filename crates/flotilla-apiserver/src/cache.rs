//! The watch cache: every object of the store in memory, serialized once per revision, and a
//! window of recent events. One store watch feeds it; lists and watches of every resource are
//! served from it (a resource is a key prefix).
//!
//! Some prefixes are *uncached* (Events, as kube-apiserver's `DefaultWatchCacheSizes` gives
//! `events` no watch cache): their changes pass through the window and the live feed like any
//! other, but their current objects are not kept; lists and the initial state of watches read
//! them from the store ([`crate::registry::Registry::subscribe`]).

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{Event, EventKind, KeyRange, RangeRequest, Revision, Store, StoreError};
use futures::StreamExt;
use parking_lot::RwLock;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

mod cached;
mod served;

pub use cached::{CachedObject, Labels};

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

/// How many changes a watcher may lag behind the newest before it catches up from the window.
pub const DEFAULT_WATCH_BUFFER: usize = 4096;

/// The most object bytes the window of recent changes keeps by default (besides its count of
/// changes): the window holds superseded versions, which nothing else keeps in memory once the
/// store keeps its history on disk. 64 MiB is about 10–20 s of history in the heaviest burst
/// measured (10,000 Deployments over 100 clusters, ~2,500 writes/s) and hours at a steady
/// state; kube-apiserver starts each resource's watch cache at 100 changes
/// (`--default-watch-cache-size`) and grows it (up to 102,400) only while its oldest change is
/// younger than 75 s.
pub const DEFAULT_WINDOW_BYTES: usize = 64 * 1024 * 1024;

/// The cache, shared by all handlers.
#[derive(Debug)]
pub struct WatchCache {
    state: RwLock<State>,
    /// Key prefixes whose current objects are not kept (see the module's documentation).
    uncached: Vec<Bytes>,
    changes: broadcast::Sender<Arc<Change>>,
    revision: watch::Sender<Revision>,
}

#[derive(Debug)]
struct State {
    objects: BTreeMap<Bytes, Arc<CachedObject>>,
    /// The store revision the cache reflects.
    revision: Revision,
    /// Recent changes with when the cache applied them.
    window: VecDeque<(Instant, Arc<Change>)>,
    capacity: usize,
    /// Changes older than this leave the window even below `capacity`.
    max_age: Option<Duration>,
    /// Object bytes in the window, and the most it may hold.
    window_bytes: usize,
    max_window_bytes: usize,
    /// The window holds every change after this revision.
    window_start: Revision,
}

/// A consistent starting point for a watch: the current objects under a prefix and a feed of
/// every later change.
#[derive(Debug)]
pub struct Subscription {
    pub revision: Revision,
    /// The current objects under the prefix.
    pub backlog: Vec<Arc<Change>>,
    /// Every later change in the store, under the prefix or not (one broadcast for all
    /// subscribers): check `change.object.key` before decoding anything, as every write of the
    /// store passes here (Events, Works and bindings by the hundred thousand in a burst).
    pub live: broadcast::Receiver<Arc<Change>>,
}

impl WatchCache {
    /// An empty cache keeping `capacity` recent changes for watches that resume.
    pub fn new(capacity: usize) -> Arc<Self> {
        Self::with_buffer(capacity, DEFAULT_WATCH_BUFFER)
    }

    /// An empty cache keeping `capacity` recent changes, whose watchers may each be up to
    /// `buffer` changes (of any resource) behind the newest before they must catch up from
    /// the window of recent changes (see [`crate::server`]'s watch streams).
    pub fn with_buffer(capacity: usize, buffer: usize) -> Arc<Self> {
        Self::with_limits(capacity, buffer, DEFAULT_WINDOW_BYTES, None, Vec::new())
    }

    /// As [`WatchCache::with_buffer`], and the window also keeps at most `window_bytes` bytes
    /// of objects (the oldest changes go first) and no change older than `max_age`
    /// (kube-apiserver sizes its watch caches by time too): once a burst of writes is over, the
    /// superseded versions it held are freed instead of staying until `capacity` newer changes
    /// push them out. The current objects under the `uncached` prefixes are not kept.
    pub fn with_limits(
        capacity: usize,
        buffer: usize,
        window_bytes: usize,
        max_age: Option<Duration>,
        uncached: Vec<Bytes>,
    ) -> Arc<Self> {
        let (changes, _) = broadcast::channel(buffer.max(1));
        let (revision, _) = watch::channel(0);
        Arc::new(WatchCache {
            state: RwLock::new(State {
                objects: BTreeMap::new(),
                revision: 0,
                window: VecDeque::new(),
                capacity,
                max_age,
                window_bytes: 0,
                max_window_bytes: window_bytes,
                window_start: 0,
            }),
            uncached,
            changes,
            revision,
        })
    }

    /// How many current objects each group of keys holds, `group` naming a key's group (keys
    /// it names `None` are skipped); sorted by group.
    pub fn count_by_prefix(
        &self,
        group: impl Fn(&[u8]) -> Option<String>,
    ) -> BTreeMap<String, usize> {
        let state = self.state.read();
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        // Keys sort by resource: name the group once per run of keys that share it.
        let mut current: Option<(Vec<u8>, String)> = None;
        for key in state.objects.keys() {
            let key: &[u8] = key.as_ref();
            let name = match &current {
                Some((prefix, name)) if key.starts_with(prefix) => name.clone(),
                _ => {
                    let Some(name) = group(key) else {
                        continue;
                    };
                    // `/registry/<group>/<plural>/` is the run's prefix.
                    let prefix = key
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b == b'/')
                        .nth(3)
                        .map_or(key.to_vec(), |(i, _)| key[..=i].to_vec());
                    current = Some((prefix, name.clone()));
                    name
                }
            };
            *counts.entry(name).or_default() += 1;
        }
        counts
    }

    /// The store revision the cache reflects.
    pub fn revision(&self) -> Revision {
        self.state.read().revision
    }

    /// Whether the current object at `key` is kept (false under an uncached prefix).
    pub fn is_cached(&self, key: &[u8]) -> bool {
        !self.uncached.iter().any(|prefix| key.starts_with(prefix))
    }

    /// Whether the current objects under `prefix` are all uncached: lists and watches from the
    /// beginning must read them from the store.
    pub fn is_uncached_prefix(&self, prefix: &[u8]) -> bool {
        !self.is_cached(prefix)
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
                // The prefix's objects only, not a walk of every object.
                let range = KeyRange::prefix(Bytes::copy_from_slice(prefix));
                let upper = match range.end {
                    Some(end) => Bound::Excluded(end),
                    None => Bound::Unbounded,
                };
                let backlog = state
                    .objects
                    .range((Bound::Included(range.start), upper))
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
                    .map(|(_, change)| change)
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
        state.window_bytes = 0;
        state.window_start = revision;
        drop(state);
        self.revision.send_replace(revision);
    }

    /// Applies the events of one store revision.
    fn apply(&self, revision: Revision, events: Vec<Event>) {
        let now = Instant::now();
        let mut state = self.state.write();
        // Equal revisions happen when one transaction's events arrive one by one.
        if revision < state.revision {
            return;
        }
        for event in events {
            let key = event.kv.key.clone();
            if !self.is_cached(&key) {
                if let Some(change) = uncached_change(event, revision) {
                    let change = Arc::new(change);
                    state.window_bytes += change.object.json_len();
                    state.window.push_back((now, change.clone()));
                    let _ = self.changes.send(change);
                }
                continue;
            }
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
            state.window_bytes += change.object.json_len();
            state.window.push_back((now, change.clone()));
            let _ = self.changes.send(change);
        }
        let max_age = state.max_age;
        let expired = |at: Instant| max_age.is_some_and(|age| now.duration_since(at) > age);
        while let Some((at, oldest)) = state.window.front() {
            if state.window.len() <= state.capacity
                && state.window_bytes <= state.max_window_bytes
                && !expired(*at)
            {
                break;
            }
            let size = oldest.object.json_len();
            state.window_start = oldest.revision;
            state.window_bytes = state.window_bytes.saturating_sub(size);
            state.window.pop_front();
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
                if !self.is_cached(&kv.key) {
                    continue;
                }
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

/// The change a store event makes under an uncached prefix: the previous state comes from the
/// store's event (its `prev`), as a watch of etcd sees it, since the cache does not keep it.
fn uncached_change(event: Event, revision: Revision) -> Option<Change> {
    let key = event.kv.key;
    let prev = event.prev.as_ref().and_then(|kv| {
        CachedObject::from_stored(key.clone(), &kv.value, kv.mod_revision).map(Arc::new)
    });
    let (kind, object) = match event.kind {
        EventKind::Put => {
            let kind = if prev.is_some() {
                ChangeKind::Modified
            } else {
                ChangeKind::Added
            };
            (
                kind,
                CachedObject::from_stored(key, &event.kv.value, revision)?,
            )
        }
        // The last state, at the deleting revision.
        EventKind::Delete => (
            ChangeKind::Deleted,
            CachedObject::from_stored(key, &event.prev?.value, revision)?,
        ),
    };
    Some(Change {
        kind,
        revision,
        object: Arc::new(object),
        prev,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached(json: &str) -> CachedObject {
        CachedObject::from_stored(
            Bytes::from_static(b"/registry/core/namespaces/a"),
            &Bytes::copy_from_slice(json.as_bytes()),
            7,
        )
        .expect("a stored object")
    }

    #[test]
    fn a_namespace_is_terminating_once_it_has_a_deletion_timestamp() {
        let live = r#"{"kind":"Namespace","metadata":{"name":"a","uid":"u"},"spec":{}}"#;
        assert!(!cached(live).is_terminating());
        let null = r#"{"kind":"Namespace","metadata":{"name":"a","deletionTimestamp":null}}"#;
        assert!(!cached(null).is_terminating());
        let deleting = r#"{"kind":"Namespace","metadata":{"name":"a","deletionTimestamp":"2026-12-05T00:00:00Z","finalizers":["x"]},"status":{"phase":"Terminating"}}"#;
        assert!(cached(deleting).is_terminating());
        // Keys after metadata (or a timestamp nested deeper) do not count.
        let nested = r#"{"metadata":{"name":"a","annotations":{"deletionTimestamp":"x"}},"deletionTimestamp":"y"}"#;
        assert!(!cached(nested).is_terminating());
    }
}
