//! A compact stored form for API servers on a memory store ([`crate::Builder::compact_storage`]):
//! an object's stored JSON compressed with zstd against a *dictionary* that is another object
//! of the same kind, stored whole. Objects of one kind share most of their bytes (member names,
//! the spec of a ReplicaSet's pods, a node pool's labels and capacity), so a simulated pod's
//! ~1.9 KB of JSON stores in ~130 bytes and a node's ~3.2 KB in ~160, at ~3 µs to compress a
//! write and ~1 µs to expand a read (measured on this project's VM, release build).
//!
//! The dictionaries live in one table per process (every simulated cluster's pods compress
//! against the same ones) and are never dropped: stored bytes name theirs by index. That is why
//! the form is for stores that live no longer than the process: a durable store would keep
//! bytes whose dictionary a restart has lost ([`crate::Builder::start`] refuses the
//! combination).
//!
//! Layout: [`MARK`] (a byte no JSON text starts with), the dictionary's index as a LEB128
//! varint, then one zstd frame that records its content size. Everything else is plain JSON
//! and is read as it is, so a store may hold both.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use parking_lot::RwLock;
use zstd_safe::{CCtx, CDict, DCtx, DDict};

/// First byte of the compact form.
pub const MARK: u8 = 0xFF;

/// zstd's level: 1 compresses as well as 3 against a sibling (127 against 121 bytes for a pod)
/// in less time.
const LEVEL: i32 = 1;

/// Objects larger than this are stored as plain JSON: they are rare, the dictionaries matter
/// for small objects, and the store's value limit keeps applying to the JSON itself.
const MAX_COMPACT: usize = 64 * 1024;

/// A new dictionary is taken for a kind when an object compresses worse than 1 : this against
/// the kind's newest one (the first pod of a kind is often a Pending one without a status).
const RATIO: usize = 5;

/// Dictionaries per kind, and in all (~80 KB each, prepared for both directions).
const PER_KIND: usize = 4;
const TOTAL: usize = 256;

struct Dictionary {
    compress: CDict<'static>,
    expand: DDict<'static>,
}

#[derive(Default)]
struct Table {
    all: Vec<Arc<Dictionary>>,
    /// A kind's dictionaries, newest last.
    kinds: HashMap<String, Vec<u32>>,
}

static TABLE: LazyLock<RwLock<Table>> = LazyLock::new(Default::default);

thread_local! {
    static CONTEXTS: RefCell<Contexts> = RefCell::new(Contexts {
        compress: CCtx::create(),
        expand: DCtx::create(),
        scratch: Vec::new(),
    });
}

struct Contexts {
    compress: CCtx<'static>,
    expand: DCtx<'static>,
    scratch: Vec<u8>,
}

/// Whether `stored` is in the compact form.
pub fn is_compact(stored: &[u8]) -> bool {
    stored.first() == Some(&MARK)
}

/// The compact form of an object's stored JSON, `json` itself when compressing does not pay.
/// `kind` names the object's kind (dictionaries are per kind).
pub fn compress(kind: &str, json: Bytes) -> Bytes {
    if json.len() > MAX_COMPACT || json.is_empty() {
        return json;
    }
    let newest = {
        let table = TABLE.read();
        table
            .kinds
            .get(kind)
            .and_then(|ids| ids.last())
            .map(|&id| (id, table.all[id as usize].clone()))
    };
    let Some((id, dictionary)) = newest else {
        // The kind's first object: it becomes the dictionary and compresses against itself.
        return match add_dictionary(kind, &json, |table| !table.kinds.contains_key(kind)) {
            Some(_) => compress(kind, json),
            None => json,
        };
    };
    let Some(compact) = compress_with(id, &dictionary, &json) else {
        return json;
    };
    if compact.len() * RATIO > json.len() {
        add_dictionary(kind, &json, |table| {
            table.kinds.get(kind).and_then(|ids| ids.last()) == Some(&id)
        });
    }
    if compact.len() < json.len() {
        compact
    } else {
        json
    }
}

