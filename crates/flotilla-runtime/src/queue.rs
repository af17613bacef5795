//! A coalescing work queue of keys, in the manner of client-go's rate-limited queue:
//!
//! - a key is queued at most once; adding it again while queued is a no-op (or raises its lane);
//! - a key is handed to at most one worker at a time; adding it while a worker holds it marks it
//!   dirty, and [`WorkQueue::done`] queues it again, so no change is lost and none is processed
//!   twice concurrently;
//! - two lanes: [`Priority::High`] keys (user edits) are served before [`Priority::Low`] keys
//!   (the initial list after a restart), so a backlog never delays fresh changes;
//! - [`WorkQueue::add_after`] delays a key (the earliest requested time wins) and
//!   [`WorkQueue::add_rate_limited`] delays it by a per-key exponential backoff that
//!   [`WorkQueue::forget`] resets.
//!
//! Time is tokio's, so tests run on a paused clock. A queue made with [`WorkQueue::named`]
//! reports client-go's workqueue metrics ([`metrics`]).

pub mod metrics;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Which lane a key waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Priority {
    /// Served after every high-priority key (e.g. objects seen in an initial list).
    Low,
    /// Served first (e.g. changes made by users).
    #[default]
    High,
}

/// Per-key exponential backoff: `base * 2^(failures-1)`, capped at `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Backoff {
    /// controller-runtime's default per-item limiter (5 ms doubling to 1000 s).
    pub const CONTROLLER: Backoff = Backoff {
        base: Duration::from_millis(5),
        max: Duration::from_secs(1000),
    };

    /// The delay after `failures` consecutive failures (1 = first failure).
    pub fn delay(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(63);
        let factor = 1u64.checked_shl(exponent).unwrap_or(u64::MAX);
        let nanos = (self.base.as_nanos() as u64).saturating_mul(factor);
        Duration::from_nanos(nanos).min(self.max)
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::CONTROLLER
    }
}

/// A shared queue of keys; clones share the queue.
#[derive(Debug)]
pub struct WorkQueue<K> {
    shared: Arc<Shared<K>>,
}

impl<K> Clone for WorkQueue<K> {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

#[derive(Debug)]
struct Shared<K> {
    state: Mutex<State<K>>,
    notify: Notify,
    backoff: Backoff,
    /// The metrics of a named queue.
    meter: Option<metrics::Meter>,
}

impl<K: Send + 'static> metrics::InFlight for Shared<K> {
    fn labels(&self) -> &metrics::QueueLabels {
        &self
            .meter
            .as_ref()
            .expect("only named queues are tracked")
            .labels
    }

    fn in_flight(&self) -> (Duration, Duration) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        state
            .started
            .values()
            .map(|at| now.saturating_duration_since(*at))
            .fold((Duration::ZERO, Duration::ZERO), |(sum, longest), d| {
                (sum + d, longest.max(d))
            })
    }
}

#[derive(Debug)]
struct State<K> {
    high: VecDeque<K>,
    low: VecDeque<K>,
    /// Keys waiting in a lane, with the lane they count for.
    queued: HashMap<K, Priority>,
    processing: HashSet<K>,
    /// Keys added while a worker held them, with the lane to requeue them in.
    dirty: HashMap<K, Priority>,
    /// Delayed keys: ready time per key, and the same ordered by time.
    waiting: HashMap<K, (Instant, u64)>,
    timers: BTreeMap<(Instant, u64), (K, Priority)>,
    sequence: u64,
    failures: HashMap<K, u32>,
    shut_down: bool,
    /// Named queues only: when each queued key was added, when each key in flight was taken.
    added: HashMap<K, Instant>,
    started: HashMap<K, Instant>,
    metered: bool,
}

impl<K: Clone + Eq + Hash> Default for WorkQueue<K> {
    fn default() -> Self {
        Self::new(Backoff::default())
    }
}

impl<K: Clone + Eq + Hash + Send + 'static> WorkQueue<K> {
    /// A queue reporting the workqueue metrics as `name` (Karmada's controller name).
    pub fn named(name: &str) -> Self {
        Self::named_with(name, Backoff::default())
    }

    /// [`WorkQueue::named`] with another backoff.
    pub fn named_with(name: &str, backoff: Backoff) -> Self {
        let labels = metrics::QueueLabels {
            name: name.to_owned(),
            controller: name.to_owned(),
        };
        let queue = Self::build(backoff, Some(metrics::Meter::new(labels)));
        let shared: Arc<dyn metrics::InFlight> = queue.shared.clone();
        metrics::track(Arc::downgrade(&shared));
        queue
    }
}

