//! The storage contract of Flotilla, in etcd's model.
//!
//! One store-wide [`Revision`] counts write transactions; every key carries its create and
//! modification revisions and a version. Reads can be made at a past revision (consistent
//! paging while writes go on), writes are compare-and-swap transactions, and a watch replays
//! every event after a revision, in revision order, then follows live writes. Compaction drops
//! history below a revision; reading or watching below it fails with [`StoreError::Compacted`].
//!
//! Keys and values are opaque bytes. This crate depends on no other workspace crate. It holds the
//! [`Store`] trait, the in-memory backend ([`MemoryStore`]), the watch fan-out shared by the
//! embedded backends ([`watch::WatchHub`]), a retention-driven [`Compactor`], and — behind the
//! `testing` feature — the conformance suite every backend must pass.

mod compactor;
mod error;
mod limits;
mod memory;
mod store;
mod types;
pub mod watch;

#[cfg(feature = "testing")]
pub mod conformance;

pub use compactor::{Compactor, Retention};
pub use error::{StoreError, display_key};
pub use limits::StoreLimits;
pub use memory::MemoryStore;
pub use store::{Store, WatchStream};
pub use types::{
    Compare, CompareOp, CompareTarget, Event, EventKind, KeyRange, KeyValue, Op, OpResult,
    RangeRequest, RangeResponse, Revision, StoreStatus, Txn, TxnResponse,
};

/// Result alias for store operations.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
