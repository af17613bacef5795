//! [`EtcdStore`]: the [`Store`] trait over an etcd v3 cluster.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use etcd_client::{ConnectOptions, GetOptions, PutOptions};
use flotilla_store::{
    KeyRange, Op, RangeRequest, RangeResponse, Revision, Store, StoreError, StoreLimits,
    StoreStatus, Txn, TxnResponse, WatchStream,
};

use crate::convert::{self, header_revision};
use crate::error::Failure;
use crate::keys::{EtcdRange, Namespace};
use crate::pool::{Idempotent, Pool};
use crate::{EtcdOptions, compaction, watch};

/// HTTP/2 keep-alive, so a member that vanishes without closing its connections (a partition, a
/// frozen host) fails the watches on it instead of leaving them silent. etcd refuses pings more
/// often than every 5 s (`--grpc-keepalive-min-time`).
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`Store`] on etcd. Cheap to clone; clones share the connections.
#[derive(Clone)]
pub struct EtcdStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    ns: Namespace,
    limits: StoreLimits,
    timeout: Duration,
    /// The highest compacted revision seen: compactions made through this store, `Compacted`
    /// answers and watch cancels. etcd has no call that reports it; see [`crate::compaction`].
    compacted: Arc<AtomicI64>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("pool", &self.inner.pool)
            .field("namespace", &self.inner.ns)
            .field("limits", &self.inner.limits)
            .field("timeout", &self.inner.timeout)
            .field("compacted", &self.inner.compacted.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl EtcdStore {
    /// Connects to etcd and makes one read, so that an unreachable cluster fails here
    /// (`Unavailable`) rather than on first use.
    pub async fn connect(options: EtcdOptions) -> Result<EtcdStore, StoreError> {
        if options.endpoints.is_empty() {
            return Err(StoreError::Backend {
                message: "no etcd endpoints given".into(),
                source: None,
            });
        }
        let connect = ConnectOptions::new()
            .with_connect_timeout(options.connect_timeout)
            .with_keep_alive(KEEP_ALIVE_INTERVAL, KEEP_ALIVE_TIMEOUT)
            // Only while requests or watches are open: etcd counts pings on an idle connection
            // as abuse (keepalive policy without `PermitWithoutStream`) and closes it after a few.
            .with_keep_alive_while_idle(false)
            // A member cut off from the leader refuses requests instead of serving stale
            // watches (what kube-apiserver asks for too).
            .with_require_leader(true);
        let pool = Pool::connect(&options.endpoints, connect).await?;
        let store = EtcdStore {
            inner: Arc::new(Inner {
                pool,
                ns: Namespace::new(options.prefix),
                limits: options.limits,
                timeout: options.request_timeout,
                compacted: Arc::new(AtomicI64::new(0)),
            }),
        };
        store.status().await?;
        Ok(store)
    }

    pub(crate) fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The current revision (the header of a count-only read), or a failure at `revision`.
    pub(crate) async fn probe(&self, revision: Option<Revision>) -> Result<Revision, Failure> {
        let mut options = GetOptions::new().with_count_only();
        if let Some(revision) = revision {
            options = options.with_revision(revision);
        }
        let key = self.inner.ns.probe_key();
        let read = |mut kv: etcd_client::KvClient| {
            let (key, options) = (key.clone(), options.clone());
            async move { kv.get(key, Some(options)).await }
        };
        let response = self
            .inner
            .pool
            .kv("read", Idempotent::Yes, self.inner.timeout, read)
            .await?;
        Ok(header_revision("read", response.0.header)?)
    }

    async fn current_revision(&self) -> Result<Revision, StoreError> {
        self.probe(None)
            .await
            .map_err(|f| f.into_store_error("read the current revision"))
    }

    pub(crate) fn known_compacted(&self) -> Revision {
        self.inner.compacted.load(Ordering::Relaxed)
    }

    pub(crate) fn saw_compacted(&self, revision: Revision) -> Revision {
        self.inner
            .compacted
            .fetch_max(revision, Ordering::Relaxed)
            .max(revision)
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    pub(crate) fn namespace(&self) -> &Namespace {
        &self.inner.ns
    }

    /// An unconditional put as a plain etcd `Put`, answered like the one-operation transaction
    /// it stands for.
    async fn put(&self, key: Bytes, value: Bytes) -> Result<TxnResponse, StoreError> {
        let etcd_key = self.inner.ns.key(&key);
        let options = PutOptions::new().with_prev_key();
        // The value is copied into each attempt's request (etcd-client takes a `Vec`), once in
        // the common case.
        let write = |mut kv: etcd_client::KvClient| {
            let (key, value, options) = (etcd_key.clone(), value.to_vec(), options.clone());
            async move { kv.put(key, value, Some(options)).await }
        };
        let response = self
            .inner
            .pool
            .kv("put", Idempotent::No, self.inner.timeout, write)
            .await
            .map_err(|f| f.into_store_error("put"))?
            .0;
        let revision = header_revision("put", response.header)?;
        let result = convert::put_result(&self.inner.ns, key, value, response.prev_kv, revision)?;
        Ok(TxnResponse {
            succeeded: true,
            revision,
            results: vec![result],
        })
    }

    /// A revision error of a request made at `revision`, with the revisions filled in.
    async fn revision_error(&self, failure: Failure, revision: Revision) -> StoreError {
        match failure {
            Failure::Compacted => match compaction::learn(self, revision).await {
                Ok(compacted) => StoreError::Compacted {
                    requested: revision,
                    compacted,
                },
                Err(error) => error,
            },
            Failure::FutureRevision => match self.current_revision().await {
                Ok(current) => StoreError::FutureRevision {
                    requested: revision,
                    current,
                },
                Err(error) => error,
            },
            Failure::Store(error) => error,
        }
    }
}

#[async_trait]
impl Store for EtcdStore {
    async fn status(&self) -> Result<StoreStatus, StoreError> {
        compaction::status(self).await
    }

    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, StoreError> {
        if let Some(revision) = request.revision
            && revision < 1
        {
            // etcd reads "revision 0" as "now"; before revision 1 nothing existed.
            return compaction::before_history(self, revision);
        }
        let (key, range_end) = match self.inner.ns.range(&request.range) {
            EtcdRange::Span { key, range_end } => (key, range_end),
            EtcdRange::Empty => {
                let current = match self.probe(request.revision).await {
                    Ok(current) => current,
                    Err(failure) => {
                        let revision = request.revision.unwrap_or_default();
                        return Err(self.revision_error(failure, revision).await);
                    }
                };
                return Ok(RangeResponse {
                    kvs: Vec::new(),
                    more: false,
                    count: 0,
                    revision: request.revision.unwrap_or(current),
                });
            }
        };
        let mut options = GetOptions::new().with_range(range_end);
        match request.limit {
            Some(0) => options = options.with_count_only(),
            Some(limit) => options = options.with_limit(i64::try_from(limit).unwrap_or(i64::MAX)),
            None => {}
        }
        if let Some(revision) = request.revision {
            options = options.with_revision(revision);
        }
        let read = |mut kv: etcd_client::KvClient| {
            let (key, options) = (key.clone(), options.clone());
            async move { kv.get(key, Some(options)).await }
        };
        let result = self
            .inner
            .pool
            .kv("range", Idempotent::Yes, self.inner.timeout, read)
            .await;
        let response = match result {
            Ok(response) => response.0,
            Err(failure) => {
                let revision = request.revision.unwrap_or_default();
                return Err(self.revision_error(failure, revision).await);
            }
        };
        let current = header_revision("range", response.header)?;
        let count = usize::try_from(response.count).map_err(|_| StoreError::Backend {
            message: format!("etcd counted {} keys", response.count),
            source: None,
        })?;
        let kvs = response
            .kvs
            .into_iter()
            .map(|kv| convert::key_value(&self.inner.ns, kv))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RangeResponse {
            more: count > kvs.len(),
            kvs,
            count,
            revision: request.revision.unwrap_or(current),
        })
    }

    async fn txn(&self, mut txn: Txn) -> Result<TxnResponse, StoreError> {
        self.inner.limits.check_txn(&txn)?;
        // Without compares etcd always runs `success`; a lone put is then a plain `Put`, which
        // etcd serves markedly faster than a `Txn` under concurrency.
        if txn.compares.is_empty()
            && let [Op::Put { .. }] = txn.success.as_slice()
            && let Some(Op::Put { key, value }) = txn.success.pop()
        {
            return self.put(key, value).await;
        }
        let ns = &self.inner.ns;
        let compares: Vec<_> = txn
            .compares
            .into_iter()
            .map(|compare| convert::compare(ns, compare))
            .collect();
        let (success, on_success): (Vec<_>, Vec<_>) = txn
            .success
            .into_iter()
            .map(|op| convert::op(ns, op))
            .unzip();
        let (failure, on_failure): (Vec<_>, Vec<_>) = txn
            .failure
            .into_iter()
            .map(|op| convert::op(ns, op))
            .unzip();
        let request = etcd_client::Txn::new()
            .when(compares)
            .and_then(success)
            .or_else(failure);
        let write = |mut kv: etcd_client::KvClient| {
            let request = request.clone();
            async move { kv.txn(request).await }
        };
        let response = self
            .inner
            .pool
            .kv("txn", Idempotent::No, self.inner.timeout, write)
            .await
            .map_err(|f| f.into_store_error("txn"))?
            .0;
        let revision = header_revision("txn", response.header)?;
        let pending = if response.succeeded {
            on_success
        } else {
            on_failure
        };
        if pending.len() != response.responses.len() {
            return Err(StoreError::Backend {
                message: format!(
                    "etcd answered {} of {} transaction operations",
                    response.responses.len(),
                    pending.len()
                ),
                source: None,
            });
        }
        let results = pending
            .into_iter()
            .zip(response.responses)
            .map(|(pending, result)| convert::op_result(ns, pending, result, revision))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TxnResponse {
            succeeded: response.succeeded,
            revision,
            results,
        })
    }

    async fn watch(&self, range: KeyRange, after: Revision) -> Result<WatchStream, StoreError> {
        let status = self.status().await?;
        if after > status.revision {
            return Err(StoreError::FutureRevision {
                requested: after,
                current: status.revision,
            });
        }
        if after + 1 < status.compacted_revision {
            return Err(StoreError::Compacted {
                requested: after + 1,
                compacted: status.compacted_revision,
            });
        }
        let span = match self.inner.ns.range(&range) {
            EtcdRange::Span { key, range_end } => (key, range_end),
            // Nothing can ever match.
            EtcdRange::Empty => return Ok(Box::pin(futures::stream::pending())),
        };
        watch::open(
            &self.inner.pool,
            self.inner.ns.clone(),
            span,
            after,
            self.inner.timeout,
            self.inner.compacted.clone(),
        )
        .await
    }

    async fn compact(&self, revision: Revision) -> Result<(), StoreError> {
        compaction::compact(self, revision).await
    }
}
