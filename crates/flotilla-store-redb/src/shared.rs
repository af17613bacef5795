//! State shared by the store handle, the writer thread and watchers: the database (which the
//! writer may reopen after a failure), the committed and compacted revisions, counters. Not the
//! watch hub: watch streams hold this, and the hub must close when the store goes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flotilla_store::watch::{Batch, EventLog};
use flotilla_store::{Revision, StoreError};
use parking_lot::RwLock;
use redb::{Database, ReadTransaction, ReadableDatabase, ReadableTable};

use crate::error::{closed, storage};
use crate::tables::{
    FORMAT, HISTORY, LOG, META, META_COMPACTED, META_FORMAT, META_REVISION, VALUES, Versions,
    read_log,
};

#[derive(Debug)]
pub(crate) struct Shared {
    /// The database file.
    pub file: PathBuf,
    pub durable: bool,
    /// How to open the file again after a failure.
    opener: Opener,
    /// `None` once closed, or while the writer reopens it after a failure.
    db: RwLock<Option<Arc<Database>>>,
    /// Set when the store is dropped: distinguishes "closed" from "being reopened".
    closed: AtomicBool,
    /// The last committed revision.
    pub revision: AtomicI64,
    /// The compacted revision.
    pub compacted: AtomicI64,
    pub stats: Counters,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub commits: AtomicU64,
    pub writes: AtomicU64,
    pub txns: AtomicU64,
    pub failed_commits: AtomicU64,
}

/// The revisions recorded in the meta table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaState {
    pub revision: Revision,
    pub compacted: Revision,
}

impl Shared {
    pub fn new(
        file: PathBuf,
        durable: bool,
        db: Database,
        meta: MetaState,
        opener: Opener,
    ) -> Self {
        Shared {
            file,
            durable,
            opener,
            db: RwLock::new(Some(Arc::new(db))),
            closed: AtomicBool::new(false),
            revision: AtomicI64::new(meta.revision),
            compacted: AtomicI64::new(meta.compacted),
            stats: Counters::default(),
        }
    }

    /// The open database. After a failed write the writer drops it and opens the file again;
    /// if that failed too, the first caller to need it tries again. `Unavailable` when closed or
    /// when the file still cannot be opened.
    pub fn db(&self) -> Result<Arc<Database>, StoreError> {
        if let Some(db) = self.db.read().clone() {
            return Ok(db);
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        let mut slot = self.db.write();
        if let Some(db) = slot.clone() {
            return Ok(db);
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(closed());
        }
        self.open_into(&mut slot)
            .map_err(|error| StoreError::Unavailable {
                message: format!(
                    "redb database {} cannot be reopened after a failed write: {error}",
                    self.file.display()
                ),
                source: Some(Arc::new(error)),
            })
    }

    /// A read transaction and the revisions it sees.
    pub fn begin_read(&self) -> Result<(ReadTransaction, MetaState), StoreError> {
        let db = self.db()?;
        let rtx = db.begin_read().map_err(storage("begin read"))?;
        let meta = read_meta(&rtx)?;
        Ok((rtx, meta))
    }

    /// Closes the database for good; readers get `Unavailable` from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let old = self.db.write().take();
        if let Some(old) = old {
            wait_for_readers(old);
        }
    }

    /// Drops the database handle and opens the file again, so that writes continue from the
    /// last committed state after a failure that redb does not recover from in place.
    pub fn reopen(&self) -> Result<(), StoreError> {
        let mut slot = self.db.write();
        if let Some(old) = slot.take() {
            wait_for_readers(old);
        }
        self.open_into(&mut slot).map(|_| ())
    }

    fn open_into(&self, slot: &mut Option<Arc<Database>>) -> Result<Arc<Database>, StoreError> {
        match self
            .opener
            .open(&self.file)
            .and_then(|db| Ok((initialize(&db)?, db)))
        {
            Ok((meta, db)) => {
                self.revision.store(meta.revision, Ordering::Release);
                self.compacted.store(meta.compacted, Ordering::Release);
                let db = Arc::new(db);
                *slot = Some(db.clone());
                tracing::info!(path = %self.file.display(), revision = meta.revision, "reopened redb store");
                Ok(db)
            }
            Err(error) => {
                tracing::error!(%error, path = %self.file.display(), "cannot reopen redb store; will retry");
                Err(error)
            }
        }
    }
}

/// Waits (briefly) until no reader holds the database, then closes it.
fn wait_for_readers(mut db: Arc<Database>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Arc::try_unwrap(db) {
            Ok(db) => {
                drop(db);
                return;
            }
            Err(shared) if Instant::now() < deadline => {
                db = shared;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => {
                tracing::error!("a reader kept the redb database open for 30 s; leaving it");
                return;
            }
        }
    }
}

