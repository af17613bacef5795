//! The conformance suite, each case (and each property-test case) on an etcd process of its own:
//! the suite assumes a fresh key space that nobody else writes to, and etcd's revision and
//! compaction are cluster-wide, so a prefix per case would not isolate them. Starting etcd on
//! tmpfs takes a fraction of a second.

use flotilla_store_etcd::testing::fresh_fixture;

flotilla_store::conformance_tests!(fresh_fixture, 16);
