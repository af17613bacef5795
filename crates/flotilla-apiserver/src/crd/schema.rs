//! A CRD version's `openAPIV3Schema`, parsed once into a tree the validator, the pruner and
//! the defaulter walk (regular expressions compiled, numbers as `f64`).

use std::collections::BTreeMap;

use serde_json::Value;

use flotilla_api::validation::{BadValue, FieldError, FieldPath};

/// A compiled `pattern`, compared by its source.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub source: String,
    pub regex: regex::Regex,
}

/// One node of a structural schema.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// `object`, `array`, `string`, `integer`, `number`, `boolean`, or none.
    pub type_: Option<String>,
    pub nullable: bool,
    pub properties: BTreeMap<String, Node>,
    /// `additionalProperties` as a schema (`true` is a node that keeps everything).
    pub additional_properties: Option<Box<Node>>,
    pub items: Option<Box<Node>>,
    pub required: Vec<String>,
    pub enum_values: Option<Vec<Value>>,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub multiple_of: Option<f64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub pattern: Option<Pattern>,
    pub preserve_unknown_fields: bool,
    pub int_or_string: bool,
    pub embedded_resource: bool,
    pub default: Option<Value>,
    /// `x-kubernetes-list-type`: `atomic` (the default), `set` or `map`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys` of a `map` list.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`: `granular` (the default) or `atomic`.
    pub map_type: Option<String>,
}

/// The parsed schema of one CRD version, with the JSON it came from (served in OpenAPI).
#[derive(Debug, Clone)]
pub struct Schema {
    pub raw: Value,
    pub root: Node,
    /// Whether any node has a `default` (reads then need defaulting too).
    pub has_defaults: bool,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl Eq for Schema {}

impl Schema {
    /// Parses `openAPIV3Schema`; errors name fields under `path`.
    pub fn parse(raw: &Value, path: &FieldPath) -> Result<Schema, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut has_defaults = false;
        let root = parse_node(raw, path, &mut errors, &mut has_defaults);
        if errors.is_empty() {
            Ok(Schema {
                raw: raw.clone(),
                root,
                has_defaults,
            })
        } else {
            Err(errors)
        }
    }

    /// A schema that accepts anything and keeps every field.
    pub fn preserve_all() -> Schema {
        let raw =
            serde_json::json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        Schema::parse(&raw, &FieldPath::default()).expect("the permissive schema parses")
    }
}

fn parse_node(
    raw: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
    has_defaults: &mut bool,
) -> Node {
    let Some(map) = raw.as_object() else {
        errors.push(FieldError::invalid(
            path.as_str(),
            BadValue::Verbatim(raw.to_string()),
            "must be a schema object",
        ));
        return Node::default();
    };
    let flag = |key: &str| map.get(key).and_then(Value::as_bool).unwrap_or(false);
    let count = |key: &str| map.get(key).and_then(Value::as_u64);
    let number = |key: &str| map.get(key).and_then(Value::as_f64);
    let mut node = Node {
        type_: map.get("type").and_then(Value::as_str).map(str::to_owned),
        nullable: flag("nullable"),
        required: map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        enum_values: map.get("enum").and_then(Value::as_array).cloned(),
        minimum: number("minimum"),
        exclusive_minimum: flag("exclusiveMinimum"),
        maximum: number("maximum"),
        exclusive_maximum: flag("exclusiveMaximum"),
        multiple_of: number("multipleOf"),
        min_length: count("minLength"),
        max_length: count("maxLength"),
        min_items: count("minItems"),
        max_items: count("maxItems"),
        min_properties: count("minProperties"),
        max_properties: count("maxProperties"),
        preserve_unknown_fields: flag("x-kubernetes-preserve-unknown-fields"),
        int_or_string: flag("x-kubernetes-int-or-string"),
        embedded_resource: flag("x-kubernetes-embedded-resource"),
        default: map.get("default").cloned(),
        list_type: map
            .get("x-kubernetes-list-type")
            .and_then(Value::as_str)
            .map(str::to_owned),
        list_map_keys: map
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|keys| {
                keys.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        map_type: map
            .get("x-kubernetes-map-type")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..Node::default()
    };
    if let Some(type_) = &node.type_
        && !matches!(
            type_.as_str(),
            "object" | "array" | "string" | "integer" | "number" | "boolean"
        )
    {
        errors.push(FieldError::not_supported(
            path.child("type").as_str(),
            type_.as_str(),
            &["array", "boolean", "integer", "number", "object", "string"],
        ));
    }
    *has_defaults |= node.default.is_some();
    if let Some(source) = map.get("pattern").and_then(Value::as_str) {
        match regex::Regex::new(source) {
            Ok(regex) => {
                node.pattern = Some(Pattern {
                    source: source.to_owned(),
                    regex,
                })
            }
            Err(error) => errors.push(FieldError::invalid(
                path.child("pattern").as_str(),
                source,
                format!("must be a valid regular expression, but isn't: {error}"),
            )),
        }
    }
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        let base = path.child("properties");
        for (name, child) in properties {
            let child = parse_node(child, &base.key(name), errors, has_defaults);
            node.properties.insert(name.clone(), child);
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(true)) => {
            node.additional_properties = Some(Box::new(Node {
                preserve_unknown_fields: true,
                ..Node::default()
            }))
        }
        Some(child @ Value::Object(_)) => {
            node.additional_properties = Some(Box::new(parse_node(
                child,
                &path.child("additionalProperties"),
                errors,
                has_defaults,
            )))
        }
        _ => {}
    }
    if let Some(items) = map.get("items") {
        node.items = Some(Box::new(parse_node(
            items,
            &path.child("items"),
            errors,
            has_defaults,
        )));
    }
    node
}