/// Makes `json` the newest dictionary of `kind` if `still` holds under the table's lock and
/// there is room; its index.
fn add_dictionary(kind: &str, json: &[u8], still: impl Fn(&Table) -> bool) -> Option<u32> {
    let mut table = TABLE.write();
    if !still(&table) {
        return table.kinds.get(kind).and_then(|ids| ids.last()).copied();
    }
    let full = table.all.len() >= TOTAL
        || table
            .kinds
            .get(kind)
            .is_some_and(|ids| ids.len() >= PER_KIND);
    if full {
        return None;
    }
    let compress = CDict::try_create(json, LEVEL)?;
    let expand = DDict::try_create(json)?;
    let id = u32::try_from(table.all.len()).ok()?;
    table.all.push(Arc::new(Dictionary { compress, expand }));
    table.kinds.entry(kind.to_owned()).or_default().push(id);
    Some(id)
}

fn compress_with(id: u32, dictionary: &Dictionary, json: &[u8]) -> Option<Bytes> {
    CONTEXTS.with_borrow_mut(|contexts| {
        let bound = zstd_safe::compress_bound(json.len());
        contexts.scratch.clear();
        contexts.scratch.reserve(bound);
        let written = contexts
            .compress
            .compress_using_cdict(&mut contexts.scratch, json, &dictionary.compress)
            .ok()?;
        let (header, len) = header(id);
        // Exactly as long as it holds: these are the bytes every copy of the object shares.
        let mut out = Vec::with_capacity(len + written);
        out.extend_from_slice(&header[..len]);
        out.extend_from_slice(&contexts.scratch[..written]);
        Some(Bytes::from(out))
    })
}

/// [`MARK`] and `id` as a LEB128 varint; the bytes and how many of them are used.
fn header(id: u32) -> ([u8; 6], usize) {
    let mut header = [MARK, 0, 0, 0, 0, 0];
    let mut len = 1;
    let mut rest = id;
    loop {
        let byte = (rest & 0x7f) as u8;
        rest >>= 7;
        header[len] = if rest == 0 { byte } else { byte | 0x80 };
        len += 1;
        if rest == 0 {
            return (header, len);
        }
    }
}

/// The dictionary index of compact bytes and where their frame starts.
fn parse_header(stored: &[u8]) -> Result<(u32, usize), ExpandError> {
    let mut id: u32 = 0;
    let mut at = 1;
    loop {
        let byte = *stored.get(at).ok_or(ExpandError("truncated header"))?;
        at += 1;
        id |= u32::from(byte & 0x7f)
            .checked_shl(7 * (at as u32 - 2))
            .ok_or(ExpandError("bad dictionary index"))?;
        if byte & 0x80 == 0 {
            return Ok((id, at));
        }
        if at > 5 {
            return Err(ExpandError("bad dictionary index"));
        }
    }
}

/// Why stored bytes in the compact form could not be expanded.
#[derive(Debug, thiserror::Error)]
#[error("stored object in the compact form cannot be expanded: {0}")]
pub struct ExpandError(&'static str);

/// The JSON of stored bytes: themselves unless they are in the compact form.
pub fn expand(stored: &[u8]) -> Result<Cow<'_, [u8]>, ExpandError> {
    if !is_compact(stored) {
        return Ok(Cow::Borrowed(stored));
    }
    let (id, at) = parse_header(stored)?;
    let frame = &stored[at..];
    let dictionary = TABLE
        .read()
        .all
        .get(id as usize)
        .cloned()
        .ok_or(ExpandError("unknown dictionary"))?;
    let size = match zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) if size <= MAX_COMPACT as u64 => size as usize,
        _ => return Err(ExpandError("bad frame header")),
    };
    let mut out = Vec::with_capacity(size);
    CONTEXTS.with_borrow_mut(|contexts| {
        contexts
            .expand
            .decompress_using_ddict(&mut out, frame, &dictionary.expand)
            .map_err(|_| ExpandError("corrupt frame"))
    })?;
    if out.len() != size {
        return Err(ExpandError("frame shorter than its header says"));
    }
    Ok(Cow::Owned(out))
}

