//! The fields each kind supports in field selectors, and their values for an object.
//!
//! Provenance: the accepted labels follow kube-apiserver's field label conversion functions
//! (kubernetes `pkg/apis/core/v1/conversion.go`, `pkg/apis/apps/v1/conversion.go`,
//! `pkg/apis/batch/v1/conversion.go`, `pkg/apis/events/v1/conversion.go`,
//! `pkg/apis/certificates/v1/conversion.go`, and the default `metadata.name`/`metadata.namespace`
//! for every other kind, CRDs included); the values follow each registry's
//! `ToSelectableFields`/`GetAttrs` (`pkg/registry/core/pod/strategy.go` & co.), read from the
//! object's versioned JSON.

use std::collections::BTreeMap;

use serde_json::Value;

const DEFAULT: &[&str] = &["metadata.name", "metadata.namespace"];
const PODS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];
const NODES: &[&str] = &["metadata.name", "spec.unschedulable"];
const NAMESPACES: &[&str] = &["metadata.name", "status.phase"];
const CORE_EVENTS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];
const EVENTS_V1: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type",
];
const SECRETS: &[&str] = &["metadata.name", "metadata.namespace", "type"];
const SERVICES: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.clusterIP",
    "spec.type",
];
const REPLICAS: &[&str] = &["metadata.name", "metadata.namespace", "status.replicas"];
const JOBS: &[&str] = &["metadata.name", "metadata.namespace", "status.successful"];
const CSRS: &[&str] = &["metadata.name", "spec.signerName"];

/// The field labels `group`/`resource` accepts in a field selector (plural resource name, core
/// group `""`). Unknown resources, CRDs included, accept `metadata.name` and
/// `metadata.namespace`.
pub fn supported_fields(group: &str, resource: &str) -> &'static [&'static str] {
    match (group, resource) {
        ("", "pods") => PODS,
        ("", "nodes") => NODES,
        ("", "namespaces") => NAMESPACES,
        ("", "events") => CORE_EVENTS,
        ("events.k8s.io", "events") => EVENTS_V1,
        ("", "secrets") => SECRETS,
        ("", "services") => SERVICES,
        ("", "replicationcontrollers") | ("apps", "replicasets") => REPLICAS,
        ("batch", "jobs") => JOBS,
        ("certificates.k8s.io", "certificatesigningrequests") => CSRS,
        _ => DEFAULT,
    }
}

/// The selectable fields of `object` (its JSON as served for `group`/`resource`), with the
/// values kube-apiserver computes: absent strings read `""`, booleans `true`/`false`, counts in
/// decimal. Every label of [`supported_fields`] is present except pods' `status.podIPs`, which
/// upstream accepts but never sets.
pub fn fields_of(group: &str, resource: &str, object: &Value) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    for label in supported_fields(group, resource) {
        if let Some(value) = field_value(group, resource, label, object) {
            fields.insert((*label).to_owned(), value);
        }
    }
    fields
}

fn field_value(group: &str, resource: &str, label: &str, object: &Value) -> Option<String> {
    let string = |path: &str| {
        lookup(object, path)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let boolean = |path: &str| {
        lookup(object, path)
            .and_then(Value::as_bool)
            .unwrap_or(false)
            .to_string()
    };
    let count = |path: &str| {
        lookup(object, path)
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .to_string()
    };
    Some(match (group, resource, label) {
        ("", "pods", "spec.hostNetwork") => boolean("spec.hostNetwork"),
        ("", "pods", "status.podIP") => lookup(object, "status.podIPs")
            .and_then(Value::as_array)
            .and_then(|ips| ips.first())
            .and_then(|ip| ip.get("ip"))
            .and_then(Value::as_str)
            .map_or_else(|| string("status.podIP"), str::to_owned),
        ("", "pods", "status.podIPs") => return None,
        ("", "nodes", "spec.unschedulable") => boolean("spec.unschedulable"),
        ("", "events", "source") => {
            let component = string("source.component");
            if component.is_empty() {
                string("reportingComponent")
            } else {
                component
            }
        }
        (_, _, "status.replicas") => count("status.replicas"),
        ("batch", "jobs", "status.successful") => count("status.succeeded"),
        (_, _, path) => string(path),
    })
}

/// The value at a dotted path of plain object keys.
fn lookup<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(object, |value, key| value.get(key))
}
