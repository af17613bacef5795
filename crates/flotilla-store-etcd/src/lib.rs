//! The etcd v3 backend of Flotilla's [`Store`](flotilla_store::Store), for highly available
//! control planes: several API server replicas share one etcd cluster.
//!
//! The store model is etcd's, so the mapping is mostly direct:
//!
//! | store | etcd |
//! |---|---|
//! | revision, `create_revision`, `mod_revision`, `version` | the same fields; the revision of a response is its header's |
//! | `range` (limit, past revision, count, more) | `Range` (`limit`, `revision`; `count_only` for a limit of 0) |
//! | `txn` compares on mod/create revision, version, value | `Txn` compares; ops `Put`/`DeleteRange` with `prev_kv`, `Range` |
//! | `txn` of one put and no compare | a plain `Put` with `prev_kv` (etcd serves it about twice as fast as a `Txn` under load) |
//! | a put's new key-value | rebuilt from `prev_kv` and the header revision (etcd returns only the previous one) |
//! | `watch(range, after)` | `Watch` from `start_revision = after + 1` with `prev_kv` |
//! | `compact` | `Compact`; at or below the compacted revision is a no-op |
//! | `status().compacted_revision` | not reported by etcd: learned (below) |
//!
//! Errors: `mvcc: required revision has been compacted` becomes `Compacted` and `… is a future
//! revision` becomes `FutureRevision` (with the revisions filled in by a follow-up read);
//! transport failures, timeouts, lost leaders and canceled watches are `Unavailable` (retry; a
//! write's outcome is then unknown, so retry with a compare); invalid-argument answers become
//! `InvalidKey`/`InvalidTxn`. Keys, values and transactions over the
//! [`StoreLimits`](flotilla_store::StoreLimits) are refused before anything is sent.
//!
//! etcd has no call that reports the compacted revision. The store remembers the highest one it
//! has seen (its own `Compact` calls, watch cancels carrying `compact_revision`) and `status`
//! checks it with one count-only read at that revision: the read fails exactly when someone
//! compacted further, and then a watch from that revision is opened, which etcd cancels at once
//! with its compacted revision. Not noticed: someone else's compaction at or below what the
//! store has seen, or at revision 1 — neither removes anything the store could still read.
//!
//! Requests go to one member at a time, in turn, with one connection per member; a member that
//! refuses connections or has no leader is passed over for a second and the request moves on
//! (reads also move on after any transient failure; a write whose fate is unknown is not
//! repeated). See `pool.rs` for why etcd-client's own balancing is not used.
//!
//! With a prefix, every key lives under it, ranges and watches are confined to it and keys come
//! back without it. The revision and compaction stay cluster-wide: other users of the same etcd
//! move the revision too.
//!
//! Known difference from the memory backend: an event at exactly the compacted revision may come
//! without `prev` (etcd reads the previous value at `revision - 1`, which is gone).
//!
//! Depends on no other workspace crate than `flotilla-store`. The `testing` feature adds
//! [`testing`]: throwaway etcd processes for tests.

mod bench;
mod compaction;
mod convert;
mod error;
mod keys;
mod options;
mod pool;
mod store;
mod watch;

#[cfg(feature = "testing")]
pub mod testing;

pub use bench::{raw_put_baseline, store_put_rate};
pub use options::EtcdOptions;
pub use store::EtcdStore;
