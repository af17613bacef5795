//! A deduplicating work queue in client-go's workqueue model: an item waiting is queued once,
//! and an item added while a worker holds it runs again after that worker is done (never twice
//! at the same time).

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;

#[derive(Debug)]
pub struct Queue<T> {
    state: Mutex<State<T>>,
    notify: Notify,
}

#[derive(Debug)]
struct State<T> {
    ready: VecDeque<T>,
    /// Queued and not yet taken (includes items held back until their worker is done).
    dirty: HashSet<T>,
    processing: HashSet<T>,
}

impl<T: Clone + Eq + Hash> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            state: Mutex::new(State {
                ready: VecDeque::new(),
                dirty: HashSet::new(),
                processing: HashSet::new(),
            }),
            notify: Notify::new(),
        }
    }
}

impl<T: Clone + Eq + Hash + Send + Sync + 'static> Queue<T> {
    pub fn add(&self, item: T) {
        let mut state = self.state.lock();
        if !state.dirty.insert(item.clone()) || state.processing.contains(&item) {
            return;
        }
        state.ready.push_back(item);
        drop(state);
        self.notify.notify_one();
    }

    pub fn add_all(&self, items: impl IntoIterator<Item = T>) {
        for item in items {
            self.add(item);
        }
    }

    /// Adds `item` after `delay` (a retry).
    pub fn add_after(self: &Arc<Self>, item: T, delay: Duration) {
        let queue = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Some(queue) = queue.upgrade() {
                queue.add(item);
            }
        });
    }

    /// Waits for the next item; the caller must call [`Queue::done`] with it.
    pub async fn next(&self) -> T {
        loop {
            {
                let mut state = self.state.lock();
                if let Some(item) = state.ready.pop_front() {
                    state.dirty.remove(&item);
                    state.processing.insert(item.clone());
                    return item;
                }
            }
            // A permit stored by `add` between the check and here wakes this at once.
            self.notify.notified().await;
        }
    }

    pub fn done(&self, item: &T) {
        let mut state = self.state.lock();
        state.processing.remove(item);
        if state.dirty.contains(item) {
            state.ready.push_back(item.clone());
            drop(state);
            self.notify.notify_one();
        }
    }
}
