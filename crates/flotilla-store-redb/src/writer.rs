//! The writer thread: group commit. It takes every queued transaction, applies each (each its
//! own revision, in queue order) inside ONE redb write transaction, commits once (one fsync
//! when durable), then answers every caller and publishes each revision's batch to the
//! [`WatchHub`](flotilla_store::watch::WatchHub) in revision order. Compaction runs here too,
//! in bounded chunks between groups, so it never races a write.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use flotilla_store::watch::{Batch, WatchHub};
use flotilla_store::{
    Event, EventKind, KeyValue, Op, OpResult, Revision, StoreError, Txn, TxnResponse,
};
use redb::{Durability, Table, WriteTransaction};
use tokio::sync::oneshot;

use crate::codec::{HistoryRecord, encode_log_event};
use crate::error::storage;
use crate::shared::Shared;
use crate::tables::{HISTORY, LOG, META, META_REVISION, VALUES, Versions};

mod compaction;

/// Most transactions committed together in one group.
const MAX_GROUP: usize = 4096;
/// How long the writer waits for the callers of the last group to come back (see
/// [`Writer::gather`]). Far below an fsync, so it costs little latency and only arises when
/// several writers are active.
const GATHER_WINDOW: Duration = Duration::from_micros(500);
/// A group at least this large means the store is under load: it then stays open while
/// requests keep arriving (see [`next_wait`]).
const LOADED_GROUP: usize = 4;
/// Under load, the longest gap between two requests that keeps a group open (the writer sleeps
/// this long, then commits unless something arrived meanwhile). In the propagation burst
/// (~3,800 writes/s, requests ~260 µs apart on average), with the writer woken per request,
/// 200 µs closed groups at ~7 transactions and 1 ms with a 5 ms window gave ~11 and ~12 % less
/// control-plane CPU. Asleep instead (`bench propagate --clusters 100 --deployments 3000`):
/// 500 µs gives ~10 per group and reached all applied ~3 % sooner than 1 ms (~12), at the same
/// CPU; 250 µs (~8) no sooner, at a little more CPU; 2 ms with a 10 ms window (~15) ~20 %
/// later: the writers wait on their commits.
const ARRIVAL_GAP: Duration = Duration::from_micros(500);
/// Under load, the longest a group stays open after its first request.
const LOADED_WINDOW: Duration = Duration::from_millis(5);

/// A request to the writer thread.
pub(crate) enum Request {
    Txn {
        txn: Txn,
        reply: oneshot::Sender<Result<TxnResponse, StoreError>>,
    },
    Compact {
        revision: Revision,
        /// `None`: nobody waits (the background compactor).
        reply: Option<oneshot::Sender<Result<(), StoreError>>>,
    },
}

type TxnReply = oneshot::Sender<Result<TxnResponse, StoreError>>;

/// The compaction being carried out, and who waits for it.
struct PendingCompaction {
    target: Revision,
    waiters: Vec<oneshot::Sender<Result<(), StoreError>>>,
}

pub(crate) struct Writer {
    shared: Arc<Shared>,
    hub: WatchHub,
    receiver: Receiver<Request>,
    compaction: Option<PendingCompaction>,
    /// Size of the last group committed.
    last_group: usize,
}

type HistoryTable<'txn> = Table<'txn, (&'static [u8], i64), &'static [u8]>;
type ValuesTable<'txn> = Table<'txn, (i64, u32), &'static [u8]>;

/// The open tables of one write transaction.
struct Tables<'txn> {
    versions: Versions<HistoryTable<'txn>, ValuesTable<'txn>>,
}

impl Writer {
    pub fn new(shared: Arc<Shared>, hub: WatchHub, receiver: Receiver<Request>) -> Self {
        Writer {
            shared,
            hub,
            receiver,
            compaction: None,
            last_group: 0,
        }
    }

    /// Serves requests until every sender is gone.
    pub fn run(mut self) {
        while let Some((txns, replies)) = self.gather() {
            if !txns.is_empty() {
                self.last_group = txns.len();
                self.commit_group(txns, replies);
            }
            if self.compaction.is_some() {
                self.compaction_step();
            }
        }
        tracing::debug!(path = %self.shared.file.display(), "redb writer stopped");
    }

