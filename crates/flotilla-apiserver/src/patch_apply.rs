//! How the registry applies patches: dispatch to the patch engines by content type, server-side
//! apply (managed fields and conflicts), and the `fieldsV1` sets of managed fields.

use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::error::{ApiError, Cause, Details};
use crate::managed;
use crate::patch::{self, GroupVersionKindRef, PatchError};
use crate::registry::{PatchKind, WriteOptions};

fn patch_error(error: PatchError) -> ApiError {
    let code = error.status_code();
    let reason = match code {
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        409 => "Conflict",
        413 => "RequestEntityTooLarge",
        500 => "InternalError",
        _ => "BadRequest",
    };
    ApiError::new(code, reason, error.to_string())
}

/// Parses a body that must be an object, as JSON or YAML.
fn parse_object(bytes: &[u8]) -> Result<Value, ApiError> {
    let value = match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => value,
        Err(_) => crate::server::body::decode_yaml(bytes)?,
    };
    if !value.is_object() {
        return Err(ApiError::bad_request("the patch body must be an object"));
    }
    Ok(value)
}

/// The object of an apply patch (kubectl sends JSON; YAML is accepted too).
pub fn parse_apply_body(bytes: &[u8]) -> Result<Value, ApiError> {
    parse_object(bytes)
}

/// Applies a JSON, merge or strategic patch to a plain object (no type information: strategic
/// is a merge). Used by `/scale`.
pub fn patch_plain(original: &Value, kind: PatchKind, bytes: &[u8]) -> Result<Value, ApiError> {
    match kind {
        PatchKind::Json => patch::json_patch(original, bytes).map_err(patch_error),
        _ => {
            let patch = parse_object(bytes)?;
            patch::merge_patch(original, &patch).map_err(patch_error)
        }
    }
}

/// Applies a patch of `kind` to `original`, an object of `info`. `parsed`: the (merge or
/// strategic merge) patch document already decoded from `bytes`, which are then not parsed again.
pub fn apply_patch(
    info: &ResourceInfo,
    original: &Value,
    kind: PatchKind,
    bytes: &[u8],
    parsed: Option<&Value>,
    options: &WriteOptions,
) -> Result<Value, ApiError> {
    let parse = || -> Result<std::borrow::Cow<'_, Value>, ApiError> {
        match parsed {
            Some(patch) => Ok(std::borrow::Cow::Borrowed(patch)),
            None => patch::parse(bytes)
                .map(std::borrow::Cow::Owned)
                .map_err(patch_error),
        }
    };
    let gvk = GroupVersionKindRef::new(&info.group, &info.version, &info.kind);
    match kind {
        PatchKind::Json => patch::json_patch(original, bytes).map_err(patch_error),
        PatchKind::Merge => {
            let patch = parse()?;
            patch::merge_patch(original, &patch).map_err(patch_error)
        }
        PatchKind::Strategic => {
            if info.crd.is_some() || !patch::strategic::supported(gvk.group, gvk.version, gvk.kind)
            {
                return Err(ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml ({} does not support strategic merge patch)",
                        info.qualified_plural()
                    ),
                ));
            }
            let patch = parse()?;
            patch::strategic::merge(&gvk, original, &patch).map_err(patch_error)
        }
        PatchKind::Apply => server_side_apply(info, original, bytes, options),
    }
}

/// Server-side apply: merges the applied configuration into the live object, refusing to
/// change fields another manager owns unless forced, removes fields and list items this
/// manager applied before and no longer applies (when nobody else owns them), and records what
/// the manager owns, per list item (see [`managed::apply`]).
fn server_side_apply(
    info: &ResourceInfo,
    live: &Value,
    bytes: &[u8],
    options: &WriteOptions,
) -> Result<Value, ApiError> {
    let mut applied = parse_apply_body(bytes)?;
    crate::admission::check_type(info, &applied)?;
    let manager = options
        .field_manager
        .clone()
        .unwrap_or_else(|| "unknown".into());
    if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        meta.remove("resourceVersion");
    }
    managed::apply(
        info,
        live,
        &applied,
        &manager,
        options.force,
        &options.now,
        options.subresource.as_deref(),
    )
    .map_err(|error| apply_error(info, error))
}

/// A 409 with one `FieldManagerConflict` cause per path, or the 500 kube-apiserver answers for
/// a configuration its schema cannot type (a list-map item without its key).
pub fn apply_error(info: &ResourceInfo, error: managed::ApplyError) -> ApiError {
    match error {
        managed::ApplyError::Conflicts(conflicts) => {
            let causes = conflicts
                .items
                .iter()
                .map(|(manager, path)| Cause {
                    reason: "FieldManagerConflict".into(),
                    message: format!("conflict with {manager}"),
                    field: path.clone(),
                })
                .collect();
            ApiError::new(409, "Conflict", conflicts.message()).with_details(Details {
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                causes,
            })
        }
        managed::ApplyError::Type(error) => ApiError::new(
            500,
            "InternalError",
            format!(
                "failed to create typed patch object ({}, Kind={}): {error}",
                info.api_version(),
                info.kind
            ),
        ),
    }
}
