//! Compaction on the writer thread, in bounded chunks so that writes keep flowing.
//!
//! Compacting at `C` deletes the log below `C` and, for every key, the versions no read at or
//! after `C - 1` can see: all but the version visible at `C - 1` (and that one too when it is a
//! tombstone). The version visible at `C - 1` is kept because the event at `C` names it as its
//! previous value. Only keys written by the deleted log entries can have such versions, so the
//! log entries say exactly where to look.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use flotilla_store::{Revision, StoreError};
use redb::{ReadableTable, WriteTransaction};
use tokio::sync::oneshot;

use super::{PendingCompaction, Writer};
use crate::codec::{HistoryRecord, decode_log};
use crate::error::storage;
use crate::tables::{HISTORY, LOG, META, META_COMPACTED, VALUES};

/// Most log entries dropped by one compaction transaction.
const CHUNK: usize = 4096;

impl Writer {
    /// Takes a compaction request: answers it at once when there is nothing to do.
    pub(super) fn request_compaction(
        &mut self,
        revision: Revision,
        reply: Option<oneshot::Sender<Result<(), StoreError>>>,
    ) {
        let current = self.shared.revision.load(Ordering::Acquire);
        let compacted = self.shared.compacted.load(Ordering::Acquire);
        let answer = if revision > current {
            Some(Err(StoreError::FutureRevision {
                requested: revision,
                current,
            }))
        } else if revision <= compacted {
            Some(Ok(()))
        } else {
            None
        };
        if let Some(answer) = answer {
            if let Some(reply) = reply {
                let _ = reply.send(answer);
            }
            return;
        }
        let pending = self.compaction.get_or_insert(PendingCompaction {
            target: revision,
            waiters: Vec::new(),
        });
        pending.target = pending.target.max(revision);
        pending.waiters.extend(reply);
    }

    /// Runs one chunk of the pending compaction; answers the waiters when it is done.
    pub(super) fn compaction_step(&mut self) {
        let Some(target) = self.compaction.as_ref().map(|pending| pending.target) else {
            return;
        };
        let outcome = self.compact_chunk(target);
        let done = match &outcome {
            Ok(reached) => *reached >= target,
            Err(_) => true,
        };
        if let Err(error) = &outcome {
            tracing::error!(%error, target, "redb compaction failed");
        }
        if done && let Some(pending) = self.compaction.take() {
            for waiter in pending.waiters {
                let _ = waiter.send(outcome.clone().map(|_| ()));
            }
            if outcome.is_err() {
                // A failure is logged by `reopen`; the next write tries again.
                let _ = self.shared.reopen();
            }
        }
    }

    /// Compacts towards `target` in one transaction; returns the revision compacted to.
    fn compact_chunk(&mut self, target: Revision) -> Result<Revision, StoreError> {
        let wtx = self.begin()?;
        let reached = compact_in(&wtx, target)?;
        wtx.commit().map_err(storage("commit compaction"))?;
        self.shared.compacted.store(reached, Ordering::Release);
        Ok(reached)
    }
}

fn compact_in(wtx: &WriteTransaction, target: Revision) -> Result<Revision, StoreError> {
    let mut log = wtx.open_table(LOG).map_err(storage("open table"))?;
    let mut history = wtx.open_table(HISTORY).map_err(storage("open table"))?;
    let mut values = wtx.open_table(VALUES).map_err(storage("open table"))?;
    let mut keys = BTreeSet::new();
    let mut dropped = Vec::new();
    for entry in log.range::<i64>(..target).map_err(storage("read log"))? {
        if dropped.len() == CHUNK {
            break;
        }
        let (revision, record) = entry.map_err(storage("read log"))?;
        for event in decode_log(record.value())? {
            keys.insert(event.key);
        }
        dropped.push(revision.value());
    }
    // Everything below `reached` leaves the log.
    let reached = match dropped.last() {
        Some(&last) if dropped.len() == CHUNK => (last + 1).min(target),
        _ => target,
    };
    for revision in &dropped {
        log.remove(*revision).map_err(storage("drop log entry"))?;
    }
    for key in &keys {
        prune_key(&mut history, &mut values, key, reached - 1)?;
    }
    let mut meta = wtx.open_table(META).map_err(storage("open table"))?;
    meta.insert(META_COMPACTED, reached)
        .map_err(storage("write the compacted revision"))?;
    Ok(reached)
}

/// Drops the versions of `key` at or below `cut` (and their values) except the live one
/// visible at `cut`.
fn prune_key(
    history: &mut redb::Table<'_, (&'static [u8], i64), &'static [u8]>,
    values: &mut redb::Table<'_, (i64, u32), &'static [u8]>,
    key: &Bytes,
    cut: Revision,
) -> Result<(), StoreError> {
    let mut versions = Vec::new();
    for entry in history
        .range::<(&[u8], i64)>((&key[..], i64::MIN)..=(&key[..], cut))
        .map_err(storage("read history"))?
    {
        let (version, record) = entry.map_err(storage("read history"))?;
        let slot = match HistoryRecord::decode(record.value())? {
            HistoryRecord::Put { slot, .. } => Some(slot),
            HistoryRecord::Tombstone => None,
        };
        versions.push((version.value().1, slot));
    }
    let keep_last = versions.last().is_some_and(|(_, slot)| slot.is_some());
    let drop_count = versions.len() - usize::from(keep_last);
    for (revision, slot) in &versions[..drop_count] {
        history
            .remove((&key[..], *revision))
            .map_err(storage("drop history"))?;
        if let Some(slot) = slot {
            values
                .remove((*revision, *slot))
                .map_err(storage("drop a value"))?;
        }
    }
    Ok(())
}
