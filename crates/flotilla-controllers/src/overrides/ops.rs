//! The overriders that become JSON patches: plaintext, command/args, labels/annotations, and
//! fieldOverrider (a JSON or YAML document held in a string field).

use flotilla_api::karmada::{CommandArgsOverrider, FieldOverrider, LabelAnnotationOverrider};
use serde_json::{Map, Value, json};

use super::go_json;
use crate::lifted::go_yaml;

/// One RFC 6902 operation.
#[derive(Debug, Clone)]
pub struct Operation {
    pub op: String,
    pub path: String,
    pub value: Option<Value>,
}

/// Applies `operations` in order (all or nothing).
pub fn json_patch(object: &mut Value, operations: &[Operation]) -> Result<(), String> {
    if operations.is_empty() {
        return Ok(());
    }
    let patch: Vec<Value> = operations
        .iter()
        .map(|o| {
            let mut op = json!({"op": o.op, "path": o.path});
            if o.op != "remove" {
                op["value"] = o.value.clone().unwrap_or(Value::Null);
            }
            op
        })
        .collect();
    let patch: json_patch::Patch =
        serde_json::from_value(Value::Array(patch)).map_err(|e| e.to_string())?;
    let mut patched = object.clone();
    json_patch::patch(&mut patched, &patch).map_err(|e| e.to_string())?;
    *object = patched;
    Ok(())
}

/// The JSON pointer of the containers list for kinds overriders know (Karmada matches the kind
/// only).
pub fn containers_path(object: &Value) -> Option<&'static str> {
    match object.get("kind").and_then(Value::as_str)? {
        "Pod" => Some("/spec/containers"),
        "ReplicaSet" | "Deployment" | "DaemonSet" | "Job" | "StatefulSet" => {
            Some("/spec/template/spec/containers")
        }
        _ => None,
    }
}

/// `commandOverrider` / `argsOverrider` (`field` is `command` or `args`).
pub fn command_args(
    object: &mut Value,
    overrider: &CommandArgsOverrider,
    field: &str,
) -> Result<(), String> {
    let Some(path) = containers_path(object) else {
        return Ok(());
    };
    let containers = object
        .pointer(path)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut operations = Vec::new();
    for (index, container) in containers.iter().enumerate() {
        if container.get("name").and_then(Value::as_str) != Some(&overrider.container_name) {
            continue;
        }
        let current: Option<Vec<String>> =
            container.get(field).and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            });
        let target = format!("{path}/{index}/{field}");
        let exists = current.is_some();
        let mut values = current.unwrap_or_default();
        match overrider.operator.as_str() {
            "add" => values.extend(overrider.value.iter().cloned()),
            "remove" => values.retain(|v| !overrider.value.contains(v)),
            other => return Err(format!("unsupported {field} operator {other:?}")),
        }
        // A container without the field gets it, even as an empty list.
        operations.push(Operation {
            op: if exists { "replace" } else { "add" }.into(),
            path: target,
            value: Some(json!(values)),
        });
    }
    json_patch(object, &operations)
}

/// `~` → `~0`, `/` → `~1` (RFC 6901).
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `labelsOverrider` / `annotationsOverrider` (`field` is `labels` or `annotations`): `add`
/// creates the map when needed; `remove` and `replace` touch existing keys only.
pub fn labels_annotations(
    object: &mut Value,
    overrider: &LabelAnnotationOverrider,
    field: &str,
) -> Result<(), String> {
    let mut operations = Vec::new();
    for (key, value) in &overrider.value {
        let existing = object
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_object);
        match overrider.operator.as_str() {
            "remove" | "replace" => {
                if !existing.is_some_and(|m| m.contains_key(key)) {
                    continue;
                }
            }
            "add" => {
                if existing.is_none() {
                    let Some(object_map) = object.as_object_mut() else {
                        return Err("the resource is not an object".into());
                    };
                    let metadata = object_map
                        .entry("metadata")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Some(metadata) = metadata.as_object_mut() {
                        metadata.insert(field.to_owned(), Value::Object(Map::new()));
                    }
                }
            }
            other => return Err(format!("unsupported {field} operator {other:?}")),
        }
        operations.push(Operation {
            op: overrider.operator.clone(),
            path: format!("/metadata/{field}/{}", escape(key)),
            value: Some(Value::String(value.clone())),
        });
    }
    json_patch(object, &operations)
}

/// `fieldOverrider`: the string at `fieldPath` is parsed as JSON (`json` operations) or YAML
/// (`yaml` operations), patched and written back. A JSON document keeps its key order (added
/// keys go last) and is written compact with Go's escaping of `<`, `>`, `&`, as Karmada's JSON
/// patch library does (an empty JSON string stays empty); a YAML document is written with every map's keys in go-yaml's order
/// ([`go_yaml::sorted`]).
pub fn field(object: &mut Value, overrider: &FieldOverrider) -> Result<(), String> {
    let text = match object.pointer(&overrider.field_path) {
        Some(Value::String(text)) => text.clone(),
        Some(_) => return Err(format!("path {} is not string", overrider.field_path)),
        None => return Err(format!("path {} does not exist", overrider.field_path)),
    };
    // Values with their keys sorted, as the API server hands the policy to Karmada.
    let to_ops = |list: &[flotilla_api::karmada::SubPathOperation]| -> Vec<Operation> {
        list.iter()
            .map(|o| Operation {
                op: o.operator.clone(),
                path: o.sub_path.clone(),
                value: o.value.clone().map(sorted),
            })
            .collect()
    };
    let rendered = if !overrider.json.is_empty() {
        // An empty document is left as it is (the patch library returns it untouched).
        if text.is_empty() {
            return Ok(());
        }
        let mut document: Value = serde_json::from_str(&text)
            .map_err(|e| format!("path {}: invalid JSON: {e}", overrider.field_path))?;
        json_patch_keeping_order(&mut document, &to_ops(&overrider.json))?;
        go_json::compact(&document)
    } else if !overrider.yaml.is_empty() {
        let mut document: Value = yaml_serde::from_str(&text)
            .map_err(|e| format!("path {}: invalid YAML: {e}", overrider.field_path))?;
        json_patch(&mut document, &to_ops(&overrider.yaml))?;
        yaml_serde::to_string(&go_yaml::sorted(document)).map_err(|e| e.to_string())?
    } else {
        return Ok(());
    };
    json_patch(
        object,
        &[Operation {
            op: "replace".into(),
            path: overrider.field_path.clone(),
            value: Some(Value::String(rendered)),
        }],
    )
}

/// Keys sorted, as Go's encoders write maps.
pub(super) fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Applies `operations` like [`json_patch`], but a `remove` of an object key keeps the order of
/// the other keys (the patch library would move the last key into the gap).
fn json_patch_keeping_order(document: &mut Value, operations: &[Operation]) -> Result<(), String> {
    let mut patched = document.clone();
    for operation in operations {
        if operation.op == "remove" && remove_key_in_order(&mut patched, &operation.path) {
            continue;
        }
        json_patch(&mut patched, std::slice::from_ref(operation))?;
    }
    *document = patched;
    Ok(())
}

/// Removes the object key `path` points to, shifting the keys after it; `false` when `path`
/// is not an existing key of an object (an array element, or missing: the patch library then
/// removes it or reports the error).
fn remove_key_in_order(document: &mut Value, path: &str) -> bool {
    let Some((parent, key)) = path.rsplit_once('/') else {
        return false;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    document
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .is_some_and(|map| map.shift_remove(&key).is_some())
}
