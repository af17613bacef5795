//! Which fields a schema declares: the lookup shared by the decoder and the walk over finished
//! objects (patch results, YAML bodies), and the walk itself, which also drops what is unknown.
//!
//! The rules follow structural schemas: an object with `properties` declares exactly those
//! (plus `additionalProperties`, whose schema then types every other key); an object without
//! `properties`, or with `x-kubernetes-preserve-unknown-fields`, accepts anything.

use serde_json::Value;

use super::Finding;
use crate::catalog::ResourceInfo;

/// What a schema says about one key of an object.
#[derive(Debug, Clone, Copy)]
pub(super) enum Field<'s> {
    /// Declared; its schema when there is one to check further.
    Known(Option<&'s Value>),
    /// Not declared: reported and dropped.
    Unknown,
}

/// The schema of a resource's kind, when unknown fields can be checked (built-in kinds).
pub fn for_resource(info: &ResourceInfo) -> Option<&'static Value> {
    if info.crd.is_some() {
        return None;
    }
    crate::openapi::schemas::cached(&info.group, &info.version, &info.kind)
}

/// Looks up `key` in an object schema.
pub(super) fn field<'s>(schema: &'s Value, key: &str) -> Field<'s> {
    Lookup::new(schema).field(key)
}

/// An object schema prepared for looking up many keys: what every lookup would read first
/// (`x-kubernetes-preserve-unknown-fields`, `properties`) read once per object, not per key.
#[derive(Clone, Copy)]
pub(super) struct Lookup<'s> {
    schema: &'s Value,
    preserves_unknown: bool,
    properties: Option<&'s serde_json::Map<String, Value>>,
}

impl<'s> Lookup<'s> {
    pub(super) fn new(schema: &'s Value) -> Self {
        Lookup {
            schema,
            preserves_unknown: preserves_unknown(schema),
            properties: properties(schema),
        }
    }

    /// What the schema says about `key`.
    pub(super) fn field(&self, key: &str) -> Field<'s> {
        let schema = self.schema;
        if self.preserves_unknown {
            return Field::Known(self.properties.and_then(|p| p.get(key)));
        }
        if let Some(props) = self.properties {
            if let Some(child) = props.get(key) {
                return Field::Known(Some(child));
            }
            return match schema.get("additionalProperties") {
                Some(Value::Object(_)) => Field::Known(schema.get("additionalProperties")),
                Some(Value::Bool(true)) => Field::Known(None),
                _ => Field::Unknown,
            };
        }
        if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
            return Field::Known(Some(additional));
        }
        // Compositions: declared when any branch declares it; lenient when none has properties.
        let branches = ["allOf", "anyOf", "oneOf"]
            .iter()
            .filter_map(|k| schema.get(*k).and_then(Value::as_array))
            .flatten();
        let mut any_with_properties = false;
        for branch in branches {
            match field(branch, key) {
                Field::Known(child) => return Field::Known(child),
                Field::Unknown => any_with_properties = true,
            }
        }
        if any_with_properties {
            Field::Unknown
        } else {
            Field::Known(None)
        }
    }
}

/// The schema of a list's items.
pub(super) fn items(schema: &Value) -> Option<&Value> {
    match schema.get("items") {
        Some(items @ Value::Object(_)) => Some(items),
        _ => None,
    }
}

fn properties(schema: &Value) -> Option<&serde_json::Map<String, Value>> {
    schema.get("properties").and_then(Value::as_object)
}

fn preserves_unknown(schema: &Value) -> bool {
    schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
}

/// Removes the fields `schema` does not declare from `value` and returns them, in the order
/// kube-apiserver reports unknown fields of a re-encoded object (keys sorted, depth first).
pub fn strip_unknown(value: &mut Value, schema: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Almost every object holds nothing unknown: a read-only look first, without the sorted
    // copies of keys and the paths the reporting walk builds.
    if !has_unknown(value, schema) {
        return findings;
    }
    let mut path = String::new();
    walk(value, schema, &mut path, &mut findings);
    findings
}

