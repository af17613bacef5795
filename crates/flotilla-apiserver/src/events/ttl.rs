//! Event expiry: kube-apiserver's `--event-ttl` (default one hour). kube-apiserver stores every
//! Event with an etcd lease of that length, renewed on each write, so Events go away on their
//! own; without it a long-running control plane keeps every Event ever recorded, in the store
//! and in the watch cache.
//!
//! One task follows the watch cache's Events and keeps an [`Index`] ordered by expiry (no scan
//! of the objects: each change costs a small parse of the Event's timestamps and two map
//! updates); once a second the Events that are due are deleted straight from the store, up to
//! [`BATCH`] per transaction, each only if it is still at the revision that was judged (an
//! Event written again meanwhile is judged again). As with a lease running out, finalizers are
//! not consulted and watchers see a `DELETED`.
//!
//! When an Event was last written is taken from the Event itself: the latest of
//! `metadata.creationTimestamp` (set by this server when it creates the Event), `lastTimestamp`,
//! `eventTime` and `series.lastObservedTime` (set by the recorders as they create the Event and
//! each time they count it again), but never later than when this server saw the write (a
//! recorder's clock running ahead does not keep an Event longer). Unlike a lease, a write that
//! moves none of these times (a label patch, say) does not extend the Event's life; in exchange
//! the expiry survives restarts and needs nothing stored besides the Event.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{Compare, CompareOp, Op, Revision, StoreError, Txn};
use jiff::{SignedDuration, Timestamp};
use tokio::sync::broadcast::error::RecvError;

use crate::cache::{Change, ChangeKind};
use crate::registry::Registry;

/// kube-apiserver's default `--event-ttl`.
pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);

/// The most Events one store transaction deletes (etcd refuses transactions of more than 128
/// operations by default).
pub const BATCH: usize = 100;

/// How often due Events are looked for (a look is one comparison when none is due).
const TICK: Duration = Duration::from_secs(1);

/// The Events of a store by when they expire.
#[derive(Debug, Default)]
pub struct Index {
    /// Each Event's revision when judged and when it expires.
    events: HashMap<Bytes, (Revision, Timestamp)>,
    /// The same Events in expiry order (then key order).
    queue: BTreeSet<(Timestamp, Bytes)>,
}

impl Index {
    /// Notes one change of an Event seen at `now` (the clock of the server).
    pub fn observe(&mut self, change: &Change, ttl: SignedDuration, now: Timestamp) {
        let key = &change.object.key;
        if change.kind == ChangeKind::Deleted {
            self.remove(key);
            return;
        }
        let written = last_written(&change.object.raw()).map_or(now, |at| at.min(now));
        match written.checked_add(ttl) {
            Ok(expires) => self.put(key.clone(), change.revision, expires),
            // Beyond the calendar: never.
            Err(_) => self.remove(key),
        }
    }

    fn put(&mut self, key: Bytes, revision: Revision, expires: Timestamp) {
        if let Some((_, before)) = self.events.insert(key.clone(), (revision, expires)) {
            self.queue.remove(&(before, key.clone()));
        }
        self.queue.insert((expires, key));
    }

    fn remove(&mut self, key: &Bytes) {
        if let Some((_, at)) = self.events.remove(key) {
            self.queue.remove(&(at, key.clone()));
        }
    }

    /// Takes up to `limit` Events due at `now`, earliest first, with their revisions. They
    /// stay known (a later change or deletion of them is still noted) but are not offered
    /// again unless [`Index::retry`] puts them back.
    pub fn take_due(&mut self, now: Timestamp, limit: usize) -> Vec<(Bytes, Revision)> {
        let mut due = Vec::new();
        while due.len() < limit {
            let Some((expires, _)) = self.queue.first() else {
                break;
            };
            if *expires > now {
                break;
            }
            let Some((_, key)) = self.queue.pop_first() else {
                break;
            };
            if let Some((revision, _)) = self.events.get(&key) {
                due.push((key, *revision));
            }
        }
        due
    }

    /// Offers again an Event whose deletion failed, unless it changed since it was taken.
    pub fn retry(&mut self, key: Bytes, revision: Revision) {
        if let Some((known, expires)) = self.events.get(&key)
            && *known == revision
        {
            self.queue.insert((*expires, key));
        }
    }

