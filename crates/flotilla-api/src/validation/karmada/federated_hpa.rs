//! The FederatedHPA webhook (karmada-webhook's `pkg/webhook/federatedhpa/validating.go`).
//!
//! Provenance: behaviour ported from Kubernetes' `pkg/apis/autoscaling/validation/validation.go`
//! (release-1.27) as Karmada v1.19 lifts it in `pkg/util/lifted/validatingfhpa.go`, with the
//! container resource name rule of `pkg/util/lifted/corehelpers.go`. Karmada's changes to the
//! Kubernetes rules are kept:
//! - `minReplicas` must be at least 1 (no scale to zero), so the metric rules do not depend on it;
//! - `External` metrics are not supported (an `external` source next to another is ignored);
//! - `ContainerResource` metrics are always allowed (Kubernetes gates them);
//! - a scaling rule's `tolerance` is not checked.
//!
//! The webhook runs after the mutating one has applied the autoscaling/v2 defaults (minReplicas,
//! the CPU metric, and a complete `scaleUp`/`scaleDown` once `behavior` is given), so the "at
//! least one policy" rule only fires for an explicitly empty `policies` list.
//!
//! Values Go prints as JSON (its named string types, quantities) are shown the same way here.
//! Where Karmada walks a Go set (the sources a metric sets besides its type's), the order is
//! alphabetical.

use serde_json::Value;

use super::others::{extended, standard_resource};
use super::policy::items;
use super::{shown, str_field};
use crate::Quantity;
use crate::validation::{
    BadValue, FieldError, FieldPath, is_dns1123_label, is_qualified_name,
    is_valid_path_segment_name,
};

/// Longest scaling policy period, in seconds.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// Longest stabilization window, in seconds.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

/// The metric source types Karmada accepts, as its error lists them (sorted).
const METRIC_SOURCE_TYPES: &[&str] = &["ContainerResource", "Object", "Pods", "Resource"];
/// Each accepted metric source type and the field that carries it, in the order Karmada looks
/// at them (the first one set is the one validated).
const METRIC_SOURCES: &[(&str, &str)] = &[
    ("Object", "object"),
    ("Pods", "pods"),
    ("Resource", "resource"),
    ("ContainerResource", "containerResource"),
];
const SELECT_POLICIES: &[&str] = &["Disabled", "Max", "Min"];
const POLICY_TYPES: &[&str] = &["Percent", "Pods"];
const TARGET_TYPES: &[&str] = &["Utilization", "Value", "AverageValue"];
const CONTAINER_RESOURCES: &[&str] = &["cpu", "memory", "ephemeral-storage"];

