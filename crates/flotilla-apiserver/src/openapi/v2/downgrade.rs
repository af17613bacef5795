//! JSON schemas (OpenAPI 3 flavoured, as schemars writes them) narrowed to what a Swagger 2.0
//! schema may say and what kubectl's OpenAPI v2 model (kube-openapi `pkg/util/proto`) accepts:
//! it rejects a whole document over one schema with several types, an array without exactly
//! one item schema, a `null` type, or a `$ref` outside `#/definitions/` or beside a type.

use serde_json::{Map, Value};

/// Keywords a Swagger 2.0 schema has (besides `x-*` extensions).
const KEPT: [&str; 20] = [
    "format",
    "title",
    "description",
    "default",
    "multipleOf",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "enum",
    "discriminator",
    "readOnly",
    "example",
];

/// The Swagger 2.0 form of a schema. Anything it cannot express (`oneOf`, `anyOf`, `not`,
/// `nullable`, boolean schemas) is dropped, which only makes the schema more permissive.
pub fn schema(value: &Value) -> Value {
    let Some(source) = value.as_object() else {
        return Value::Object(Map::new());
    };
    let mut out = Map::new();
    if let Some(Value::String(target)) = source.get("$ref")
        && target.starts_with("#/definitions/")
    {
        out.insert("$ref".to_owned(), Value::String(target.clone()));
        if let Some(description) = source.get("description") {
            out.insert("description".to_owned(), description.clone());
        }
        return Value::Object(out);
    }
    for (key, value) in source {
        if KEPT.contains(&key.as_str()) || key.starts_with("x-") {
            out.insert(key.clone(), value.clone());
        }
    }
    for key in ["exclusiveMaximum", "exclusiveMinimum"] {
        if let Some(flag @ Value::Bool(_)) = source.get(key) {
            out.insert(key.to_owned(), flag.clone());
        }
    }
    let type_ = match source.get("type") {
        Some(Value::String(t)) if t != "null" => Some(t.clone()),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_owned),
        _ => None,
    };
    if let Some(t) = &type_ {
        out.insert("type".to_owned(), Value::String(t.clone()));
    }
    if let Some(Value::Object(properties)) = source.get("properties") {
        let properties = properties
            .iter()
            .map(|(name, property)| (name.clone(), schema(property)))
            .collect();
        out.insert("properties".to_owned(), Value::Object(properties));
    }
    match source.get("additionalProperties") {
        Some(flag @ Value::Bool(_)) => {
            out.insert("additionalProperties".to_owned(), flag.clone());
        }
        Some(sub @ Value::Object(_)) => {
            out.insert("additionalProperties".to_owned(), schema(sub));
        }
        _ => {}
    }
    let items = match source.get("items") {
        Some(Value::Array(list)) => list.first().map(schema),
        Some(item) => Some(schema(item)),
        None => None,
    };
    match (items, type_.as_deref()) {
        (Some(items), _) => {
            out.insert("items".to_owned(), items);
        }
        (None, Some("array")) => {
            out.insert("items".to_owned(), Value::Object(Map::new()));
        }
        _ => {}
    }
    if let Some(Value::Array(all_of)) = source.get("allOf") {
        out.insert(
            "allOf".to_owned(),
            Value::Array(all_of.iter().map(schema).collect()),
        );
    }
    Value::Object(out)
}
