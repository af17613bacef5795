//! Helpers over objects as JSON: metadata access, resource versions, and the store encoding.

use std::collections::BTreeMap;

use bytes::Bytes;
use flotilla_store::{KeyValue, Revision};
use serde_json::{Map, Value};

use crate::error::ApiError;

/// `metadata` of an object, created if absent.
pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.get("metadata").is_some_and(Value::is_object) {
        object["metadata"] = Value::Object(Map::new());
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object")
}

/// A string field of `metadata`.
pub fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

pub fn name(object: &Value) -> Option<&str> {
    meta_str(object, "name").filter(|s| !s.is_empty())
}

pub fn namespace(object: &Value) -> Option<&str> {
    meta_str(object, "namespace").filter(|s| !s.is_empty())
}

/// `metadata.labels` as a map (non-string values are ignored).
pub fn labels(object: &Value) -> BTreeMap<String, String> {
    string_map(object.get("metadata").and_then(|m| m.get("labels")))
}

pub fn string_map(value: Option<&Value>) -> BTreeMap<String, String> {
    value
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.finalizers`.
pub fn finalizers(object: &Value) -> Vec<String> {
    object
        .get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub fn set_resource_version(object: &mut Value, revision: Revision) {
    metadata_mut(object).insert("resourceVersion".into(), revision.to_string().into());
}

/// Parses a `resourceVersion` string; empty means unset.
pub fn parse_resource_version(value: &str) -> Result<Option<Revision>, ApiError> {
    if value.is_empty() {
        return Ok(None);
    }
    match value.parse::<Revision>() {
        Ok(rv) if rv >= 0 => Ok(Some(rv)),
        _ => Err(ApiError::bad_request(format!(
            "invalid resource version {value:?}: must be a non-negative integer"
        ))),
    }
}

/// The bytes stored for an object: its JSON without `resourceVersion` (the store's revision is
/// the resource version).
pub fn encode(object: &Value) -> Result<Bytes, ApiError> {
    let stamped = object
        .get("metadata")
        .is_some_and(|meta| meta.get("resourceVersion").is_some());
    let copy;
    let object = if stamped {
        let mut stripped = object.clone();
        if let Some(meta) = stripped.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("resourceVersion");
        }
        copy = stripped;
        &copy
    } else {
        // A new object has no resourceVersion: nothing to copy.
        object
    };
    serde_json::to_vec(object)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(format!("cannot encode object: {e}")))
}

/// An object read back from the store, with its resource version set.
pub fn decode(kv: &KeyValue) -> Result<Value, ApiError> {
    decode_at(&kv.value, kv.mod_revision)
}

/// Decodes stored bytes and stamps `revision` as the resource version.
pub fn decode_at(bytes: &[u8], revision: Revision) -> Result<Value, ApiError> {
    let mut object: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::internal(format!("stored object is not JSON: {e}")))?;
    set_resource_version(&mut object, revision);
    Ok(object)
}