    /// Takes the next group: waits for a first request (unless a compaction has work to do),
    /// then everything queued, then possibly more (see [`next_wait`]). `None` once every sender
    /// is gone.
    fn gather(&mut self) -> Option<(Vec<Txn>, Vec<TxnReply>)> {
        let mut txns = Vec::new();
        let mut replies = Vec::new();
        let mut next = if self.compaction.is_some() {
            match self.receiver.try_recv() {
                Ok(request) => Some(request),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return None,
            }
        } else {
            Some(self.receiver.recv().ok()?)
        };
        let opened = Instant::now();
        let mut catch_up = None;
        while let Some(request) = next.take() {
            match request {
                Request::Txn { txn, reply } => {
                    txns.push(txn);
                    replies.push(reply);
                }
                Request::Compact { revision, reply } => self.request_compaction(revision, reply),
            }
            if txns.len() >= MAX_GROUP {
                break;
            }
            next = self.receiver.try_recv().ok();
            if next.is_none() && !txns.is_empty() {
                let now = Instant::now();
                match next_wait(txns.len(), self.last_group, now, opened, &mut catch_up) {
                    Some(Wait::Receive(until)) => {
                        next = self.receiver.recv_timeout(until - now).ok();
                    }
                    Some(Wait::Sleep(until)) => {
                        std::thread::sleep(until - now);
                        next = self.receiver.try_recv().ok();
                    }
                    None => {}
                }
            }
        }
        Some((txns, replies))
    }
    fn durability(&self) -> Durability {
        if self.shared.durable {
            Durability::Immediate
        } else {
            Durability::None
        }
    }

    /// Begins a write transaction at the configured durability, reopening the database first
    /// if an earlier failure closed it.
    fn begin(&self) -> Result<WriteTransaction, StoreError> {
        let db = self.shared.db()?;
        let mut wtx = db.begin_write().map_err(storage("begin write"))?;
        wtx.set_durability(self.durability())
            .map_err(storage("set durability"))?;
        Ok(wtx)
    }

    fn commit_group(&mut self, txns: Vec<Txn>, replies: Vec<TxnReply>) {
        let count = txns.len();
        match self.apply_group(txns) {
            Ok((responses, batches, committed)) => {
                if committed {
                    self.shared.stats.commits.fetch_add(1, Ordering::Relaxed);
                }
                self.shared
                    .stats
                    .writes
                    .fetch_add(batches.len() as u64, Ordering::Relaxed);
                self.shared
                    .stats
                    .txns
                    .fetch_add(count as u64, Ordering::Relaxed);
                for (reply, response) in replies.into_iter().zip(responses) {
                    // A caller that went away no longer needs its answer.
                    let _ = reply.send(Ok(response));
                }
                for batch in batches {
                    self.hub.publish(batch);
                }
            }
            Err(error) => {
                tracing::error!(%error, transactions = count, "redb group commit failed");
                self.shared
                    .stats
                    .failed_commits
                    .fetch_add(1, Ordering::Relaxed);
                for reply in replies {
                    let _ = reply.send(Err(error.clone()));
                }
                // redb may refuse every later write after an I/O error: start again from what
                // was last committed.
                // A failure is logged by `reopen`; the next group tries again.
                let _ = self.shared.reopen();
            }
        }
    }

    /// Applies the group in one write transaction and commits it. Returns each transaction's
    /// response, the batches of the revisions written, and whether anything was committed.
    fn apply_group(
        &mut self,
        txns: Vec<Txn>,
    ) -> Result<(Vec<TxnResponse>, Vec<Batch>, bool), StoreError> {
        let wtx = self.begin()?;
        let start = self.shared.revision.load(Ordering::Acquire);
        let mut revision = start;
        let mut responses = Vec::with_capacity(txns.len());
        let mut batches = Vec::new();
        {
            let mut tables = Tables {
                versions: Versions {
                    history: wtx.open_table(HISTORY).map_err(storage("open table"))?,
                    values: wtx.open_table(VALUES).map_err(storage("open table"))?,
                },
            };
            let mut log = wtx.open_table(LOG).map_err(storage("open table"))?;
            let mut record = Vec::new();
            for txn in txns {
                record.clear();
                let (response, events) = tables.apply(txn, revision + 1, &mut record)?;
                if !events.is_empty() {
                    revision += 1;
                    log.insert(revision, &record[..])
                        .map_err(storage("append to the log"))?;
                    batches.push(Batch {
                        revision,
                        events: events.into(),
                    });
                }
                responses.push(response);
            }
            if revision != start {
                let mut meta = wtx.open_table(META).map_err(storage("open table"))?;
                meta.insert(META_REVISION, revision)
                    .map_err(storage("write the revision"))?;
            }
        }
        if revision == start {
            // Reads and failed compares only: nothing to make durable.
            wtx.abort().map_err(storage("abort a read-only group"))?;
            return Ok((responses, batches, false));
        }
        wtx.commit().map_err(storage("commit"))?;
        self.shared.revision.store(revision, Ordering::Release);
        Ok((responses, batches, true))
    }
}

