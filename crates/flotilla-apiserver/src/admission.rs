//! Admission: type checks, defaulting and validation of objects before they are stored. Kind-
//! specific rules cover what kubectl users hit; names follow Kubernetes' rules.

mod karmada;

use serde_json::Value;

use flotilla_api::LabelSelector;
use flotilla_api::validation::{self, BadValue, FieldError, FieldPath, NameRule};
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::object;

/// The body's apiVersion and kind must be the endpoint's (or absent: then they are filled in).
pub fn check_type(info: &ResourceInfo, body: &Value) -> Result<(), ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON or YAML object",
        ));
    }
    let expected = info.api_version();
    if let Some(api_version) = body.get("apiVersion").and_then(Value::as_str)
        && !api_version.is_empty()
        && api_version != expected
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({expected})"
        )));
    }
    if let Some(kind) = body.get("kind").and_then(Value::as_str)
        && !kind.is_empty()
        && kind != info.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            info.kind
        )));
    }
    Ok(())
}

fn set_type(info: &ResourceInfo, object: &mut Value) {
    object["apiVersion"] = info.api_version().into();
    object["kind"] = info.kind.clone().into();
}

/// Defaults applied when an object is created.
pub fn default_on_create(info: &ResourceInfo, object: &mut Value) {
    set_type(info, object);
    crd_defaults(info, object);
    if info.group.is_empty() && info.kind == "Namespace" {
        object["spec"]["finalizers"] = serde_json::json!(["kubernetes"]);
        object["status"] = serde_json::json!({"phase": "Active"});
    }
    crate::defaults::apply(&info.group, &info.version, &info.kind, object);
    karmada::default(info, object, true);
}

/// Defaults applied on every update.
pub fn default_on_update(info: &ResourceInfo, object: &mut Value) {
    set_type(info, object);
    crate::defaults::apply(&info.group, &info.version, &info.kind, object);
    crd_defaults(info, object);
    karmada::default(info, object, false);
}

/// CRDs get kube's defaults; custom resources are defaulted and pruned by their schema.
fn crd_defaults(info: &ResourceInfo, object: &mut Value) {
    if crate::crd::is_definition(info) {
        crate::crd::definition::default_definition(object);
    } else if info.crd.is_some() {
        crate::crd::default_and_prune(info, object);
    }
}

/// Validates an object (with its previous state on update).
pub fn validate(info: &ResourceInfo, object: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let name = object::name(object).unwrap_or("").to_owned();
    let meta = object_meta(object)?;
    let path = FieldPath::new("metadata");
    let mut errors =
        validation::validate_object_meta(&meta, info.namespaced, name_rule(info), &path);
    if let Some(old) = old {
        let old_meta = object_meta(old)?;
        errors.extend(validation::validate_object_meta_update(
            &meta, &old_meta, &path,
        ));
    }
    errors.extend(kind_errors(info, object));
    errors.extend(crate::events::errors(info, object, old));
    errors.extend(karmada::errors(info, object, old));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(info, &name, &errors))
    }
}

fn object_meta(object: &Value) -> Result<ObjectMeta, ApiError> {
    // Decoded from the borrowed value: no copy of metadata (managed fields included).
    let meta = object.get("metadata").unwrap_or(&Value::Null);
    <ObjectMeta as serde::Deserialize>::deserialize(meta)
        .map_err(|e| ApiError::bad_request(format!("metadata: cannot decode ObjectMeta: {e}")))
}

/// Which format names of a kind must have (as kube-apiserver's strategies choose).
fn name_rule(info: &ResourceInfo) -> NameRule {
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Namespace") => NameRule::Dns1123Label,
        ("", "Service") => NameRule::Dns1035Label,
        ("cluster.karmada.io", "Cluster") => NameRule::Dns1123Label,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        _ => NameRule::Dns1123Subdomain,
    }
}

/// Rules of individual kinds.
fn kind_errors(info: &ResourceInfo, object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if crate::crd::is_definition(info) {
        errors.extend(crate::crd::definition::definition_errors(object));
    } else if info.crd.is_some() {
        errors.extend(crate::crd::schema_errors(info, object));
    }
    if info.group == "apps"
        && matches!(
            info.kind.as_str(),
            "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet"
        )
    {
        workload_selector_errors(object, &mut errors);
    }
    errors
}

/// A workload needs a selector that matches its pod template's labels.
fn workload_selector_errors(object: &Value, errors: &mut Vec<FieldError>) {
    let spec = &object["spec"];
    let selector = &spec["selector"];
    let template_labels = object::string_map(spec["template"]["metadata"].get("labels"));
    if selector.is_null() {
        errors.push(FieldError::required("spec.selector", ""));
        if template_labels.is_empty() {
            errors.push(FieldError::required("spec.template.metadata.labels", ""));
        }
        return;
    }
    let parsed: Result<metav1::LabelSelector, _> = serde_json::from_value(selector.clone());
    let Ok(parsed) = parsed else {
        errors.push(FieldError::invalid(
            "spec.selector",
            BadValue::Verbatim(selector.to_string()),
            "must be a label selector",
        ));
        return;
    };
    let empty = parsed.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && parsed
            .match_expressions
            .as_ref()
            .is_none_or(|m| m.is_empty());
    if empty {
        errors.push(FieldError::invalid(
            "spec.selector",
            BadValue::Verbatim("v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}".into()),
            "empty selector is invalid for deployment",
        ));
        return;
    }
    match LabelSelector::try_from(&parsed) {
        Ok(selector) if selector.matches(&template_labels) => {}
        Ok(_) => errors.push(FieldError::invalid(
            "spec.template.metadata.labels",
            BadValue::Verbatim(go_map(&template_labels)),
            "`selector` does not match template `labels`",
        )),
        Err(error) => errors.push(FieldError::invalid(
            "spec.selector",
            BadValue::Verbatim(selector.to_string()),
            error.to_string(),
        )),
    }
}

/// Renders a label map the way Go's `%#v` prints `map[string]string`.
fn go_map(map: &std::collections::BTreeMap<String, String>) -> String {
    let inner = map
        .iter()
        .map(|(k, v)| format!("{k:?}:{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("map[string]string{{{inner}}}")
}
