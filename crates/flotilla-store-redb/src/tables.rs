//! Table definitions and the reads shared by read and write transactions.

use std::ops::Bound;

use bytes::Bytes;
use flotilla_store::{
    Event, EventKind, KeyRange, KeyValue, RangeResponse, Revision, StoreError, watch::Batch,
};
use redb::{ReadableTable, TableDefinition};

use crate::codec::{HistoryRecord, decode_log};
use crate::error::storage;

/// Every retained version: (key, modification revision) → [`HistoryRecord`]. A key's current
/// state is its last entry.
pub(crate) const HISTORY: TableDefinition<'static, (&[u8], i64), &[u8]> =
    TableDefinition::new("history");
/// Every retained value: (modification revision, slot) → value bytes. Keyed by revision so
/// that a group's values are appended together, not scattered across the file.
pub(crate) const VALUES: TableDefinition<'static, (i64, u32), &[u8]> =
    TableDefinition::new("values");
/// The change log: revision → that revision's events (see [`crate::codec::encode_log_event`]).
pub(crate) const LOG: TableDefinition<'static, i64, &[u8]> = TableDefinition::new("log");
/// Bookkeeping: [`META_REVISION`], [`META_COMPACTED`], [`META_FORMAT`].
pub(crate) const META: TableDefinition<'static, &str, i64> = TableDefinition::new("meta");

pub(crate) const META_REVISION: &str = "revision";
pub(crate) const META_COMPACTED: &str = "compacted";
pub(crate) const META_FORMAT: &str = "format";
/// The layout version written by this crate.
pub(crate) const FORMAT: i64 = 2;

/// The tables holding versions: `history` and `values`.
pub(crate) struct Versions<H, V> {
    pub history: H,
    pub values: V,
}

/// The first key strictly after every version of the key it was made from.
type Cursor = Bound<(Vec<u8>, i64)>;

