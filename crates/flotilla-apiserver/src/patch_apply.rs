//! How the registry applies patches: dispatch to the patch engines by content type, server-side
//! apply (managed fields and conflicts), and the `fieldsV1` sets of managed fields.

use std::collections::BTreeSet;

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

/// Applies a patch of `kind` to `original`, an object of `info`.
pub fn apply_patch(
    info: &ResourceInfo,
    original: &Value,
    kind: PatchKind,
    bytes: &[u8],
    options: &WriteOptions,
) -> Result<Value, ApiError> {
    let gvk = GroupVersionKindRef::new(&info.group, &info.version, &info.kind);
    match kind {
        PatchKind::Json => patch::json_patch(original, bytes).map_err(patch_error),
        PatchKind::Merge => {
            let patch = patch::parse(bytes).map_err(patch_error)?;
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
            let patch = patch::parse(bytes).map_err(patch_error)?;
            patch::strategic::merge(&gvk, original, &patch).map_err(patch_error)
        }
        PatchKind::Apply => server_side_apply(info, original, bytes, options),
    }
}

/// Server-side apply: merges the applied configuration into the live object, refusing to
/// change fields another manager owns unless forced, removes fields this manager applied before
/// and no longer applies (when nobody else owns them), and records what the manager owns.
fn server_side_apply(
    info: &ResourceInfo,
    live: &Value,
    bytes: &[u8],
    options: &WriteOptions,
) -> Result<Value, ApiError> {
    let applied = parse_apply_body(bytes)?;
    crate::admission::check_type(info, &applied)?;
    let manager = options
        .field_manager
        .clone()
        .unwrap_or_else(|| "unknown".into());
    let name = crate::object::name(live).unwrap_or("").to_owned();
    let mut entries: Vec<Value> = live["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let applied_paths = managed::leaf_paths(&applied);
    let mine = |e: &Value| e["manager"] == manager.as_str() && e["operation"] == "Apply";
    let mut conflicts: Vec<(String, String, managed::Path)> = Vec::new();
    for path in &applied_paths {
        if managed::value_at(live, path) == managed::value_at(&applied, path) {
            continue;
        }
        for entry in entries
            .iter()
            .filter(|e| !mine(e) && e["manager"] != manager.as_str())
        {
            if managed::overlaps(&managed::from_fields_v1(&entry["fieldsV1"]), path) {
                conflicts.push((
                    entry["manager"].as_str().unwrap_or("").to_owned(),
                    entry["apiVersion"].as_str().unwrap_or("").to_owned(),
                    path.clone(),
                ));
            }
        }
    }
    if !conflicts.is_empty() && !options.force {
        let causes: Vec<Cause> = conflicts
            .iter()
            .map(|(m, _, path)| Cause {
                reason: "FieldManagerConflict".into(),
                message: format!("conflict with \"{m}\""),
                field: format!(".{}", path.join(".")),
            })
            .collect();
        let list = conflicts
            .iter()
            .map(|(m, v, path)| format!("- conflict with \"{m}\" using {v}: .{}", path.join(".")))
            .collect::<Vec<_>>()
            .join("\n");
        let message = format!(
            "Apply failed with {} conflict{}: {}",
            conflicts.len(),
            if conflicts.len() == 1 { "" } else { "s" },
            list
        );
        return Err(
            ApiError::new(409, "Conflict", message).with_details(Details {
                name,
                group: info.group.clone(),
                kind: info.plural.clone(),
                causes,
            }),
        );
    }
    let gvk = GroupVersionKindRef::new(&info.group, &info.version, &info.kind);
    let mut applied_body = applied.clone();
    if let Some(meta) = applied_body
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
    {
        meta.remove("managedFields");
        meta.remove("resourceVersion");
    }
    let mut merged =
        if info.crd.is_none() && patch::strategic::supported(gvk.group, gvk.version, gvk.kind) {
            patch::strategic::merge(&gvk, live, &applied_body).map_err(patch_error)?
        } else {
            patch::merge_patch(live, &applied_body).map_err(patch_error)?
        };
    // Fields this manager applied before and no longer applies go, unless someone else owns them.
    let previous: BTreeSet<managed::Path> = entries
        .iter()
        .filter(|e| mine(e))
        .flat_map(|e| managed::from_fields_v1(&e["fieldsV1"]))
        .collect();
    for path in previous {
        if managed::overlaps(&applied_paths, &path) {
            continue;
        }
        let owned_by_others = entries
            .iter()
            .filter(|e| !mine(e))
            .any(|e| managed::overlaps(&managed::from_fields_v1(&e["fieldsV1"]), &path));
        if !owned_by_others {
            managed::remove_at(&mut merged, &path);
        }
    }
    // Forced: the other managers lose the fields taken over.
    if options.force {
        for entry in entries.iter_mut().filter(|e| !mine(e)) {
            let mut owned = managed::from_fields_v1(&entry["fieldsV1"]);
            owned.retain(|p| {
                !conflicts
                    .iter()
                    .any(|(_, _, c)| p.starts_with(c) || c.starts_with(p))
            });
            entry["fieldsV1"] = managed::to_fields_v1(&owned);
        }
        entries.retain(|e| !managed::from_fields_v1(&e["fieldsV1"]).is_empty());
    }
    // An apply of the same fields keeps its entry (and its time): nothing changed.
    let unchanged = entries
        .iter()
        .any(|e| mine(e) && managed::from_fields_v1(&e["fieldsV1"]) == applied_paths);
    if !unchanged {
        entries.retain(|e| !mine(e));
        entries.push(managed::entry(
            &manager,
            "Apply",
            &info.api_version(),
            &options.now,
            &applied_paths,
        ));
    }
    crate::object::metadata_mut(&mut merged).insert("managedFields".into(), Value::Array(entries));
    Ok(merged)
}
