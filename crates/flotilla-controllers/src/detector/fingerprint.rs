//! What a template event changed: its specification (not just its status), and whether a user
//! changed it (not just Karmada's own labels and annotations).

use std::hash::{Hash as _, Hasher as _};

use kube::api::DynamicObject;

/// Hashes of a template without its status and the bookkeeping the server changes on every
/// write (`resourceVersion`, `managedFields`, `generation`); key order does not count (a status
/// write through a typed client may store `spec` with its keys reordered).
///
/// `whole` tells a new version of the specification from a status write. `users` leaves out
/// Karmada's own labels and annotations too (keys holding `.karmada.io`, but for the label
/// `namespace.karmada.io/skip-auto-propagation`, which users set): a claim the detector wrote
/// is not a user's change (Karmada's `eventfilter.ResourceChangeByKarmada`), which matters for
/// Lazy policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fingerprint {
    pub whole: u64,
    pub users: u64,
}

impl Fingerprint {
    pub fn of(object: &DynamicObject) -> Self {
        let mut meta = object.metadata.clone();
        meta.resource_version = None;
        meta.managed_fields = None;
        meta.generation = None;
        let mut body = std::collections::hash_map::DefaultHasher::new();
        match object.data.as_object() {
            Some(data) => {
                let mut keys: Vec<&String> = data.keys().filter(|k| *k != "status").collect();
                keys.sort_unstable();
                for key in keys {
                    key.hash(&mut body);
                    crate::fingerprint::hash_canonical(&data[key], &mut body);
                }
            }
            None => crate::fingerprint::hash_canonical(&object.data, &mut body),
        }
        let body = body.finish();
        let whole = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            crate::fingerprint::hash_of(&meta).hash(&mut hasher);
            body.hash(&mut hasher);
            hasher.finish()
        };
        for (map, exception) in [
            (
                &mut meta.labels,
                crate::namespace::SKIP_AUTO_PROPAGATION_LABEL,
            ),
            (&mut meta.annotations, ""),
        ] {
            if let Some(entries) = map {
                entries.retain(|key, _| !key.contains(".karmada.io") || key == exception);
                if entries.is_empty() {
                    *map = None;
                }
            }
        }
        let users = {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            crate::fingerprint::hash_of(&meta).hash(&mut hasher);
            body.hash(&mut hasher);
            hasher.finish()
        };
        Fingerprint { whole, users }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: serde_json::Value) -> DynamicObject {
        serde_json::from_value(value).expect("object")
    }

    fn template(labels: serde_json::Value, replicas: i64, ready: i64) -> DynamicObject {
        object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": labels,
                "resourceVersion": format!("{replicas}{ready}")},
            "spec": {"replicas": replicas}, "status": {"readyReplicas": ready}}))
    }

    #[test]
    fn status_writes_change_nothing_and_claims_are_not_a_users_change() {
        let base = Fingerprint::of(&template(json!({"app": "web"}), 2, 0));
        assert_eq!(
            Fingerprint::of(&template(json!({"app": "web"}), 2, 2)),
            base
        );

        let claimed = Fingerprint::of(&template(
            json!({"app": "web", "propagationpolicy.karmada.io/permanent-id": "id"}),
            2,
            0,
        ));
        assert_ne!(claimed.whole, base.whole, "a claim is a new version");
        assert_eq!(claimed.users, base.users, "but Karmada's own change");

        let relabelled = Fingerprint::of(&template(json!({"app": "api"}), 2, 0));
        assert_ne!(relabelled.users, base.users);
        let scaled = Fingerprint::of(&template(json!({"app": "web"}), 3, 0));
        assert_ne!(scaled.users, base.users);
        // The one `.karmada.io` label meant for users counts as theirs.
        let skipped = Fingerprint::of(&template(
            json!({"app": "web", "namespace.karmada.io/skip-auto-propagation": "true"}),
            2,
            0,
        ));
        assert_ne!(skipped.users, base.users);
    }
}