impl<K: Clone + Eq + Hash> WorkQueue<K> {
    pub fn new(backoff: Backoff) -> Self {
        Self::build(backoff, None)
    }

    fn build(backoff: Backoff, meter: Option<metrics::Meter>) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    high: VecDeque::new(),
                    low: VecDeque::new(),
                    queued: HashMap::new(),
                    processing: HashSet::new(),
                    dirty: HashMap::new(),
                    waiting: HashMap::new(),
                    timers: BTreeMap::new(),
                    sequence: 0,
                    failures: HashMap::new(),
                    shut_down: false,
                    added: HashMap::new(),
                    started: HashMap::new(),
                    metered: meter.is_some(),
                }),
                notify: Notify::new(),
                backoff,
                meter,
            }),
        }
    }

    /// Records metrics of a named queue.
    fn meter(&self, record: impl FnOnce(&metrics::Meter)) {
        if let Some(meter) = &self.shared.meter {
            record(meter);
        }
    }

    fn set_depth(&self, depth: usize) {
        self.meter(|m| {
            m.depth.set(depth as i64);
        });
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        // A panic while holding the lock leaves only plain collections behind: keep going.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `key` in the high lane.
    pub fn add(&self, key: K) {
        self.add_with(key, Priority::High);
    }

    /// Queues `key` in the given lane (a queued key only ever moves up).
    pub fn add_with(&self, key: K, priority: Priority) {
        let mut state = self.lock();
        if state.shut_down {
            return;
        }
        let added = state.enqueue(key, priority);
        let depth = state.queued.len();
        drop(state);
        if added {
            self.meter(|m| {
                m.adds.inc();
            });
            self.set_depth(depth);
        }
        self.shared.notify.notify_one();
    }

    /// Queues `key` now and drops its pending [`WorkQueue::add_after`], for a key that waited
    /// only for what has now happened (a later, second run would find nothing new).
    pub fn add_instead_of_delayed(&self, key: K) {
        let mut state = self.lock();
        if state.shut_down {
            return;
        }
        if let Some(slot) = state.waiting.remove(&key) {
            state.timers.remove(&slot);
        }
        let added = state.enqueue(key, Priority::High);
        let depth = state.queued.len();
        drop(state);
        if added {
            self.meter(|m| {
                m.adds.inc();
            });
            self.set_depth(depth);
        }
        self.shared.notify.notify_one();
    }

    /// Queues `key` once `delay` has passed (sooner if it is added without delay meanwhile).
    pub fn add_after(&self, key: K, delay: Duration) {
        if delay.is_zero() {
            return self.add(key);
        }
        let mut state = self.lock();
        if state.shut_down {
            return;
        }
        let at = Instant::now() + delay;
        if let Some((existing, _)) = state.waiting.get(&key)
            && *existing <= at
        {
            return;
        }
        if let Some(old) = state.waiting.remove(&key) {
            state.timers.remove(&old);
        }
        state.sequence += 1;
        let slot = (at, state.sequence);
        state.waiting.insert(key.clone(), slot);
        state.timers.insert(slot, (key, Priority::High));
        drop(state);
        // A worker may be sleeping until a later timer.
        self.shared.notify.notify_one();
    }

    /// Queues `key` after its backoff; each call without [`WorkQueue::forget`] doubles it.
    pub fn add_rate_limited(&self, key: K) {
        let delay = {
            let mut state = self.lock();
            let failures = state.failures.entry(key.clone()).or_insert(0);
            *failures = failures.saturating_add(1);
            self.shared.backoff.delay(*failures)
        };
        self.meter(|m| {
            m.retries.inc();
        });
        self.add_after(key, delay);
    }

    /// Resets the backoff of `key` (call after it was processed successfully).
    pub fn forget(&self, key: &K) {
        self.lock().failures.remove(key);
    }

    /// How many times `key` was rate limited since it was last forgotten.
    pub fn failures(&self, key: &K) -> u32 {
        self.lock().failures.get(key).copied().unwrap_or(0)
    }

    /// Waits for the next key; `None` once the queue is shut down. The caller must call
    /// [`WorkQueue::done`] with the key when finished.
    pub async fn next(&self) -> Option<K> {
        loop {
            let notified = self.shared.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let deadline = {
                let mut state = self.lock();
                if state.shut_down {
                    return None;
                }
                let now = Instant::now();
                let promoted = state.promote_due(now);
                if let Some(key) = state.pop() {
                    let more = !state.high.is_empty() || !state.low.is_empty();
                    let waited = state.metered.then(|| {
                        let waited = state
                            .added
                            .remove(&key)
                            .map(|at| now.saturating_duration_since(at));
                        state.started.insert(key.clone(), now);
                        (waited, state.queued.len())
                    });
                    drop(state);
                    if let Some((waited, depth)) = waited {
                        self.meter(|m| {
                            if promoted > 0 {
                                m.adds.inc_by(promoted);
                            }
                            if let Some(waited) = waited {
                                m.queue_duration.observe(waited.as_secs_f64());
                            }
                        });
                        self.set_depth(depth);
                    }
                    if more {
                        // Let another idle worker pick up the rest.
                        self.shared.notify.notify_one();
                    }
                    return Some(key);
                }
                state.timers.keys().next().map(|(at, _)| *at)
            };
            match deadline {
                Some(at) => {
                    tokio::select! {
                        _ = &mut notified => {}
                        _ = tokio::time::sleep_until(at) => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Marks `key` finished; if it was added meanwhile it is queued again.
    pub fn done(&self, key: &K) {
        let mut state = self.lock();
        state.processing.remove(key);
        let worked = state
            .started
            .remove(key)
            .map(|at| Instant::now().saturating_duration_since(at));
        let requeued = match state.dirty.remove(key) {
            Some(priority) => state.enqueue(key.clone(), priority),
            None => false,
        };
        let depth = state.queued.len();
        drop(state);
        if let Some(worked) = worked {
            self.meter(|m| {
                m.work_duration.observe(worked.as_secs_f64());
                if requeued {
                    m.adds.inc();
                }
            });
            self.set_depth(depth);
        }
        if requeued {
            self.shared.notify.notify_one();
        }
    }

    /// Keys waiting in a lane (not delayed, not being processed).
    pub fn len(&self) -> usize {
        self.lock().queued.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys waiting for their delay to pass.
    pub fn delayed(&self) -> usize {
        self.lock().waiting.len()
    }

    /// Stops the queue: waiting workers get `None`, further adds are ignored.
    pub fn shut_down(&self) {
        self.lock().shut_down = true;
        self.shared.notify.notify_waiters();
    }
}

impl<K: Clone + Eq + Hash> State<K> {
    /// Puts `key` in a lane; true when it was not waiting in one (an add, for the metrics).
    fn enqueue(&mut self, key: K, priority: Priority) -> bool {
        if self.processing.contains(&key) {
            let entry = self.dirty.entry(key).or_insert(priority);
            *entry = (*entry).max(priority);
            return false;
        }
        match self.queued.get(&key).copied() {
            Some(current) if current >= priority => false,
            Some(_) => {
                // Raised to the high lane; the stale low entry is skipped when popped.
                self.queued.insert(key.clone(), priority);
                self.high.push_back(key);
                false
            }
            None => {
                if self.metered {
                    self.added.insert(key.clone(), Instant::now());
                }
                self.queued.insert(key.clone(), priority);
                match priority {
                    Priority::High => self.high.push_back(key),
                    Priority::Low => self.low.push_back(key),
                }
                true
            }
        }
    }

    /// Moves the keys whose delay passed into their lanes; returns how many were added.
    fn promote_due(&mut self, now: Instant) -> u64 {
        let mut added = 0;
        while let Some(entry) = self.timers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (key, priority) = entry.remove();
            self.waiting.remove(&key);
            if self.enqueue(key, priority) {
                added += 1;
            }
        }
        added
    }

    fn pop(&mut self) -> Option<K> {
        loop {
            let (key, lane) = if let Some(key) = self.high.pop_front() {
                (key, Priority::High)
            } else {
                (self.low.pop_front()?, Priority::Low)
            };
            // Skip entries left behind when a key moved lanes or was already served.
            if self.queued.get(&key) != Some(&lane) {
                continue;
            }
            self.queued.remove(&key);
            self.processing.insert(key.clone());
            return Some(key);
        }
    }
}

#[cfg(test)]
mod tests;
