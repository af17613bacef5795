//! `Retain` (Karmada pkg/util/objectwatcher `retainClusterFields` and
//! pkg/resourceinterpreter/default/native/retain.go): before a member object is updated, the
//! desired object inherits what the member owns, so Flotilla never fights member controllers.
//!
//! For every kind: `resourceVersion`, `finalizers` and `ownerReferences` of the member object,
//! and the labels and annotations the member added (keys the template still manages, or managed
//! before and has since removed, are not kept — `resourcetemplate.karmada.io/managed-labels` and
//! `managed-annotations` on the member object record them). Per kind: Deployment `spec.replicas`
//! when the template says `resourcetemplate.karmada.io/retain-replicas: "true"` (a member HPA owns
//! them), Pod scheduling and volume fields, Service cluster IPs and node ports, ServiceAccount
//! secrets, PVC `volumeName`, PV `claimRef`, Job selector and template labels, and the token of a
//! service-account Secret.

pub mod lifted;

use serde_json::{Map, Value};

use flotilla_api::karmada::RETAIN_REPLICAS_LABEL;
use flotilla_api::validation::karmada::{MANAGED_ANNOTATIONS, MANAGED_LABELS};

use super::gvk_of;

/// Why retention failed.
#[derive(Debug, thiserror::Error)]
pub enum RetainError {
    #[error("failed to get spec.replicas from {kind} {namespace}/{name}")]
    MissingReplicas {
        kind: String,
        namespace: String,
        name: String,
    },
}

/// Everything Karmada retains before an update: cluster fields, then the kind's `Retain` rule.
pub fn retain(desired: &mut Value, observed: &Value) -> Result<(), RetainError> {
    retain_cluster_fields(desired, observed);
    retain_kind_fields(desired, observed)
}

/// `resourceVersion`, `finalizers`, `ownerReferences`, and member-added labels and annotations.
pub fn retain_cluster_fields(desired: &mut Value, observed: &Value) {
    let observed_meta = &observed["metadata"];
    let meta = metadata_mut(desired);
    for field in ["resourceVersion", "finalizers", "ownerReferences"] {
        match observed_meta.get(field) {
            Some(value) if !is_empty(value) => {
                meta.insert(field.into(), value.clone());
            }
            _ => {
                meta.remove(field);
            }
        }
    }
    merge_member_keys(meta, observed_meta, "annotations", MANAGED_ANNOTATIONS);
    merge_member_keys(meta, observed_meta, "labels", MANAGED_LABELS);
}

/// Adds the observed `map` entries (labels or annotations) the desired object lacks, except the
/// keys listed in the observed object's `record` annotation (the template managed them and no
/// longer does).
fn merge_member_keys(
    meta: &mut Map<String, Value>,
    observed_meta: &Value,
    map: &str,
    record: &str,
) {
    let desired_map = meta.get(map).and_then(Value::as_object);
    let deleted: Vec<&str> = observed_meta["annotations"][record]
        .as_str()
        .unwrap_or_default()
        .split(',')
        .filter(|key| desired_map.is_none_or(|d| !d.contains_key(*key)))
        .collect();
    let mut merged = desired_map.cloned().unwrap_or_default();
    if let Some(observed_map) = observed_meta[map].as_object() {
        for (key, value) in observed_map {
            if deleted.contains(&key.as_str()) || merged.contains_key(key) {
                continue;
            }
            merged.insert(key.clone(), value.clone());
        }
    }
    if !merged.is_empty() {
        meta.insert(map.into(), Value::Object(merged));
    }
}

