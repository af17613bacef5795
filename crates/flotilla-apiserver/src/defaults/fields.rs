//! Field access in the terms Go's defaulters use: a field is "unset" when absent or `null`,
//! and for non-pointer fields also when it holds Go's zero value (`""`, `0`, an empty list).
//!
//! Values of the wrong JSON type are left alone: validation reports them, defaulting must not
//! turn them into something valid.

use serde_json::{Map, Value};

/// A JSON object, the shape of every Kubernetes struct.
pub type Obj = Map<String, Value>;

fn absent(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

/// Defaults a pointer field (`*T`): set when absent or null.
pub fn or_insert(map: &mut Obj, key: &str, value: impl Into<Value>) {
    if absent(map.get(key)) {
        map.insert(key.into(), value.into());
    }
}

/// Defaults a non-pointer string field: set when absent, null or empty.
pub fn or_insert_str(map: &mut Obj, key: &str, value: &str) {
    if absent(map.get(key)) || map.get(key).and_then(Value::as_str) == Some("") {
        map.insert(key.into(), value.into());
    }
}

/// Defaults a non-pointer integer field: set when absent, null or zero.
pub fn or_insert_int(map: &mut Obj, key: &str, value: i64) {
    let zero = map
        .get(key)
        .is_some_and(|v| v.as_f64().is_some_and(|n| n == 0.0));
    if absent(map.get(key)) || zero {
        map.insert(key.into(), value.into());
    }
}

/// Whether a list field is unset or empty (`len(x) == 0` in Go).
pub fn list_empty(map: &Obj, key: &str) -> bool {
    match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

/// A string field's value, `""` when unset or not a string.
pub fn str_of<'a>(map: &'a Obj, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A nested struct that Go always has (a non-pointer field, or a pointer the defaulter
/// allocates): created as `{}` when absent or null. `None` when it holds another type.
pub fn child<'a>(map: &'a mut Obj, key: &str) -> Option<&'a mut Obj> {
    if absent(map.get(key)) {
        map.insert(key.into(), Value::Object(Obj::new()));
    }
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// A nested struct behind a pointer the defaulter only follows: `None` unless it is an object.
pub fn existing<'a>(map: &'a mut Obj, key: &str) -> Option<&'a mut Obj> {
    map.get_mut(key).and_then(Value::as_object_mut)
}

/// The object items of a list field (other items are left for validation).
pub fn items<'a>(map: &'a mut Obj, key: &str) -> impl Iterator<Item = &'a mut Obj> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}
