//! The embedded durable backend of Flotilla's storage layer (the default), on redb.
//!
//! Implements [`flotilla_store::Store`] with the memory backend's semantics, durably: a write is
//! acknowledged only once it is on disk. Depends on `flotilla-store` only.
//!
//! # Layout
//!
//! One redb file, `flotilla.redb`, in the store's directory, with four tables:
//!
//! | table | key | value |
//! |---|---|---|
//! | `history` | (key, modification revision) | put: create revision, version, value slot; or a tombstone |
//! | `values` | (modification revision, slot) | the value bytes of one put |
//! | `log` | revision | that revision's events: kind, previous modification revision, key |
//! | `meta` | name | `revision` (last committed), `compacted`, `format` (layout version) |
//!
//! A key's current state is its last `history` entry; there is no separate current-state
//! table, so a put touches one small random `history` leaf and appends its value. Each value
//! is written once, in `values`, keyed by revision: a group's values land together at the end
//! of that tree instead of splitting one leaf per key across the file. Measured on 2 KiB puts
//! in groups of 64, this layout writes about 10 KB per put, against 17 KB with values inside
//! `history` and a separate current-state table.
//!
//! Every read walks `history` with two seeks per key, however many versions the key has: one
//! to find the next key, one (`next_back` on `(key, ..=R)`) for its latest version at or below
//! the read revision `R`, which serves reads at the current revision and in the past alike.
//! Every live key of the range is counted; values are loaded only for the page returned. A
//! watch catching up rebuilds events from `log` + `history` + `values` (the previous value of
//! an event is the version at its recorded previous revision). Compaction at `C` drops `log`
//! below `C` and, for the keys those entries name, every version (and value) but the one
//! visible at `C - 1`, which the event at `C` names as its previous value.
//!
//! # Group commit
//!
//! Transactions are checked against the limits by the caller, then queued to one writer thread.
//! The writer takes everything queued (up to a bound), applies each transaction in order inside
//! ONE redb write transaction, each getting its own revision, writes the last revision to `meta`,
//! and commits once with `Durability::Immediate` (one fsync for the whole group). Only then does
//! it answer every caller and publish each revision's [`Batch`](flotilla_store::watch::Batch) to
//! the [`WatchHub`](flotilla_store::watch::WatchHub), in revision order. While it fsyncs, new
//! requests queue up and form the next group, so concurrent writers share fsyncs. A failed
//! commit answers every caller of the group with the error; redb aborted the whole transaction,
//! so none of it is visible, and the writer reopens the file to carry on from the last commit.
//! Compaction also runs on the writer, in chunks between groups.
//!
//! When fewer requests are queued than the last group held, the writer waits up to 500 µs for
//! the callers it just answered to send their next write, so a steady set of writers shares
//! every fsync instead of splitting into alternating half-size groups. A lone writer never
//! waits (its last group had one transaction). Under load (a group of 4 or more), the group
//! stays open while requests keep coming, up to 5 ms, and the writer sleeps through these waits
//! instead of blocking on the queue, so a request never has to wake it (each wake-up is a
//! futex call for the sender and a context switch for the writer).
//!
//! # Other choices
//!
//! - Reads run in a redb read transaction: they never wait for the writer, and see exactly one
//!   committed revision. A single-key read runs on the caller's thread; a wider one, which may
//!   walk many keys, on tokio's blocking pool. Watch catch-up reads run inside the watch stream.
//! - The background compactor ([`flotilla_store::Compactor`]) runs on the tokio runtime that
//!   opened the store (none when opened outside one). It holds the store only through a weak
//!   reference, so dropping the [`RedbStore`] stops it, stops the writer and closes the file.
//! - After a failed commit, redb refuses further I/O on that handle; the writer drops it and
//!   opens the file again (retried by the next caller if that fails too, who gets
//!   `Unavailable` meanwhile). The feature `failpoints` adds `RedbStore::open_with_faults` to
//!   test this with a simulated full disk.

mod codec;
mod error;
#[cfg(feature = "failpoints")]
mod faults;
mod options;
mod shared;
mod store;
mod tables;
mod writer;

#[cfg(feature = "failpoints")]
pub use faults::FaultSwitch;
pub use options::{DEFAULT_CACHE_BYTES, RedbOptions};
pub use store::{DATABASE_FILE, RedbStats, RedbStore};
