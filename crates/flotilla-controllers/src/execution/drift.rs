//! Drift detection: a fingerprint of what a user can change in a member object, so that status
//! updates are told apart from edits to repair, and which Work a member event re-applies
//! (Karmada's `onAdd`/`onUpdate`/`onDelete`).

use std::collections::HashMap;

use flotilla_api::validation::karmada::prune_manifest;
use parking_lot::Mutex;
use serde_json::Value;

use flotilla_api::karmada::{MANAGED_BY_KARMADA_LABEL, names};

use super::WorkKey;
use super::apply::ObjectId;

/// A hash of what a user can change in the member object (pruned like a manifest: no status,
/// no resourceVersion, no managedFields).
pub(super) fn fingerprint(object: &kube::api::DynamicObject) -> u64 {
    // This runs for every event of every member object: hashed as it serializes (no string),
    // and without copying the spec unless the kind's pruning changes more than metadata.
    let kind = object
        .types
        .as_ref()
        .map_or("", |types| types.kind.as_str());
    let prunes_data = matches!(kind, "Job" | "Secret" | "ServiceAccount" | "Service");
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
    let data = object.data.as_object();
    if prunes_data {
        for (key, value) in data.into_iter().flatten() {
            if key != "status" {
                map.insert(key.clone(), value.clone());
            }
        }
        prune_manifest(&mut map);
        return crate::fingerprint::hash_of(&map);
    }
    prune_manifest(&mut map);
    crate::fingerprint::hash_of(&(&map, WithoutStatus(data)))
}

/// The object's members but `status`, serialized in place.
struct WithoutStatus<'a>(Option<&'a serde_json::Map<String, Value>>);

impl serde::Serialize for WithoutStatus<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(
            self.0
                .into_iter()
                .flatten()
                .filter(|(key, _)| key.as_str() != "status"),
        )
    }
}

/// What was last seen of a member object: its fingerprint and the Work it named then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seen {
    pub(super) fingerprint: u64,
    /// The name of the Work it named, when that Work is in the object's own cluster's execution
    /// space (the only Works its events re-apply); the namespace follows from the cluster, so
    /// the tracker keeps one short string per member object.
    pub(super) work: Option<Box<str>>,
}

/// Fingerprints of member objects, to tell real edits from status updates, and the Work each
/// named when last seen (Karmada re-applies the Work of the object *before* a change, so an
/// edit of its Work annotations is repaired too).
#[derive(Default)]
pub(super) struct Drift(Mutex<HashMap<ObjectId, Seen>>);

impl Drift {
    /// Records what is seen now; returns what was seen before (`None` the first time).
    pub(super) fn observe(&self, id: ObjectId, seen: Seen) -> Option<Seen> {
        self.0.lock().insert(id, seen)
    }

    /// Forgets the object; returns what was last seen of it.
    pub(super) fn forget(&self, id: &ObjectId) -> Option<Seen> {
        self.0.lock().remove(id)
    }
}

/// Karmada's `workKeyFromWorkload`: the Work a member object was applied from, for an object
/// labelled managed by Karmada whose Work annotations are both set.
pub(super) fn work_key_from_workload(object: &kube::api::DynamicObject) -> Option<WorkKey> {
    let managed = object
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(MANAGED_BY_KARMADA_LABEL))
        .is_some_and(|v| v == "true");
    managed.then(|| WorkKey::from_member_object(object))?
}

/// Whether `work` is a Work of `cluster`'s execution space.
pub(super) fn in_cluster(work: Option<WorkKey>, cluster: &str) -> Option<WorkKey> {
    work.filter(|w| names::cluster_name(&w.namespace).ok() == Some(cluster))
}

/// Karmada's `onAdd`/`onUpdate`: the Work to re-apply after a member object of `cluster` was
/// added or changed. The Work is the one the object named before the change (`before`; `now`
/// the first time it is seen), so removing or editing its Work annotations is repaired too.
/// Nothing until Flotilla wrote the object once (`recorded`, the version it wrote), for its
/// own write, or when only status and bookkeeping changed (same fingerprint).
pub(super) fn requeue_after_change(
    cluster: &str,
    object: &kube::api::DynamicObject,
    before: Option<&Seen>,
    now: &Seen,
    recorded: Option<&str>,
) -> Option<WorkKey> {
    let work = before.unwrap_or(now).work.as_deref()?;
    let recorded = recorded?;
    if object.metadata.resource_version.as_deref() == Some(recorded) {
        return None;
    }
    if before.is_some_and(|b| b.fingerprint == now.fingerprint) {
        return None;
    }
    Some(work_of(cluster, work))
}

/// Karmada's `onDelete`: the Work to re-apply after a member object of `cluster` is gone. A
/// member informer watches managed objects only, so an object whose managed label was removed
/// arrives here too (without the label): its Work is the one last seen, else its annotations'.
pub(super) fn requeue_after_delete(
    cluster: &str,
    object: &kube::api::DynamicObject,
    before: Option<&Seen>,
) -> Option<WorkKey> {
    match before.and_then(|b| b.work.as_deref()) {
        Some(work) => Some(work_of(cluster, work)),
        None => in_cluster(WorkKey::from_member_object(object), cluster),
    }
}

/// What is seen of a member object of `cluster` now: its fingerprint, and the name of the Work
/// it names when that Work is in the cluster's execution space.
pub(super) fn observed(cluster: &str, object: &kube::api::DynamicObject) -> Seen {
    Seen {
        fingerprint: fingerprint(object),
        work: in_cluster(work_key_from_workload(object), cluster).map(|w| w.name.into()),
    }
}

/// The Work `name` of `cluster`'s execution space.
pub(super) fn work_of(cluster: &str, name: &str) -> WorkKey {
    WorkKey {
        namespace: names::execution_space_name(cluster),
        name: name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::fingerprint;

    fn object(value: serde_json::Value) -> kube::api::DynamicObject {
        serde_json::from_value(value).expect("object")
    }

    #[test]
    fn only_what_a_user_can_change_moves_the_fingerprint() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "d", "resourceVersion": "5",
                "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": 2}, "status": {"readyReplicas": 1}});
        let base = fingerprint(&object(deployment.clone()));
        let mut member_owned = deployment.clone();
        member_owned["status"]["readyReplicas"] = json!(2);
        member_owned["metadata"]["resourceVersion"] = json!("6");
        member_owned["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!("2");
        assert_eq!(fingerprint(&object(member_owned)), base);
        let mut edited = deployment.clone();
        edited["spec"]["replicas"] = json!(3);
        assert_ne!(fingerprint(&object(edited)), base);
        let mut labelled = deployment;
        labelled["metadata"]["labels"] = json!({"team": "x"});
        assert_ne!(fingerprint(&object(labelled)), base);

        // A kind whose pruning reaches into the spec: the member's clusterIP is its own.
        let service = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "d"},
            "spec": {"clusterIP": "10.0.0.1", "ports": [{"port": 80}]}});
        let base = fingerprint(&object(service.clone()));
        let mut reassigned = service.clone();
        reassigned["spec"]["clusterIP"] = json!("10.0.0.2");
        assert_eq!(fingerprint(&object(reassigned)), base);
        let mut edited = service;
        edited["spec"]["ports"][0]["port"] = json!(81);
        assert_ne!(fingerprint(&object(edited)), base);
    }
}
