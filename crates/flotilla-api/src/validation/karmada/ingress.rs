//! The MultiClusterIngress validating webhook (pkg/webhook/multiclusteringress/validating.go):
//! the object's `spec` is an Ingress spec, checked as Kubernetes checks one, and on update its
//! `status.loadBalancer` is checked too.
//!
//! Provenance: behaviour ported from Kubernetes' `pkg/apis/networking/validation/validation.go`
//! (release-1.27: `ValidateIngressSpec`, `validateIngressBackend`,
//! `validateIngressTypedLocalObjectReference`, `validateIngressRules`,
//! `validateHTTPIngressRuleValue`, `validateHTTPIngressPath`, `validateIngressTLS`,
//! `validateTLSSecretName`, `ValidateIngressLoadBalancerStatus`) as Karmada lifts it into
//! `pkg/util/lifted/validatingmci.go`, with Karmada's options (invalid secret names and
//! invalid rules under wildcard hosts both refused), and from apimachinery's
//! `IsWildcardDNS1123Subdomain`, `IsValidPortName` and `IsValidPortNum`. Written from that
//! behaviour and from the tests in `validatingmci_test.go` and
//! `pkg/webhook/multiclusteringress/validating_test.go`, not translated. The webhook's
//! `metadata` checks (`ValidateObjectMeta`, `ValidateObjectMetaUpdate`) are the API server's
//! own for every kind, so they are not repeated here. Values Kubernetes prints with `%#v`
//! (the `rules` list) are printed as JSON.

use serde_json::Value;

use super::networking::{load_balancer_status, sloppy_ip};
use super::policy::items;
use super::{shown, str_field};
use crate::validation::{
    FieldError, FieldPath, is_dns1035_label, is_dns1123_subdomain, is_valid_path_segment_name,
};

/// The path types an HTTP path may have, sorted as Kubernetes lists them.
const PATH_TYPES: [&str; 3] = ["Exact", "ImplementationSpecific", "Prefix"];
/// What an `Exact` or `Prefix` path may not contain, in the order they are reported.
const BAD_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
/// What an `Exact` or `Prefix` path may not end with, in the order they are reported.
const BAD_SUFFIXES: [&str; 2] = ["/..", "/."];

const WILDCARD_FMT: &str = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const WILDCARD_ERR: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character";

/// Every MultiClusterIngress rule `object` breaks (`old`: the stored object on update).
pub fn multi_cluster_ingress(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = ingress_spec(&object["spec"], &FieldPath::new("spec"));
    if old.is_some() {
        errors.extend(load_balancer_status(
            &object["status"]["loadBalancer"],
            &FieldPath::new("status").child("loadBalancer"),
        ));
    }
    errors
}

/// A JSON field that Go would decode into a non-nil pointer.
fn present(value: &Value) -> bool {
    !value.is_null()
}

