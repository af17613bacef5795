//! Validation, pruning and defaulting against small structural schemas.

use serde_json::{Value, json};

use flotilla_api::validation::{FieldPath, aggregate_message};

use super::{defaulting, pruning, validation};
use crate::crd::schema::Schema;

fn schema() -> Schema {
    let raw = json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "integer", "minimum": 1, "maximum": 10},
                    "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
                    "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                    "ratio": {"type": "number", "exclusiveMaximum": true, "maximum": 1.5},
                    "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "port": {"x-kubernetes-int-or-string": true},
                    "note": {"type": "string", "nullable": true},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                 "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer", "default": 3}}}}},
                    "enabled": {"type": "boolean"},
                    "nested": {"type": "object", "default": {}, "properties": {"depth": {"type": "integer", "default": 2}}},
                },
            },
            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        },
    });
    Schema::parse(&raw, &FieldPath::default()).expect("test schema parses")
}

fn errors(object: Value) -> String {
    aggregate_message(&validation::validate(&schema(), &object))
}

fn cr(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

#[test]
fn a_valid_object_has_no_errors() {
    let object = cr(json!({
        "size": 3, "color": "green", "name": "abc", "ratio": 1.0, "tags": ["a"],
        "labels": {"a": "b"}, "port": "http", "note": null, "enabled": true,
    }));
    assert_eq!(errors(object), "");
}

#[test]
fn type_errors_name_the_field_and_the_actual_type() {
    assert_eq!(
        errors(cr(json!({"size": "string"}))),
        "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "enabled": "yes", "labels": {"a": 1}}))),
        "[spec.enabled: Invalid value: \"string\": spec.enabled in body must be of type boolean: \"string\", \
         spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\"]"
    );
}

#[test]
fn required_enum_and_bounds_use_kube_wording() {
    assert_eq!(errors(cr(json!({}))), "spec.size: Required value");
    assert_eq!(
        errors(cr(json!({"size": 1, "color": "blue"}))),
        "spec.color: Unsupported value: \"blue\": supported values: \"red\", \"green\""
    );
    assert_eq!(
        errors(cr(json!({"size": 0}))),
        "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
    );
    assert_eq!(
        errors(cr(json!({"size": 11}))),
        "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "ratio": 1.5}))),
        "spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"
    );
}

#[test]
fn strings_and_arrays_are_bounded() {
    assert_eq!(
        errors(cr(json!({"size": 1, "name": "a"}))),
        "spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long"
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "name": "abcdef"}))),
        "spec.name: Too long: may not be more than 5 bytes"
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "name": "AB"}))),
        "spec.name: Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'"
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "tags": []}))),
        "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "tags": ["a", "b", "c"]}))),
        "spec.tags: Too many: 3: must have at most 2 items"
    );
    assert_eq!(
        errors(cr(json!({"size": 1, "tags": [1]}))),
        "spec.tags[0]: Invalid value: \"integer\": spec.tags[0] in body must be of type string: \"integer\""
    );
}

#[test]
fn int_or_string_and_nullable() {
    assert_eq!(errors(cr(json!({"size": 1, "port": 80}))), "");
    assert!(errors(cr(json!({"size": 1, "port": true}))).contains("integer-or-string"));
    assert_eq!(
        errors(cr(json!({"size": 1, "name": null}))),
        "spec.name: Invalid value: \"null\": spec.name in body must be of type string: \"null\""
    );
}

#[test]
fn pruning_drops_unknown_fields_but_keeps_preserved_and_embedded_ones() {
    let schema = schema();
    let mut object = cr(json!({
        "size": 1, "unknown": true,
        "free": {"anything": {"goes": 1}},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1, "y": 2}},
    }));
    object["extra"] = json!("gone");
    let pruned = pruning::prune(&schema.root, &mut object);
    assert_eq!(
        pruned,
        vec!["spec.unknown", "spec.template.spec.y", "extra"]
    );
    assert_eq!(
        object,
        cr(json!({
            "size": 1,
            "free": {"anything": {"goes": 1}},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
        }))
    );
}

#[test]
fn defaults_fill_missing_fields_top_down_and_replace_non_nullable_nulls() {
    let schema = schema();
    let mut object = cr(json!({"size": 1, "color": null, "name": null, "note": null}));
    defaulting::default(&schema.root, &mut object);
    assert_eq!(
        object["spec"],
        json!({"size": 1, "color": "red", "note": null, "nested": {"depth": 2}})
    );
    let mut kept = cr(json!({"size": 1, "color": "green", "nested": {"depth": 5}}));
    defaulting::default(&schema.root, &mut kept);
    assert_eq!(kept["spec"]["color"], "green");
    assert_eq!(kept["spec"]["nested"]["depth"], 5);
}

#[test]
fn invalid_patterns_and_types_are_schema_errors() {
    let raw = json!({"type": "object", "properties": {"a": {"type": "strin"}, "b": {"type": "string", "pattern": "("}}});
    let problems = Schema::parse(&raw, &FieldPath::new("openAPIV3Schema")).expect_err("invalid");
    let message = aggregate_message(&problems);
    assert!(
        message.contains("openAPIV3Schema.properties[a].type: Unsupported value: \"strin\""),
        "{message}"
    );
    assert!(
        message.contains("openAPIV3Schema.properties[b].pattern: Invalid value: \"(\""),
        "{message}"
    );
}

#[test]
fn go_float_formatting() {
    assert_eq!(validation::go_float(1.0), "1");
    assert_eq!(validation::go_float(1.5), "1.5");
    assert_eq!(validation::go_float(1e6), "1e+06");
    assert_eq!(validation::go_float(123456.0), "123456");
    assert_eq!(validation::go_float(0.00001), "1e-05");
}
