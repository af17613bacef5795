//! The ResourceInterpreterWebhookConfiguration webhook (karmada-webhook's
//! `pkg/webhook/configuration/{validating,helper}.go`): each webhook's name is a fully qualified
//! domain name and unique; its rules name operations, API groups, versions and kinds (`*` alone
//! or not at all); its timeout is 1–30 s; its client config has exactly one of `url` (https, with
//! a host) and `service` (name, namespace, a valid port defaulting to 443, a path of DNS
//! subdomain segments); its interpreter context versions include `v1alpha1`, unrepeated.
//!
//! Provenance: behaviour of Karmada v1.19 and of the apiserver and apimachinery v0.36 helpers it
//! calls (`webhook.ValidateWebhookURL`, `webhook.ValidateWebhookService`,
//! `validation.IsFullyQualifiedDomainName`). Values Go prints as lists are shown as JSON.

use std::collections::BTreeSet;

use serde_json::Value;

use super::go_url::GoUrl;
use super::policy::items;
use super::{shown, str_field};
use crate::validation::{
    FieldError, FieldPath, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain,
};

/// The operations a rule may name, in the (sorted) order Karmada lists them.
const OPERATIONS: &[&str] = &[
    "*",
    "AggregateStatus",
    "InterpretComponent",
    "InterpretDependency",
    "InterpretHealth",
    "InterpretReplica",
    "InterpretStatus",
    "Retain",
    "ReviseReplica",
];
/// The interpreter context versions Karmada speaks.
const CONTEXT_VERSIONS: &[&str] = &["v1alpha1"];

/// Every rule of the webhook that `object` breaks, webhook by webhook.
pub fn resource_interpreter_webhook_configuration(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    let path = FieldPath::new("webhooks");
    for (i, hook) in items(&object["webhooks"]) {
        let at = path.index(i);
        errors.extend(webhook(hook, &at));
        let name = str_field(hook, "name");
        if !names.insert(name) {
            errors.push(FieldError::duplicate(at.child("name"), name));
        }
    }
    errors
}

