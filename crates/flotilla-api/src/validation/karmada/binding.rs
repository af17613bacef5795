//! The ResourceBinding validating webhook's object rules
//! (pkg/webhook/resourcebinding/validating.go): the dependencies annotation must decode, and,
//! with gate `MultiplePodTemplatesScheduling`, components need unique non-empty names. Its
//! FederatedResourceQuota check needs the namespace's quotas and bindings, so the API server
//! does it (`flotilla-apiserver/src/registry/quota.rs`). ClusterResourceBindings have no
//! validating webhook in Karmada.

use std::collections::BTreeSet;

use serde_json::Value;

use super::policy::items;
use super::str_field;
use crate::validation::{FieldError, FieldPath};

/// Annotation listing the objects a binding's resource depends on, as a JSON list of
/// `DependentObjectReference`s.
pub const DEPENDENCIES_ANNOTATION: &str = "resourcebinding.karmada.io/dependencies";

/// The ResourceBinding rules; `components` when gate `MultiplePodTemplatesScheduling` is on.
pub fn resource_binding(object: &Value, components: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(value) = object["metadata"]["annotations"][DEPENDENCIES_ANNOTATION].as_str()
        && !dependencies_decode(value)
    {
        errors.push(FieldError::invalid(
            FieldPath::new("metadata")
                .child("annotations")
                .child(DEPENDENCIES_ANNOTATION),
            value,
            "annotation value must be a valid JSON",
        ));
    }
    if components {
        errors.extend(component_names(&object["spec"]["components"]));
    }
    errors
}

/// Whether `text` decodes as Go decodes it into a list of `DependentObjectReference`s: JSON
/// `null` or a list whose items are `null` or objects with string `apiVersion`, `kind`,
/// `namespace` and `name` (other members are not looked at beyond being JSON).
fn dependencies_decode(text: &str) -> bool {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let reference = |item: &Value| match item {
        Value::Null => true,
        Value::Object(fields) => ["apiVersion", "kind", "namespace", "name"]
            .iter()
            .all(|key| {
                matches!(
                    fields.get(*key),
                    None | Some(Value::Null | Value::String(_))
                )
            }),
        _ => false,
    };
    match &value {
        Value::Null => true,
        Value::Array(list) => list.iter().all(reference),
        _ => false,
    }
}

/// Component names are non-empty and unique (the first offence of each component).
fn component_names(components: &Value) -> Vec<FieldError> {
    let path = FieldPath::new("spec").child("components");
    let mut seen = BTreeSet::new();
    let mut errors = Vec::new();
    for (i, component) in items(components) {
        let name = str_field(component, "name");
        let at = path.index(i).child("name");
        if name.is_empty() {
            errors.push(FieldError::invalid(
                at,
                name,
                "component names must be non-empty",
            ));
        } else if !seen.insert(name) {
            errors.push(FieldError::invalid(
                at,
                name,
                "component names must be unique",
            ));
        }
    }
    errors
}
