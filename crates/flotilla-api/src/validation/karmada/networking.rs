//! The MultiClusterService validating webhook (pkg/webhook/multiclusterservice/validating.go):
//! a DNS-1035 name, port names and numbers, one known exposure type, valid cluster names; on
//! update, immutable `spec.types` and a valid `status.loadBalancer` (Kubernetes'
//! `ValidateLoadBalancerStatus`, which Karmada lifts). MultiClusterIngress's webhook is in
//! [`super::ingress`].

use std::collections::BTreeSet;
use std::net::IpAddr;

use serde_json::Value;

use super::cluster::cluster_name_errors;
use super::policy::items;
use super::{shown, str_field};
use crate::validation::{
    FieldError, FieldPath, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain,
};

const EXPOSURE_TYPES: [&str; 2] = ["CrossCluster", "LoadBalancer"];

/// Every MultiClusterService rule `object` breaks (`old`: the stored object on update).
pub fn multi_cluster_service(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(old) = old {
        let (before, after) = (&old["spec"]["types"], &object["spec"]["types"]);
        if before != after {
            errors.push(FieldError::invalid(
                FieldPath::new("spec").child("types"),
                shown(before),
                "MultiClusterService types are immutable",
            ));
        }
    }
    errors.extend(name(object));
    errors.extend(spec(&object["spec"]));
    if old.is_some() {
        errors.extend(load_balancer_status(
            &object["status"]["loadBalancer"],
            &FieldPath::new("status").child("loadBalancer"),
        ));
    }
    errors
}

/// The webhook wants a DNS-1035 label. A name that is not even a DNS subdomain is refused by
/// the API server's own metadata check (as kube-apiserver refuses it before the webhook runs),
/// so only subdomains are looked at here.
fn name(object: &Value) -> Vec<FieldError> {
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    if name.is_empty() || !is_dns1123_subdomain(name).is_empty() {
        return Vec::new();
    }
    is_dns1035_label(name)
        .into_iter()
        .map(|message| FieldError::invalid("metadata.name", name, message))
        .collect()
}

fn spec(spec: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let path = FieldPath::new("spec");
    let mut port_names = BTreeSet::new();
    for (i, port) in items(&spec["ports"]) {
        let at = path.child("ports").index(i);
        let name = str_field(port, "name");
        if !name.is_empty() {
            for message in is_dns1123_label(name) {
                errors.push(FieldError::invalid(at.child("name"), name, message));
            }
            if !port_names.insert(name) {
                errors.push(FieldError::duplicate(at.child("name"), name));
            }
        }
        let number = port["port"].as_i64().unwrap_or(0);
        if !(1..=65535).contains(&number) {
            errors.push(FieldError::invalid(
                at.child("port"),
                number,
                "must be between 1 and 65535, inclusive",
            ));
        }
    }
    let mut types = BTreeSet::new();
    for (i, exposure) in items(&spec["types"]) {
        let exposure = exposure.as_str().unwrap_or("");
        types.insert(exposure);
        if !EXPOSURE_TYPES.contains(&exposure) {
            errors.push(FieldError::invalid(
                path.child("types").index(i),
                exposure,
                "ExposureType Error",
            ));
        }
    }
    if types.len() > 1 {
        errors.push(FieldError::invalid(
            path.child("types"),
            shown(&spec["types"]),
            "MultiClusterService types should not contain more than one type",
        ));
    }
    // Karmada reports these under `spec.range`, a field the kind does not have.
    for list in ["providerClusters", "consumerClusters"] {
        for (i, cluster) in items(&spec[list]) {
            let name = str_field(cluster, "name");
            let messages = cluster_name_errors(name);
            if !messages.is_empty() {
                errors.push(FieldError::invalid(
                    path.child("range").child(list).index(i),
                    name,
                    messages.join(","),
                ));
            }
        }
    }
    errors
}

/// An IP address as Kubernetes' `ParseIPSloppy` reads one (IPv4 octets may have leading zeros).
pub(super) fn sloppy_ip(text: &str) -> bool {
    if text.parse::<IpAddr>().is_ok() {
        return true;
    }
    let octets: Vec<&str> = text.split('.').collect();
    octets.len() == 4
        && octets.iter().all(|o| {
            !o.is_empty() && o.bytes().all(|b| b.is_ascii_digit()) && o.parse::<u8>().is_ok()
        })
}

/// `ValidateLoadBalancerStatus`: ingress points' IPs are IPs, hostnames DNS names.
pub fn load_balancer_status(status: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, ingress) in items(&status["ingress"]) {
        let at = path.child("ingress").index(i);
        let ip = str_field(ingress, "ip");
        if !ip.is_empty() && !sloppy_ip(ip) {
            errors.push(FieldError::invalid(
                at.child("ip"),
                ip,
                "must be a valid IP address",
            ));
        }
        let hostname = str_field(ingress, "hostname");
        if !hostname.is_empty() {
            for message in is_dns1123_subdomain(hostname) {
                errors.push(FieldError::invalid(at.child("hostname"), hostname, message));
            }
            if sloppy_ip(hostname) {
                errors.push(FieldError::invalid(
                    at.child("hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errors
}
