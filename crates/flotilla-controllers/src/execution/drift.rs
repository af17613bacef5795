//! Drift detection: a fingerprint of what a user can change in a member object, so that status
//! updates are told apart from edits to repair.

use std::collections::HashMap;

use flotilla_api::validation::karmada::prune_manifest;
use parking_lot::Mutex;
use serde_json::Value;

use super::apply::ObjectId;

/// A hash of what a user can change in the member object (pruned like a manifest: no status,
/// no resourceVersion, no managedFields).
pub(super) fn fingerprint(object: &kube::api::DynamicObject) -> u64 {
    // Built without the status (copied for nothing, then pruned) and hashed as it serializes
    // (no string): this runs for every event of every member object.
    let mut map = serde_json::Map::new();
    if let Some(types) = &object.types {
        map.insert(
            "apiVersion".into(),
            Value::String(types.api_version.clone()),
        );
        map.insert("kind".into(), Value::String(types.kind.clone()));
    }
    map.insert(
        "metadata".into(),
        serde_json::to_value(&object.metadata).unwrap_or(Value::Null),
    );
    if let Value::Object(data) = &object.data {
        for (key, value) in data {
            if key != "status" {
                map.insert(key.clone(), value.clone());
            }
        }
    }
    prune_manifest(&mut map);
    crate::fingerprint::hash_of(&map)
}

/// Fingerprints of member objects, to tell real edits from status updates.
#[derive(Default)]
pub(super) struct Drift(Mutex<HashMap<ObjectId, u64>>);

impl Drift {
    /// Records the fingerprint; whether it differs from the previous one (or is the first).
    pub(super) fn observe(&self, id: ObjectId, fingerprint: u64) -> bool {
        self.0.lock().insert(id, fingerprint) != Some(fingerprint)
    }

    pub(super) fn forget(&self, id: &ObjectId) {
        self.0.lock().remove(id);
    }
}
