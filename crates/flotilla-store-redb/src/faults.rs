//! Fault injection for tests (feature `failpoints`): a redb storage backend over the real file
//! whose writes and syncs fail on demand, as on a full disk.

use std::fs::File;
use std::io;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use redb::StorageBackend;
use redb::backends::FileBackend;

/// Switches disk-full failures on and off for a store opened with
/// [`RedbStore::open_with_faults`](crate::RedbStore::open_with_faults).
#[derive(Debug, Clone, Default)]
pub struct FaultSwitch {
    state: Arc<FaultState>,
}

#[derive(Debug, Default)]
struct FaultState {
    disk_full: AtomicBool,
    failures: AtomicU64,
}

impl FaultSwitch {
    pub fn new() -> Self {
        Self::default()
    }

    /// While set, every write, resize and sync of the database file fails with `StorageFull`.
    pub fn set_disk_full(&self, full: bool) {
        self.state.disk_full.store(full, Ordering::SeqCst);
    }

    /// How many operations failed because of the switch.
    pub fn failures(&self) -> u64 {
        self.state.failures.load(Ordering::SeqCst)
    }

    fn check(&self) -> io::Result<()> {
        if self.state.disk_full.load(Ordering::SeqCst) {
            self.state.failures.fetch_add(1, Ordering::SeqCst);
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                "injected fault: no space left on device",
            ));
        }
        Ok(())
    }

    /// A backend over `file` that obeys this switch.
    pub(crate) fn backend(&self, file: File) -> Result<FaultyBackend, redb::DatabaseError> {
        Ok(FaultyBackend {
            inner: FileBackend::new(file)?,
            switch: self.clone(),
        })
    }
}

#[derive(Debug)]
pub(crate) struct FaultyBackend {
    inner: FileBackend,
    switch: FaultSwitch,
}

impl StorageBackend for FaultyBackend {
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.inner.read(offset, out)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.switch.check()?;
        self.inner.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.switch.check()?;
        self.inner.sync_data()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.switch.check()?;
        self.inner.write(offset, data)
    }

    fn close(&self) -> io::Result<()> {
        self.inner.close()
    }

    fn try_lock_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, redb::BackendError> {
        self.inner.try_lock_range(start, end)
    }

    fn try_lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, redb::BackendError> {
        self.inner.try_lock_shared_range(start, end)
    }

    fn lock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), redb::BackendError> {
        self.inner.lock_range(start, end)
    }

    fn lock_shared_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<(), redb::BackendError> {
        self.inner.lock_shared_range(start, end)
    }

    fn unlock_range(&self, start: Bound<u64>, end: Bound<u64>) -> Result<(), redb::BackendError> {
        self.inner.unlock_range(start, end)
    }

    fn query_lock_range(
        &self,
        start: Bound<u64>,
        end: Bound<u64>,
    ) -> Result<bool, redb::BackendError> {
        self.inner.query_lock_range(start, end)
    }
}