impl Tables<'_> {
    /// Applies one transaction at revision `next`. Returns its response and its events; when
    /// there are events, `record` holds the revision's encoded log record.
    fn apply(
        &mut self,
        txn: Txn,
        next: Revision,
        record: &mut Vec<u8>,
    ) -> Result<(TxnResponse, Vec<Event>), StoreError> {
        let mut succeeded = true;
        for compare in &txn.compares {
            let with_value = matches!(compare.target, flotilla_store::CompareTarget::Value(_));
            let current = self.versions.current(&compare.key, with_value)?;
            if !compare.evaluate(current.as_ref()) {
                succeeded = false;
                break;
            }
        }
        let ops = if succeeded { txn.success } else { txn.failure };
        let mut results = Vec::with_capacity(ops.len());
        let mut events = Vec::new();
        let mut slot = 0u32;
        for op in ops {
            match op {
                Op::Get { key } => results.push(OpResult::Get(self.load(&key)?)),
                Op::Put { key, value } => {
                    let prev = self.load(&key)?;
                    let kv = self.put(key, value, prev.as_ref(), next, slot)?;
                    slot += 1;
                    encode_log_event(
                        record,
                        EventKind::Put,
                        prev.as_ref().map_or(0, |p| p.mod_revision),
                        &kv.key,
                    );
                    events.push(Event {
                        kind: EventKind::Put,
                        kv: kv.clone(),
                        prev: prev.clone(),
                    });
                    results.push(OpResult::Put { kv, prev });
                }
                Op::Delete { key } => {
                    let prev = self.load(&key)?;
                    if let Some(prev) = &prev {
                        let (tombstone, len) = HistoryRecord::Tombstone.encode();
                        self.versions
                            .history
                            .insert((&key[..], next), &tombstone[..len])
                            .map_err(storage("write a tombstone"))?;
                        encode_log_event(record, EventKind::Delete, prev.mod_revision, &key);
                        events.push(Event {
                            kind: EventKind::Delete,
                            kv: KeyValue::tombstone(key, next),
                            prev: Some(prev.clone()),
                        });
                    }
                    results.push(OpResult::Delete { prev });
                }
            }
        }
        let revision = if events.is_empty() { next - 1 } else { next };
        Ok((
            TxnResponse {
                succeeded,
                revision,
                results,
            },
            events,
        ))
    }

    fn load(&self, key: &Bytes) -> Result<Option<KeyValue>, StoreError> {
        self.versions.current(key, true)
    }

    fn put(
        &mut self,
        key: Bytes,
        value: Bytes,
        prev: Option<&KeyValue>,
        revision: Revision,
        slot: u32,
    ) -> Result<KeyValue, StoreError> {
        let create_revision = prev.map_or(revision, |p| p.create_revision);
        let version = prev.map_or(1, |p| p.version + 1);
        {
            // Written in place: no intermediate buffer per value.
            let mut stored = self
                .versions
                .values
                .insert_reserve((revision, slot), value.len())
                .map_err(storage("write a value"))?;
            stored.as_mut().copy_from_slice(&value);
        }
        let (record, len) = HistoryRecord::Put {
            create_revision,
            version,
            slot,
        }
        .encode();
        self.versions
            .history
            .insert((&key[..], revision), &record[..len])
            .map_err(storage("write history"))?;
        Ok(KeyValue {
            key,
            value,
            create_revision,
            mod_revision: revision,
            version,
        })
    }
}

/// How the writer waits for more requests before committing a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Blocked on the queue until this instant: the first request wakes the writer. Light load,
    /// where every wake-up counts for latency and they are few.
    Receive(Instant),
    /// Asleep until this instant, then takes whatever is queued. Under load: a sender never has
    /// to wake the writer (a futex wake-up per request and a context switch for the writer,
    /// ~4 % of the control plane's CPU in the propagation burst), and the group still closes
    /// once a whole wait passes without a request.
    Sleep(Instant),
}