/// Kubernetes' Ingress spec rules, in its order: something to route to, the default backend,
/// the rules, TLS, the class name.
fn ingress_spec(spec: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let rules = spec["rules"].as_array().map_or(0, Vec::len);
    let default_backend = &spec["defaultBackend"];
    if rules == 0 && !present(default_backend) {
        errors.push(FieldError::invalid(
            path.clone(),
            shown(&spec["rules"]),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if present(default_backend) {
        errors.extend(backend(default_backend, &path.child("defaultBackend")));
    }
    for (i, rule) in items(&spec["rules"]) {
        errors.extend(ingress_rule(rule, &path.child("rules").index(i)));
    }
    for (i, tls) in items(&spec["tls"]) {
        let at = path.child("tls").index(i);
        for (j, host) in items(&tls["hosts"]) {
            let host = host.as_str().unwrap_or("");
            errors.extend(
                host_errors(host)
                    .into_iter()
                    .map(|message| FieldError::invalid(at.child("hosts").index(j), host, message)),
            );
        }
        let secret = str_field(tls, "secretName");
        if !secret.is_empty() {
            for message in is_dns1123_subdomain(secret) {
                errors.push(FieldError::invalid(at.child("secretName"), secret, message));
            }
        }
    }
    if let Some(class) = spec["ingressClassName"].as_str() {
        for message in is_dns1123_subdomain(class) {
            errors.push(FieldError::invalid(
                path.child("ingressClassName"),
                class,
                message,
            ));
        }
    }
    errors
}

/// A host of a rule or a TLS entry: a wildcard subdomain if it has a `*`, a subdomain if not.
fn host_errors(host: &str) -> Vec<String> {
    if host.contains('*') {
        wildcard_subdomain_errors(host)
    } else {
        is_dns1123_subdomain(host)
    }
}

fn ingress_rule(rule: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let host = str_field(rule, "host");
    if !host.is_empty() {
        if sloppy_ip(host) {
            errors.push(FieldError::invalid(
                path.child("host"),
                host,
                "must be a DNS name, not an IP address",
            ));
        }
        for message in host_errors(host) {
            errors.push(FieldError::invalid(path.child("host"), host, message));
        }
    }
    let http = &rule["http"];
    if present(http) {
        let at = path.child("http");
        if http["paths"].as_array().is_none_or(Vec::is_empty) {
            errors.push(FieldError::required(at.child("paths"), ""));
        }
        for (i, http_path) in items(&http["paths"]) {
            errors.extend(http_ingress_path(http_path, &at.child("paths").index(i)));
        }
    }
    errors
}

fn http_ingress_path(http_path: &Value, at: &FieldPath) -> Vec<FieldError> {
    let Some(path_type) = http_path["pathType"].as_str() else {
        return vec![FieldError::required(
            at.child("pathType"),
            "pathType must be specified",
        )];
    };
    let mut errors = Vec::new();
    let path = str_field(http_path, "path");
    let not_absolute = || FieldError::invalid(at.child("path"), path, "must be an absolute path");
    match path_type {
        "Exact" | "Prefix" => {
            if !path.starts_with('/') {
                errors.push(not_absolute());
            }
            for sequence in BAD_SEQUENCES.iter().filter(|s| path.contains(**s)) {
                errors.push(FieldError::invalid(
                    at.child("path"),
                    path,
                    format!("must not contain '{sequence}'"),
                ));
            }
            for suffix in BAD_SUFFIXES.iter().filter(|s| path.ends_with(**s)) {
                errors.push(FieldError::invalid(
                    at.child("path"),
                    path,
                    format!("cannot end with '{suffix}'"),
                ));
            }
        }
        "ImplementationSpecific" => {
            if !path.is_empty() && !path.starts_with('/') {
                errors.push(not_absolute());
            }
        }
        other => errors.push(FieldError::not_supported(
            at.child("pathType"),
            other,
            &PATH_TYPES,
        )),
    }
    errors.extend(backend(&http_path["backend"], &at.child("backend")));
    errors
}

/// An Ingress backend: a Service (name and port) or a typed resource reference, not both.
fn backend(backend: &Value, path: &FieldPath) -> Vec<FieldError> {
    let (resource, service) = (&backend["resource"], &backend["service"]);
    match (present(resource), present(service)) {
        (true, true) => vec![FieldError::invalid(
            path.clone(),
            "",
            "cannot set both resource and service backends",
        )],
        (true, false) => typed_reference(resource, &path.child("resource")),
        (false, true) => service_backend(service, path),
        (false, false) => vec![FieldError::invalid(
            path.clone(),
            "",
            "resource or service backend is required",
        )],
    }
}

fn service_backend(service: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let at = path.child("service");
    let name = str_field(service, "name");
    if name.is_empty() {
        errors.push(FieldError::required(at.child("name"), ""));
    } else {
        for message in is_dns1035_label(name) {
            errors.push(FieldError::invalid(at.child("name"), name, message));
        }
    }
    let port = &service["port"];
    let port_name = str_field(port, "name");
    let number = port["number"].as_i64().unwrap_or(0);
    match (port_name.is_empty(), number == 0) {
        (false, false) => errors.push(FieldError::invalid(
            path.clone(),
            "",
            "cannot set both port name & port number",
        )),
        (false, true) => {
            for message in port_name_errors(port_name) {
                errors.push(FieldError::invalid(
                    at.child("port").child("name"),
                    port_name,
                    message,
                ));
            }
        }
        (true, false) => {
            if !(1..=65535).contains(&number) {
                errors.push(FieldError::invalid(
                    at.child("port").child("number"),
                    number,
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
        (true, true) => errors.push(FieldError::required(
            path.clone(),
            "port name or number is required",
        )),
    }
    errors
}

/// A `TypedLocalObjectReference` as an Ingress resource backend.
fn typed_reference(reference: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(group) = reference["apiGroup"].as_str() {
        for message in is_dns1123_subdomain(group) {
            errors.push(FieldError::invalid(path.child("apiGroup"), group, message));
        }
    }
    for (field, required) in [("kind", "kind is required"), ("name", "name is required")] {
        let value = str_field(reference, field);
        if value.is_empty() {
            errors.push(FieldError::required(path.child(field), required));
        } else {
            for message in is_valid_path_segment_name(value) {
                errors.push(FieldError::invalid(path.child(field), value, message));
            }
        }
    }
    errors
}

/// apimachinery's `IsValidPortName` (an IANA service name).
fn port_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_owned());
    }
    let bytes = name.as_bytes();
    if bytes.is_empty()
        || !bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
    {
        errors
            .push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !bytes.iter().any(u8::is_ascii_lowercase) {
        errors.push("must contain at least one letter (a-z)".to_owned());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".to_owned());
    }
    if bytes.first() == Some(&b'-') || bytes.last() == Some(&b'-') {
        errors.push("must not begin or end with a hyphen".to_owned());
    }
    errors
}

/// apimachinery's `IsWildcardDNS1123Subdomain`: `*.` then a DNS-1123 subdomain.
fn wildcard_subdomain_errors(host: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if host.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    let label = |l: &str| {
        let b = l.as_bytes();
        let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        b.first().is_some_and(edge)
            && b.last().is_some_and(edge)
            && b.iter().all(|c| edge(c) || *c == b'-')
    };
    let matches = host
        .strip_prefix("*.")
        .is_some_and(|rest| rest.split('.').all(label));
    if !matches {
        errors.push(format!(
            "{WILDCARD_ERR} (e.g. '*.example.com', regex used for validation is '{WILDCARD_FMT}')"
        ));
    }
    errors
}
