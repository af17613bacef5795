//! The embedded durable backend of Flotilla's storage layer (the default), on redb.
//!
//! Implements [`flotilla_store::Store`] with the memory backend's semantics, durably: a write is
//! acknowledged only once it is on disk. Depends on `flotilla-store` only.
//!
//! # Layout
//!
//! One redb file, `flotilla.redb`, in the store's directory, with five tables:
//!
//! | table | key | value |
//! |---|---|---|
//! | `current` | key | create revision, modification revision, version (24 bytes) |
//! | `history` | (key, modification revision) | put: create revision, version, value slot; or a tombstone |
//! | `values` | (modification revision, slot) | the value bytes of one put |
//! | `log` | revision | that revision's events: kind, previous modification revision, key |
//! | `meta` | name | `revision` (last committed), `compacted`, `format` (layout version) |
//!
//! Each value is written once, in `values`, keyed by revision: a group's values are appended
//! together at the end of that tree instead of splitting one leaf per key across the file,
//! which roughly halves the bytes each put writes. `current`, `history` and `log` hold small
//! records that point there. A read at the current revision walks `current` (counting every
//! key, loading values only for the page it returns); a read at a past revision `R` walks
//! `history` and keeps, per key, the latest version at or below `R`. A watch catching up
//! rebuilds events from `log` + `history` + `values` (the previous value of an event is the
//! version at its recorded previous revision). Compaction at `C` drops `log` below `C` and,
//! for the keys those entries name, every version (and value) but the one visible at `C - 1`,
//! which the event at `C` names as its previous value.
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
//! waits (its last group had one transaction).
//!
//! # Other choices
//!
//! - Reads (`range`, `get`, watch catch-up) run in a redb read transaction on the caller's
//!   thread: they never wait for the writer, and see exactly one committed revision.
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
pub use options::RedbOptions;
pub use store::{DATABASE_FILE, RedbStats, RedbStore};
