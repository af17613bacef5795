//! The conformance suite on the redb backend, not durable (fast).

use flotilla_store::conformance::Fixture;
use flotilla_store_redb::{RedbOptions, RedbStore};

async fn fresh() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("open store");
    Fixture::with_guard(store, dir)
}

flotilla_store::conformance_tests!(fresh, 32);