/// The length of the JSON that stored bytes hold (without expanding them).
pub fn expanded_len(stored: &[u8]) -> usize {
    if !is_compact(stored) {
        return stored.len();
    }
    let frame_at = stored
        .iter()
        .skip(1)
        .position(|byte| byte & 0x80 == 0)
        .map_or(stored.len(), |at| at + 2);
    stored
        .get(frame_at..)
        .and_then(|frame| zstd_safe::get_frame_content_size(frame).ok().flatten())
        .map_or(stored.len(), |size| size as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: &str) -> Bytes {
        Bytes::from(format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"default","labels":{{"app":"web"}}}},"spec":{{"containers":[{{"name":"nginx","image":"nginx:1.25","terminationMessagePath":"/dev/termination-log"}}],"nodeName":"{node}"}},"status":{{"phase":"Running","conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
        ))
    }

    #[test]
    fn objects_of_a_kind_compress_against_each_other_and_expand_to_their_json() {
        let kind = "test.compact/v1/Pod";
        let first = pod("web-0", "node-a");
        let stored_first = compress(kind, first.clone());
        assert!(is_compact(&stored_first));
        assert_eq!(expand(&stored_first).unwrap().as_ref(), first.as_ref());
        for i in 1..50 {
            let json = pod(&format!("web-{i}"), &format!("node-{i}"));
            let stored = compress(kind, json.clone());
            assert!(is_compact(&stored));
            assert!(
                stored.len() * 4 < json.len(),
                "{} of {} bytes",
                stored.len(),
                json.len()
            );
            assert_eq!(expanded_len(&stored), json.len());
            assert_eq!(expand(&stored).unwrap().as_ref(), json.as_ref());
        }
    }

    #[test]
    fn plain_json_reads_as_itself_and_what_does_not_pay_stays_plain() {
        let plain = br#"{"kind":"ConfigMap"}"#;
        assert!(matches!(expand(plain).unwrap(), Cow::Borrowed(_)));
        assert_eq!(expanded_len(plain), plain.len());
        let big = Bytes::from(format!(r#"{{"data":"{}"}}"#, "x".repeat(MAX_COMPACT)));
        assert_eq!(compress("test.compact/v1/Big", big.clone()), big);
    }

    #[test]
    fn a_kind_whose_objects_drift_takes_new_dictionaries_up_to_its_limit() {
        let kind = "test.compact/v1/Drifting";
        for i in 0..40 {
            // Each object is unlike the others: pseudo-random letters of its own (xorshift).
            let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ (i + 1);
            let body: String = (0..200)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    char::from(b'a' + (state % 26) as u8)
                })
                .collect();
            let json = Bytes::from(format!(r#"{{"kind":"Drifting","data":"{body}"}}"#));
            let stored = compress(kind, json.clone());
            assert_eq!(expand(&stored).unwrap().as_ref(), json.as_ref());
        }
        let table = TABLE.read();
        assert_eq!(table.kinds[kind].len(), PER_KIND);
    }

    #[test]
    fn dictionary_indexes_round_trip_through_the_header() {
        for id in [0, 1, 127, 128, 255, 16_383, 16_384, 1 << 21, u32::MAX] {
            let (bytes, len) = header(id);
            assert_eq!(bytes[0], MARK);
            assert_eq!(parse_header(&bytes[..len]).unwrap(), (id, len), "{id}");
        }
        assert_eq!(header(127).1, 2);
        assert_eq!(header(128).1, 3);
        assert_eq!(header(u32::MAX).1, 6);
    }

    #[test]
    fn damaged_compact_bytes_are_an_error_not_a_panic() {
        let kind = "test.compact/v1/Damaged";
        let stored = compress(kind, pod("a", "b"));
        for cut in 0..stored.len() {
            let _ = expand(&stored[..cut]);
        }
        assert!(expand(&[MARK, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).is_err());
        assert!(expand(&[MARK, 0x7f]).is_err());
        let mut flipped = stored.to_vec();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x55;
        if let Ok(json) = expand(&flipped) {
            assert_ne!(json.as_ref(), pod("a", "b").as_ref());
        }
    }
}
