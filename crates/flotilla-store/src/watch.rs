//! Watch fan-out for embedded backends: the committing writer publishes each revision's events
//! once (shared, not cloned per watcher); a watcher that starts at an old revision or falls
//! behind catches up from the backend's change log, then follows the live feed without a gap or
//! a duplicate.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::broadcast;

use crate::{Event, KeyRange, Revision, StoreError, WatchStream};

/// The events of one revision (one write transaction), shared by every watcher.
#[derive(Debug, Clone)]
pub struct Batch {
    pub revision: Revision,
    pub events: Arc<[Event]>,
}

/// A backend's durable record of past changes, read by watchers that must catch up.
pub trait EventLog: Send + Sync + 'static {
    /// Up to `max` batches with revisions greater than `after`, in revision order. Fails with
    /// [`StoreError::Compacted`] when revision `after + 1` is no longer in the log.
    fn read_after(&self, after: Revision, max: usize) -> Result<Vec<Batch>, StoreError>;
}

/// Publishes committed batches to watchers. Backends must publish batches in revision order,
/// after they are visible to [`EventLog::read_after`].
#[derive(Debug, Clone)]
pub struct WatchHub {
    sender: broadcast::Sender<Batch>,
}

/// How many batches a catch-up reads from the log at a time.
const CATCH_UP_CHUNK: usize = 1024;

impl WatchHub {
    /// A hub whose live feed buffers `capacity` revisions; a watcher further behind catches up
    /// from the log.
    pub fn new(capacity: usize) -> Self {
        let (sender, _) = broadcast::channel(capacity.max(1));
        WatchHub { sender }
    }

    /// Publishes one committed revision.
    pub fn publish(&self, batch: Batch) {
        // No receivers is fine: nobody is watching.
        let _ = self.sender.send(batch);
    }

    /// How many watchers are subscribed.
    pub fn watchers(&self) -> usize {
        self.sender.receiver_count()
    }

    /// A watch of `range` for revisions after `after`. The caller has checked that `after` is
    /// not in the future.
    pub fn watch(&self, log: Arc<dyn EventLog>, range: KeyRange, after: Revision) -> WatchStream {
        // Subscribe before the first catch-up read, so nothing committed in between is missed.
        let state = Watcher {
            receiver: self.sender.subscribe(),
            log,
            range,
            last: after,
            pending: VecDeque::new(),
            catching_up: true,
            finished: false,
        };
        Box::pin(futures::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        }))
    }
}

struct Watcher {
    receiver: broadcast::Receiver<Batch>,
    log: Arc<dyn EventLog>,
    range: KeyRange,
    /// The last revision delivered or skipped.
    last: Revision,
    pending: VecDeque<Event>,
    catching_up: bool,
    finished: bool,
}

impl Watcher {
    async fn next(&mut self) -> Option<Result<Event, StoreError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.finished {
                return None;
            }
            if self.catching_up {
                let log = self.log.clone();
                match log.read_after(self.last, CATCH_UP_CHUNK) {
                    Ok(batches) if batches.is_empty() => self.catching_up = false,
                    Ok(batches) => {
                        for batch in batches {
                            self.take(&batch);
                        }
                    }
                    Err(error) => {
                        self.finished = true;
                        return Some(Err(error));
                    }
                }
                continue;
            }
            match self.receiver.recv().await {
                Ok(batch) if batch.revision <= self.last => {}
                Ok(batch) if batch.revision == self.last + 1 => self.take(&batch),
                // A hole: the log has it, since batches are published after they are logged.
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => self.catching_up = true,
                Err(broadcast::error::RecvError::Closed) => {
                    self.finished = true;
                    return Some(Err(StoreError::Unavailable {
                        message: "store closed".into(),
                        source: None,
                    }));
                }
            }
        }
    }

    fn take(&mut self, batch: &Batch) {
        if batch.revision <= self.last {
            return;
        }
        self.last = batch.revision;
        self.pending.extend(
            batch
                .events
                .iter()
                .filter(|event| self.range.contains(&event.kv.key))
                .cloned(),
        );
    }
}
