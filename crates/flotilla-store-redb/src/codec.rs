//! Byte layouts of the records stored in the tables. Every decoder checks lengths and returns a
//! typed error on a short or unknown record instead of panicking: the file may be corrupt.

use bytes::Bytes;
use flotilla_store::{EventKind, Revision, StoreError};

const TOMBSTONE: u8 = 0;
const PUT: u8 = 1;

/// One version in the `history` table (keyed by key and modification revision). A put names
/// its value's slot in the `values` table, keyed by (modification revision, slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HistoryRecord {
    Put {
        create_revision: Revision,
        version: i64,
        slot: u32,
    },
    Tombstone,
}

impl HistoryRecord {
    const PUT_LEN: usize = 21;

    /// A put: kind, create revision, version, value slot (21 bytes); a tombstone: kind.
    pub fn encode(&self) -> ([u8; Self::PUT_LEN], usize) {
        let mut out = [0u8; Self::PUT_LEN];
        match *self {
            HistoryRecord::Put {
                create_revision,
                version,
                slot,
            } => {
                out[0] = PUT;
                out[1..9].copy_from_slice(&create_revision.to_le_bytes());
                out[9..17].copy_from_slice(&version.to_le_bytes());
                out[17..21].copy_from_slice(&slot.to_le_bytes());
                (out, Self::PUT_LEN)
            }
            HistoryRecord::Tombstone => {
                out[0] = TOMBSTONE;
                (out, 1)
            }
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, StoreError> {
        match bytes.first() {
            Some(&TOMBSTONE) if bytes.len() == 1 => Ok(HistoryRecord::Tombstone),
            Some(&PUT) if bytes.len() == Self::PUT_LEN => Ok(HistoryRecord::Put {
                create_revision: read_i64(bytes, 1)?,
                version: read_i64(bytes, 9)?,
                slot: u32::from_le_bytes(bytes[17..21].try_into().expect("length checked")),
            }),
            _ => Err(corrupt(format!(
                "history record of {} bytes with kind {:?}",
                bytes.len(),
                bytes.first()
            ))),
        }
    }
}

/// One event of a revision in the `log` table: what happened to which key, and the
/// modification revision of the version it replaced (0: none). Values live in `history`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogEvent {
    pub kind: EventKind,
    pub prev_revision: Revision,
    pub key: Bytes,
}

/// Appends one event to a revision's log record: kind (1 byte), previous revision (8), key
/// length (4), key.
pub(crate) fn encode_log_event(out: &mut Vec<u8>, kind: EventKind, prev: Revision, key: &[u8]) {
    out.push(match kind {
        EventKind::Put => PUT,
        EventKind::Delete => TOMBSTONE,
    });
    out.extend_from_slice(&prev.to_le_bytes());
    // Keys are bounded by the store limits, far below 4 GiB.
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key);
}

/// Decodes a revision's log record.
pub(crate) fn decode_log(mut bytes: &[u8]) -> Result<Vec<LogEvent>, StoreError> {
    let mut events = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < 13 {
            return Err(corrupt(format!(
                "truncated log event of {} bytes",
                bytes.len()
            )));
        }
        let kind = match bytes[0] {
            PUT => EventKind::Put,
            TOMBSTONE => EventKind::Delete,
            other => return Err(corrupt(format!("log event of unknown kind {other}"))),
        };
        let prev_revision = read_i64(bytes, 1)?;
        let len = u32::from_le_bytes(bytes[9..13].try_into().expect("4 bytes checked")) as usize;
        let rest = &bytes[13..];
        if rest.len() < len {
            return Err(corrupt(format!(
                "log event key of {len} bytes, only {} left",
                rest.len()
            )));
        }
        events.push(LogEvent {
            kind,
            prev_revision,
            key: Bytes::copy_from_slice(&rest[..len]),
        });
        bytes = &rest[len..];
    }
    Ok(events)
}

fn read_i64(bytes: &[u8], at: usize) -> Result<i64, StoreError> {
    bytes
        .get(at..at + 8)
        .and_then(|slice| slice.try_into().ok())
        .map(i64::from_le_bytes)
        .ok_or_else(|| corrupt(format!("record of {} bytes cut short", bytes.len())))
}

/// A [`StoreError::Backend`] for a record that cannot be decoded.
pub(crate) fn corrupt(message: String) -> StoreError {
    StoreError::Backend {
        message: format!("corrupt store record: {message}"),
        source: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        for record in [
            HistoryRecord::Put {
                create_revision: 3,
                version: 4,
                slot: 7,
            },
            HistoryRecord::Tombstone,
        ] {
            let (bytes, len) = record.encode();
            assert_eq!(
                HistoryRecord::decode(&bytes[..len]).expect("decode"),
                record
            );
        }
        let mut log = Vec::new();
        encode_log_event(&mut log, EventKind::Put, 0, b"/a");
        encode_log_event(&mut log, EventKind::Delete, 7, b"/bb");
        let events = decode_log(&log).expect("decode");
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].prev_revision, 7);
        assert_eq!(events[1].key, Bytes::from_static(b"/bb"));
    }

    #[test]
    fn truncated_records_are_errors_not_panics() {
        assert!(HistoryRecord::decode(&[1, 2, 3]).is_err());
        assert!(HistoryRecord::decode(&[]).is_err());
        assert!(HistoryRecord::decode(&[9]).is_err());
        assert!(decode_log(&[1, 0, 0]).is_err());
        assert!(decode_log(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 200, 0, 0, 0, b'k']).is_err());
    }
}
