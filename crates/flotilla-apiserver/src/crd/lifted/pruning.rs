//! Pruning: fields a structural schema does not specify are dropped, unless a node says
//! `x-kubernetes-preserve-unknown-fields`.
//!
//! Follows k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go: at the
//! root of a resource and of an `x-kubernetes-embedded-resource`, `apiVersion`, `kind` and
//! `metadata` are always kept.

use serde_json::Value;

use flotilla_api::validation::FieldPath;

use crate::crd::schema::Node;

/// Prunes `object` (a whole resource) in place; returns the paths of the removed fields.
pub fn prune(root: &Node, object: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    walk(Some(root), object, &FieldPath::default(), true, &mut pruned);
    pruned
}

fn walk(
    node: Option<&Node>,
    value: &mut Value,
    path: &FieldPath,
    resource: bool,
    pruned: &mut Vec<String>,
) {
    let Some(node) = node else {
        return;
    };
    match value {
        Value::Object(map) => {
            let resource = resource || node.embedded_resource;
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if resource && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                let child = node
                    .properties
                    .get(&key)
                    .or(node.additional_properties.as_deref());
                match child {
                    Some(child) => {
                        if let Some(v) = map.get_mut(&key) {
                            walk(Some(child), v, &path.child(&key), false, pruned);
                        }
                    }
                    None if node.preserve_unknown_fields => {}
                    None => {
                        map.remove(&key);
                        pruned.push(path.child(&key).to_string());
                    }
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk(node.items.as_deref(), item, &path.index(i), false, pruned);
            }
        }
        _ => {}
    }
}