impl EventLog for Shared {
    fn read_after(&self, after: Revision, max: usize) -> Result<Vec<Batch>, StoreError> {
        let (rtx, meta) = self.begin_read()?;
        if after + 1 < meta.compacted {
            return Err(StoreError::Compacted {
                requested: after + 1,
                compacted: meta.compacted,
            });
        }
        let log = rtx.open_table(LOG).map_err(storage("open table"))?;
        let versions = Versions {
            history: rtx.open_table(HISTORY).map_err(storage("open table"))?,
            values: rtx.open_table(VALUES).map_err(storage("open table"))?,
        };
        read_log(&log, &versions, after, max)
    }
}

/// How the database file is opened: plainly, or through a fault-injecting backend.
#[derive(Debug, Clone, Default)]
pub(crate) struct Opener {
    /// redb's page cache, in bytes (see [`crate::RedbOptions::cache_bytes`]).
    pub cache_bytes: usize,
    #[cfg(feature = "failpoints")]
    pub faults: Option<crate::faults::FaultSwitch>,
}

impl Opener {
    /// Opens the file itself, with a page cache of `cache_bytes`.
    pub fn plain(cache_bytes: usize) -> Self {
        Opener {
            cache_bytes,
            #[cfg(feature = "failpoints")]
            faults: None,
        }
    }

    /// Opens (or creates) the database file, turning every failure, including a panic inside
    /// redb on a damaged file, into an error naming the file.
    pub fn open(&self, file: &Path) -> Result<Database, StoreError> {
        let opened = std::panic::catch_unwind(|| self.open_unguarded(file));
        match opened {
            Ok(Ok(db)) => Ok(db),
            Ok(Err(error)) => {
                let error = redb::Error::from(error);
                Err(StoreError::backend(
                    format!("cannot open redb database {}: {error}", file.display()),
                    error,
                ))
            }
            Err(_) => Err(StoreError::Backend {
                message: format!(
                    "cannot open redb database {}: the file is damaged (redb panicked reading it)",
                    file.display()
                ),
                source: None,
            }),
        }
    }

    fn open_unguarded(&self, file: &Path) -> Result<Database, redb::DatabaseError> {
        #[cfg(feature = "failpoints")]
        if let Some(faults) = &self.faults {
            let handle = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(file)
                .map_err(|error| redb::DatabaseError::Storage(redb::StorageError::Io(error)))?;
            return Database::builder()
                .set_cache_size(self.cache_bytes)
                .create_with_backend(faults.backend(handle)?);
        }
        Database::builder()
            .set_cache_size(self.cache_bytes)
            .create(file)
    }
}

/// Creates the tables of a new database, checks the layout version of an existing one, and
/// returns its revisions.
pub(crate) fn initialize(db: &Database) -> Result<MetaState, StoreError> {
    let wtx = db.begin_write().map_err(storage("begin write"))?;
    let meta = {
        wtx.open_table(HISTORY).map_err(storage("create table"))?;
        wtx.open_table(LOG).map_err(storage("create table"))?;
        wtx.open_table(VALUES).map_err(storage("create table"))?;
        let mut meta = wtx.open_table(META).map_err(storage("create table"))?;
        let format = meta
            .get(META_FORMAT)
            .map_err(storage("read meta"))?
            .map(|guard| guard.value());
        match format {
            None => {
                meta.insert(META_FORMAT, FORMAT)
                    .map_err(storage("write meta"))?;
                meta.insert(META_REVISION, 1)
                    .map_err(storage("write meta"))?;
                meta.insert(META_COMPACTED, 0)
                    .map_err(storage("write meta"))?;
            }
            Some(FORMAT) => {}
            Some(other) => {
                return Err(StoreError::Backend {
                    message: format!(
                        "store layout version {other} is not supported (this build reads {FORMAT})"
                    ),
                    source: None,
                });
            }
        }
        read_meta_table(&meta)?
    };
    wtx.commit().map_err(storage("commit initialization"))?;
    Ok(meta)
}

fn read_meta(rtx: &ReadTransaction) -> Result<MetaState, StoreError> {
    let meta = rtx.open_table(META).map_err(storage("open table"))?;
    read_meta_table(&meta)
}

fn read_meta_table(meta: &impl ReadableTable<&'static str, i64>) -> Result<MetaState, StoreError> {
    let get = |name: &str| -> Result<i64, StoreError> {
        meta.get(name)
            .map_err(storage("read meta"))?
            .map(|guard| guard.value())
            .ok_or_else(|| crate::codec::corrupt(format!("meta entry {name:?} missing")))
    };
    Ok(MetaState {
        revision: get(META_REVISION)?,
        compacted: get(META_COMPACTED)?,
    })
}
