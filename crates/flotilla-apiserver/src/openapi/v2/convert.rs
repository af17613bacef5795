//! The Swagger 2.0 JSON document converted to gnostic's protobuf messages, the way gnostic's
//! own compiler reads a JSON document: `x-*` keys become vendor extensions holding YAML text,
//! maps become ordered (name, value) lists, `default`/`enum`/`example` values become YAML.

use serde_json::{Map, Value};

use super::proto::{
    AdditionalPropertiesItem, Any, BodyParameter, Definitions, Document, Info, ItemsItem,
    JsonReference, NamedAny, NamedPathItem, NamedResponseValue, NamedSchema, NonBodyParameter,
    Operation, Parameter, ParametersItem, PathItem, PathParameterSubSchema, Paths, Properties,
    QueryParameterSubSchema, Response, ResponseValue, Responses, Schema, SchemaItem, TypeItem,
    additional_properties_item, non_body_parameter, parameter, parameters_item, response_value,
    schema_item,
};

/// Converts a whole document.
pub fn document(doc: &Value) -> Document {
    Document {
        swagger: string(doc, "swagger"),
        info: doc.get("info").map(|info| Info {
            title: string(info, "title"),
            version: string(info, "version"),
            description: string(info, "description"),
            vendor_extension: extensions(info),
        }),
        host: string(doc, "host"),
        base_path: string(doc, "basePath"),
        schemes: strings(doc, "schemes"),
        consumes: strings(doc, "consumes"),
        produces: strings(doc, "produces"),
        paths: doc.get("paths").map(|paths| Paths {
            vendor_extension: extensions(paths),
            path: entries(paths)
                .filter(|(name, _)| !name.starts_with("x-"))
                .map(|(name, item)| NamedPathItem {
                    name: name.clone(),
                    value: Some(path_item(item)),
                })
                .collect(),
        }),
        definitions: doc.get("definitions").map(|defs| Definitions {
            additional_properties: named_schemas(defs),
        }),
        vendor_extension: extensions(doc),
    }
}

fn path_item(item: &Value) -> PathItem {
    let op = |verb: &str| item.get(verb).map(operation);
    PathItem {
        xref: string(item, "$ref"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: parameters(item),
        vendor_extension: extensions(item),
    }
}

fn operation(op: &Value) -> Operation {
    Operation {
        tags: strings(op, "tags"),
        summary: string(op, "summary"),
        description: string(op, "description"),
        operation_id: string(op, "operationId"),
        produces: strings(op, "produces"),
        consumes: strings(op, "consumes"),
        parameters: parameters(op),
        responses: op.get("responses").map(|responses| Responses {
            response_code: entries(responses)
                .filter(|(code, _)| !code.starts_with("x-"))
                .map(|(code, response)| NamedResponseValue {
                    name: code.clone(),
                    value: Some(ResponseValue {
                        oneof: Some(match response.get("$ref") {
                            Some(_) => response_value::Oneof::JsonReference(reference(response)),
                            None => response_value::Oneof::Response(Response {
                                description: string(response, "description"),
                                schema: response.get("schema").map(|s| SchemaItem {
                                    oneof: Some(schema_item::Oneof::Schema(schema(s))),
                                }),
                                vendor_extension: extensions(response),
                            }),
                        }),
                    }),
                })
                .collect(),
            vendor_extension: extensions(responses),
        }),
        schemes: strings(op, "schemes"),
        deprecated: op
            .get("deprecated")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        vendor_extension: extensions(op),
    }
}

fn parameters(owner: &Value) -> Vec<ParametersItem> {
    let Some(list) = owner.get("parameters").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|p| {
            let oneof = if p.get("$ref").is_some() {
                parameters_item::Oneof::JsonReference(reference(p))
            } else {
                let in_ = string(p, "in");
                let non_body = |oneof| {
                    parameter::Oneof::NonBodyParameter(NonBodyParameter { oneof: Some(oneof) })
                };
                let parameter = match in_.as_str() {
                    "body" => parameter::Oneof::BodyParameter(BodyParameter {
                        description: string(p, "description"),
                        name: string(p, "name"),
                        required: flag(p, "required"),
                        schema: p.get("schema").map(schema),
                        vendor_extension: extensions(p),
                        r#in: in_,
                    }),
                    "query" => non_body(non_body_parameter::Oneof::QueryParameterSubSchema(
                        QueryParameterSubSchema {
                            required: flag(p, "required"),
                            description: string(p, "description"),
                            name: string(p, "name"),
                            allow_empty_value: flag(p, "allowEmptyValue"),
                            r#type: string(p, "type"),
                            format: string(p, "format"),
                            unique_items: flag(p, "uniqueItems"),
                            vendor_extension: extensions(p),
                            r#in: in_,
                        },
                    )),
                    "path" => non_body(non_body_parameter::Oneof::PathParameterSubSchema(
                        PathParameterSubSchema {
                            required: flag(p, "required"),
                            description: string(p, "description"),
                            name: string(p, "name"),
                            r#type: string(p, "type"),
                            format: string(p, "format"),
                            unique_items: flag(p, "uniqueItems"),
                            vendor_extension: extensions(p),
                            r#in: in_,
                        },
                    )),
                    // Header and form-data parameters are never in Flotilla's document.
                    _ => return None,
                };
                parameters_item::Oneof::Parameter(Parameter {
                    oneof: Some(parameter),
                })
            };
            Some(ParametersItem { oneof: Some(oneof) })
        })
        .collect()
}

