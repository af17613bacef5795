//! Strategic merge patch (`application/strategic-merge-patch+json`) for the built-in kinds, as
//! kube-apiserver applies it: lists merge by their `patchMergeKey`, primitive lists with
//! `patchStrategy: merge` merge as sets, other lists are replaced, and the `$patch`,
//! `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…` directives are honoured.
//!
//! This module owns the public entry points; the per-field metadata lives in `table` (data) and
//! the algorithm in `lifted` (ported behaviour, with its provenance). Custom resources and
//! Karmada kinds have no metadata: [`supported`] says no and [`merge`] refuses them, so the server
//! can answer 415 as kube-apiserver does.

use serde_json::Value;

use super::error::kind_name;
use super::{GroupVersionKindRef, PatchError};

mod lifted;
mod table;

/// Whether strategic merge patch is served for this kind (a built-in kind Flotilla serves).
pub fn supported(group: &str, version: &str, kind: &str) -> bool {
    table::position(&GroupVersionKindRef::new(group, version, kind)).is_some()
}

/// Applies the strategic merge patch `patch` to `original`, an object of kind `kind`.
///
/// Fails with [`PatchError::UnsupportedKind`] (415) for kinds [`supported`] rejects, and with a
/// 400/422 error naming the path for a patch that is malformed or does not fit the object.
pub fn merge(
    kind: &GroupVersionKindRef<'_>,
    original: &Value,
    patch: &Value,
) -> Result<Value, PatchError> {
    let Some(position) = table::position(kind) else {
        return Err(PatchError::UnsupportedKind {
            group: kind.group.to_string(),
            version: kind.version.to_string(),
            kind: kind.kind.to_string(),
        });
    };
    let Value::Object(patch) = patch else {
        return Err(PatchError::NotAnObject {
            what: "a strategic merge patch",
            found: kind_name(patch),
        });
    };
    let Value::Object(original) = original else {
        return Err(PatchError::NotAnObject {
            what: "the object to patch",
            found: kind_name(original),
        });
    };
    let root = table::Cursor::root(position);
    lifted::merge_map(original.clone(), patch.clone(), &root).map(Value::Object)
}

#[cfg(test)]
mod tests;
