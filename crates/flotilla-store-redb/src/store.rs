//! [`RedbStore`]: opening, the [`Store`] implementation, closing.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use async_trait::async_trait;
use flotilla_store::watch::{EventLog, WatchHub};
use flotilla_store::{
    Compactor, KeyRange, RangeRequest, RangeResponse, Retention, Revision, Store, StoreError,
    StoreLimits, StoreStatus, Txn, TxnResponse, WatchStream,
};
use tokio::sync::oneshot;

use crate::error::{closed, storage};
use crate::options::RedbOptions;
use crate::shared::{Opener, Shared, initialize};
use crate::tables::{HISTORY, VALUES, Versions};
use crate::writer::{Request, Writer};

/// The name of the database file inside the store's directory.
pub const DATABASE_FILE: &str = "flotilla.redb";

/// Revisions the live watch feed buffers; a watcher further behind catches up from the log.
const WATCH_BUFFER: usize = 4096;

/// The embedded durable [`Store`] on redb. Dropping it stops the writer thread and the
/// background compactor and closes the file.
#[derive(Debug)]
pub struct RedbStore {
    inner: Arc<Inner>,
    compactor: Option<tokio::task::AbortHandle>,
}

/// What the background compactor may reach (through a `Weak`).
#[derive(Debug)]
struct Inner {
    shared: Arc<Shared>,
    /// Watchers' live feed; the writer holds the other sender. Both go when the store does,
    /// which ends every watch.
    hub: WatchHub,
    limits: StoreLimits,
    sender: Option<Sender<Request>>,
    writer: Option<JoinHandle<()>>,
}

/// Counters of the writer since the store was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RedbStats {
    /// Write transactions committed to redb (one fsync each when durable).
    pub commits: u64,
    /// Store revisions written (transactions that changed something).
    pub writes: u64,
    /// Store transactions served by the writer, including reads and failed compares.
    pub txns: u64,
    /// Group commits that failed and were answered with an error.
    pub failed_commits: u64,
}

impl RedbStore {
    /// Opens the store kept in directory `path`, creating the directory and the database
    /// ([`DATABASE_FILE`]) when missing. Starts the background compactor on the current tokio
    /// runtime, if there is one.
    pub fn open(path: impl AsRef<Path>, options: RedbOptions) -> Result<RedbStore, StoreError> {
        Self::open_with(path.as_ref(), options, Opener::plain(options.cache_bytes))
    }

    /// [`RedbStore::open`] with injected faults (feature `failpoints`, for tests).
    #[cfg(feature = "failpoints")]
    pub fn open_with_faults(
        path: impl AsRef<Path>,
        options: RedbOptions,
        faults: crate::faults::FaultSwitch,
    ) -> Result<RedbStore, StoreError> {
        Self::open_with(
            path.as_ref(),
            options,
            Opener {
                cache_bytes: options.cache_bytes,
                faults: Some(faults),
            },
        )
    }

    fn open_with(
        dir: &Path,
        options: RedbOptions,
        opener: Opener,
    ) -> Result<RedbStore, StoreError> {
        prepare_dir(dir)?;
        let file = dir.join(DATABASE_FILE);
        let db = opener.open(&file)?;
        let meta = initialize(&db).map_err(|error| StoreError::Backend {
            message: format!(
                "cannot initialize redb database {}: {error}",
                file.display()
            ),
            source: Some(Arc::new(error)),
        })?;
        let shared = Arc::new(Shared::new(file, options.durable, db, meta, opener));
        let (sender, receiver) = std::sync::mpsc::channel();
        let hub = WatchHub::new(WATCH_BUFFER);
        let writer = Writer::new(shared.clone(), hub.clone(), receiver);
        let writer = std::thread::Builder::new()
            .name("redb-writer".into())
            .spawn(move || writer.run())
            .map_err(|error| StoreError::backend("cannot start the redb writer thread", error))?;
        let inner = Arc::new(Inner {
            shared,
            hub,
            limits: options.limits,
            sender: Some(sender),
            writer: Some(writer),
        });
        let compactor = match tokio::runtime::Handle::try_current() {
            Ok(handle) => Some(
                handle
                    .spawn(compact_in_background(
                        Arc::downgrade(&inner),
                        options.retention,
                        options.compaction_period,
                    ))
                    .abort_handle(),
            ),
            Err(_) => {
                tracing::warn!(
                    "redb store opened outside a tokio runtime: no background compaction"
                );
                None
            }
        };
        Ok(RedbStore { inner, compactor })
    }

