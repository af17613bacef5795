//! Garbage collection of dependents through `ownerReferences` (what kube-controller-manager's
//! garbage collector does for kube-apiserver): objects whose owners are all gone are deleted,
//! owners deleted in the foreground wait for their blocking dependents, and owners deleted with
//! the orphan policy release their dependents first.
//!
//! One task follows the watch cache and keeps the [`graph`] (uid → object, owner uid →
//! dependents); workers take [`graph::Work`] from a deduplicating [`queue`] and act through the
//! [`Registry`], so finalizers and deletion take the same path as a client's request. The rules
//! of each decision are in [`lifted`].

mod actions;
pub mod graph;
pub mod lifted;
pub mod queue;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinSet;

use crate::error::ApiError;
use crate::registry::Registry;
use graph::{Graph, Work};
use queue::Queue;

/// Concurrent workers: deletions are store writes, which group commit batches.
const WORKERS: usize = 4;
/// The first retry delay of a failed item; doubled per failure up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(30);
/// Everything the API server stores is under this prefix.
const PREFIX: &[u8] = b"/registry/";

/// Why one piece of work failed (it is retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum GcError {
    #[error("cannot {step} {key}")]
    Write {
        step: &'static str,
        key: String,
        #[source]
        source: ApiError,
    },
    #[error("{key} kept changing under the collector")]
    Conflict { key: String },
    #[error("no served resource stores {key}")]
    UnknownResource { key: String },
}

/// Runs until dropped: follows the cache and collects garbage.
pub async fn run(registry: Registry) {
    let collector = Collector {
        registry,
        graph: Arc::new(Mutex::new(Graph::default())),
        queue: Arc::new(Queue::default()),
        failures: Arc::new(Mutex::new(HashMap::new())),
    };
    // Dropping this future (the API server stopping) aborts the workers with it.
    let mut workers = JoinSet::new();
    for _ in 0..WORKERS {
        workers.spawn(collector.clone().work());
    }
    collector.feed().await;
}

/// The state shared by the feeder and the workers.
#[derive(Debug, Clone)]
struct Collector {
    registry: Registry,
    graph: Arc<Mutex<Graph>>,
    queue: Arc<Queue<Work>>,
    /// Consecutive failures per item, for the retry backoff.
    failures: Arc<Mutex<HashMap<Work, u32>>>,
}

impl Collector {
    /// Keeps the graph current: the cache's objects first (the graph is rebuilt), then every
    /// change; a subscriber that falls behind starts over from a fresh snapshot.
    async fn feed(&self) {
        loop {
            let subscription = match self.registry.cache().subscribe(PREFIX, None) {
                Ok(subscription) => subscription,
                Err(too_old) => {
                    // Cannot happen without a starting revision; wait rather than spin.
                    tracing::warn!(?too_old, "garbage collector: cannot subscribe");
                    tokio::time::sleep(FIRST_RETRY).await;
                    continue;
                }
            };
            let work = {
                let mut graph = self.graph.lock();
                *graph = Graph::default();
                let mut work = BTreeSet::new();
                for change in &subscription.backlog {
                    work.extend(graph.observe(change));
                }
                tracing::debug!(objects = graph.len(), "garbage collector: graph built");
                work
            };
            self.queue.add_all(work);
            let mut live = subscription.live;
            loop {
                match live.recv().await {
                    // Objects the cache does not keep (Events) are not in the graph: its
                    // backlog never has them, so neither does the live feed.
                    Ok(change) if !self.registry.cache().is_cached(&change.object.key) => {}
                    Ok(change) => {
                        let work = self.graph.lock().observe(&change);
                        self.queue.add_all(work);
                    }
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "garbage collector fell behind; rebuilding");
                        break;
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        }
    }

    /// One worker: takes items until the task is aborted.
    async fn work(self) {
        loop {
            let item = self.queue.next().await;
            let result = self.process(&item).await;
            self.queue.done(&item);
            match result {
                Ok(()) => {
                    self.failures.lock().remove(&item);
                }
                Err(error) => {
                    let failures = {
                        let mut all = self.failures.lock();
                        let count = all.entry(item.clone()).or_insert(0);
                        *count = count.saturating_add(1);
                        *count
                    };
                    let delay = FIRST_RETRY
                        .saturating_mul(1 << failures.min(16))
                        .min(MAX_RETRY);
                    match &error {
                        GcError::Conflict { .. } => {
                            tracing::debug!(%error, ?item, "garbage collector: retrying")
                        }
                        _ => tracing::warn!(%error, ?item, ?delay, "garbage collector: retrying"),
                    }
                    self.queue.add_after(item, delay);
                }
            }
        }
    }

    async fn process(&self, item: &Work) -> Result<(), GcError> {
        match item {
            Work::Attempt(uid) => self.attempt(uid).await,
            Work::Orphan(uid) => self.orphan(uid).await,
        }
    }
}

#[cfg(test)]
mod tests;
