//! A cache of objects of one kind kept as compact JSON, parsed again when read.
//!
//! Parsed into a `DynamicObject`, a Deployment costs ~19–28 KB (a `serde_json::Value` tree is
//! about ten times its JSON); as bytes it costs its JSON, 1–3 KB. The detector keeps every
//! object of every propagatable kind this way, and the member informers every object Flotilla
//! applied to a member: both read an object once per reconcile, which reads and writes far more
//! than one parse. `metadata.managedFields` is never kept.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::api::DynamicObject;
use parking_lot::RwLock;
use tracing::warn;

/// `(namespace, name)`; empty namespace for cluster-scoped objects.
pub type Key = (String, String);

/// Compact objects by `(namespace, name)`. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct CompactObjects {
    by_name: Arc<RwLock<HashMap<Key, Box<[u8]>>>>,
}

/// `(namespace, name)` of an object.
pub fn key_of(object: &DynamicObject) -> Key {
    (
        object.metadata.namespace.clone().unwrap_or_default(),
        object.metadata.name.clone().unwrap_or_default(),
    )
}

/// The stored form of `object`.
fn compact(object: &DynamicObject) -> Option<Box<[u8]>> {
    if object.metadata.managed_fields.is_none() {
        return serde_json::to_vec(object).ok().map(Vec::into_boxed_slice);
    }
    let mut slim = object.clone();
    slim.metadata.managed_fields = None;
    serde_json::to_vec(&slim).ok().map(Vec::into_boxed_slice)
}

fn parse(key: &Key, bytes: &[u8]) -> Option<DynamicObject> {
    match serde_json::from_slice(bytes) {
        Ok(object) => Some(object),
        Err(error) => {
            warn!(%error, namespace = %key.0, name = %key.1, "cached object does not parse");
            None
        }
    }
}

impl CompactObjects {
    /// Adds or replaces `object`.
    pub fn apply(&self, object: &DynamicObject) {
        match compact(object) {
            Some(bytes) => {
                self.by_name.write().insert(key_of(object), bytes);
            }
            None => warn!(name = ?object.metadata.name, "object does not serialize; not cached"),
        }
    }

    /// Removes `object`.
    pub fn delete(&self, object: &DynamicObject) {
        self.by_name.write().remove(&key_of(object));
    }

    /// Drops every object not in `keep`, returning them (parsed).
    pub fn retain(&self, keep: &HashSet<Key>) -> Vec<DynamicObject> {
        let mut gone = Vec::new();
        self.by_name.write().retain(|key, bytes| {
            if keep.contains(key) {
                return true;
            }
            gone.extend(parse(key, bytes));
            false
        });
        gone
    }

    /// The object `namespace/name`, parsed.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<DynamicObject>> {
        let key = (namespace.to_owned(), name.to_owned());
        let by_name = self.by_name.read();
        parse(&key, by_name.get(&key)?).map(Arc::new)
    }

    /// `(namespace, name)` of every object, sorted.
    pub fn keys(&self) -> Vec<Key> {
        let mut keys: Vec<_> = self.by_name.read().keys().cloned().collect();
        keys.sort_unstable();
        keys
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(namespace: &str, name: &str, value: i64) -> DynamicObject {
        serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace,
                "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
            "status": {"readyReplicas": value}}))
        .expect("object")
    }

    #[test]
    fn objects_come_back_as_applied_without_managed_fields() {
        let cache = CompactObjects::default();
        cache.apply(&object("x", "a", 1));
        cache.apply(&object("x", "b", 1));
        cache.apply(&object("x", "a", 2));
        let a = cache.get("x", "a").expect("a");
        assert_eq!(a.data["status"]["readyReplicas"], 2);
        assert_eq!(a.metadata.managed_fields, None);
        assert!(cache.get("y", "a").is_none());
        cache.delete(&object("x", "b", 0));
        assert_eq!(cache.keys(), [("x".to_owned(), "a".to_owned())]);
        cache.apply(&object("x", "c", 3));
        let gone = cache.retain(&[("x".to_owned(), "c".to_owned())].into());
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].metadata.name.as_deref(), Some("a"));
        assert_eq!(cache.keys().len(), 1);
    }
}