    /// Counters of the writer since the store was opened.
    pub fn stats(&self) -> RedbStats {
        let stats = &self.inner.shared.stats;
        RedbStats {
            commits: stats.commits.load(Ordering::Relaxed),
            writes: stats.writes.load(Ordering::Relaxed),
            txns: stats.txns.load(Ordering::Relaxed),
            failed_commits: stats.failed_commits.load(Ordering::Relaxed),
        }
    }
}

fn prepare_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.exists() && !dir.is_dir() {
        return Err(StoreError::Backend {
            message: format!("store path {} exists and is not a directory", dir.display()),
            source: None,
        });
    }
    std::fs::create_dir_all(dir).map_err(|error| {
        StoreError::backend(
            format!("cannot create store directory {}", dir.display()),
            error,
        )
    })
}

impl Inner {
    fn status(&self) -> StoreStatus {
        StoreStatus {
            revision: self.shared.revision.load(Ordering::Acquire),
            compacted_revision: self.shared.compacted.load(Ordering::Acquire),
        }
    }

    fn send(&self, request: Request) -> Result<(), StoreError> {
        let sender = self.sender.as_ref().ok_or_else(closed)?;
        sender.send(request).map_err(|_| closed())
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The writer drains what is queued, then sees the channel closed and stops.
        drop(self.sender.take());
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::error!("the redb writer thread panicked");
        }
        self.shared.close();
    }
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        if let Some(compactor) = self.compactor.take() {
            compactor.abort();
        }
        // The compactor holds the store only for a moment per tick, never across an await:
        // wait for that moment to pass so the file is closed when this returns.
        while Arc::strong_count(&self.inner) > 1 {
            std::thread::yield_now();
        }
    }
}

/// Reads a range in one read transaction, at the current revision or a past one.
fn read_range(shared: &Shared, request: &RangeRequest) -> Result<RangeResponse, StoreError> {
    let (rtx, meta) = shared.begin_read()?;
    let revision = request.revision.unwrap_or(meta.revision);
    if revision > meta.revision {
        return Err(StoreError::FutureRevision {
            requested: revision,
            current: meta.revision,
        });
    }
    if revision < meta.compacted {
        return Err(StoreError::Compacted {
            requested: revision,
            compacted: meta.compacted,
        });
    }
    let limit = request.limit.unwrap_or(usize::MAX);
    let versions = Versions {
        history: rtx.open_table(HISTORY).map_err(storage("open table"))?,
        values: rtx.open_table(VALUES).map_err(storage("open table"))?,
    };
    versions.range(&request.range, limit, revision)
}

/// Compacts whatever falls out of `retention`, every `period`, while the store lives.
async fn compact_in_background(store: Weak<Inner>, retention: Retention, period: Duration) {
    let mut compactor = Compactor::new(retention);
    let mut ticker = tokio::time::interval(period);
    loop {
        ticker.tick().await;
        let Some(inner) = store.upgrade() else {
            return;
        };
        let status = inner.status();
        if let Some(target) = compactor.observe(tokio::time::Instant::now(), status.revision)
            && target > status.compacted_revision
            && inner
                .send(Request::Compact {
                    revision: target,
                    reply: None,
                })
                .is_err()
        {
            return;
        }
    }
}

#[async_trait]
impl Store for RedbStore {
    async fn status(&self) -> Result<StoreStatus, StoreError> {
        Ok(self.inner.status())
    }

    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, StoreError> {
        // A single key is a few seeks: read it here. Anything wider may walk many keys (every
        // matching key is counted), so keep it off the async workers when there is a runtime.
        let single_key = request.range.end.as_deref().is_some_and(|end| {
            end.len() == request.range.start.len() + 1
                && end.starts_with(&request.range.start)
                && end.last() == Some(&0)
        });
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if !single_key => {
                let shared = self.inner.shared.clone();
                runtime
                    .spawn_blocking(move || read_range(&shared, &request))
                    .await
                    .map_err(|error| StoreError::backend("redb range read task failed", error))?
            }
            _ => read_range(&self.inner.shared, &request),
        }
    }

    async fn txn(&self, txn: Txn) -> Result<TxnResponse, StoreError> {
        self.inner.limits.check_txn(&txn)?;
        let (reply, answer) = oneshot::channel();
        self.inner.send(Request::Txn { txn, reply })?;
        answer.await.map_err(|_| closed())?
    }

    async fn watch(&self, range: KeyRange, after: Revision) -> Result<WatchStream, StoreError> {
        let status = self.inner.status();
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
        let log: Arc<dyn EventLog> = self.inner.shared.clone();
        Ok(self.inner.hub.watch(log, range, after))
    }

    async fn compact(&self, revision: Revision) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.inner.send(Request::Compact {
            revision,
            reply: Some(reply),
        })?;
        answer.await.map_err(|_| closed())?
    }
}

#[cfg(test)]
mod tests;
