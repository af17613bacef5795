//! Retention-driven compaction: keeps history for a time window or a number of revisions,
//! whichever covers more, and compacts everything older.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::{Revision, Store, StoreError};

/// How much history to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Keep every revision written within this long.
    pub window: Duration,
    /// Keep at least this many most recent revisions.
    pub revisions: i64,
}

impl Default for Retention {
    /// Five minutes or 100,000 revisions, whichever is larger.
    fn default() -> Self {
        Retention {
            window: Duration::from_secs(5 * 60),
            revisions: 100_000,
        }
    }
}

/// Samples the store's revision over time and decides where compaction may cut.
#[derive(Debug)]
pub struct Compactor {
    retention: Retention,
    /// `(when, revision)` samples, oldest first.
    samples: VecDeque<(Instant, Revision)>,
}

impl Compactor {
    pub fn new(retention: Retention) -> Self {
        Compactor {
            retention,
            samples: VecDeque::new(),
        }
    }

    /// Records that the store was at `revision` at `now`, and returns the revision to compact
    /// at, if any history falls outside the retention.
    pub fn observe(&mut self, now: Instant, revision: Revision) -> Option<Revision> {
        self.samples.push_back((now, revision));
        // The newest revision that is older than the window: everything up to it may go.
        let cutoff = now.checked_sub(self.retention.window)?;
        let mut by_time = None;
        while let Some(&(when, rev)) = self.samples.front() {
            if when > cutoff {
                break;
            }
            by_time = Some(rev);
            self.samples.pop_front();
        }
        // Keep the last sample older than the window for the next round.
        if let Some(rev) = by_time {
            self.samples.push_front((cutoff, rev));
        }
        let by_count = revision - self.retention.revisions;
        let target = by_time?.min(by_count);
        (target > 1).then_some(target)
    }

    /// Runs until `store` fails permanently or the task is dropped, compacting every `period`.
    pub async fn run(mut self, store: Arc<dyn Store>, period: Duration) -> Result<(), StoreError> {
        let mut ticker = tokio::time::interval(period);
        let mut compacted = 0;
        loop {
            ticker.tick().await;
            let status = match store.status().await {
                Ok(status) => status,
                Err(error) if error.is_retryable() => {
                    tracing::warn!(%error, "compactor: store unavailable, will retry");
                    continue;
                }
                Err(error) => return Err(error),
            };
            if let Some(target) = self.observe(Instant::now(), status.revision)
                && target > compacted.max(status.compacted_revision)
            {
                match store.compact(target).await {
                    Ok(()) => {
                        tracing::debug!(revision = target, "compacted store history");
                        compacted = target;
                    }
                    Err(error) if error.is_retryable() => {
                        tracing::warn!(%error, "compactor: compaction failed, will retry");
                    }
                    Err(error) => return Err(error),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn keeps_the_larger_of_window_and_revision_count() {
        let retention = Retention {
            window: Duration::from_secs(60),
            revisions: 100,
        };
        let mut compactor = Compactor::new(retention);
        let start = Instant::now();
        // Nothing is older than the window yet.
        assert_eq!(compactor.observe(start, 1_000), None);
        assert_eq!(
            compactor.observe(start + Duration::from_secs(30), 5_000),
            None
        );
        // At 61 s, revision 1,000 is out of the window; 100 revisions back would be 9,900.
        assert_eq!(
            compactor.observe(start + Duration::from_secs(61), 10_000),
            Some(1_000)
        );
        // At 91 s, 5,000 is out of the window, but count keeps 5,100..: window wins (smaller).
        assert_eq!(
            compactor.observe(start + Duration::from_secs(91), 5_150),
            Some(5_000)
        );
        // Slow writes: the count rule keeps more than the window.
        assert_eq!(
            compactor.observe(start + Duration::from_secs(300), 5_160),
            Some(5_060)
        );
    }
}
