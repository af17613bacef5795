//! OverridePolicy and ClusterOverridePolicy validation (`ValidateOverrideSpec`,
//! pkg/util/validation/validation.go).

use serde_json::Value;

use super::policy::{
    cluster_affinity, items, resource_selector_namespaces, string_map, webhook_wording,
};
use super::{shown, str_field};
use crate::validation::{BadValue, FieldError, FieldPath, validate_annotations, validate_labels};

/// `ValidateOverrideSpec`; `namespace` is empty for a ClusterOverridePolicy.
pub fn override_spec(spec: &Value, namespace: &str) -> Vec<FieldError> {
    if spec.is_null() {
        return Vec::new();
    }
    let path = FieldPath::new("spec");
    let mut errors = Vec::new();
    let target = &spec["targetCluster"];
    let rules = &spec["overrideRules"];
    if !target.is_null() {
        errors.extend(cluster_affinity(target, &path.child("targetCluster")));
        if !rules.is_null() {
            errors.push(FieldError::invalid(
                path.child("targetCluster"),
                shown(target),
                "overrideRules and targetCluster can't co-exist",
            ));
        }
    }
    if !empty_overriders(&spec["overriders"]) && !rules.is_null() {
        errors.push(FieldError::invalid(
            path.child("overriders"),
            shown(&spec["overriders"]),
            "overrideRules and overriders can't co-exist",
        ));
    }
    for (i, rule) in items(rules) {
        errors.extend(override_rule(rule, &path.child("overrideRules").index(i)));
    }
    errors.extend(resource_selector_namespaces(
        &spec["resourceSelectors"],
        namespace,
        &path.child("resourceSelectors"),
    ));
    errors
}

/// Karmada's `emptyOverrides` (which does not look at `fieldOverrider`).
fn empty_overriders(overriders: &Value) -> bool {
    [
        "plaintext",
        "imageOverrider",
        "commandOverrider",
        "argsOverrider",
        "labelsOverrider",
        "annotationsOverrider",
    ]
    .iter()
    .all(|key| overriders[*key].as_array().is_none_or(Vec::is_empty))
}

fn override_rule(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let overriders = &rule["overriders"];
    let base = path.child("overriders");
    for (i, annotation) in items(&overriders["annotationsOverrider"]) {
        let at = base.child("annotationsOverrider").index(i).child("value");
        errors.extend(reworded(validate_annotations(
            &string_map(&annotation["value"]),
            &at,
        )));
    }
    for (i, label) in items(&overriders["labelsOverrider"]) {
        let at = base.child("labelsOverrider").index(i).child("value");
        errors.extend(reworded(validate_labels(&string_map(&label["value"]), &at)));
    }
    for (i, image) in items(&overriders["imageOverrider"]) {
        if image["predicate"].is_null() {
            continue;
        }
        let pointer = str_field(&image["predicate"], "path");
        if let Err(message) = json_pointer(pointer) {
            let at = base
                .child("imageOverrider")
                .index(i)
                .child("predicate")
                .child("path");
            errors.push(FieldError::invalid(at, pointer, message));
        }
    }
    for (i, field) in items(&overriders["fieldOverrider"]) {
        let at = base.child("fieldOverrider").index(i);
        let json = field["json"].as_array().is_some_and(|l| !l.is_empty());
        let yaml = field["yaml"].as_array().is_some_and(|l| !l.is_empty());
        if json && yaml {
            errors.push(FieldError::invalid(
                &at,
                shown(field),
                "FieldOverrider has both YAML and JSON set. Only one is allowed",
            ));
        }
        if !json && !yaml {
            errors.push(FieldError::required(
                &at,
                "FieldOverrider must have either JSON or YAML set",
            ));
        }
        let pointer = str_field(field, "fieldPath");
        if let Err(message) = json_pointer(pointer) {
            errors.push(FieldError::invalid(at.child("fieldPath"), pointer, message));
        }
        for list in ["json", "yaml"] {
            for (j, patch) in items(&field[list]) {
                errors.extend(patch_operation(patch, &at.child(list).index(j)));
            }
        }
    }
    errors.extend(cluster_affinity(
        &rule["targetCluster"],
        &path.child("targetCluster"),
    ));
    errors
}

/// Label and annotation errors with karmada-webhook's (apimachinery v0.36) wording.
fn reworded(errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut error| {
            error.detail = webhook_wording(error.detail);
            error
        })
        .collect()
}

/// A sub-path that is a JSON pointer, and a value exactly when the operator needs one.
fn patch_operation(patch: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let sub_path = str_field(patch, "subPath");
    if let Err(message) = json_pointer(sub_path) {
        errors.push(FieldError::invalid(
            path.child("subPath"),
            sub_path,
            message,
        ));
    }
    let value = &patch["value"];
    match str_field(patch, "operator") {
        "add" | "replace" if value.is_null() => errors.push(FieldError::invalid(
            path.child("value"),
            BadValue::Null,
            "value is required for add or replace operation",
        )),
        "remove" if !value.is_null() => errors.push(FieldError::invalid(
            path.child("value"),
            shown(value),
            "value is not allowed for remove operation",
        )),
        _ => {}
    }
    errors
}

/// What go-openapi's `jsonpointer.New` rejects: a non-empty pointer not starting with `/`
/// (its message, unbalanced quote included).
pub fn json_pointer(pointer: &str) -> Result<(), &'static str> {
    if pointer.is_empty() || pointer.starts_with('/') {
        Ok(())
    } else {
        Err("JSON pointer must be empty or start with a \"/")
    }
}
