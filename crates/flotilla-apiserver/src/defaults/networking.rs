//! Defaults of networking.k8s.io/v1 kinds.
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/networking/v1/defaults.go at
//! v1.32: `SetDefaults_NetworkPolicy` (no policy types means Ingress, plus Egress when egress
//! rules exist), `SetDefaults_NetworkPolicyPort` (TCP), `SetDefaults_IngressClass` (parameters
//! scoped to the cluster). Ingress has no defaults in v1 (`pathType` is required).

use serde_json::{Value, json};

use super::fields::{Obj, existing, items, list_empty, or_insert};

pub fn network_policy(policy: &mut Obj) {
    let Some(spec) = existing(policy, "spec") else {
        return;
    };
    if list_empty(spec, "policyTypes") {
        let types = if list_empty(spec, "egress") {
            json!(["Ingress"])
        } else {
            json!(["Ingress", "Egress"])
        };
        spec.insert("policyTypes".into(), types);
    }
    for direction in ["ingress", "egress"] {
        for rule in items(spec, direction) {
            for port in items(rule, "ports") {
                or_insert(port, "protocol", "TCP");
            }
        }
    }
}

pub fn ingress_class(class: &mut Obj) {
    if let Some(parameters) = existing(class, "spec").and_then(|s| existing(s, "parameters")) {
        or_insert(parameters, "scope", Value::from("Cluster"));
    }
}
