//! Members of a stored object that a status merge patch cannot change, carried through the write
//! as the stored bytes instead of being decoded, compared, copied and encoded again.
//!
//! A merge patch of `status` alone (the simulated members' kubelet, ReplicaSet and Deployment
//! controllers; the control plane's Work and binding status controllers) leaves everything but
//! `status` as stored. Two members are most of such an object and are cut out of the stored
//! bytes before decoding (a placeholder holds their place) and put back, byte for byte, into
//! the encoded result; the stored object is the same as the whole path would store:
//!
//! - **`spec`** of the kinds in [`spec_applies_to`]: a Work's manifests, a binding's placement
//!   and resource, a workload's pod template. The write's defaulting, validation and
//!   managed-fields bookkeeping see an empty `spec` in both the old and the new object: a
//!   status write's checks skip a `spec` carried over unchanged (it was checked when it was
//!   written), and what defaulting would add to the placeholder is dropped
//!   ([`Kept::reset_spec`]).
//! - **`metadata.managedFields`** of an untracked writer's write
//!   ([`crate::Builder::untracked_writer`]) that no entry owns anything of `status` in: such a
//!   write leaves the entries as they were ([`super::managed_fields`]). The control plane's
//!   entry on a member's Deployment lists every field it sent, often a third of the object.

use bytes::Bytes;
use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::object::{self, scan};

/// What the decoded object carries in place of the entries (never stored: see [`put_back`]).
const ENTRIES_PLACEHOLDER: &[u8] = b"0";

/// What the decoded object carries in place of `spec`: an empty object, which every defaulting
/// and validation rule reads as a `spec` without members (never stored).
const SPEC_PLACEHOLDER: &[u8] = b"{}";

/// The members a write carries as bytes (in the stored bytes already once stored).
#[derive(Debug, Default, Clone)]
pub(in crate::registry) struct Kept {
    /// The stored `metadata.managedFields`.
    pub managed_fields: Option<Bytes>,
    /// The stored `spec`.
    pub spec: Option<Bytes>,
}

/// Whether a write to `info` may keep members as bytes: no conversion between served and
/// stored forms (built-in kinds stored as served) and nothing that reads the whole new object
/// before it is stored besides the registry's own checks.
pub(super) fn applies_to(info: &ResourceInfo) -> bool {
    info.crd.is_none() && info.storage_group.is_none()
}

/// Whether a status write to `info` may keep `spec` as bytes: kinds whose defaulting, status
/// validation and managed-fields bookkeeping were checked not to read `spec` on a status write
/// (a Job's defaulting, for one, copies its pod template's labels into its metadata).
pub(super) fn spec_applies_to(info: &ResourceInfo) -> bool {
    applies_to(info)
        && matches!(
            (info.group.as_str(), info.kind.as_str()),
            ("", "Pod")
                | (
                    "apps",
                    "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet"
                )
                | (
                    "work.karmada.io",
                    "Work" | "ResourceBinding" | "ClusterResourceBinding"
                )
        )
}

impl Kept {
    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.managed_fields.is_none() && self.spec.is_none()
    }

    /// Puts the placeholder back in place of whatever defaulting made of it.
    pub fn reset_spec(&self, object: &mut Value) {
        if self.spec.is_some()
            && let Some(map) = object.as_object_mut()
        {
            map.insert("spec".into(), Value::Object(Default::default()));
        }
    }

    /// `object` (which carries the placeholders) with the kept members decoded back into it.
    pub fn restore(&self, object: &mut Value) -> Result<(), ApiError> {
        let decode = |raw: &Bytes, what: &str| {
            serde_json::from_slice::<Value>(raw)
                .map_err(|e| ApiError::internal(format!("stored {what}: {e}")))
        };
        if let Some(raw) = &self.managed_fields {
            let entries = decode(raw, "managedFields")?;
            object::metadata_mut(object).insert("managedFields".into(), entries);
        }
        if let Some(raw) = &self.spec {
            let spec = decode(raw, "spec")?;
            if let Some(map) = object.as_object_mut() {
                map.insert("spec".into(), spec);
            }
        }
        Ok(())
    }
}