fn webhook(hook: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = fully_qualified_domain_name(str_field(hook, "name"), &at.child("name"));
    for (i, rule) in items(&hook["rules"]) {
        errors.extend(rule_with_operations(rule, &at.child("rules").index(i)));
    }
    if let Some(timeout) = hook["timeoutSeconds"].as_i64()
        && !(1..=30).contains(&timeout)
    {
        errors.push(FieldError::invalid(
            at.child("timeoutSeconds"),
            timeout,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    let config = &hook["clientConfig"];
    let path = at.child("clientConfig");
    match (config["url"].as_str(), config.get("service")) {
        (Some(url), None | Some(Value::Null)) => {
            errors.extend(webhook_url(url, &path.child("url")));
        }
        (None, Some(service)) if !service.is_null() => {
            errors.extend(webhook_service(service, &path.child("service")));
        }
        _ => errors.push(FieldError::required(
            path,
            "exactly one of url or service is required",
        )),
    }
    errors.extend(context_versions(
        &hook["interpreterContextVersions"],
        &at.child("interpreterContextVersions"),
    ));
    errors
}

/// `IsFullyQualifiedDomainName`: a DNS subdomain (a trailing dot allowed) of at least two
/// labels; only the first problem is reported.
fn fully_qualified_domain_name(name: &str, at: &FieldPath) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(at, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let messages = is_dns1123_subdomain(name);
    if !messages.is_empty() {
        return vec![FieldError::invalid(at, name, messages.join(","))];
    }
    if !name.contains('.') {
        return vec![FieldError::invalid(
            at,
            name,
            "should be a domain with at least two segments separated by dots",
        )];
    }
    name.split('.')
        .find_map(|label| {
            let messages = is_dns1123_label(label);
            (!messages.is_empty()).then(|| FieldError::invalid(at, label, messages.join(",")))
        })
        .into_iter()
        .collect()
}

/// A JSON list of strings (absent: empty).
fn strings(value: &Value) -> Vec<&str> {
    items(value)
        .map(|(_, v)| v.as_str().unwrap_or(""))
        .collect()
}

fn rule_with_operations(rule: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let operations = strings(&rule["operations"]);
    let path = at.child("operations");
    if operations.is_empty() {
        errors.push(FieldError::required(&path, ""));
    }
    if operations.len() > 1 && operations.contains(&"*") {
        errors.push(FieldError::invalid(
            &path,
            shown(&rule["operations"]),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, operation) in operations.iter().enumerate() {
        if !OPERATIONS.contains(operation) {
            errors.push(FieldError::not_supported(
                path.index(i),
                *operation,
                OPERATIONS,
            ));
        }
    }
    errors.extend(self::rule(rule, at));
    errors
}

/// The groups, versions and kinds of a rule (reported under the rule itself).
fn rule(rule: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (field, what, items_required) in [
        ("apiGroups", "API groups", false),
        ("apiVersions", "API versions", true),
        ("kinds", "kinds", true),
    ] {
        let values = strings(&rule[field]);
        let path = at.child(field);
        if values.is_empty() {
            errors.push(FieldError::required(&path, ""));
        }
        if values.len() > 1 && values.contains(&"*") {
            errors.push(FieldError::invalid(
                &path,
                shown(&rule[field]),
                format!("if '*' is present, must not specify other {what}"),
            ));
        }
        // A group may be empty (the core group); a version or kind may not.
        if items_required {
            for (i, value) in values.iter().enumerate() {
                if value.is_empty() {
                    errors.push(FieldError::required(path.index(i), ""));
                }
            }
        }
    }
    errors
}

/// `ValidateWebhookURL` with https required.
fn webhook_url(url: &str, at: &FieldPath) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let parsed = match GoUrl::parse(url) {
        Ok(parsed) => parsed,
        Err(error) => {
            return vec![FieldError::required(
                at,
                format!("url must be a valid URL: {error}{FORM}"),
            )];
        }
    };
    let mut errors = Vec::new();
    if parsed.scheme != "https" {
        errors.push(FieldError::invalid(
            at,
            parsed.scheme.as_str(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if parsed.host.is_empty() {
        errors.push(FieldError::invalid(
            at,
            "",
            format!("host must be specified{FORM}"),
        ));
    }
    errors.extend(parsed.forbidden_parts(at));
    errors
}

/// `ValidateWebhookService`, the port defaulting to 443 as Karmada's webhook defaults it.
fn webhook_service(service: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in ["name", "namespace"] {
        if str_field(service, field).is_empty() {
            errors.push(FieldError::required(at.child(field), ""));
        }
    }
    let port = service["port"].as_i64().unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            at.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(path) = service["path"].as_str() else {
        return errors;
    };
    let at = at.child("path");
    if path.is_empty() || path == "/" {
        return errors;
    }
    if path == "//" {
        errors.push(FieldError::invalid(
            &at,
            path,
            "segment[0] may not be empty",
        ));
        return errors;
    }
    if !path.starts_with('/') {
        errors.push(FieldError::invalid(&at, path, "must start with a '/'"));
    }
    // Go drops the first byte whatever it is, then one trailing slash.
    let rest = path.get(1..).unwrap_or("");
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    for (i, segment) in rest.split('/').enumerate() {
        if segment.is_empty() {
            errors.push(FieldError::invalid(
                &at,
                path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for message in is_dns1123_subdomain(segment) {
            errors.push(FieldError::invalid(
                &at,
                path,
                format!("segment[{i}]: {message}"),
            ));
        }
    }
    errors
}

fn context_versions(versions: &Value, at: &FieldPath) -> Vec<FieldError> {
    let list = strings(versions);
    let accepted = CONTEXT_VERSIONS.join(", ");
    if list.is_empty() {
        return vec![FieldError::required(
            at,
            format!("must specify one of {accepted}"),
        )];
    }
    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, version) in list.iter().enumerate() {
        if !seen.insert(*version) {
            errors.push(FieldError::invalid(
                at.index(i),
                *version,
                "duplicate version",
            ));
            continue;
        }
        for message in is_dns1035_label(version) {
            errors.push(FieldError::invalid(at.index(i), *version, message));
        }
    }
    if !list.iter().any(|v| CONTEXT_VERSIONS.contains(v)) {
        errors.push(FieldError::invalid(
            at,
            shown(versions),
            format!("must include at least one of {accepted}"),
        ));
    }
    errors
}
