//! What the binding controller's Events point at and say: references to bindings and templates,
//! the binding a Work came from, and the override manager's messages in Karmada's wording.

use flotilla_api::karmada::Work;
use serde_json::Value;

use super::{BindingKey, BindingView, render};

/// An event reference to a binding.
pub fn binding_reference(binding: &BindingView) -> k8s_openapi::api::core::v1::ObjectReference {
    let (kind, namespace) = match &binding.key {
        BindingKey::Namespaced { namespace, .. } => ("ResourceBinding", Some(namespace.clone())),
        BindingKey::Cluster { .. } => ("ClusterResourceBinding", None),
    };
    k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some("work.karmada.io/v1alpha2".to_owned()),
        kind: Some(kind.to_owned()),
        namespace,
        name: binding.metadata.name.clone(),
        uid: binding.metadata.uid.clone(),
        ..Default::default()
    }
}

/// The binding a Work was rendered from, by the annotations the binding controller writes.
pub(super) fn binding_of(work: &Work) -> Option<BindingKey> {
    use flotilla_api::karmada::{
        CLUSTER_RESOURCE_BINDING_NAME_ANNOTATION, RESOURCE_BINDING_NAME_ANNOTATION,
        RESOURCE_BINDING_NAMESPACE_ANNOTATION,
    };
    let annotations = work.metadata.annotations.as_ref()?;
    if let (Some(namespace), Some(name)) = (
        annotations.get(RESOURCE_BINDING_NAMESPACE_ANNOTATION),
        annotations.get(RESOURCE_BINDING_NAME_ANNOTATION),
    ) {
        return Some(BindingKey::Namespaced {
            namespace: namespace.clone(),
            name: name.clone(),
        });
    }
    annotations
        .get(CLUSTER_RESOURCE_BINDING_NAME_ANNOTATION)
        .map(|name| BindingKey::Cluster { name: name.clone() })
}

/// The `ApplyOverridePolicyFailed` message of a policy that could not be applied, worded as
/// Karmada's override manager words it.
pub(super) fn override_failure_note(
    error: &render::RenderError,
    namespace: &str,
    cluster: &str,
) -> Option<String> {
    let render::RenderError::Override(crate::overrides::OverrideError::Apply {
        policy,
        cluster_policy,
        ..
    }) = error
    else {
        return None;
    };
    Some(if *cluster_policy {
        format!("Apply cluster override policy({policy}) for cluster({cluster}) failed.")
    } else {
        format!("Apply override policy({namespace}/{policy}) for cluster({cluster}) failed.")
    })
}

/// The `ApplyOverridePolicySucceed` messages for the policies recorded on a rendered Work
/// (Karmada's wording: cluster policies by name, namespaced ones as `namespace/name`).
pub(super) fn applied_override_notes(work: &Work, namespace: &str, cluster: &str) -> Vec<String> {
    let annotations = work.metadata.annotations.as_ref();
    let names = |key: &str| -> Vec<String> {
        annotations
            .and_then(|a| a.get(key))
            .and_then(|v| serde_json::from_str::<Vec<Value>>(v).ok())
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("policyName")?.as_str().map(str::to_owned))
            .collect()
    };
    let cluster_policies = names(crate::overrides::ANNOTATION_APPLIED_CLUSTER_OVERRIDES)
        .into_iter()
        .map(|name| {
            format!("Apply cluster override policy({name}) for cluster({cluster}) succeed.")
        });
    let policies = names(crate::overrides::ANNOTATION_APPLIED_OVERRIDES)
        .into_iter()
        .map(|name| {
            format!("Apply override policy({namespace}/{name}) for cluster({cluster}) succeed.")
        });
    cluster_policies.chain(policies).collect()
}

/// The Event reference of the template a binding's `spec.resource` names.
pub fn resource_reference(
    resource: &flotilla_api::karmada::work::ObjectReference,
) -> k8s_openapi::api::core::v1::ObjectReference {
    k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some(resource.api_version.clone()),
        kind: Some(resource.kind.clone()),
        namespace: (!resource.namespace.is_empty()).then(|| resource.namespace.clone()),
        name: Some(resource.name.clone()),
        uid: (!resource.uid.is_empty()).then(|| resource.uid.clone()),
        ..Default::default()
    }
}

/// An event reference to a template.
pub fn template_reference(template: &Value) -> k8s_openapi::api::core::v1::ObjectReference {
    let s = |p: &str| {
        template
            .pointer(p)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    k8s_openapi::api::core::v1::ObjectReference {
        api_version: s("/apiVersion"),
        kind: s("/kind"),
        namespace: s("/metadata/namespace"),
        name: s("/metadata/name"),
        uid: s("/metadata/uid"),
        ..Default::default()
    }
}
