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
    /// The schema of a map's entries (`additionalProperties`), when it is one.
    entries: Option<&'s Value>,
}

impl<'s> Lookup<'s> {
    pub(super) fn new(schema: &'s Value) -> Self {
        Lookup {
            schema,
            preserves_unknown: preserves_unknown(schema),
            properties: properties(schema),
            entries: schema.get("additionalProperties").filter(|a| a.is_object()),
        }
    }

    /// Whether `child` (what [`Lookup::field`] found) is the schema of a map's entries: Go's
    /// decoder names struct fields in its paths, not map keys.
    pub(super) fn is_entry(&self, child: &Value) -> bool {
        self.entries
            .is_some_and(|entries| std::ptr::eq(entries, child))
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
            if let Some(entries) = self.entries {
                return Field::Known(Some(entries));
            }
            return match schema.get("additionalProperties") {
                Some(Value::Bool(true)) => Field::Known(None),
                _ => Field::Unknown,
            };
        }
        if let Some(entries) = self.entries {
            return Field::Known(Some(entries));
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

/// The JSON kinds a value can have, as a type check tells them apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum JsonKind {
    Bool,
    Integer,
    /// A number with a fraction or an exponent (its literal, as Go's error shows it).
    Float(f64),
    String,
    Array,
    Object,
}

impl JsonKind {
    pub(super) fn of(value: &Value) -> Option<JsonKind> {
        Some(match value {
            Value::Null => return None,
            Value::Bool(_) => JsonKind::Bool,
            Value::Number(n) if n.is_i64() || n.is_u64() => JsonKind::Integer,
            Value::Number(n) => JsonKind::Float(n.as_f64().unwrap_or(0.0)),
            Value::String(_) => JsonKind::String,
            Value::Array(_) => JsonKind::Array,
            Value::Object(_) => JsonKind::Object,
        })
    }

    /// How Go's decoder names the value (`UnmarshalTypeError.Value`).
    fn go_value(self) -> String {
        match self {
            JsonKind::Bool => "bool".into(),
            JsonKind::Integer => "number".into(),
            JsonKind::Float(f) => format!("number {f:?}"),
            JsonKind::String => "string".into(),
            JsonKind::Array => "array".into(),
            JsonKind::Object => "object".into(),
        }
    }
}

/// A value whose JSON type its field's type cannot hold: what kube-apiserver's typed decoding
/// refuses (Go's `UnmarshalTypeError`), the first one found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    /// The field's path as Go names it: struct fields only, no list indices or map keys
    /// (`spec.template.spec.containers.name`, `metadata.labels`).
    pub path: String,
    /// The value as Go names it: `string`, `number`, `number 2.5`, `bool`, `array`, `object`.
    pub found: String,
    /// The field's type: `int32`, `int64`, `float64`, `bool`, `string`, `array`, `object`.
    pub expected: &'static str,
}

impl TypeMismatch {
    /// Go's message, with the kind in place of the innermost struct's name
    /// (`json: cannot unmarshal string into Go struct field Deployment.spec.replicas of type
    /// int32`; Go names `DeploymentSpec` there).
    pub fn message(&self, kind: &str) -> String {
        format!(
            "json: cannot unmarshal {} into Go struct field {kind}.{} of type {}",
            self.found, self.path, self.expected
        )
    }
}

