//! Compaction, and how the store knows the compacted revision although etcd has no call that
//! reports it.
//!
//! The store keeps the highest compacted revision it has seen: from its own `Compact` calls,
//! from watch cancels (which carry `compact_revision`) and from probes. A probe is a watch from a
//! revision that a read has just refused as compacted: etcd cancels such a watch at once with
//! its current compacted revision (etcd's `mvcc` watchable store does this for every watcher
//! that starts below it). `status` checks the seen value with one count-only read at it: the
//! read succeeds exactly when nobody compacted further, otherwise a probe learns the new value.
//!
//! Limits: a compaction at revision 1, or one made by someone else at or below what this store
//! has seen, is not noticed; both drop nothing this store could still read. The value is a
//! snapshot: another client may compact right after `status` answers.

use etcd_client::WatchOptions;
use flotilla_store::{RangeResponse, Revision, StoreError, StoreStatus};

use crate::EtcdStore;
use crate::error::{Failure, classify};
use crate::pool::Idempotent;

pub(crate) async fn status(store: &EtcdStore) -> Result<StoreStatus, StoreError> {
    let known = store.known_compacted();
    let at = known.max(1);
    match store.probe(Some(at)).await {
        Ok(revision) => Ok(StoreStatus {
            revision,
            compacted_revision: known,
        }),
        Err(Failure::Compacted) => {
            let compacted = learn(store, at).await?;
            let revision = store
                .probe(None)
                .await
                .map_err(|f| f.into_store_error("status"))?;
            Ok(StoreStatus {
                revision,
                compacted_revision: compacted,
            })
        }
        Err(Failure::FutureRevision) => Err(StoreError::Backend {
            message: format!(
                "etcd's revision is below revision {at}, which it had compacted: \
                 was it restored from an old snapshot or replaced?"
            ),
            source: None,
        }),
        Err(Failure::Store(error)) => Err(error),
    }
}

/// Learns etcd's compacted revision, known to be above `below`.
pub(crate) async fn learn(store: &EtcdStore, below: Revision) -> Result<Revision, StoreError> {
    let timeout = store.timeout();
    let options = WatchOptions::new().with_start_revision(below.max(1));
    let key = store.namespace().probe_key();
    let start = |mut client: etcd_client::WatchClient| {
        let (key, options) = (key.clone(), options.clone());
        async move { client.watch(key, Some(options)).await }
    };
    let probe = async {
        let mut stream = store
            .pool()
            .watch("compaction probe", timeout, start)
            .await?;
        loop {
            let Some(response) = stream
                .message()
                .await
                .map_err(|e| classify("compaction probe", e))?
            else {
                return Err(Failure::Store(StoreError::Unavailable {
                    message: "etcd closed the compaction probe".into(),
                    source: None,
                }));
            };
            if response.0.canceled {
                return Ok(response.0.compact_revision);
            }
        }
    };
    let compacted = match tokio::time::timeout(timeout, probe).await {
        Ok(result) => result.map_err(|f| f.into_store_error("compaction probe"))?,
        Err(_) => {
            return Err(StoreError::Unavailable {
                message: format!("compaction probe: no answer from etcd within {timeout:?}"),
                source: None,
            });
        }
    };
    if compacted <= below {
        return Err(StoreError::Backend {
            message: format!(
                "etcd refused revision {below} as compacted, then reported compacted revision \
                 {compacted}"
            ),
            source: None,
        });
    }
    Ok(store.saw_compacted(compacted))
}

pub(crate) async fn compact(store: &EtcdStore, revision: Revision) -> Result<(), StoreError> {
    if revision <= store.known_compacted() {
        return Ok(());
    }
    let request = |mut kv: etcd_client::KvClient| async move { kv.compact(revision, None).await };
    let result = store
        .pool()
        .kv("compact", Idempotent::Yes, store.timeout(), request)
        .await;
    match result {
        Ok(_) => {
            store.saw_compacted(revision);
            Ok(())
        }
        // etcd refuses to compact at or below its compacted revision: already done.
        Err(Failure::Compacted) => {
            store.saw_compacted(revision);
            Ok(())
        }
        Err(Failure::FutureRevision) => {
            let current = store
                .probe(None)
                .await
                .map_err(|f| f.into_store_error("compact"))?;
            Err(StoreError::FutureRevision {
                requested: revision,
                current,
            })
        }
        Err(Failure::Store(error)) => Err(error),
    }
}

/// A read at a revision before etcd's first (revision 0 or below): empty, unless compacted.
pub(crate) fn before_history(
    store: &EtcdStore,
    revision: Revision,
) -> Result<RangeResponse, StoreError> {
    let compacted = store.known_compacted();
    if revision < compacted {
        return Err(StoreError::Compacted {
            requested: revision,
            compacted,
        });
    }
    Ok(RangeResponse {
        kvs: Vec::new(),
        more: false,
        count: 0,
        revision,
    })
}