    /// How many Events are known.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// The latest of an Event's write times (see the module documentation); `None` when it has
/// none that parses.
pub fn last_written(json: &[u8]) -> Option<Timestamp> {
    #[derive(serde::Deserialize)]
    struct Event {
        #[serde(default)]
        metadata: Metadata,
        #[serde(rename = "lastTimestamp")]
        last_timestamp: Option<String>,
        #[serde(rename = "eventTime")]
        event_time: Option<String>,
        series: Option<Series>,
    }
    #[derive(Default, serde::Deserialize)]
    struct Metadata {
        #[serde(rename = "creationTimestamp")]
        creation_timestamp: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Series {
        #[serde(rename = "lastObservedTime")]
        last_observed_time: Option<String>,
    }
    let event: Event = serde_json::from_slice(json).ok()?;
    [
        event.metadata.creation_timestamp,
        event.last_timestamp,
        event.event_time,
        event.series.and_then(|s| s.last_observed_time),
    ]
    .into_iter()
    .flatten()
    .filter_map(|text| text.parse::<Timestamp>().ok())
    .max()
}

/// Runs until dropped: deletes Events `ttl` after they were last written.
pub async fn run(registry: Registry, ttl: Duration) {
    let Ok(ttl) = SignedDuration::try_from(ttl) else {
        tracing::warn!(?ttl, "event TTL out of range: Events are kept");
        return;
    };
    let prefix = Bytes::from_static(super::STORAGE_PREFIX.as_bytes());
    let index = parking_lot::Mutex::new(Index::default());
    tokio::join!(
        follow(&registry, &prefix, &index, ttl),
        sweep(&registry, &index)
    );
}

/// Keeps the index current from the watch cache; a subscriber that falls behind starts over
/// from the cache's current Events.
async fn follow(
    registry: &Registry,
    prefix: &Bytes,
    index: &parking_lot::Mutex<Index>,
    ttl: SignedDuration,
) {
    loop {
        // Events are not in the watch cache: their current state is read from the store.
        let subscription = match registry.subscribe(super::STORAGE_PREFIX, None).await {
            Ok(Ok(subscription)) => subscription,
            Ok(Err(too_old)) => {
                tracing::warn!(?too_old, "event expiry: cannot subscribe");
                tokio::time::sleep(TICK).await;
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "event expiry: cannot list Events");
                tokio::time::sleep(TICK).await;
                continue;
            }
        };
        {
            let now = registry.clock.now();
            let mut index = index.lock();
            *index = Index::default();
            for change in &subscription.backlog {
                index.observe(change, ttl, now);
            }
            tracing::debug!(events = index.len(), "event expiry: following");
        }
        let mut live = subscription.live;
        loop {
            match live.recv().await {
                Ok(change) if change.object.key.starts_with(prefix) => {
                    let now = registry.clock.now();
                    index.lock().observe(&change, ttl, now);
                }
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "event expiry fell behind; starting over");
                    break;
                }
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// Deletes due Events once a [`TICK`], [`BATCH`] per transaction.
async fn sweep(registry: &Registry, index: &parking_lot::Mutex<Index>) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        loop {
            let now = registry.clock.now();
            let due = index.lock().take_due(now, BATCH);
            if due.is_empty() {
                break;
            }
            let failed = delete(registry, &due).await;
            if !failed.is_empty() {
                let mut index = index.lock();
                for (key, revision) in failed {
                    index.retry(key, revision);
                }
                // The store is failing: try again at the next tick.
                break;
            }
        }
    }
}

/// Deletes `due` (each only at its revision) in one transaction, or one by one when some
/// changed meanwhile. Returns those to try again (the store failed); changed or already deleted
/// ones are not (their change is noted by [`follow`]).
async fn delete(registry: &Registry, due: &[(Bytes, Revision)]) -> Vec<(Bytes, Revision)> {
    let txn =
        Txn::new()
            .when(due.iter().map(|(key, revision)| {
                Compare::mod_revision(key.clone(), CompareOp::Equal, *revision)
            }))
            .and_then(due.iter().map(|(key, _)| Op::delete(key.clone())));
    match registry.store.txn(txn).await {
        Ok(response) if response.succeeded => {
            tracing::debug!(deleted = due.len(), "expired Events deleted");
            return Vec::new();
        }
        Ok(_) => {}
        Err(error) => {
            tracing::warn!(%error, "event expiry: cannot delete expired Events");
            return due.to_vec();
        }
    }
    let results = futures::future::join_all(
        due.iter()
            .map(|(key, revision)| registry.store.delete(key.clone(), Some(*revision))),
    )
    .await;
    let mut failed = Vec::new();
    for ((key, revision), result) in due.iter().zip(results) {
        match result {
            Ok(_) | Err(StoreError::Conflict { .. } | StoreError::NotFound { .. }) => {}
            Err(error) => {
                tracing::warn!(%error, "event expiry: cannot delete an expired Event");
                failed.push((key.clone(), *revision));
            }
        }
    }
    failed
}

#[cfg(test)]
mod tests;