/// The type `schema` declares when a value of `kind` cannot have it; `None` when it can, or when
/// the schema declares no single type (IntOrString, Quantity, free-form fields). `null` fits
/// every field, as in Go.
pub(super) fn mismatch(schema: &Value, kind: JsonKind) -> Option<&'static str> {
    let Some(Value::String(declared)) = schema.get("type") else {
        return None;
    };
    let fits = match declared.as_str() {
        "integer" => kind == JsonKind::Integer,
        "number" => matches!(kind, JsonKind::Integer | JsonKind::Float(_)),
        "boolean" => kind == JsonKind::Bool,
        "string" => kind == JsonKind::String,
        "array" => kind == JsonKind::Array,
        "object" => kind == JsonKind::Object,
        _ => true,
    };
    // An object schema without members of its own (RawExtension, FieldsV1) is raw JSON to Go.
    let raw = declared == "object"
        && schema.get("properties").is_none()
        && schema.get("additionalProperties").is_none();
    if fits || raw {
        return None;
    }
    Some(match declared.as_str() {
        "integer" => match schema.get("format").and_then(Value::as_str) {
            Some("int32") => "int32",
            _ => "int64",
        },
        "number" => "float64",
        "boolean" => "bool",
        "string" => "string",
        "array" => "array",
        _ => "object",
    })
}

/// The first value of `value` whose type its field's schema refuses, depth first in document
/// order (for bodies decoded without the schema: YAML).
pub fn type_mismatch(value: &Value, schema: &Value) -> Option<TypeMismatch> {
    type_mismatch_at(value, schema, &mut String::new())
}

/// [`type_mismatch`] of a value at the Go path `path`.
fn type_mismatch_at(value: &Value, schema: &Value, path: &mut String) -> Option<TypeMismatch> {
    fn walk(value: &Value, schema: &Value, path: &mut String) -> Option<TypeMismatch> {
        let kind = JsonKind::of(value)?;
        if let Some(expected) = mismatch(schema, kind) {
            return Some(TypeMismatch {
                path: path.clone(),
                found: kind.go_value(),
                expected,
            });
        }
        match value {
            Value::Object(map) => {
                let lookup = Lookup::new(schema);
                for (key, child) in map {
                    if let Field::Known(Some(child_schema)) = lookup.field(key) {
                        let base = path.len();
                        if !lookup.is_entry(child_schema) {
                            if !path.is_empty() {
                                path.push('.');
                            }
                            path.push_str(key);
                        }
                        let found = walk(child, child_schema, path);
                        path.truncate(base);
                        if found.is_some() {
                            return found;
                        }
                    }
                }
                None
            }
            Value::Array(list) => {
                let item = items(schema)?;
                list.iter().find_map(|v| walk(v, item, path))
            }
            _ => None,
        }
    }
    walk(value, schema, path)
}

/// [`type_mismatch`] of an object patched by the merge or strategic merge patch `patch`, whose
/// original was stored type-checked: only the members the patch wrote are looked at.
pub fn type_mismatch_patched(value: &Value, schema: &Value, patch: &Value) -> Option<TypeMismatch> {
    fn walk(
        value: &Value,
        schema: &Value,
        patch: &Value,
        path: &mut String,
    ) -> Option<TypeMismatch> {
        let (Value::Object(map), Value::Object(written)) = (value, patch) else {
            return type_mismatch_at(value, schema, path);
        };
        if let Some(expected) = JsonKind::of(value).and_then(|kind| mismatch(schema, kind)) {
            return Some(TypeMismatch {
                path: path.clone(),
                found: "object".into(),
                expected,
            });
        }
        let lookup = Lookup::new(schema);
        for (key, written) in written {
            let (Some(child), Field::Known(Some(child_schema))) = (map.get(key), lookup.field(key))
            else {
                continue;
            };
            let base = path.len();
            if !lookup.is_entry(child_schema) {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            let found = walk(child, child_schema, written, path);
            path.truncate(base);
            if found.is_some() {
                return found;
            }
        }
        None
    }
    walk(value, schema, patch, &mut String::new())
}

/// [`type_mismatch`] as a finding of the decoder, which knows the value's Go path and kind.
pub(super) fn mismatch_at(schema: &Value, kind: JsonKind, go_path: &str) -> Option<TypeMismatch> {
    mismatch(schema, kind).map(|expected| TypeMismatch {
        path: go_path.to_owned(),
        found: kind.go_value(),
        expected,
    })
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
