//! Integration tests of the redb backend: the conformance suite (fast and durable), restart,
//! group commit, crash safety under SIGKILL, compaction, and bad paths or files.

mod store {
    pub mod crash;
    pub mod edges;
    pub mod failed_commit;
    pub mod group_commit;
    pub mod lifecycle;
    pub mod open_errors;
}

use flotilla_store::conformance::Fixture;
use flotilla_store_redb::{RedbOptions, RedbStore};

/// The conformance suite, not durable (fast).
mod conformance {
    async fn fresh() -> super::Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = super::RedbStore::open(dir.path(), super::RedbOptions::for_tests())
            .expect("open store");
        super::Fixture::with_guard(store, dir)
    }

    flotilla_store::conformance_tests!(fresh, 32);
}

/// The conformance suite with every commit fsynced, as in production.
mod conformance_durable {
    async fn fresh() -> super::Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let store =
            super::RedbStore::open(dir.path(), super::RedbOptions::default()).expect("open store");
        super::Fixture::with_guard(store, dir)
    }

    flotilla_store::conformance_tests!(fresh, 16);
}
