//! The PATCH engines: JSON patch (RFC 6902), JSON merge patch (RFC 7386) and Kubernetes strategic
//! merge patch, as pure functions on `serde_json::Value`.
//!
//! This module owns how a patch body changes an object; it does no I/O and knows nothing about
//! storage, admission or HTTP beyond the status code each [`PatchError`] maps to.

use serde_json::{Map, Value};

mod error;
pub mod strategic;

pub use error::PatchError;

/// kube-apiserver refuses JSON patches with more operations than this
/// (`maxJSONPatchOperations` in k8s.io/apiserver's patch handler).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// A borrowed group/version/kind, as found in a request path or an object's `apiVersion`/`kind`.
/// The core group is the empty string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupVersionKindRef<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
}

impl<'a> GroupVersionKindRef<'a> {
    pub fn new(group: &'a str, version: &'a str, kind: &'a str) -> Self {
        Self {
            group,
            version,
            kind,
        }
    }
}

/// Parses a patch body (JSON merge patch or strategic merge patch) into a value.
pub fn parse(body: &[u8]) -> Result<Value, PatchError> {
    serde_json::from_slice(body).map_err(PatchError::InvalidJson)
}

/// Applies an RFC 6902 JSON patch (`application/json-patch+json`) to `doc`.
///
/// The operations are applied in order to a copy; the first failing operation aborts the patch
/// and names its index and path.
pub fn json_patch(doc: &Value, patch_bytes: &[u8]) -> Result<Value, PatchError> {
    let operations: json_patch::Patch =
        serde_json::from_slice(patch_bytes).map_err(PatchError::InvalidJsonPatch)?;
    if operations.0.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(PatchError::TooManyOperations {
            count: operations.0.len(),
            limit: MAX_JSON_PATCH_OPERATIONS,
        });
    }
    let mut patched = doc.clone();
    for (index, operation) in operations.0.iter().enumerate() {
        reject_removal_from_empty_array(&patched, index, operation)?;
        json_patch::patch_unsafe(&mut patched, std::slice::from_ref(operation))
            .map_err(|e| PatchError::from_json_patch(index, operation, e))?;
    }
    Ok(patched)
}

/// Applies an RFC 7386 JSON merge patch (`application/merge-patch+json`) to `doc`: objects merge
/// recursively, `null` deletes a key, anything else (lists included) replaces.
///
/// Like kube-apiserver, the patch itself must be a JSON object. Key order of `doc` is kept; new
/// keys are appended in patch order.
pub fn merge_patch(doc: &Value, patch: &Value) -> Result<Value, PatchError> {
    let Value::Object(patch) = patch else {
        return Err(PatchError::NotAnObject {
            what: "a merge patch",
            found: error::kind_name(patch),
        });
    };
    // RFC 7386: a target that is not an object is treated as an empty one.
    let mut merged = match doc {
        Value::Object(doc) => doc.clone(),
        _ => Map::new(),
    };
    merge_object(&mut merged, patch);
    Ok(Value::Object(merged))
}

fn merge_object(doc: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        match value {
            Value::Null => {
                doc.shift_remove(key);
            }
            Value::Object(inner) => {
                let slot = doc
                    .entry(key.as_str())
                    .or_insert_with(|| Value::Object(Map::new()));
                if !slot.is_object() {
                    *slot = Value::Object(Map::new());
                }
                if let Value::Object(slot) = slot {
                    merge_object(slot, inner);
                }
            }
            other => {
                doc.insert(key.clone(), other.clone());
            }
        }
    }
}

/// `json-patch` 4.2 panics when removing `/-` from an empty array (it pops and unwraps); turn that
/// case into the error RFC 6902 asks for before handing the operation over.
fn reject_removal_from_empty_array(
    doc: &Value,
    index: usize,
    operation: &json_patch::PatchOperation,
) -> Result<(), PatchError> {
    let removed_from = match operation {
        json_patch::PatchOperation::Remove(op) => op.path.as_str(),
        json_patch::PatchOperation::Move(op) => op.from.as_str(),
        _ => return Ok(()),
    };
    let Some(parent) = removed_from.strip_suffix("/-") else {
        return Ok(());
    };
    match doc.pointer(parent) {
        Some(Value::Array(items)) if items.is_empty() => Err(PatchError::PathNotFound {
            index,
            op: error::op_name(operation),
            path: removed_from.to_string(),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
