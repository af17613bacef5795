//! The run-loop scaffolding every controller repeats, in one place: subscriptions to the shared
//! informers ([`crate::informer`]) that hand each watch event to the controller after the cache
//! applied it, waiting for caches before work starts, workers draining a [`WorkQueue`] (forget
//! on success, per-key backoff on failure), and stopping every task together. A controller keeps its own state, event handlers and reconcile function.

use std::future::Future;
use std::hash::Hash;

use kube::runtime::watcher;
use tokio::task::JoinHandle;

use crate::{Shared, Shutdown, Subscription, WorkQueue};

/// A controller's tasks (watches, workers) and its subscriptions to shared informers; aborted
/// and dropped together by [`Tasks::abort`] or on drop.
#[derive(Debug, Default)]
pub struct Tasks {
    tasks: Vec<JoinHandle<()>>,
    subscriptions: Vec<Subscription>,
}

impl Tasks {
    pub fn new() -> Self {
        Self::default()
    }

    /// Spawns a task of the controller.
    pub fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push(tokio::spawn(task));
    }

    /// Hands every event of `shared`, after its cache applied it, to `on_event` until the
    /// tasks are aborted (see [`Shared::subscribe`]).
    pub fn subscribe<K>(
        &mut self,
        shared: &Shared<K>,
        on_event: impl FnMut(watcher::Event<&K>) + Send + 'static,
    ) where
        K: kube::Resource + Clone + Send + Sync + 'static,
        K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
    {
        self.subscriptions.push(shared.subscribe(on_event));
    }

    /// Spawns `count` workers over `queue`: each takes a key, runs `reconcile` on it, forgets
    /// its failures on success, or reports the error to `on_error` and re-queues the key after
    /// its backoff; a key is marked done either way. Workers end when the queue shuts down.
    pub fn workers<K, E, F, Fut>(
        &mut self,
        queue: &WorkQueue<K>,
        count: usize,
        reconcile: F,
        on_error: fn(&K, &E),
    ) where
        K: Clone + Eq + Hash + Send + Sync + 'static,
        E: Send + 'static,
        F: Fn(K) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
    {
        for _ in 0..count {
            let queue = queue.clone();
            let reconcile = reconcile.clone();
            self.spawn(async move {
                while let Some(key) = queue.next().await {
                    match reconcile(key.clone()).await {
                        Ok(()) => queue.forget(&key),
                        Err(error) => {
                            on_error(&key, &error);
                            queue.add_rate_limited(key.clone());
                        }
                    }
                    queue.done(&key);
                }
            });
        }
    }

    /// Aborts every task.
    pub fn abort(self) {
        drop(self);
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.subscriptions.clear();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Waits until `ready` resolves (the caches listed); `false` when `shutdown` came first.
pub async fn until_ready(shutdown: &Shutdown, ready: impl Future) -> bool {
    tokio::select! {
        _ = ready => true,
        _ = shutdown.cancelled() => false,
    }
}

#[cfg(test)]
mod tests;
