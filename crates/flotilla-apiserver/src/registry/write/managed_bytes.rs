//! An untracked writer's status patch that keeps the stored `metadata.managedFields` as bytes.
//!
//! A simulated member's controllers ([`crate::Builder::untracked_writer`]) write the status of
//! Deployments the control plane created; the control plane's entry lists every field it sent,
//! often a third of the object. When no entry owns anything in `status`, such a write leaves the
//! entries as they were ([`super::managed_fields`]), yet decoding, comparing, copying and
//! encoding them was a large part of each write. Here they are cut out of the stored bytes
//! before decoding (a placeholder holds their place in `metadata`) and put back, byte for byte,
//! into the encoded result: the stored object is the same as the whole path would store.

use bytes::Bytes;
use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::object::{self, scan};

/// What the decoded object carries in place of the entries (never stored: see [`put_back`]).
const PLACEHOLDER: &[u8] = b"0";

/// Whether a write to `info` may keep the entries as bytes: no conversion between served and
/// stored forms (built-in kinds stored as served) and nothing that reads the whole new object
/// before it is stored besides the registry's own checks.
pub(super) fn applies_to(info: &ResourceInfo) -> bool {
    info.crd.is_none() && info.storage_group.is_none()
}

/// The stored object (`stored`, maybe compact) with the value of `metadata.managedFields`
/// replaced by the placeholder, and that value. `None` (the whole path decides) when the object
/// has no entries, when any entry may own something in `status` (the text `"f:status"` anywhere
/// in them: at worst a needless fallback), or when the bytes do not scan.
pub(super) fn take(stored: &[u8]) -> Option<(Vec<u8>, Bytes)> {
    let json = object::compact::expand(stored).ok()?;
    let (_, _, [Some(span)]) = scan::pick_nested(&json, [], "metadata", ["managedFields"])? else {
        return None;
    };
    let raw = &json[span.clone()];
    let inner = raw.strip_prefix(b"[")?.trim_ascii_start();
    if inner.first() == Some(&b']') || memchr::memmem::find(raw, b"\"f:status\"").is_some() {
        return None;
    }
    let mut without = Vec::with_capacity(json.len() - raw.len() + PLACEHOLDER.len());
    without.extend_from_slice(&json[..span.start]);
    without.extend_from_slice(PLACEHOLDER);
    without.extend_from_slice(&json[span.end..]);
    Some((without, Bytes::copy_from_slice(raw)))
}

/// `json` (an object encoded with the placeholder) with the entries `raw` in its place, and how
/// many bytes longer that made it. `None` if the placeholder is not where it was put.
pub(super) fn put_back(json: &[u8], raw: &[u8]) -> Option<(Vec<u8>, usize)> {
    let (_, _, [Some(span)]) = scan::pick_nested(json, [], "metadata", ["managedFields"])? else {
        return None;
    };
    if &json[span.clone()] != PLACEHOLDER {
        return None;
    }
    let mut out = Vec::with_capacity(json.len() - PLACEHOLDER.len() + raw.len());
    out.extend_from_slice(&json[..span.start]);
    out.extend_from_slice(raw);
    out.extend_from_slice(&json[span.end..]);
    Some((out, raw.len() - PLACEHOLDER.len()))
}

/// [`super::encode_served_and_stored`] of `object`, which carries the placeholder, with the
/// entries `raw` put back.
#[allow(clippy::type_complexity)]
pub(super) fn encode(
    info: &ResourceInfo,
    object: &Value,
    raw: &Bytes,
    compact: bool,
) -> Result<(Bytes, Option<(u32, bool)>, Bytes), ApiError> {
    let (served, splice) = object::encode_spliced(object)?;
    let (json, grown) = put_back(&served, raw)
        .ok_or_else(|| ApiError::internal("managedFields kept as bytes: placeholder not found"))?;
    // The entries are inside `metadata`, before the closing brace the splice point names.
    let splice = splice.and_then(|(at, comma)| Some((u32::try_from(at + grown).ok()?, comma)));
    let served = Bytes::from(json);
    let stored = super::compacted(info, served.clone(), compact);
    Ok((served, splice, stored))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{put_back, take};

    #[test]
    fn entries_are_cut_out_and_put_back_byte_for_byte() {
        let stored = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","managedFields":[{"manager":"cp","operation":"Update","fieldsV1":{"f:spec":{"f:replicas":{}}}}],"uid":"u"},"spec":{"replicas":2},"status":{"replicas":1}}"#;
        let (without, raw) = take(stored).expect("entries taken");
        let decoded: serde_json::Value = serde_json::from_slice(&without).expect("JSON");
        assert_eq!(decoded["metadata"]["managedFields"], json!(0));
        assert_eq!(decoded["metadata"]["uid"], "u");
        let (back, grown) = put_back(&without, &raw).expect("placeholder found");
        assert_eq!(back, stored.to_vec());
        assert_eq!(grown, raw.len() - 1);
    }

    #[test]
    fn entries_that_may_own_status_or_none_at_all_take_the_whole_path() {
        let owns_status = br#"{"metadata":{"name":"web","managedFields":[{"manager":"m","fieldsV1":{"f:status":{"f:replicas":{}}}}]},"status":{}}"#;
        assert!(take(owns_status).is_none());
        let empty = br#"{"metadata":{"name":"web","managedFields":[ ]},"status":{}}"#;
        assert!(take(empty).is_none());
        let absent = br#"{"metadata":{"name":"web"},"status":{}}"#;
        assert!(take(absent).is_none());
        let not_a_list = br#"{"metadata":{"name":"web","managedFields":{}},"status":{}}"#;
        assert!(take(not_a_list).is_none());
    }

    #[test]
    fn a_moved_placeholder_is_refused() {
        let json = br#"{"metadata":{"name":"web","managedFields":[]}}"#;
        assert!(put_back(json, b"[{}]").is_none());
    }
}