/// The stored object (`stored`, maybe compact) with the members asked for replaced by their
/// placeholders, and those members' bytes. A member is kept when asked for and present:
/// `managed_fields` when the entries are a non-empty list none of which may own something in
/// `status` (the text `"f:status"` anywhere in them: at worst a needless fallback), `spec` when
/// it is an object. `None` (the whole path decides) when nothing is kept or the bytes do not
/// scan.
pub(super) fn take(stored: &[u8], managed_fields: bool, spec: bool) -> Option<(Vec<u8>, Kept)> {
    let json = object::compact::expand(stored).ok()?;
    let [Some(meta), spec_span] = scan::pick(&json, ["metadata", "spec"])? else {
        return None;
    };
    let mut cuts: Vec<(std::ops::Range<usize>, &[u8])> = Vec::with_capacity(2);
    if managed_fields && let [Some(entries)] = scan::pick(&json[meta.clone()], ["managedFields"])? {
        let span = meta.start + entries.start..meta.start + entries.end;
        let raw = &json[span.clone()];
        let inner = raw.strip_prefix(b"[")?.trim_ascii_start();
        if inner.first() != Some(&b']') && memchr::memmem::find(raw, b"\"f:status\"").is_none() {
            cuts.push((span, ENTRIES_PLACEHOLDER));
        }
    }
    if spec
        && let Some(span) = spec_span
        && json[span.clone()].first() == Some(&b'{')
    {
        cuts.push((span, SPEC_PLACEHOLDER));
    }
    if cuts.is_empty() {
        return None;
    }
    cuts.sort_by_key(|(span, _)| span.start);
    let mut kept = Kept::default();
    let mut without = Vec::with_capacity(json.len());
    let mut at = 0;
    for (span, placeholder) in cuts {
        without.extend_from_slice(&json[at..span.start]);
        without.extend_from_slice(placeholder);
        let raw = Bytes::copy_from_slice(&json[span.clone()]);
        if placeholder == SPEC_PLACEHOLDER {
            kept.spec = Some(raw);
        } else {
            kept.managed_fields = Some(raw);
        }
        at = span.end;
    }
    without.extend_from_slice(&json[at..]);
    Some((without, kept))
}

/// `json` (an object encoded with the placeholders) with the kept members in their place, and
/// `shift`: how many bytes later a position of `json` (outside the replaced members) is in the
/// result. `None` if a placeholder is not where it was put.
pub(super) fn put_back(json: &[u8], kept: &Kept) -> Option<(Vec<u8>, impl Fn(usize) -> usize)> {
    let [Some(meta), spec_span] = scan::pick(json, ["metadata", "spec"])? else {
        return None;
    };
    let mut pastes: Vec<(std::ops::Range<usize>, &[u8])> = Vec::with_capacity(2);
    if let Some(raw) = &kept.managed_fields {
        let [Some(entries)] = scan::pick(&json[meta.clone()], ["managedFields"])? else {
            return None;
        };
        let span = meta.start + entries.start..meta.start + entries.end;
        if json[span.clone()] != *ENTRIES_PLACEHOLDER {
            return None;
        }
        pastes.push((span, raw));
    }
    if let Some(raw) = &kept.spec {
        let span = spec_span?;
        if json[span.clone()] != *SPEC_PLACEHOLDER {
            return None;
        }
        pastes.push((span, raw));
    }
    pastes.sort_by_key(|(span, _)| span.start);
    let grown: usize = pastes.iter().map(|(s, raw)| raw.len() - s.len()).sum();
    let mut out = Vec::with_capacity(json.len() + grown);
    let mut at = 0;
    let mut shifts = Vec::with_capacity(pastes.len());
    for (span, raw) in pastes {
        out.extend_from_slice(&json[at..span.start]);
        out.extend_from_slice(raw);
        shifts.push((span.start, raw.len() - span.len()));
        at = span.end;
    }
    out.extend_from_slice(&json[at..]);
    let shift = move |position: usize| {
        position
            + shifts
                .iter()
                .filter(|(start, _)| *start < position)
                .map(|(_, grown)| grown)
                .sum::<usize>()
    };
    Some((out, shift))
}

/// [`super::encode_served_and_stored`] of `object`, which carries the placeholders of `kept`,
/// with the kept members put back.
#[allow(clippy::type_complexity)]
pub(super) fn encode(
    info: &ResourceInfo,
    object: &Value,
    kept: &Kept,
    compact: bool,
) -> Result<(Bytes, Option<(u32, bool)>, Bytes), ApiError> {
    let (served, splice) = object::encode_spliced(object)?;
    let (json, shift) = put_back(&served, kept)
        .ok_or_else(|| ApiError::internal("members kept as bytes: placeholder not found"))?;
    let splice = splice.and_then(|(at, comma)| Some((u32::try_from(shift(at)).ok()?, comma)));
    let served = Bytes::from(json);
    let stored = super::compacted(info, served.clone(), compact);
    Ok((served, splice, stored))
}

#[cfg(test)]
mod tests;
