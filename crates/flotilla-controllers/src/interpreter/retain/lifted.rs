//! Retention of Service and ServiceAccount fields a member cluster allocates.
//!
//! Behaviour ported from kubefed (kubernetes-sigs/kubefed, pkg/controller/sync/dispatch/retain.go,
//! as carried by Karmada v1.19 in pkg/util/lifted/retain.go), written anew. Beyond that source,
//! `clusterIPs` and node ports are kept the way kube-apiserver keeps them on update
//! (pkg/registry/core/service/storage `patchAllocatedValues`), so an update never asks the member
//! to re-allocate them.

use serde_json::Value;

use super::spec_mut;

/// `healthCheckNodePort`, `clusterIP` (and `clusterIPs`) and allocated node ports.
pub fn retain_service_fields(desired: &mut Value, observed: &Value) {
    let observed_spec = &observed["spec"];
    let spec = spec_mut(desired);
    if let Some(port) = observed_spec["healthCheckNodePort"]
        .as_i64()
        .filter(|p| *p > 0)
    {
        spec.insert("healthCheckNodePort".into(), port.into());
    }
    if let Some(ip) = observed_spec["clusterIP"]
        .as_str()
        .filter(|ip| !ip.is_empty())
    {
        spec.insert("clusterIP".into(), ip.into());
        let has_ips = spec
            .get("clusterIPs")
            .and_then(Value::as_array)
            .is_some_and(|ips| !ips.is_empty());
        if !has_ips && let Some(ips) = observed_spec.get("clusterIPs") {
            spec.insert("clusterIPs".into(), ips.clone());
        }
    }
    let Some(observed_ports) = observed_spec["ports"].as_array() else {
        return;
    };
    let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) else {
        return;
    };
    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
        if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
            continue;
        }
        let protocol = |p: &serde_json::Map<String, Value>| {
            p.get("protocol")
                .and_then(Value::as_str)
                .unwrap_or("TCP")
                .to_owned()
        };
        let wanted = (port.get("port").cloned(), protocol(port));
        let allocated = observed_ports
            .iter()
            .filter_map(Value::as_object)
            .find(|o| (o.get("port").cloned(), protocol(o)) == wanted)
            .and_then(|o| o.get("nodePort"))
            .filter(|n| n.as_i64().unwrap_or(0) != 0);
        if let Some(node_port) = allocated {
            port.insert("nodePort".into(), node_port.clone());
        }
    }
}

/// Merges `secrets` and `imagePullSecrets`: the desired entries, then the member's entries whose
/// names the desired object lacks (the member's token controller keeps adding them otherwise).
pub fn retain_service_account_fields(desired: &mut Value, observed: &Value) {
    for field in ["secrets", "imagePullSecrets"] {
        let mut merged: Vec<Value> = desired[field].as_array().cloned().unwrap_or_default();
        let mut names: Vec<Value> = merged.iter().map(|s| s["name"].clone()).collect();
        for secret in observed[field].as_array().into_iter().flatten() {
            if names.contains(&secret["name"]) {
                continue;
            }
            names.push(secret["name"].clone());
            merged.push(secret.clone());
        }
        if let Some(object) = desired.as_object_mut() {
            if merged.is_empty() {
                object.remove(field);
            } else {
                object.insert(field.into(), Value::Array(merged));
            }
        }
    }
}
