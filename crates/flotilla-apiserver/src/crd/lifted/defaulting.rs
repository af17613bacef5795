//! Defaulting: a missing field whose schema has a `default` gets a copy of it; a `null` in a
//! non-nullable field is replaced by its default, or dropped when it has none.
//!
//! Follows k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go
//! (`Default`) and prunenulls.go (`PruneNonNullableNullsWithoutDefaults`): defaults apply top
//! down, so a default's own fields are defaulted too.

use serde_json::Value;

use crate::crd::schema::Node;

/// Applies defaults to `value` in place.
pub fn default(node: &Node, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, property) in &node.properties {
                let missing = match map.get(key) {
                    None => true,
                    Some(Value::Null) => !property.nullable,
                    Some(_) => false,
                };
                if !missing {
                    continue;
                }
                match &property.default {
                    Some(default) => {
                        map.insert(key.clone(), default.clone());
                    }
                    None => {
                        if map.get(key).is_some_and(Value::is_null) {
                            map.remove(key);
                        }
                    }
                }
            }
            if let Some(additional) = node.additional_properties.as_deref()
                && !additional.nullable
            {
                map.retain(|key, v| node.properties.contains_key(key) || !v.is_null());
            }
            for (key, child) in map.iter_mut() {
                let schema = node
                    .properties
                    .get(key)
                    .or(node.additional_properties.as_deref());
                if let Some(schema) = schema {
                    default(schema, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_node) = node.items.as_deref() {
                for item in items {
                    default(item_node, item);
                }
            }
        }
        _ => {}
    }
}