/// Converts one (already Swagger-2.0-shaped) schema.
pub fn schema(s: &Value) -> Schema {
    let number = |key: &str| s.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let integer = |key: &str| s.get(key).and_then(Value::as_i64).unwrap_or(0);
    Schema {
        xref: string(s, "$ref"),
        format: string(s, "format"),
        title: string(s, "title"),
        description: string(s, "description"),
        default: s.get("default").map(any),
        multiple_of: number("multipleOf"),
        maximum: number("maximum"),
        exclusive_maximum: flag(s, "exclusiveMaximum"),
        minimum: number("minimum"),
        exclusive_minimum: flag(s, "exclusiveMinimum"),
        max_length: integer("maxLength"),
        min_length: integer("minLength"),
        pattern: string(s, "pattern"),
        max_items: integer("maxItems"),
        min_items: integer("minItems"),
        unique_items: flag(s, "uniqueItems"),
        max_properties: integer("maxProperties"),
        min_properties: integer("minProperties"),
        required: strings(s, "required"),
        r#enum: s
            .get("enum")
            .and_then(Value::as_array)
            .map(|values| values.iter().map(any).collect())
            .unwrap_or_default(),
        additional_properties: s.get("additionalProperties").and_then(|a| {
            let oneof = match a {
                Value::Bool(b) => additional_properties_item::Oneof::Boolean(*b),
                Value::Object(_) => additional_properties_item::Oneof::Schema(Box::new(schema(a))),
                _ => return None,
            };
            Some(AdditionalPropertiesItem { oneof: Some(oneof) })
        }),
        r#type: match s.get("type") {
            Some(Value::String(t)) => Some(TypeItem {
                value: vec![t.clone()],
            }),
            Some(Value::Array(_)) => Some(TypeItem {
                value: strings(s, "type"),
            }),
            _ => None,
        },
        items: match s.get("items") {
            Some(Value::Array(list)) => Some(ItemsItem {
                schema: list.iter().map(schema).collect(),
            }),
            Some(item @ Value::Object(_)) => Some(ItemsItem {
                schema: vec![schema(item)],
            }),
            _ => None,
        },
        all_of: s
            .get("allOf")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(schema).collect())
            .unwrap_or_default(),
        properties: s.get("properties").map(|props| Properties {
            additional_properties: named_schemas(props),
        }),
        discriminator: string(s, "discriminator"),
        read_only: flag(s, "readOnly"),
        example: s.get("example").map(any),
        vendor_extension: extensions(s),
    }
}

fn named_schemas(map: &Value) -> Vec<NamedSchema> {
    entries(map)
        .map(|(name, value)| NamedSchema {
            name: name.clone(),
            value: Some(schema(value)),
        })
        .collect()
}

fn reference(value: &Value) -> JsonReference {
    JsonReference {
        xref: string(value, "$ref"),
        description: string(value, "description"),
    }
}

/// The `x-*` keys of an object, in key order.
fn extensions(value: &Value) -> Vec<NamedAny> {
    entries(value)
        .filter(|(name, _)| name.starts_with("x-"))
        .map(|(name, value)| NamedAny {
            name: name.clone(),
            value: Some(any(value)),
        })
        .collect()
}

/// A value as gnostic stores it: YAML text (kubectl reads it back with a YAML decoder).
fn any(value: &Value) -> Any {
    Any {
        // JSON is YAML too, so the fallback still reads back; rendering a JSON value as YAML
        // has no failure case in practice.
        yaml: yaml_serde::to_string(value).unwrap_or_else(|_| value.to_string()),
    }
}

fn entries(value: &Value) -> impl Iterator<Item = (&String, &Value)> {
    value.as_object().into_iter().flat_map(Map::iter)
}

fn string(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The strings of the list at `key` of `value` (none when it is not a list).
pub(crate) fn strings(value: &Value, key: &str) -> Vec<String> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn flag(value: &Value, key: &str) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(false)
}
