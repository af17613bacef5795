//! Event conversion, field label conversion and validation as kube-apiserver does them.
//!
//! Provenance (kubernetes/kubernetes, v1.32): `pkg/apis/events/v1/conversion.go`
//! (`Convert_v1_Event_To_core_Event`, `Convert_core_Event_To_v1_Event`,
//! `AddFieldLabelConversionsForEvent`) with the generated conversions of the fields both
//! versions name alike (`zz_generated.conversion.go`) and the internal type's JSON names
//! (`pkg/apis/core/types.go`: the internal `ReportingController` is core/v1's
//! `reportingComponent`); `pkg/apis/core/validation/events.go` (`ValidateEventCreate`,
//! `ValidateEventUpdate`, `validateV1EventSeries`, `legacyValidateEvent`), chosen by request
//! version in `pkg/registry/core/event/strategy.go`. Written from the behaviour, over JSON.
//!
//! Validation runs on the core/v1 form whichever view was written, as kube-apiserver validates
//! the internal type: errors name core fields (`message`, `involvedObject.namespace`, `count`)
//! even for an events.k8s.io/v1 request.

use serde_json::{Map, Value};

use flotilla_api::validation::{BadValue, FieldError, is_dns1123_subdomain, is_qualified_name};

/// Fields named alike in core/v1 and events.k8s.io/v1 (converted as they are).
const SAME: &[&str] = &[
    "eventTime",
    "series",
    "reportingInstance",
    "action",
    "reason",
    "related",
    "type",
];

/// (core/v1 name, events.k8s.io/v1 name) of the renamed fields.
const RENAMED: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

pub const CORE_API_VERSION: &str = "v1";
pub const EVENTS_API_VERSION: &str = "events.k8s.io/v1";

/// A core/v1 Event as events.k8s.io/v1 serves it. Fields neither version knows are dropped
/// (kube converts typed objects).
pub fn core_to_events(core: &Value) -> Value {
    convert(core, EVENTS_API_VERSION, |(c, e)| (*c, *e), "regarding")
}

/// An events.k8s.io/v1 Event as core/v1 stores it.
pub fn events_to_core(event: &Value) -> Value {
    convert(event, CORE_API_VERSION, |(c, e)| (*e, *c), "involvedObject")
}

fn convert(
    from: &Value,
    api_version: &str,
    direction: impl Fn(&(&'static str, &'static str)) -> (&'static str, &'static str),
    reference: &str,
) -> Value {
    let empty = Map::new();
    let from = from.as_object().unwrap_or(&empty);
    let mut out = Map::new();
    out.insert("apiVersion".into(), api_version.into());
    out.insert("kind".into(), "Event".into());
    if let Some(metadata) = from.get("metadata") {
        out.insert("metadata".into(), metadata.clone());
    }
    for field in SAME {
        if let Some(value) = from.get(*field) {
            out.insert((*field).into(), value.clone());
        }
    }
    for pair in RENAMED {
        let (source, target) = direction(pair);
        if let Some(value) = from.get(source) {
            out.insert(target.into(), value.clone());
        }
    }
    // The object reference is a struct in both versions: always there, as Go serializes it.
    out.entry(reference)
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(out)
}

/// The core field label an events.k8s.io/v1 field selector label stands for, or `None` when
/// events.k8s.io/v1 does not support it (`field label not supported: <label>`).
pub fn field_label_to_core(label: &str) -> Option<&'static str> {
    Some(match label {
        "reason" => "reason",
        "regarding.kind" => "involvedObject.kind",
        "regarding.namespace" => "involvedObject.namespace",
        "regarding.name" => "involvedObject.name",
        "regarding.uid" => "involvedObject.uid",
        "regarding.apiVersion" => "involvedObject.apiVersion",
        "regarding.resourceVersion" => "involvedObject.resourceVersion",
        "regarding.fieldPath" => "involvedObject.fieldPath",
        "reportingController" => "reportingComponent",
        "source" => "source",
        "type" => "type",
        "metadata.namespace" => "metadata.namespace",
        "metadata.name" => "metadata.name",
        _ => return None,
    })
}

const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
const ACTION_LENGTH_LIMIT: usize = 128;
const REASON_LENGTH_LIMIT: usize = 128;
const NOTE_LENGTH_LIMIT: usize = 1024;

/// Which rules apply: core/v1 writes get the legacy rules only (backwards compatibility);
/// events.k8s.io/v1 writes get the strict ones too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestVersion {
    Core,
    EventsV1,
}

/// The errors of creating `event` (core/v1 form) through `version`.
pub fn validate_create(event: &Value, version: RequestVersion) -> Vec<FieldError> {
    let mut errors = legacy(event);
    if version == RequestVersion::Core {
        return errors;
    }
    errors.extend(series(event));
    if is_zero(&event["eventTime"]) {
        errors.push(FieldError::required("eventTime", ""));
    }
    let kind = str_of(&event["type"]);
    if kind != "Normal" && kind != "Warning" {
        errors.push(FieldError::invalid(
            "type",
            "",
            format!("has invalid value: {kind}"),
        ));
    }
    for field in ["firstTimestamp", "lastTimestamp", "count"] {
        if !is_zero(&event[field]) {
            errors.push(FieldError::invalid(field, "", "needs to be unset"));
        }
    }
    if !str_of(&event["source"]["component"]).is_empty()
        || !str_of(&event["source"]["host"]).is_empty()
    {
        errors.push(FieldError::invalid("source", "", "needs to be unset"));
    }
    errors
}

