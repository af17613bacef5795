//! How the registry applies patches: dispatch to the patch engines by content type, server-side
//! apply (managed fields and conflicts), and the `fieldsV1` sets of managed fields.

use serde_json::{Map, Value, json};

use crate::catalog::ResourceInfo;
use crate::error::{ApiError, Cause, Details};
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
/// change fields another manager owns unless forced, and records what the manager owns.
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
    // Conflicts: a leaf the patch sets to a new value that another manager owns.
    let mut conflicts = Vec::new();
    let mut leaves = Vec::new();
    collect_leaves(&applied, &mut Vec::new(), &mut leaves);
    for (path, value) in &leaves {
        if path.first().is_some_and(|p| p == "metadata")
            && path
                .get(1)
                .is_some_and(|p| !matches!(p.as_str(), "labels" | "annotations"))
        {
            continue;
        }
        if value_at(live, path) == Some(value) {
            continue;
        }
        for entry in &entries {
            if entry["manager"] == manager.as_str() {
                continue;
            }
            if owns(&entry["fieldsV1"], path) {
                conflicts.push((
                    entry["manager"].as_str().unwrap_or("").to_owned(),
                    entry["apiVersion"].as_str().unwrap_or("").to_owned(),
                    format!(".{}", path.join(".")),
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
                field: path.clone(),
            })
            .collect();
        let list = conflicts
            .iter()
            .map(|(m, v, path)| format!("- conflict with \"{m}\" using {v}: {path}"))
            .collect::<Vec<_>>()
            .join("\n");
        let message = format!(
            "Apply failed with {} conflict{}:\n{list}",
            conflicts.len(),
            if conflicts.len() == 1 { "" } else { "s" }
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
    // Forced: the other managers lose the fields taken over.
    if options.force {
        for entry in entries.iter_mut() {
            if entry["manager"] == manager.as_str() {
                continue;
            }
            for (_, _, path) in &conflicts {
                let segments: Vec<String> = path[1..].split('.').map(str::to_owned).collect();
                disown(&mut entry["fieldsV1"], &segments);
            }
        }
    }
    entries.retain(|e| !(e["manager"] == manager.as_str() && e["operation"] == "Apply"));
    entries.push(json!({
        "manager": manager,
        "operation": "Apply",
        "apiVersion": info.api_version(),
        "time": Value::Null,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields_v1(&applied),
    }));
    crate::object::metadata_mut(&mut merged).insert("managedFields".into(), Value::Array(entries));
    Ok(merged)
}

fn collect_leaves(value: &Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "status") {
                    continue;
                }
                path.push(key.clone());
                collect_leaves(child, path, out);
                path.pop();
            }
        }
        other => out.push((path.clone(), other.clone())),
    }
}

fn value_at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

fn owns(fields: &Value, path: &[String]) -> bool {
    let mut current = fields;
    for key in path {
        match current.get(format!("f:{key}")) {
            Some(next) => current = next,
            None => return false,
        }
    }
    true
}

fn disown(fields: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = fields;
    for key in parents {
        match current.get_mut(format!("f:{key}")) {
            Some(next) => current = next,
            None => return,
        }
    }
    if let Some(map) = current.as_object_mut() {
        map.remove(&format!("f:{last}"));
    }
}

/// The `fieldsV1` set of an object: every field it sets, lists of objects keyed by `name`
/// where they have one, other lists atomic. Identity and bookkeeping metadata are excluded.
pub fn fields_v1(object: &Value) -> Value {
    let mut root = Map::new();
    if let Some(map) = object.as_object() {
        for (key, value) in map {
            match key.as_str() {
                "apiVersion" | "kind" | "status" => {}
                "metadata" => {
                    let mut meta = Map::new();
                    for field in ["labels", "annotations", "finalizers", "ownerReferences"] {
                        if let Some(child) = value.get(field) {
                            meta.insert(format!("f:{field}"), field_set(child));
                        }
                    }
                    if !meta.is_empty() {
                        root.insert("f:metadata".into(), Value::Object(meta));
                    }
                }
                _ => {
                    root.insert(format!("f:{key}"), field_set(value));
                }
            }
        }
    }
    Value::Object(root)
}

fn field_set(value: &Value) -> Value {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut set = Map::new();
            set.insert(".".into(), json!({}));
            for (key, child) in map {
                set.insert(format!("f:{key}"), field_set(child));
            }
            Value::Object(set)
        }
        Value::Array(items)
            if items
                .iter()
                .all(|i| i.get("name").is_some_and(Value::is_string))
                && !items.is_empty() =>
        {
            let mut set = Map::new();
            set.insert(".".into(), json!({}));
            for item in items {
                let key = json!({"name": item["name"]}).to_string();
                let mut child = match field_set(item) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                child.insert(".".into(), json!({}));
                set.insert(format!("k:{key}"), Value::Object(child));
            }
            Value::Object(set)
        }
        _ => json!({}),
    }
}
