//! Defaults of core/v1 kinds other than Pods and Services.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/core/v1/defaults.go at v1.32:
//! `SetDefaults_Secret`, `SetDefaults_PersistentVolumeClaim` (+ `…ClaimSpec`),
//! `SetDefaults_PersistentVolume`, `SetDefaults_Namespace` + `SetDefaults_NamespaceStatus`,
//! `SetDefaults_Endpoints`, `SetDefaults_LimitRangeItem`, `SetDefaults_NodeStatus`, and the
//! call graph of zz_generated.defaults.go (PodTemplate → pod template; PersistentVolume →
//! its volume sources).
//!
//! `SetDefaults_ConfigMap` (a nil `data` becomes an empty map) has no visible effect in JSON,
//! where an empty `data` is omitted, so it is not ported.

use serde_json::Value;

use super::fields::{Obj, child, existing, items, or_insert, or_insert_str, str_of};
use super::pod;

pub fn pod_template(template: &mut Obj) {
    if let Some(template) = child(template, "template") {
        pod::template(template);
    }
}

pub fn secret(secret: &mut Obj) {
    or_insert_str(secret, "type", "Opaque");
    string_data(secret);
}

/// `stringData` is write-only: its entries are base64-encoded into `data` (replacing a key
/// both set) and the field is dropped, as the v1 → internal conversion does
/// (k8s.io/kubernetes pkg/apis/core/v1/conversion.go, `Convert_v1_Secret_To_core_Secret`,
/// v1.32). A non-string entry is left for validation to reject.
fn string_data(secret: &mut Obj) {
    use base64::Engine as _;
    let Some(Value::Object(plain)) = secret.get("stringData") else {
        return;
    };
    if plain.values().any(|v| !v.is_string()) {
        return;
    }
    let encoded: Vec<(String, Value)> = plain
        .iter()
        .map(|(k, v)| {
            let text = v.as_str().unwrap_or_default();
            let b64 = base64::engine::general_purpose::STANDARD.encode(text);
            (k.clone(), Value::String(b64))
        })
        .collect();
    secret.remove("stringData");
    let data = secret
        .entry("data")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if data.is_null() {
        *data = Value::Object(serde_json::Map::new());
    }
    if let Some(data) = data.as_object_mut() {
        data.extend(encoded);
    }
}

/// A claim, standalone or as a StatefulSet's volume claim template.
pub fn persistent_volume_claim(claim: &mut Obj) {
    if let Some(status) = child(claim, "status") {
        or_insert_str(status, "phase", "Pending");
    }
    if let Some(spec) = child(claim, "spec") {
        pod::claim_spec(spec);
    }
}

pub fn persistent_volume(volume: &mut Obj) {
    if let Some(status) = child(volume, "status") {
        or_insert_str(status, "phase", "Pending");
    }
    if let Some(spec) = child(volume, "spec") {
        or_insert_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        or_insert(spec, "volumeMode", "Filesystem");
        pod::volume_sources(spec);
    }
}

/// The `kubernetes.io/metadata.name` label always equals the name (a user's value is
/// replaced, as upstream does); a namespace without phase is Active.
pub fn namespace(namespace: &mut Obj) {
    let name = namespace
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if !name.is_empty()
        && let Some(labels) = child(namespace, "metadata").and_then(|m| child(m, "labels"))
    {
        labels.insert("kubernetes.io/metadata.name".into(), name.into());
    }
    if let Some(status) = child(namespace, "status") {
        or_insert_str(status, "phase", "Active");
    }
}

pub fn endpoints(endpoints: &mut Obj) {
    for subset in items(endpoints, "subsets") {
        for port in items(subset, "ports") {
            or_insert_str(port, "protocol", "TCP");
        }
    }
}

/// Container limits: default ← max, defaultRequest ← default, then defaultRequest ← min, each
/// only for resources the target does not name.
pub fn limit_range(limit_range: &mut Obj) {
    let Some(spec) = existing(limit_range, "spec") else {
        return;
    };
    for item in items(spec, "limits") {
        if str_of(item, "type") != "Container" {
            continue;
        }
        fill_missing(item, "max", "default");
        fill_missing(item, "default", "defaultRequest");
        fill_missing(item, "min", "defaultRequest");
    }
}

/// Copies the entries of map `from` that map `to` lacks; creates `to` only when it gains some.
fn fill_missing(item: &mut Obj, from: &str, to: &str) {
    let Some(source) = item.get(from).and_then(Value::as_object).cloned() else {
        return;
    };
    if source.is_empty() || item.get(to).is_some_and(|t| !t.is_null() && !t.is_object()) {
        return;
    }
    if let Some(target) = child(item, to) {
        for (name, quantity) in source {
            target.entry(name).or_insert(quantity);
        }
    }
}

/// A node's allocatable resources default to its capacity.
pub fn node(node: &mut Obj) {
    let Some(status) = existing(node, "status") else {
        return;
    };
    let capacity = status.get("capacity").filter(|c| c.is_object()).cloned();
    if let Some(capacity) = capacity {
        or_insert(status, "allocatable", capacity);
    }
}
