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
    /// The most memory redb's page cache may use, in bytes. Pages beyond it are read from the
    /// file (through the operating system's page cache, which does not count against the
    /// process). The API server answers lists, watches and most reads from its own watch
    /// cache, so the default is modest: [`DEFAULT_CACHE_BYTES`]. redb's own default, 1 GiB,
    /// let a store of 100,000 Deployments keep a second copy of every object in memory.
    pub cache_bytes: usize,
}

/// The default of [`RedbOptions::cache_bytes`]: 64 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 64 * 1024 * 1024;

impl Default for RedbOptions {
    fn default() -> Self {
        RedbOptions {
            durable: true,
            limits: StoreLimits::default(),
            retention: Retention::default(),
            compaction_period: Duration::from_secs(30),
            cache_bytes: DEFAULT_CACHE_BYTES,
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