/// How the writer waits for another request once the queue ran dry with `len` transactions
/// gathered (`now`; the group's first request was taken at `opened`), or `None` to commit now.
/// Each commit costs a fixed amount of CPU (redb writes the tree's changed pages and its header,
/// then `fdatasync`), so under load fewer, larger groups leave more CPU to the requests
/// themselves:
///
/// - fewer than the last group: the callers just answered are most likely sending their next
///   write; wait up to [`GATHER_WINDOW`] (once per group, `catch_up` keeps the deadline), so a
///   steady set of writers shares each fsync instead of splitting into alternating groups;
/// - then, a group of [`LOADED_GROUP`] or more: wait while requests keep arriving at most
///   [`ARRIVAL_GAP`] apart, up to [`LOADED_WINDOW`] after the group opened;
/// - otherwise (a lone writer, a few occasional ones) commit at once: no added latency.
///
/// The writer sleeps through a wait ([`Wait::Sleep`]) once this group or the last one is of
/// [`LOADED_GROUP`] or more, and is woken by the next request otherwise.
fn next_wait(
    len: usize,
    last_group: usize,
    now: Instant,
    opened: Instant,
    catch_up: &mut Option<Instant>,
) -> Option<Wait> {
    let wait = if len.max(last_group) >= LOADED_GROUP {
        Wait::Sleep
    } else {
        Wait::Receive
    };
    if len < last_group {
        let until = *catch_up.get_or_insert(now + GATHER_WINDOW);
        if until > now {
            return Some(wait(until));
        }
    }
    if len >= LOADED_GROUP {
        let until = (now + ARRIVAL_GAP).min(opened + LOADED_WINDOW);
        return (until > now).then_some(wait(until));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_writer_is_committed_at_once() {
        let now = Instant::now();
        let mut catch_up = None;
        assert_eq!(next_wait(1, 1, now, now, &mut catch_up), None);
        assert_eq!(next_wait(1, 0, now, now, &mut catch_up), None);
        assert_eq!(next_wait(3, 2, now, now, &mut catch_up), None);
    }

    #[test]
    fn the_callers_of_the_last_group_are_waited_for_once() {
        let opened = Instant::now();
        let mut catch_up = None;
        assert_eq!(
            next_wait(2, 3, opened, opened, &mut catch_up),
            Some(Wait::Receive(opened + GATHER_WINDOW))
        );
        // Later in the same group the deadline stays where it was.
        let later = opened + GATHER_WINDOW / 2;
        assert_eq!(
            next_wait(2, 3, later, opened, &mut catch_up),
            Some(Wait::Receive(opened + GATHER_WINDOW))
        );
        // Past it a small group is committed.
        let past = opened + GATHER_WINDOW;
        assert_eq!(next_wait(2, 3, past, opened, &mut catch_up), None);
    }

    #[test]
    fn a_loaded_group_stays_open_while_requests_keep_arriving() {
        let opened = Instant::now();
        let mut catch_up = None;
        assert_eq!(
            next_wait(LOADED_GROUP, 1, opened, opened, &mut catch_up),
            Some(Wait::Sleep(opened + ARRIVAL_GAP))
        );
        let later = opened + LOADED_WINDOW / 2;
        assert_eq!(
            next_wait(LOADED_GROUP + 5, 1, later, opened, &mut catch_up),
            Some(Wait::Sleep(later + ARRIVAL_GAP))
        );
        // Never past the window.
        let near_end = opened + LOADED_WINDOW - ARRIVAL_GAP / 2;
        assert_eq!(
            next_wait(LOADED_GROUP + 9, 1, near_end, opened, &mut catch_up),
            Some(Wait::Sleep(opened + LOADED_WINDOW))
        );
        let end = opened + LOADED_WINDOW;
        assert_eq!(
            next_wait(LOADED_GROUP + 9, 1, end, opened, &mut catch_up),
            None
        );
    }

    #[test]
    fn a_loaded_group_short_of_the_last_waits_for_its_callers_then_for_arrivals() {
        let opened = Instant::now();
        let mut catch_up = None;
        let len = LOADED_GROUP + 1;
        assert_eq!(
            next_wait(len, 64, opened, opened, &mut catch_up),
            Some(Wait::Sleep(opened + GATHER_WINDOW))
        );
        let past = opened + GATHER_WINDOW;
        assert_eq!(
            next_wait(len, 64, past, opened, &mut catch_up),
            Some(Wait::Sleep(past + ARRIVAL_GAP))
        );
    }

    #[test]
    fn under_load_the_writer_sleeps_instead_of_being_woken_per_request() {
        let opened = Instant::now();
        // The first request after a loaded group: its callers are waited for asleep.
        let mut catch_up = None;
        assert_eq!(
            next_wait(1, LOADED_GROUP, opened, opened, &mut catch_up),
            Some(Wait::Sleep(opened + GATHER_WINDOW))
        );
        // Past the catch-up, a group still small commits at once.
        let past = opened + GATHER_WINDOW;
        assert_eq!(
            next_wait(2, LOADED_GROUP, past, opened, &mut catch_up),
            None
        );
        // A few steady writers are woken by their requests, as before.
        let mut catch_up = None;
        assert_eq!(
            next_wait(1, LOADED_GROUP - 1, opened, opened, &mut catch_up),
            Some(Wait::Receive(opened + GATHER_WINDOW))
        );
    }
}