/// The errors of updating `old` to `new` (both core/v1 form) through `version`.
pub fn validate_update(new: &Value, old: &Value, version: RequestVersion) -> Vec<FieldError> {
    let mut errors = legacy(new);
    if version == RequestVersion::Core {
        return errors;
    }
    if !same(&new["series"], &old["series"]) {
        errors.extend(series(new));
    }
    // kube lists `reason` twice; the aggregate message shows it once.
    for field in [
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "reason",
        "type",
        "eventTime",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ] {
        if !same(&new[field], &old[field]) {
            errors.push(FieldError::invalid(
                json_name(field),
                bad_value(&new[field]),
                "field is immutable",
            ));
        }
    }
    errors
}

/// How kube's field paths name a core field (the internal `ReportingController` field is
/// reported under its Go-derived path).
fn json_name(field: &str) -> &str {
    match field {
        "reportingComponent" => "reportingController",
        other => other,
    }
}

fn series(event: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let series = &event["series"];
    if series.is_object() {
        if series["count"].as_i64().unwrap_or(0) < 2 {
            errors.push(FieldError::invalid(
                "series.count",
                "",
                "should be at least 2",
            ));
        }
        if is_zero(&series["lastObservedTime"]) {
            errors.push(FieldError::required("series.lastObservedTime", ""));
        }
    }
    errors
}

/// The rules every Event write passes, whichever version.
fn legacy(event: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let namespace = str_of(&event["metadata"]["namespace"]);
    let involved_namespace = str_of(&event["involvedObject"]["namespace"]);
    let mismatch = || {
        FieldError::invalid(
            "involvedObject.namespace",
            involved_namespace,
            "does not match event.namespace",
        )
    };
    if is_zero(&event["eventTime"]) {
        // An old-style Event: it lives in its object's namespace (cluster-scoped objects' in
        // "default", or none).
        if involved_namespace.is_empty() {
            if !namespace.is_empty() && namespace != "default" {
                errors.push(mismatch());
            }
        } else if namespace != involved_namespace {
            errors.push(mismatch());
        }
    } else {
        if involved_namespace.is_empty() && namespace != "default" && namespace != "kube-system" {
            errors.push(mismatch());
        }
        let controller = str_of(&event["reportingComponent"]);
        if controller.is_empty() {
            errors.push(FieldError::required("reportingController", ""));
        }
        for message in is_qualified_name(controller) {
            errors.push(FieldError::invalid(
                "reportingController",
                controller,
                message,
            ));
        }
        let instance = str_of(&event["reportingInstance"]);
        if instance.is_empty() {
            errors.push(FieldError::required("reportingInstance", ""));
        }
        if instance.len() > REPORTING_INSTANCE_LENGTH_LIMIT {
            errors.push(FieldError::invalid(
                "reportingInstance",
                "",
                format!("can have at most {REPORTING_INSTANCE_LENGTH_LIMIT} characters"),
            ));
        }
        for (field, limit) in [
            ("action", ACTION_LENGTH_LIMIT),
            ("reason", REASON_LENGTH_LIMIT),
        ] {
            let value = str_of(&event[field]);
            if value.is_empty() {
                errors.push(FieldError::required(field, ""));
            }
            if value.len() > limit {
                errors.push(FieldError::invalid(
                    field,
                    "",
                    format!("can have at most {limit} characters"),
                ));
            }
        }
        if str_of(&event["message"]).len() > NOTE_LENGTH_LIMIT {
            errors.push(FieldError::invalid(
                "message",
                "",
                format!("can have at most {NOTE_LENGTH_LIMIT} characters"),
            ));
        }
    }
    for message in is_dns1123_subdomain(namespace) {
        errors.push(FieldError::invalid("namespace", namespace, message));
    }
    errors
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// Go's zero value: absent, null, "", 0, false, or an object/array of zero values.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.values().all(is_zero),
    }
}

/// Semantic equality as kube's `ValidateImmutableField` sees it: zero values equal absent.
fn same(a: &Value, b: &Value) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !is_zero(v))
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        v if is_zero(v) => Value::Null,
        v => v.clone(),
    }
}

fn bad_value(value: &Value) -> BadValue {
    match value {
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Number(n) => n
            .as_i64()
            .map(BadValue::Int)
            .unwrap_or_else(|| BadValue::Verbatim(n.to_string())),
        Value::Bool(b) => BadValue::Bool(*b),
        Value::Null => BadValue::Str(String::new()),
        other => BadValue::Verbatim(other.to_string()),
    }
}
