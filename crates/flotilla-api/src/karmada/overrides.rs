//! `policy.karmada.io/v1alpha1` `OverridePolicy` and `ClusterOverridePolicy`: per-cluster changes
//! to a resource on its way to members. Field order and omissions of [`Overriders`] and its parts
//! are Go's (`omitempty` where Go has it and it takes effect), so the
//! `policy.karmada.io/applied-overrides` annotation serializes as Karmada writes it.

use schemars::JsonSchema;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::policy::{ClusterAffinity, ResourceSelector};
use super::{ApiVersion, Kind, karmada_resource};

/// A namespaced override policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverridePolicy {
    /// Always `policy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<OverridePolicy>,
    /// Always `OverridePolicy`.
    #[serde(default)]
    pub kind: Kind<OverridePolicy>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Which resources to change, and how, per target cluster.
    #[serde(default)]
    pub spec: OverrideSpec,
}
karmada_resource!(
    OverridePolicy,
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "OverridePolicy",
    plural = "overridepolicies",
    scope = NamespaceResourceScope
);

/// A cluster-scoped override policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterOverridePolicy {
    /// Always `policy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<ClusterOverridePolicy>,
    /// Always `ClusterOverridePolicy`.
    #[serde(default)]
    pub kind: Kind<ClusterOverridePolicy>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Which resources to change, and how, per target cluster.
    #[serde(default)]
    pub spec: OverrideSpec,
}
karmada_resource!(
    ClusterOverridePolicy,
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "ClusterOverridePolicy",
    plural = "clusteroverridepolicies",
    scope = ClusterResourceScope
);

/// `OverrideSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverrideSpec {
    /// The resource templates the overrides apply to (empty: every propagated resource the
    /// policy can see).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_selectors: Vec<ResourceSelector>,
    /// Override rules, applied in order, each to the clusters its `targetCluster` matches (all
    /// clusters when absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub override_rules: Vec<RuleWithCluster>,
    /// Deprecated: the target of `overriders`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster: Option<ClusterAffinity>,
    /// Deprecated: overriders for `targetCluster`.
    #[serde(default)]
    pub overriders: Overriders,
}

/// One rule: overriders for the clusters `targetCluster` matches (nil: all clusters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithCluster {
    /// The clusters the rule applies to (names, labels, fields; every cluster when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster: Option<ClusterAffinity>,
    /// The changes, applied in Karmada's order: image, command, args, labels, annotations,
    /// field overriders, then plaintext.
    #[serde(default)]
    pub overriders: Overriders,
}

/// Every kind of overrider (applied image → command → args → labels → annotations → field →
/// plaintext).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Overriders {
    /// JSON patch operations (RFC 6902) on the object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plaintext: Vec<PlaintextOverrider>,
    /// Changes to container images: registry, repository or tag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_overrider: Vec<ImageOverrider>,
    /// Entries added to or removed from a container's `command`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_overrider: Vec<CommandArgsOverrider>,
    /// Entries added to or removed from a container's `args`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args_overrider: Vec<CommandArgsOverrider>,
    /// Labels added, replaced or removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels_overrider: Vec<LabelAnnotationOverrider>,
    /// Annotations added, replaced or removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations_overrider: Vec<LabelAnnotationOverrider>,
    /// Changes inside fields that hold JSON or YAML text (such as a ConfigMap's data).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field_overrider: Vec<FieldOverrider>,
}

impl Overriders {
    /// Whether there is nothing to apply.
    pub fn is_empty(&self) -> bool {
        self.plaintext.is_empty()
            && self.image_overrider.is_empty()
            && self.command_overrider.is_empty()
            && self.args_overrider.is_empty()
            && self.labels_overrider.is_empty()
            && self.annotations_overrider.is_empty()
            && self.field_overrider.is_empty()
    }
}

/// One JSON patch operation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlaintextOverrider {
    /// RFC 6901 path.
    #[serde(default)]
    pub path: String,
    /// `add`, `remove` or `replace`.
    #[serde(default)]
    pub operator: String,
    /// The value (`add`, `replace`); written as `null` when absent, as Go writes its
    /// `apiextensionsv1.JSON` (which `omitempty` does not drop).
    #[serde(default)]
    pub value: Option<Value>,
}

/// Changes one component of container images.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageOverrider {
    /// Where the image is (default: every container of a known workload kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<ImagePredicate>,
    /// `Registry`, `Repository` or `Tag`.
    #[serde(default)]
    pub component: String,
    /// `add`, `remove` or `replace`.
    #[serde(default)]
    pub operator: String,
    /// The value.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}

/// The path of an image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImagePredicate {
    /// RFC 6901 path of an image string.
    #[serde(default)]
    pub path: String,
}

/// Adds or removes command/args entries of one container.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandArgsOverrider {
    /// The container.
    #[serde(default)]
    pub container_name: String,
    /// `add` or `remove`.
    #[serde(default)]
    pub operator: String,
    /// Entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub value: Vec<String>,
}

/// Adds, removes or replaces labels or annotations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LabelAnnotationOverrider {
    /// `add`, `remove` or `replace`.
    #[serde(default)]
    pub operator: String,
    /// Keys and values (required; written as `{}` when empty).
    #[serde(default)]
    pub value: BTreeMap<String, String>,
}

/// Patches a string field that holds JSON or YAML.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldOverrider {
    /// RFC 6901 path of the string.
    #[serde(default)]
    pub field_path: String,
    /// Operations when the string is JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub json: Vec<SubPathOperation>,
    /// Operations when the string is YAML.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub yaml: Vec<SubPathOperation>,
}

/// One operation inside a field's document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubPathOperation {
    /// RFC 6901 path inside the document.
    #[serde(default)]
    pub sub_path: String,
    /// `add`, `remove` or `replace`.
    #[serde(default)]
    pub operator: String,
    /// The value; written as `null` when absent, as Go writes its `apiextensionsv1.JSON`.
    #[serde(default)]
    pub value: Option<Value>,
}

/// One entry of the `policy.karmada.io/applied-(cluster-)overrides` annotation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverridePolicyShadow {
    /// The policy.
    pub policy_name: String,
    /// What it contributed.
    pub overriders: Overriders,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_serialize_with_gos_omissions() {
        let overriders: Overriders = serde_json::from_value(json!({
            "plaintext": [{"path": "/a", "operator": "remove", "value": null}],
            "imageOverrider": [{"component": "Tag", "operator": "remove"}],
            "commandOverrider": [{"containerName": "c", "operator": "add"}],
            "labelsOverrider": [{"operator": "add", "value": {}}],
            "fieldOverrider": [{"fieldPath": "/f", "yaml": [{"subPath": "/s", "operator": "remove"}]}]}))
        .expect("overriders");
        assert_eq!(overriders.plaintext[0].value, None);
        assert_eq!(
            serde_json::to_string(&overriders).expect("serializes"),
            concat!(
                r#"{"plaintext":[{"path":"/a","operator":"remove","value":null}],"#,
                r#""imageOverrider":[{"component":"Tag","operator":"remove"}],"#,
                r#""commandOverrider":[{"containerName":"c","operator":"add"}],"#,
                r#""labelsOverrider":[{"operator":"add","value":{}}],"#,
                r#""fieldOverrider":[{"fieldPath":"/f","yaml":[{"subPath":"/s","operator":"remove","value":null}]}]}"#
            )
        );
    }
}