/// Every rule of the FederatedHPA webhook that `object` breaks: replica bounds (at least 1),
/// the scale target, each metric, the scaling behavior, and non-negative status counts.
pub fn federated_hpa(object: &Value) -> Vec<FieldError> {
    let spec = &object["spec"];
    let path = FieldPath::new("spec");
    let mut errors = Vec::new();
    let min = spec["minReplicas"].as_i64();
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if let Some(min) = min
        && min < 1
    {
        errors.push(FieldError::invalid(
            path.child("minReplicas"),
            min,
            "must be greater than or equal to 1",
        ));
    }
    if max < 1 {
        errors.push(FieldError::invalid(
            path.child("maxReplicas"),
            max,
            "must be greater than 0",
        ));
    }
    if let Some(min) = min
        && max < min
    {
        errors.push(FieldError::invalid(
            path.child("maxReplicas"),
            max,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errors.extend(cross_version_reference(
        &spec["scaleTargetRef"],
        &path.child("scaleTargetRef"),
    ));
    for (i, metric) in items(&spec["metrics"]) {
        errors.extend(metric_spec(metric, &path.child("metrics").index(i)));
    }
    let behavior = &spec["behavior"];
    if !behavior.is_null() {
        let at = path.child("behavior");
        errors.extend(scaling_rules(&behavior["scaleUp"], &at.child("scaleUp")));
        errors.extend(scaling_rules(
            &behavior["scaleDown"],
            &at.child("scaleDown"),
        ));
    }
    let status = FieldPath::new("status");
    for field in ["currentReplicas", "desiredReplicas"] {
        let count = object["status"][field].as_i64().unwrap_or(0);
        if count < 0 {
            errors.push(FieldError::invalid(
                status.child(field),
                count,
                "must be greater than or equal to 0",
            ));
        }
    }
    errors
}

/// Kubernetes' `ValidateCrossVersionObjectReference` (as Karmada lifts it): kind and name
/// required, each a valid path segment.
pub(super) fn cross_version_reference(reference: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in ["kind", "name"] {
        let value = str_field(reference, field);
        if value.is_empty() {
            errors.push(FieldError::required(at.child(field), ""));
        } else {
            for message in is_valid_path_segment_name(value) {
                errors.push(FieldError::invalid(at.child(field), value, message));
            }
        }
    }
    errors
}

/// Whether `field` of `value` is set (present and not null).
fn set(value: &Value, field: &str) -> bool {
    !value[field].is_null()
}

/// One metric: a supported type, the source of that type and no other; the first source set
/// (in [`METRIC_SOURCES`] order) is validated, whatever the type says.
fn metric_spec(metric: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let kind = str_field(metric, "type");
    if kind.is_empty() {
        errors.push(FieldError::required(
            at.child("type"),
            "must specify a metric source type",
        ));
    }
    let expected = METRIC_SOURCES
        .iter()
        .find(|(source_type, _)| *source_type == kind)
        .map(|(_, field)| *field);
    if expected.is_none() {
        // Karmada reports this twice (a set check and its type switch); its message, an
        // aggregate without repeats, shows it once, as here.
        errors.push(FieldError::not_supported(
            at.child("type"),
            go_json_string(kind),
            METRIC_SOURCE_TYPES,
        ));
    }
    let present: Vec<&str> = METRIC_SOURCES
        .iter()
        .map(|(_, field)| *field)
        .filter(|field| set(metric, field))
        .collect();
    if let Some(&first) = present.first() {
        let source = &metric[first];
        let source_at = at.child(first);
        errors.extend(match first {
            "object" => object_source(source, &source_at),
            "pods" => pods_source(source, &source_at),
            "resource" => resource_source(source, &source_at),
            _ => container_resource_source(source, &source_at),
        });
    }
    if let Some(field) = expected
        && !set(metric, field)
    {
        errors.push(FieldError::required(
            at.child(field),
            "must populate information for the given metric source",
        ));
    }
    if present.len() > 1 {
        let mut others: Vec<&str> = present
            .into_iter()
            .filter(|field| Some(*field) != expected)
            .collect();
        others.sort_unstable();
        for field in others {
            errors.push(FieldError::forbidden(
                at.child(field),
                "must populate the given metric source only",
            ));
        }
    }
    errors
}

/// An `object` source: the described object, the metric and a value or average value target.
fn object_source(source: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors =
        cross_version_reference(&source["describedObject"], &at.child("describedObject"));
    errors.extend(metric_identifier(&source["metric"], &at.child("metric")));
    let target = &source["target"];
    errors.extend(metric_target(target, &at.child("target")));
    if !set(target, "value") && !set(target, "averageValue") {
        errors.push(FieldError::required(
            at.child("target").child("averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errors
}

/// A `pods` source: the metric and an average value target.
fn pods_source(source: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = metric_identifier(&source["metric"], &at.child("metric"));
    let target = &source["target"];
    errors.extend(metric_target(target, &at.child("target")));
    if !set(target, "averageValue") {
        errors.push(FieldError::required(
            at.child("target").child("averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errors
}

/// A `resource` source: a resource name (any) and a utilization or average value target.
fn resource_source(source: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if str_field(source, "name").is_empty() {
        errors.push(FieldError::required(
            at.child("name"),
            "must specify a resource name",
        ));
    }
    errors.extend(average_target(&source["target"], &at.child("target")));
    errors
}

/// A `containerResource` source: a container resource name, a container (a DNS-1123 label) and
/// a utilization or average value target.
fn container_resource_source(source: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_field(source, "name");
    if name.is_empty() {
        errors.push(FieldError::required(
            at.child("name"),
            "must specify a resource name",
        ));
    } else {
        errors.extend(container_resource_name(name, &at.child("name")));
    }
    let container = str_field(source, "container");
    if container.is_empty() {
        errors.push(FieldError::required(
            at.child("container"),
            "must specify a container",
        ));
    } else {
        for message in is_dns1123_label(container) {
            errors.push(FieldError::invalid(
                at.child("container"),
                container,
                message,
            ));
        }
    }
    errors.extend(average_target(&source["target"], &at.child("target")));
    errors
}

/// The target of a (container) resource source: exactly one of utilization and average value.
fn average_target(target: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = metric_target(target, at);
    let utilization = set(target, "averageUtilization");
    let average = set(target, "averageValue");
    if !utilization && !average {
        errors.push(FieldError::required(
            at.child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errors.push(FieldError::forbidden(
            at.child("averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errors
}

/// Kubernetes' `ValidateContainerResourceName` (as Karmada lifts it): a qualified name, a known
/// resource a container can request when unprefixed, an extended resource when prefixed
/// outside `kubernetes.io/`.
fn container_resource_name(name: &str, at: &FieldPath) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = is_qualified_name(name)
        .into_iter()
        .map(|message| FieldError::invalid(at, name, message))
        .collect();
    let unprefixed = !name.contains('/');
    if errors.is_empty() && unprefixed && !standard_resource(name) {
        errors.push(FieldError::invalid(
            at,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    if unprefixed {
        if !CONTAINER_RESOURCES.contains(&name) && !name.starts_with("hugepages-") {
            errors.push(FieldError::invalid(
                at,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !name.contains("kubernetes.io/") && !extended(name) {
        errors.push(FieldError::invalid(
            at,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errors
}

/// A metric's name: required, a valid path segment. (Its selector is not checked.)
fn metric_identifier(metric: &Value, at: &FieldPath) -> Vec<FieldError> {
    let name = str_field(metric, "name");
    if name.is_empty() {
        return vec![FieldError::required(
            at.child("name"),
            "must specify a metric name",
        )];
    }
    is_valid_path_segment_name(name)
        .into_iter()
        .map(|message| FieldError::invalid(at.child("name"), name, message))
        .collect()
}

/// A metric target: a known type and positive values, whichever are set.
fn metric_target(target: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let kind = str_field(target, "type");
    if kind.is_empty() {
        errors.push(FieldError::required(
            at.child("type"),
            "must specify a metric target type",
        ));
    }
    if !TARGET_TYPES.contains(&kind) {
        errors.push(FieldError::invalid(
            at.child("type"),
            go_json_string(kind),
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for field in ["value", "averageValue"] {
        if let Some(quantity) = quantity(&target[field])
            && quantity.signum() != 1
        {
            errors.push(FieldError::invalid(
                at.child(field),
                quantity.to_string(),
                "must be positive",
            ));
        }
    }
    let utilization = &target["averageUtilization"];
    if utilization.as_i64().is_some_and(|u| u < 1) {
        errors.push(FieldError::invalid(
            at.child("averageUtilization"),
            shown(utilization),
            "must be greater than 0",
        ));
    }
    errors
}

/// An int-or-string quantity; `None` when absent or unparsable (the CRD schema reports that).
fn quantity(value: &Value) -> Option<Quantity> {
    match value {
        Value::String(s) => Quantity::parse(s).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

/// The rules of one scaling direction, when given: the stabilization window within an hour, a
/// known select policy, at least one policy, each of a known type with a positive value over
/// a period of at most 30 minutes.
fn scaling_rules(rules: &Value, at: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if rules.is_null() {
        return errors;
    }
    let window = &rules["stabilizationWindowSeconds"];
    if let Some(seconds) = window.as_i64() {
        let at = at.child("stabilizationWindowSeconds");
        if seconds < 0 {
            errors.push(FieldError::invalid(
                &at,
                seconds,
                "must be greater than or equal to zero",
            ));
        }
        if seconds > MAX_STABILIZATION_WINDOW_SECONDS {
            errors.push(FieldError::invalid(
                &at,
                seconds,
                format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(select) = rules["selectPolicy"].as_str()
        && !SELECT_POLICIES.contains(&select)
    {
        errors.push(FieldError::not_supported(
            at.child("selectPolicy"),
            go_json_string(select),
            SELECT_POLICIES,
        ));
    }
    let policies = at.child("policies");
    if rules["policies"].as_array().is_none_or(Vec::is_empty) {
        errors.push(FieldError::required(
            &policies,
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in items(&rules["policies"]) {
        let at = policies.index(i);
        let kind = str_field(policy, "type");
        if !POLICY_TYPES.contains(&kind) {
            errors.push(FieldError::not_supported(
                at.child("type"),
                go_json_string(kind),
                POLICY_TYPES,
            ));
        }
        let value = policy["value"].as_i64().unwrap_or(0);
        if value <= 0 {
            errors.push(FieldError::invalid(
                at.child("value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = policy["periodSeconds"].as_i64().unwrap_or(0);
        if period <= 0 {
            errors.push(FieldError::invalid(
                at.child("periodSeconds"),
                period,
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errors.push(FieldError::invalid(
                at.child("periodSeconds"),
                period,
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    errors
}

/// A value of one of Go's named string types as `field.Error` shows it: JSON-encoded by Go's
/// encoder, which also escapes `<`, `>`, `&`, U+2028 and U+2029.
fn go_json_string(s: &str) -> BadValue {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    BadValue::Verbatim(out)
}
