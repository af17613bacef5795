//! Table definitions and the reads shared by read and write transactions.

use std::ops::Bound;

use bytes::Bytes;
use flotilla_store::{
    Event, EventKind, KeyRange, KeyValue, RangeResponse, Revision, StoreError, watch::Batch,
};
use redb::{AccessGuard, ReadableTable, TableDefinition};

use crate::codec::{CurrentMeta, HistoryRecord, decode_log};
use crate::error::storage;

/// Live keys: key → [`CurrentMeta`]. Values are not duplicated here; they live in `values`.
pub(crate) const CURRENT: TableDefinition<'static, &[u8], &[u8]> = TableDefinition::new("current");
/// Every retained version: (key, modification revision) → [`HistoryRecord`].
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
pub(crate) const FORMAT: i64 = 1;

/// The tables holding versions: `history` and `values`.
pub(crate) struct Versions<H, V> {
    pub history: H,
    pub values: V,
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

/// The current key-value of `key`, with its value only when `with_value` is set (compares on
/// revisions and versions need no value).
pub(crate) fn load_current<H, V>(
    current: &impl ReadableTable<&'static [u8], &'static [u8]>,
    versions: &Versions<H, V>,
    key: &Bytes,
    with_value: bool,
) -> Result<Option<KeyValue>, StoreError>
where
    H: ReadableTable<(&'static [u8], i64), &'static [u8]>,
    V: ReadableTable<(i64, u32), &'static [u8]>,
{
    let Some(meta) = current
        .get(&key[..])
        .map_err(storage("read current state"))?
    else {
        return Ok(None);
    };
    let meta = CurrentMeta::decode(meta.value())?;
    let value = if with_value {
        match versions.load(key, meta.mod_revision)? {
            Some(kv) => kv.value,
            None => return Err(missing(key, meta.mod_revision)),
        }
    } else {
        Bytes::new()
    };
    Ok(Some(KeyValue {
        key: key.clone(),
        value,
        create_revision: meta.create_revision,
        mod_revision: meta.mod_revision,
        version: meta.version,
    }))
}

impl<H, V> Versions<H, V>
where
    H: ReadableTable<(&'static [u8], i64), &'static [u8]>,
    V: ReadableTable<(i64, u32), &'static [u8]>,
{
    /// The version of `key` written at `revision` (`None`: a tombstone).
    pub fn load(&self, key: &[u8], revision: Revision) -> Result<Option<KeyValue>, StoreError> {
        let record = self
            .history
            .get((key, revision))
            .map_err(storage("read history"))?
            .ok_or_else(|| missing(key, revision))?;
        self.to_kv(key, revision, HistoryRecord::decode(record.value())?)
    }

    /// A history record as a key-value, with its value (`None`: a tombstone).
    fn to_kv(
        &self,
        key: &[u8],
        revision: Revision,
        record: HistoryRecord,
    ) -> Result<Option<KeyValue>, StoreError> {
        let HistoryRecord::Put {
            create_revision,
            version,
            slot,
        } = record
        else {
            return Ok(None);
        };
        let value = self
            .values
            .get((revision, slot))
            .map_err(storage("read a value"))?
            .ok_or_else(|| missing(key, revision))?;
        Ok(Some(KeyValue {
            key: Bytes::copy_from_slice(key),
            value: Bytes::copy_from_slice(value.value()),
            create_revision,
            mod_revision: revision,
            version,
        }))
    }
}

fn missing(key: &[u8], revision: Revision) -> StoreError {
    crate::codec::corrupt(format!(
        "no history for key {:?} at revision {revision}",
        flotilla_store::display_key(key)
    ))
}

/// Reads the live keys of `range`: all of them are counted, at most `limit` are returned with
/// their values.
pub(crate) fn range_current<H, V>(
    current: &impl ReadableTable<&'static [u8], &'static [u8]>,
    versions: &Versions<H, V>,
    range: &KeyRange,
    limit: usize,
    revision: Revision,
) -> Result<RangeResponse, StoreError>
where
    H: ReadableTable<(&'static [u8], i64), &'static [u8]>,
    V: ReadableTable<(i64, u32), &'static [u8]>,
{
    let mut kvs = Vec::new();
    let mut count = 0;
    if let Some(bounds) = key_bounds(range) {
        for entry in current.range::<&[u8]>(bounds).map_err(storage("range"))? {
            let (key, meta) = entry.map_err(storage("range"))?;
            count += 1;
            if kvs.len() < limit {
                let meta = CurrentMeta::decode(meta.value())?;
                let key = key.value();
                let kv = versions
                    .load(key, meta.mod_revision)?
                    .ok_or_else(|| missing(key, meta.mod_revision))?;
                kvs.push(kv);
            }
        }
    }
    Ok(RangeResponse {
        more: count > kvs.len(),
        kvs,
        count,
        revision,
    })
}

/// Reads `range` as it was at the past `revision`: per key, the latest version at or below it.
pub(crate) fn range_at<H, V>(
    versions: &Versions<H, V>,
    range: &KeyRange,
    limit: usize,
    revision: Revision,
) -> Result<RangeResponse, StoreError>
where
    H: ReadableTable<(&'static [u8], i64), &'static [u8]>,
    V: ReadableTable<(i64, u32), &'static [u8]>,
{
    let mut kvs = Vec::new();
    let mut count = 0;
    if let Some((start, end)) = key_bounds(range) {
        let lower = match start {
            Bound::Included(start) => Bound::Included((start, i64::MIN)),
            _ => Bound::Unbounded,
        };
        let upper = match end {
            Bound::Excluded(end) => Bound::Excluded((end, i64::MIN)),
            _ => Bound::Unbounded,
        };
        // The latest version at or below `revision` of the key being scanned.
        let mut visible: Option<(Revision, HistoryRecord)> = None;
        let mut scanned: Option<AccessGuard<'_, (&'static [u8], i64)>> = None;
        // Counts every live key; loads values only for the page returned.
        let mut take = |key: &[u8], visible: Option<(Revision, HistoryRecord)>| {
            if let Some((rev, record @ HistoryRecord::Put { .. })) = visible {
                count += 1;
                if kvs.len() < limit
                    && let Some(kv) = versions.to_kv(key, rev, record)?
                {
                    kvs.push(kv);
                }
            }
            Ok::<(), StoreError>(())
        };
        for entry in versions
            .history
            .range::<(&[u8], i64)>((lower, upper))
            .map_err(storage("range history"))?
        {
            let (entry_key, record) = entry.map_err(storage("range history"))?;
            let (key, rev) = entry_key.value();
            let same = scanned.as_ref().is_some_and(|s| s.value().0 == key);
            if !same {
                if let Some(done) = scanned.take() {
                    take(done.value().0, visible.take())?;
                }
                scanned = Some(entry_key);
            }
            if rev <= revision {
                visible = Some((rev, HistoryRecord::decode(record.value())?));
            }
        }
        if let Some(done) = scanned.take() {
            take(done.value().0, visible.take())?;
        }
    }
    Ok(RangeResponse {
        more: count > kvs.len(),
        kvs,
        count,
        revision,
    })
}

/// Up to `max` log batches after `after`, rebuilt from the log and history tables.
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