/// [`strip_unknown`] of an object patched by the merge or strategic merge patch `patch`, whose
/// original was stored already stripped (built-in kinds, whose schemas are compiled in): only
/// the members the patch wrote can hold unknown fields, so only those are walked. A member the
/// patch sets to anything but an object (a list, a value) is walked whole. Same findings, in
/// the same order, as the whole walk (a status patch of a Deployment walks its status only).
pub fn strip_unknown_patched(value: &mut Value, schema: &Value, patch: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    if !has_unknown_patched(value, schema, patch) {
        return findings;
    }
    let mut path = String::new();
    walk_patched(value, schema, patch, &mut path, &mut findings);
    findings
}

/// Whether [`walk`] would find anything unknown in `value`.
pub(super) fn has_unknown(value: &Value, schema: &Value) -> bool {
    match value {
        Value::Object(map) => {
            let lookup = Lookup::new(schema);
            map.iter().any(|(key, child)| match lookup.field(key) {
                Field::Unknown => true,
                Field::Known(Some(child_schema)) => has_unknown(child, child_schema),
                Field::Known(None) => false,
            })
        }
        Value::Array(list) => {
            items(schema).is_some_and(|item| list.iter().any(|v| has_unknown(v, item)))
        }
        _ => false,
    }
}

/// Whether [`walk_patched`] would find anything unknown in `value`.
pub(super) fn has_unknown_patched(value: &Value, schema: &Value, patch: &Value) -> bool {
    let (Value::Object(map), Value::Object(written)) = (value, patch) else {
        return has_unknown(value, schema);
    };
    let lookup = Lookup::new(schema);
    written.iter().any(|(key, written)| {
        let Some(child) = map.get(key) else {
            return false;
        };
        match lookup.field(key) {
            Field::Unknown => true,
            Field::Known(Some(child_schema)) => has_unknown_patched(child, child_schema, written),
            Field::Known(None) => false,
        }
    })
}

fn walk_patched(
    value: &mut Value,
    schema: &Value,
    patch: &Value,
    path: &mut String,
    findings: &mut Vec<Finding>,
) {
    let (Value::Object(map), Value::Object(written)) = (&mut *value, patch) else {
        walk(value, schema, path, findings);
        return;
    };
    // Directives (`$patch`, `$setElementOrder/…`, `$retainKeys`) are not members; the keys
    // they name are, and came from the original.
    let mut keys: Vec<&String> = written.keys().filter(|k| map.contains_key(*k)).collect();
    keys.sort_unstable();
    let lookup = Lookup::new(schema);
    for key in keys {
        let base = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        match lookup.field(key) {
            Field::Unknown => {
                findings.push(Finding::unknown(path.as_str()));
                map.shift_remove(key);
            }
            Field::Known(Some(child)) => {
                if let Some(v) = map.get_mut(key) {
                    walk_patched(v, child, &written[key], path, findings);
                }
            }
            Field::Known(None) => {}
        }
        path.truncate(base);
    }
}

fn walk(value: &mut Value, schema: &Value, path: &mut String, findings: &mut Vec<Finding>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<String> = map.keys().cloned().collect();
            keys.sort_unstable();
            let lookup = Lookup::new(schema);
            for key in keys {
                let base = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key);
                match lookup.field(&key) {
                    Field::Unknown => {
                        findings.push(Finding::unknown(path.as_str()));
                        map.shift_remove(&key);
                    }
                    Field::Known(Some(child)) => {
                        if let Some(v) = map.get_mut(&key) {
                            walk(v, child, path, findings);
                        }
                    }
                    Field::Known(None) => {}
                }
                path.truncate(base);
            }
        }
        Value::Array(list) => {
            if let Some(item_schema) = items(schema) {
                for (i, item) in list.iter_mut().enumerate() {
                    let base = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, item_schema, path, findings);
                    path.truncate(base);
                }
            }
        }
        _ => {}
    }
}
