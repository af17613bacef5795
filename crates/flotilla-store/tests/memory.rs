//! The conformance suite on the in-memory backend.

use flotilla_store::MemoryStore;
use flotilla_store::conformance::Fixture;

async fn fresh() -> Fixture {
    Fixture::new(MemoryStore::new())
}

flotilla_store::conformance_tests!(fresh, 128);