impl<H, V> Versions<H, V>
where
    H: ReadableTable<(&'static [u8], i64), &'static [u8]>,
    V: ReadableTable<(i64, u32), &'static [u8]>,
{
    /// The version of `key` visible at `revision` (`None`: absent or deleted then), with its
    /// value only when `with_value` is set (compares on revisions need none).
    pub fn visible(
        &self,
        key: &[u8],
        revision: Revision,
        with_value: bool,
    ) -> Result<Option<KeyValue>, StoreError> {
        let mut versions = self
            .history
            .range::<(&[u8], i64)>((key, i64::MIN)..=(key, revision))
            .map_err(storage("read history"))?;
        let Some(entry) = versions.next_back() else {
            return Ok(None);
        };
        let (found, record) = entry.map_err(storage("read history"))?;
        let record = HistoryRecord::decode(record.value())?;
        self.to_kv(key, found.value().1, record, with_value)
    }

    /// The current version of `key`.
    pub fn current(&self, key: &[u8], with_value: bool) -> Result<Option<KeyValue>, StoreError> {
        self.visible(key, i64::MAX, with_value)
    }

    /// The version of `key` written at `revision` (`None`: a tombstone).
    pub fn load(&self, key: &[u8], revision: Revision) -> Result<Option<KeyValue>, StoreError> {
        let record = self
            .history
            .get((key, revision))
            .map_err(storage("read history"))?
            .ok_or_else(|| missing(key, revision))?;
        self.to_kv(key, revision, HistoryRecord::decode(record.value())?, true)
    }

    /// A history record as a key-value (`None`: a tombstone).
    fn to_kv(
        &self,
        key: &[u8],
        revision: Revision,
        record: HistoryRecord,
        with_value: bool,
    ) -> Result<Option<KeyValue>, StoreError> {
        let HistoryRecord::Put {
            create_revision,
            version,
            slot,
        } = record
        else {
            return Ok(None);
        };
        let value = if with_value {
            let value = self
                .values
                .get((revision, slot))
                .map_err(storage("read a value"))?
                .ok_or_else(|| missing(key, revision))?;
            Bytes::copy_from_slice(value.value())
        } else {
            Bytes::new()
        };
        Ok(Some(KeyValue {
            key: Bytes::copy_from_slice(key),
            value,
            create_revision,
            mod_revision: revision,
            version,
        }))
    }

    /// The first key at or after `from` and before `end`, if any.
    fn next_key(&self, from: &Cursor, end: Bound<&[u8]>) -> Result<Option<Vec<u8>>, StoreError> {
        let lower = match from {
            Bound::Included((key, rev)) => Bound::Included((&key[..], *rev)),
            Bound::Excluded((key, rev)) => Bound::Excluded((&key[..], *rev)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let upper = match end {
            Bound::Excluded(end) => Bound::Excluded((end, i64::MIN)),
            _ => Bound::Unbounded,
        };
        let mut entries = self
            .history
            .range::<(&[u8], i64)>((lower, upper))
            .map_err(storage("range history"))?;
        match entries.next() {
            Some(entry) => {
                let (key, _) = entry.map_err(storage("range history"))?;
                Ok(Some(key.value().0.to_vec()))
            }
            None => Ok(None),
        }
    }

    /// Reads `range` as it was at `revision`: per key, the latest version at or below it. Every
    /// live key is counted, at most `limit` are returned with their values. Two seeks per key,
    /// however many versions it has.
    pub fn range(
        &self,
        range: &KeyRange,
        limit: usize,
        revision: Revision,
    ) -> Result<RangeResponse, StoreError> {
        let mut kvs = Vec::new();
        let mut count = 0;
        if let Some((start, end)) = key_bounds(range) {
            let mut cursor: Cursor = match start {
                Bound::Included(start) => Bound::Included((start.to_vec(), i64::MIN)),
                _ => Bound::Unbounded,
            };
            while let Some(key) = self.next_key(&cursor, end)? {
                let want_value = kvs.len() < limit;
                if let Some(kv) = self.visible(&key, revision, want_value)? {
                    count += 1;
                    if want_value {
                        kvs.push(kv);
                    }
                }
                cursor = Bound::Excluded((key, i64::MAX));
            }
        }
        Ok(RangeResponse {
            more: count > kvs.len(),
            kvs,
            count,
            revision,
        })
    }
}

/// Both bounds of a key range over byte keys.
pub(crate) type Bounds<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// The bounds of a key range, as redb wants them; `None` when the range is empty (an end at
/// or before the start), which redb would refuse.
pub(crate) fn key_bounds(range: &KeyRange) -> Option<Bounds<'_>> {
    if let Some(end) = &range.end
        && end[..] <= range.start[..]
    {
        return None;
    }
    let end = match &range.end {
        Some(end) => Bound::Excluded(&end[..]),
        None => Bound::Unbounded,
    };
    Some((Bound::Included(&range.start[..]), end))
}

fn missing(key: &[u8], revision: Revision) -> StoreError {
    crate::codec::corrupt(format!(
        "no history for key {:?} at revision {revision}",
        flotilla_store::display_key(key)
    ))
}

/// Up to `max` log batches after `after`, rebuilt from the log and the versions.
pub(crate) fn read_log<H, V>(
    log: &impl ReadableTable<i64, &'static [u8]>,
    versions: &Versions<H, V>,
    after: Revision,
    max: usize,
) -> Result<Vec<Batch>, StoreError>
where
    H: ReadableTable<(&'static [u8], i64), &'static [u8]>,
    V: ReadableTable<(i64, u32), &'static [u8]>,
{
    let mut batches = Vec::new();
    let from = after.saturating_add(1);
    for entry in log.range::<i64>(from..).map_err(storage("read log"))? {
        if batches.len() >= max {
            break;
        }
        let (revision, record) = entry.map_err(storage("read log"))?;
        let revision = revision.value();
        let mut events = Vec::new();
        for logged in decode_log(record.value())? {
            let prev = if logged.prev_revision == 0 {
                None
            } else {
                versions.load(&logged.key, logged.prev_revision)?
            };
            let kv = match logged.kind {
                EventKind::Put => versions
                    .load(&logged.key, revision)?
                    .ok_or_else(|| missing(&logged.key, revision))?,
                EventKind::Delete => KeyValue::tombstone(logged.key.clone(), revision),
            };
            events.push(Event {
                kind: logged.kind,
                kv,
                prev,
            });
        }
        batches.push(Batch {
            revision,
            events: events.into(),
        });
    }
    Ok(batches)
}