/// The native `Retain` rule of the object's kind (none: nothing to do).
pub fn retain_kind_fields(desired: &mut Value, observed: &Value) -> Result<(), RetainError> {
    let (api_version, kind) = gvk_of(desired);
    match (api_version, kind) {
        ("apps/v1", "Deployment") => retain_workload_replicas(desired, observed)?,
        ("v1", "Pod") => retain_pod_fields(desired, observed),
        ("v1", "Service") => lifted::retain_service_fields(desired, observed),
        ("v1", "ServiceAccount") => lifted::retain_service_account_fields(desired, observed),
        ("v1", "PersistentVolumeClaim") => {
            if let Some(volume) = observed["spec"]["volumeName"]
                .as_str()
                .filter(|v| !v.is_empty())
            {
                spec_mut(desired).insert("volumeName".into(), volume.into());
            }
        }
        ("v1", "PersistentVolume") => {
            if let Some(claim) = observed["spec"].get("claimRef") {
                spec_mut(desired).insert("claimRef".into(), claim.clone());
            }
        }
        ("batch/v1", "Job") => retain_job_selector_fields(desired, observed),
        ("v1", "Secret") => {
            if desired["type"].as_str() == Some("kubernetes.io/service-account-token")
                && let Some(data) = observed.get("data").filter(|d| d.is_object())
                && let Some(object) = desired.as_object_mut()
            {
                object.insert("data".into(), data.clone());
            }
        }
        _ => {}
    }
    Ok(())
}

/// A member HPA owns `spec.replicas` when the template carries the retain-replicas label.
fn retain_workload_replicas(desired: &mut Value, observed: &Value) -> Result<(), RetainError> {
    if desired["metadata"]["labels"][RETAIN_REPLICAS_LABEL].as_str() != Some("true") {
        return Ok(());
    }
    let Some(replicas) = observed["spec"]["replicas"].as_i64() else {
        return Err(RetainError::MissingReplicas {
            kind: observed["kind"].as_str().unwrap_or_default().to_owned(),
            namespace: observed["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            name: observed["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        });
    };
    spec_mut(desired).insert("replicas".into(), replicas.into());
    Ok(())
}

/// The member scheduled the Pod and may have injected volumes (service-account tokens).
fn retain_pod_fields(desired: &mut Value, observed: &Value) {
    let observed_spec = &observed["spec"];
    let spec = spec_mut(desired);
    for field in ["nodeName", "serviceAccountName", "volumes"] {
        match observed_spec.get(field) {
            Some(value) if !is_empty(value) => {
                spec.insert(field.into(), value.clone());
            }
            _ => {
                spec.remove(field);
            }
        }
    }
    for list in ["containers", "initContainers"] {
        let Some(observed_containers) = observed_spec[list].as_array() else {
            continue;
        };
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for observed_container in observed_containers {
            let name = &observed_container["name"];
            if let Some(container) = containers
                .iter_mut()
                .find(|c| &c["name"] == name)
                .and_then(Value::as_object_mut)
            {
                match observed_container.get("volumeMounts") {
                    Some(mounts) if !is_empty(mounts) => {
                        container.insert("volumeMounts".into(), mounts.clone());
                    }
                    _ => {
                        container.remove("volumeMounts");
                    }
                }
            }
        }
    }
}

/// The member's Job controller generated the selector and the template labels.
fn retain_job_selector_fields(desired: &mut Value, observed: &Value) {
    if let Some(labels) = observed["spec"]["selector"].get("matchLabels") {
        let selector = object_entry(spec_mut(desired), "selector");
        selector.insert("matchLabels".into(), labels.clone());
    }
    if let Some(labels) = observed["spec"]["template"]["metadata"].get("labels") {
        let template = object_entry(spec_mut(desired), "template");
        let meta = object_entry(template, "metadata");
        meta.insert("labels".into(), labels.clone());
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    top_entry(object, "metadata")
}

pub(crate) fn spec_mut(object: &mut Value) -> &mut Map<String, Value> {
    top_entry(object, "spec")
}

fn top_entry<'a>(object: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let Value::Object(map) = object else {
        unreachable!("made an object above")
    };
    object_entry(map, key)
}

pub(crate) fn object_entry<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> &'a mut Map<String, Value> {
    let entry = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    match entry {
        Value::Object(inner) => inner,
        _ => unreachable!("made an object above"),
    }
}

#[cfg(test)]
mod tests;
