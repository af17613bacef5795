//! The conformance suite every backend runs (feature `testing`).
//!
//! A backend's test file calls [`conformance_tests!`](crate::conformance_tests) with an async
//! factory returning a [`Fixture`]: a fresh store that nobody else writes to, plus whatever must
//! stay alive with it (a temporary directory, an etcd process). Cases make no assumption about
//! the starting revision, only about how revisions move.

use std::any::Any;
use std::sync::Arc;

use crate::Store;

mod basic;
mod props;
mod range;
mod watch;

pub use basic::*;
pub use props::*;
pub use range::*;
pub use watch::*;

/// A fresh store for one case, and what keeps its resources alive.
pub struct Fixture {
    pub store: Arc<dyn Store>,
    pub guard: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Fixture {
    /// A fixture with nothing to keep alive.
    pub fn new(store: impl Store) -> Self {
        Fixture {
            store: Arc::new(store),
            guard: Box::new(()),
        }
    }

    /// A fixture that keeps `guard` alive as long as the store.
    pub fn with_guard(store: impl Store, guard: impl Any + Send + Sync) -> Self {
        Fixture {
            store: Arc::new(store),
            guard: Box::new(guard),
        }
    }
}

/// Expands to one test per conformance case. `$make` is an expression of a function or closure
/// `Fn() -> impl Future<Output = Fixture>`; `$cases` is how many cases each property test runs.
///
/// ```text
/// flotilla_store::conformance_tests!(make_fixture, 64);
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr, $cases:expr) => {
        $crate::conformance_tests!(@cases $make;
            create_then_get,
            create_existing_is_already_exists,
            update_at_current_revision,
            update_at_stale_revision_writes_nothing,
            update_or_delete_missing_is_not_found,
            delete_then_recreate_resets_create_revision,
            delete_at_stale_revision_writes_nothing,
            txn_writes_share_one_revision,
            txn_failure_branch_runs_else_ops,
            reads_and_failed_compares_do_not_move_revision,
            rejects_bad_keys_and_values_without_writing,
            range_prefix_is_sorted_limited_and_counted,
            range_pages_are_consistent_at_a_fixed_revision,
            range_reads_the_past_and_refuses_the_future,
            compaction_refuses_old_reads_and_keeps_current_state,
            watch_replays_then_follows_live_writes,
            watch_filters_by_prefix,
            watch_refuses_future_and_compacted_revisions,
            watch_sees_every_write_of_concurrent_writers,
            watch_restart_from_last_seen_loses_and_duplicates_nothing
        );
        $crate::conformance_tests!(@props $make, $cases;
            prop_store_matches_model,
            prop_watch_from_any_revision_sees_exactly_later_events
        );
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let fixture = ($make)().await;
                $crate::conformance::$case(fixture.store.clone()).await;
                drop(fixture);
            }
        )*
    };
    (@props $make:expr, $cases:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                $crate::conformance::$case(&|| Box::pin(($make)()), $cases);
            }
        )*
    };
}
