//! How a [`RedbStore`](crate::RedbStore) is opened.

use std::time::Duration;

use flotilla_store::{Retention, StoreLimits};

/// Options of [`RedbStore::open`](crate::RedbStore::open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedbOptions {
    /// Acknowledge a write only once it is on disk (fsync per group commit). `false` commits
    /// with redb's `Durability::None`: fast, for tests; a crash loses recent writes.
    pub durable: bool,
    /// Key, value and transaction limits, checked before anything is queued.
    pub limits: StoreLimits,
    /// How much history the background compactor keeps.
    pub retention: Retention,
    /// How often the background compactor looks at the store.
    pub compaction_period: Duration,
}

impl Default for RedbOptions {
    fn default() -> Self {
        RedbOptions {
            durable: true,
            limits: StoreLimits::default(),
            retention: Retention::default(),
            compaction_period: Duration::from_secs(30),
        }
    }
}

impl RedbOptions {
    /// Defaults, but not durable: for tests that do not crash.
    pub fn for_tests() -> Self {
        RedbOptions {
            durable: false,
            ..Self::default()
        }
    }
}
