//! The [`Store`] trait and the single-key helpers built on its transactions.

use std::pin::Pin;

use async_trait::async_trait;
use bytes::Bytes;
use futures::Stream;

use crate::error::display_key;
use crate::{
    Compare, CompareOp, Event, KeyRange, KeyValue, Op, OpResult, RangeRequest, RangeResponse,
    Revision, StoreError, StoreStatus, Txn,
};

/// The events of a watch, in revision order. It ends with an error when the watch cannot go
/// on (history compacted while it lagged, store closed); restart it from the last revision seen.
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<Event, StoreError>> + Send>>;

/// A revisioned key-value store in etcd's model. Every backend passes the conformance suite
/// (`flotilla_store::conformance`, feature `testing`).
#[async_trait]
pub trait Store: Send + Sync + std::fmt::Debug + 'static {
    /// The current and compacted revisions.
    async fn status(&self) -> Result<StoreStatus, StoreError>;

    /// Reads a key range, at the current revision or a past one.
    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, StoreError>;

    /// Runs a compare-and-swap transaction atomically.
    async fn txn(&self, txn: Txn) -> Result<crate::TxnResponse, StoreError>;

    /// Watches `range` for every change with a revision greater than `after`, in revision
    /// order, then live. `after` below the compacted history fails with `Compacted`; above the
    /// current revision, with `FutureRevision`.
    async fn watch(&self, range: KeyRange, after: Revision) -> Result<WatchStream, StoreError>;

    /// Drops history below `revision`; the state at `revision` stays readable. Compacting at or
    /// below the already compacted revision does nothing.
    async fn compact(&self, revision: Revision) -> Result<(), StoreError>;

    /// Whether what the store holds ends with the process (nothing written survives a
    /// restart). Values only this process can read are safe in such a store.
    fn volatile(&self) -> bool {
        false
    }

    /// The current value of one key.
    async fn get(&self, key: &[u8]) -> Result<Option<KeyValue>, StoreError> {
        let response = self
            .range(RangeRequest::new(KeyRange::key(Bytes::copy_from_slice(
                key,
            ))))
            .await?;
        Ok(response.kvs.into_iter().next())
    }

    /// Creates `key`; fails with `AlreadyExists` when it is present. Returns the new key-value.
    async fn create(&self, key: Bytes, value: Bytes) -> Result<KeyValue, StoreError> {
        let txn = Txn::new()
            .when([Compare::mod_revision(key.clone(), CompareOp::Equal, 0)])
            .and_then([Op::put(key.clone(), value)]);
        let response = self.txn(txn).await?;
        if !response.succeeded {
            return Err(StoreError::AlreadyExists {
                key: display_key(&key),
            });
        }
        put_result(response.results)
    }

    /// Replaces `key` if its modification revision is still `expected`. Fails with `NotFound`
    /// when it is gone and `Conflict` when another write came first.
    async fn update(
        &self,
        key: Bytes,
        value: Bytes,
        expected: Revision,
    ) -> Result<KeyValue, StoreError> {
        let txn = Txn::new()
            .when([Compare::mod_revision(
                key.clone(),
                CompareOp::Equal,
                expected,
            )])
            .and_then([Op::put(key.clone(), value)])
            .or_else([Op::get(key.clone())]);
        let response = self.txn(txn).await?;
        if !response.succeeded {
            return Err(cas_failure(&key, expected, response.results));
        }
        put_result(response.results)
    }

    /// Deletes `key`, only if its modification revision is `expected` when given. Returns the
    /// deleted key-value and the deleting revision.
    async fn delete(
        &self,
        key: Bytes,
        expected: Option<Revision>,
    ) -> Result<(KeyValue, Revision), StoreError> {
        let compares = match expected {
            Some(revision) => vec![Compare::mod_revision(
                key.clone(),
                CompareOp::Equal,
                revision,
            )],
            None => vec![Compare::mod_revision(key.clone(), CompareOp::Greater, 0)],
        };
        let txn = Txn::new()
            .when(compares)
            .and_then([Op::delete(key.clone())])
            .or_else([Op::get(key.clone())]);
        let response = self.txn(txn).await?;
        if !response.succeeded {
            return Err(cas_failure(&key, expected.unwrap_or(0), response.results));
        }
        match response.results.into_iter().next() {
            Some(OpResult::Delete { prev: Some(prev) }) => Ok((prev, response.revision)),
            _ => Err(StoreError::NotFound {
                key: display_key(&key),
            }),
        }
    }
}

fn put_result(results: Vec<OpResult>) -> Result<KeyValue, StoreError> {
    match results.into_iter().next() {
        Some(OpResult::Put { kv, .. }) => Ok(kv),
        other => Err(StoreError::Backend {
            message: format!("transaction returned {other:?} for a put"),
            source: None,
        }),
    }
}

fn cas_failure(key: &[u8], expected: Revision, results: Vec<OpResult>) -> StoreError {
    match results.into_iter().next() {
        Some(OpResult::Get(Some(current))) => StoreError::Conflict {
            key: display_key(key),
            expected,
            current: current.mod_revision,
        },
        _ => StoreError::NotFound {
            key: display_key(key),
        },
    }
}
