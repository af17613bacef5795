//! Work queues: a coalescing FIFO of keys (a key waiting once is never queued twice) and a timer
//! wheel that feeds keys into a queue when they fall due. One queue per controller, one timer
//! task per cluster component, no per-object timers.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Room a drained queue keeps for keys (more is given back).
const KEPT_CAPACITY: usize = 1024;

/// A coalescing FIFO of keys.
#[derive(Debug)]
pub struct Queue<T> {
    inner: Mutex<(VecDeque<T>, HashSet<T>)>,
    notify: Notify,
}

impl<T: Hash + Eq + Clone> Queue<T> {
    pub fn new() -> Arc<Self> {
        Arc::new(Queue {
            inner: Mutex::new((VecDeque::new(), HashSet::new())),
            notify: Notify::new(),
        })
    }

    /// Queues `key` unless it is already waiting.
    pub fn add(&self, key: T) {
        let mut inner = self.inner.lock();
        if inner.1.insert(key.clone()) {
            inner.0.push_back(key);
            drop(inner);
            self.notify.notify_one();
        }
    }

    /// The next key, waiting for one.
    pub async fn pop(&self) -> T {
        loop {
            let notified = self.notify.notified();
            if let Some(key) = self.try_pop() {
                return key;
            }
            notified.await;
        }
    }

    pub fn try_pop(&self) -> Option<T> {
        let mut inner = self.inner.lock();
        let key = inner.0.pop_front()?;
        inner.1.remove(&key);
        // A burst (20,000 pods) leaves room for all of it in both collections; give it back
        // once the queue has drained.
        if inner.0.is_empty() && inner.0.capacity() > KEPT_CAPACITY * 4 {
            inner.0.shrink_to(KEPT_CAPACITY);
            inner.1.shrink_to(KEPT_CAPACITY);
        }
        Some(key)
    }

    /// Room for keys (queue, set) kept now.
    pub fn capacity(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.0.capacity(), inner.1.capacity())
    }

    pub fn len(&self) -> usize {
        self.inner.lock().0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Keys due at instants; [`Timers::run`] moves each into a queue when its time comes.
#[derive(Debug)]
pub struct Timers<T> {
    heap: Mutex<BinaryHeap<Reverse<(Instant, u64, T)>>>,
    seq: Mutex<u64>,
    notify: Notify,
}

impl<T: Ord + Hash + Eq + Clone + Send + 'static> Timers<T> {
    pub fn new() -> Arc<Self> {
        Arc::new(Timers {
            heap: Mutex::new(BinaryHeap::new()),
            seq: Mutex::new(0),
            notify: Notify::new(),
        })
    }

    pub fn schedule(&self, at: Instant, key: T) {
        let seq = {
            let mut s = self.seq.lock();
            *s += 1;
            *s
        };
        self.heap.lock().push(Reverse((at, seq, key)));
        self.notify.notify_one();
    }

    /// Feeds due keys into `queue` forever.
    pub async fn run(self: Arc<Self>, queue: Arc<Queue<T>>) {
        loop {
            let notified = self.notify.notified();
            let next = {
                let mut heap = self.heap.lock();
                let now = Instant::now();
                while let Some(Reverse((at, _, _))) = heap.peek() {
                    if *at > now {
                        break;
                    }
                    let Reverse((_, _, key)) = heap.pop().expect("peeked");
                    queue.add(key);
                }
                heap.peek().map(|Reverse((at, _, _))| *at)
            };
            match next {
                Some(at) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = notified => {}
                    }
                }
                None => notified.await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn coalesces_waiting_keys_in_fifo_order() {
        let q = Queue::new();
        q.add("a");
        q.add("b");
        q.add("a");
        assert_eq!(q.len(), 2);
        assert_eq!(q.try_pop(), Some("a"));
        q.add("a");
        assert_eq!(q.try_pop(), Some("b"));
        assert_eq!(q.try_pop(), Some("a"));
        assert_eq!(q.try_pop(), None);
    }

    #[test]
    fn a_drained_queue_gives_back_the_room_of_a_burst() {
        let q = Queue::new();
        for i in 0..20_000u32 {
            q.add(i);
        }
        assert!(q.capacity().0 >= 20_000 && q.capacity().1 >= 20_000);
        for i in 0..20_000u32 {
            assert_eq!(q.try_pop(), Some(i));
        }
        let (queue, set) = q.capacity();
        assert!(
            queue <= 4 * KEPT_CAPACITY && set <= 4 * KEPT_CAPACITY,
            "kept {queue} / {set}"
        );
        // Still a working queue.
        q.add(7);
        assert_eq!(q.try_pop(), Some(7));
    }

    #[tokio::test(start_paused = true)]
    async fn timers_fire_in_time_order() {
        let timers = Timers::new();
        let q = Queue::new();
        tokio::spawn(timers.clone().run(q.clone()));
        let start = Instant::now();
        timers.schedule(start + Duration::from_secs(2), 2u32);
        timers.schedule(start + Duration::from_secs(1), 1u32);
        assert_eq!(q.pop().await, 1);
        assert_eq!(Instant::now() - start, Duration::from_secs(1));
        assert_eq!(q.pop().await, 2);
        assert_eq!(Instant::now() - start, Duration::from_secs(2));
    }
}
