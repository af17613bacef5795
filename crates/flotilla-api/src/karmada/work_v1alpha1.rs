//! `work.karmada.io/v1alpha1` `Work`: the manifests the binding controller renders for one member
//! cluster, in that cluster's execution namespace `karmada-es-<cluster>`, and the status the
//! member reports back (`manifestStatuses`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ApiVersion, Kind, karmada_resource};

/// Work condition: the manifests were applied to the member.
pub const WORK_CONDITION_APPLIED: &str = "Applied";
/// Work condition: dispatching state.
pub const WORK_CONDITION_DISPATCHING: &str = "Dispatching";
/// Health of a manifest (and of a binding's aggregated item): healthy.
pub const HEALTH_HEALTHY: &str = "Healthy";
/// Health: unhealthy.
pub const HEALTH_UNHEALTHY: &str = "Unhealthy";
/// Health: unknown (interpreter error, or not applied).
pub const HEALTH_UNKNOWN: &str = "Unknown";

/// A Work.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Work {
    /// Always `work.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<Work>,
    /// Always `Work`.
    #[serde(default)]
    pub kind: Kind<Work>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: WorkSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WorkStatus>,
}
karmada_resource!(
    Work,
    group = "work.karmada.io",
    version = "v1alpha1",
    kind = "Work",
    plural = "works",
    scope = NamespaceResourceScope
);

/// `WorkSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkSpec {
    /// The manifests.
    #[serde(default)]
    pub workload: WorkloadTemplate,
    /// Do not write to the member while true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend_dispatching: Option<bool>,
    /// Keep the member objects when the Work is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
}

/// `WorkloadTemplate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadTemplate {
    /// Raw objects (Karmada always writes exactly one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Value>,
}

/// `WorkStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkStatus {
    /// `Applied`, `Dispatching`, ….
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Status of each manifest in the member.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest_statuses: Vec<ManifestStatus>,
}

/// One manifest's status in the member.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestStatus {
    /// Which manifest.
    #[serde(default)]
    pub identifier: ResourceIdentifier,
    /// The reflected status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    /// `Healthy`, `Unhealthy` or `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub health: String,
}

/// Identifies a manifest of a Work.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceIdentifier {
    /// Index in `manifests`.
    #[serde(default)]
    pub ordinal: i32,
    /// API group.
    #[serde(default)]
    pub group: String,
    /// API version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Plural resource name.
    #[serde(default)]
    pub resource: String,
    /// Namespace (empty for cluster-scoped).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default)]
    pub name: String,
}
