//! Admission: type checks, defaulting and validation of objects before they are stored. Kind-
//! specific rules cover what kubectl users hit; names follow Kubernetes' rules.

mod karmada;

use serde_json::Value;

use flotilla_api::LabelSelector;
use flotilla_api::validation::karmada::WebhookOptions;
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
pub fn validate(
    info: &ResourceInfo,
    object: &Value,
    old: Option<&Value>,
    webhook: WebhookOptions,
) -> Result<(), ApiError> {
    validate_in(info, object, old, false, webhook)
}

/// [`validate`] of a status write that carried metadata and spec over from `old` unchanged (the
/// writer's part is status alone; not an apply, whose managed fields are new): what they were
/// checked for when they were written is not compared or checked again.
pub fn validate_status(
    info: &ResourceInfo,
    object: &Value,
    old: &Value,
    webhook: WebhookOptions,
) -> Result<(), ApiError> {
    validate_in(info, object, Some(old), true, webhook)
}

fn validate_in(
    info: &ResourceInfo,
    object: &Value,
    old: Option<&Value>,
    status_only: bool,
    webhook: WebhookOptions,
) -> Result<(), ApiError> {
    let name = object::name(object).unwrap_or("").to_owned();
    let mut errors = Vec::new();
    // Metadata as stored passed these checks when it was written: an update that leaves it
    // as it was (every status write) is not checked again.
    let meta_unchanged =
        status_only || old.is_some_and(|old| object.get("metadata") == old.get("metadata"));
    if !meta_unchanged {
        // `managedFields` is not validated here (the field manager rebuilds it after
        // admission), only decoded as part of ObjectMeta, which rejects entries of the wrong
        // shape. Entries the stored object already had were checked when it was written: they
        // are not decoded again (their `fieldsV1` trees are most of the decoding work on an
        // update).
        let managed_unchanged = old.is_some_and(|old| {
            object["metadata"].get("managedFields") == old["metadata"].get("managedFields")
        });
        let meta = object_meta(object, managed_unchanged)?;
        let path = FieldPath::new("metadata");
        errors.extend(validation::validate_object_meta(
            &meta,
            info.namespaced,
            name_rule(info),
            &path,
        ));
        if let Some(old) = old {
            let old_meta = object_meta(old, true)?;
            errors.extend(validation::validate_object_meta_update(
                &meta, &old_meta, &path,
            ));
        }
    }
    errors.extend(kind_errors(info, object, old, status_only));
    errors.extend(crate::events::errors(info, object, old));
    errors.extend(karmada::errors(info, object, old, webhook));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(info, &name, &errors))
    }
}

/// The object's metadata, decoded from the borrowed value (no copy); without its
/// `managedFields` when `skip_managed_fields`.
fn object_meta(object: &Value, skip_managed_fields: bool) -> Result<ObjectMeta, ApiError> {
    let meta = object.get("metadata").unwrap_or(&Value::Null);
    let decoded = match meta.as_object() {
        Some(map) if skip_managed_fields => {
            <ObjectMeta as serde::Deserialize>::deserialize(WithoutManagedFields(map))
        }
        _ => <ObjectMeta as serde::Deserialize>::deserialize(meta),
    };
    decoded.map_err(|e| ApiError::bad_request(format!("metadata: cannot decode ObjectMeta: {e}")))
}

/// A metadata map seen without its `managedFields` member, for decoding.
struct WithoutManagedFields<'a>(&'a serde_json::Map<String, Value>);

impl<'de> serde::Deserializer<'de> for WithoutManagedFields<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_map(MetaEntries {
            entries: self.0.iter(),
            value: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

struct MetaEntries<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'de> serde::de::MapAccess<'de> for MetaEntries<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        for (key, value) in self.entries.by_ref() {
            if key == "managedFields" {
                continue;
            }
            self.value = Some(value);
            return seed
                .deserialize(serde::de::value::BorrowedStrDeserializer::new(key.as_str()))
                .map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let value = self.value.take().ok_or_else(|| {
            <serde_json::Error as serde::de::Error>::custom("a value before its key")
        })?;
        seed.deserialize(value)
    }
}

/// Which format names of a kind must have (as kube-apiserver's strategies choose).
fn name_rule(info: &ResourceInfo) -> NameRule {
    match (info.group.as_str(), info.kind.as_str()) {
        ("", "Namespace") => NameRule::Dns1123Label,
        ("", "Service") => NameRule::Dns1035Label,
        ("cluster.karmada.io", "Cluster") => NameRule::Dns1123Label,
        ("rbac.authorization.k8s.io", _) => NameRule::PathSegment,
        // `ValidateCertificateRequestName` accepts any name a path can carry.
        ("certificates.k8s.io", "CertificateSigningRequest") => NameRule::PathSegment,
        // kube-aggregator's: `<version>.<group>`, so `v1.` for the core group.
        ("apiregistration.k8s.io", "APIService") => NameRule::PathSegment,
        _ => NameRule::Dns1123Subdomain,
    }
}

/// Rules of individual kinds.
fn kind_errors(
    info: &ResourceInfo,
    object: &Value,
    old: Option<&Value>,
    status_only: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if crate::crd::is_definition(info) {
        errors.extend(crate::crd::definition::definition_errors(object));
    } else if info.crd.is_some() {
        errors.extend(crate::crd::schema_errors(info, object));
    }
    // A spec left as it was (a status write) was checked when it was written.
    let spec_unchanged =
        status_only || old.is_some_and(|old| object.get("spec") == old.get("spec"));
    if info.group == "apps"
        && !spec_unchanged
        && matches!(
            info.kind.as_str(),
            "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet"
        )
    {
        workload_selector_errors(object, &mut errors);
    }
    if let Some(old) = old
        && !status_only
    {
        errors.extend(crate::lifted::immutable::errors(
            &info.group,
            &info.kind,
            object,
            old,
        ));
    }
    if info.group == "apiregistration.k8s.io" && info.kind == "APIService" {
        errors.extend(crate::api_services::errors(object));
    }
    if info.group == "scheduling.k8s.io" && info.kind == "PriorityClass" {
        errors.extend(crate::lifted::priority_class::errors(object, old));
    }
    if info.group == "discovery.k8s.io" && info.kind == "EndpointSlice" {
        errors.extend(crate::lifted::endpoint_slice::errors(object, old));
    }
    if info.group.is_empty() && info.kind == "Endpoints" {
        errors.extend(crate::lifted::endpoint_slice::endpoints_errors(object));
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_without_managed_fields_decodes_the_rest_alike() {
        let object = json!({"metadata": {
            "name": "a", "namespace": "n", "generation": 3, "uid": "u",
            "labels": {"l": "1"}, "annotations": {"a": "2"}, "finalizers": ["f"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "x"}],
            "creationTimestamp": "2026-12-01T00:00:00Z",
            "managedFields": [{"manager": "m", "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
        }});
        let mut full = object_meta(&object, false).expect("decodes");
        assert_eq!(full.managed_fields.as_ref().map(Vec::len), Some(1));
        full.managed_fields = None;
        assert_eq!(object_meta(&object, true).expect("decodes"), full);
    }

    #[test]
    fn metadata_of_the_wrong_shape_is_refused_either_way() {
        let object = json!({"metadata": {"name": "a", "labels": 5}});
        for skip in [false, true] {
            let error = object_meta(&object, skip).expect_err("labels must be a map");
            assert!(
                error.message.contains("cannot decode ObjectMeta"),
                "{}",
                error.message
            );
        }
    }
}
