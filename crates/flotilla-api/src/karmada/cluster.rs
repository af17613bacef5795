//! `cluster.karmada.io/v1alpha1` `Cluster`: a member cluster's connection, topology, taints and
//! the status the scheduler reads (API enablements, conditions, resource summary).

use schemars::JsonSchema;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, ResourceList, is_false, is_zero_i32, karmada_resource};

/// Taint key set on clusters that are not ready.
pub const TAINT_CLUSTER_NOT_READY: &str = "cluster.karmada.io/not-ready";
/// Taint key set on clusters that are unreachable.
pub const TAINT_CLUSTER_UNREACHABLE: &str = "cluster.karmada.io/unreachable";
/// Taint key set by `karmadactl cordon`.
pub const TAINT_CLUSTER_UNSCHEDULABLE: &str = "cluster.karmada.io/unschedulable";
/// Condition type: the member's API enablement list is complete.
pub const CONDITION_COMPLETE_API_ENABLEMENTS: &str = "CompleteAPIEnablements";
/// Condition type: the member is ready.
pub const CONDITION_READY: &str = "Ready";

/// A member cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// Always `cluster.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<Cluster>,
    /// Always `Cluster`.
    #[serde(default)]
    pub kind: Kind<Cluster>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: ClusterSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClusterStatus>,
}
karmada_resource!(
    Cluster,
    group = "cluster.karmada.io",
    version = "v1alpha1",
    kind = "Cluster",
    plural = "clusters",
    scope = ClusterResourceScope
);

/// `Cluster.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// Unique id (the member's kube-system namespace UID).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// `Push` or `Pull`.
    #[serde(default)]
    pub sync_mode: String,
    /// The member API server URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_endpoint: String,
    /// Secret with `token` and `caBundle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalSecretReference>,
    /// Secret of the impersonator service account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impersonator_secret_ref: Option<LocalSecretReference>,
    /// Skip TLS verification of the member API server.
    #[serde(
        default,
        rename = "insecureSkipTLSVerification",
        skip_serializing_if = "is_false"
    )]
    pub insecure_skip_tls_verification: bool,
    /// Proxy to reach the member.
    #[serde(default, rename = "proxyURL", skip_serializing_if = "String::is_empty")]
    pub proxy_url: String,
    /// Extra headers for the proxy.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub proxy_header: BTreeMap<String, String>,
    /// Cloud provider.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provider: String,
    /// Region.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// Deprecated single zone (moved into `zones` by the server).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zone: String,
    /// Availability zones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Taints (NoSchedule / NoExecute are honoured by the scheduler).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Customized resource models (grades).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_models: Vec<ResourceModel>,
}

/// A reference to a Secret by namespace and name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LocalSecretReference {
    /// Namespace of the secret.
    #[serde(default)]
    pub namespace: String,
    /// Name of the secret.
    #[serde(default)]
    pub name: String,
}

/// One grade of the customized resource model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceModel {
    /// Grade index (0 = smallest).
    #[serde(default)]
    pub grade: u32,
    /// Per-resource ranges `[min, max)`.
    #[serde(default)]
    pub ranges: Vec<ResourceModelRange>,
}

/// One resource's range within a grade.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceModelRange {
    /// Resource name (cpu, memory, storage, ephemeral-storage).
    pub name: String,
    /// Inclusive lower bound.
    pub min: crate::Quantity,
    /// Exclusive upper bound.
    pub max: crate::Quantity,
}

/// `Cluster.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// The member's Kubernetes version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kubernetes_version: String,
    /// Group versions and resources served by the member.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_enablements: Vec<ApiEnablement>,
    /// `Ready`, `CompleteAPIEnablements`, …
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Node counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_summary: Option<NodeSummary>,
    /// Resource totals the general estimator reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_summary: Option<ResourceSummary>,
    /// Remedy actions (e.g. `TrafficControl`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy_actions: Vec<String>,
}

/// One served group version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiEnablement {
    /// e.g. `apps/v1`, `v1`.
    #[serde(default)]
    pub group_version: String,
    /// Resources of that group version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ApiResource>,
}

/// One served resource.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApiResource {
    /// Plural name.
    #[serde(default)]
    pub name: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// Node counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSummary {
    /// All nodes.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub total_num: i32,
    /// Ready nodes.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub ready_num: i32,
}

/// Resource totals over the member's nodes and pods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    /// Σ node allocatable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocatable: Option<ResourceList>,
    /// Σ requests of pods not yet bound to a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocating: Option<ResourceList>,
    /// Σ requests of pods bound to a node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocated: Option<ResourceList>,
    /// Number of nodes whose free resources fall in each grade.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocatable_modelings: Vec<AllocatableModeling>,
}

/// Node count of one grade.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AllocatableModeling {
    /// Grade index.
    #[serde(default)]
    pub grade: u32,
    /// Number of nodes.
    #[serde(default)]
    pub count: i64,
}

/// Whether a member serves a kind (Go's `APIEnablementStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiEnablementStatus {
    /// Listed in `status.apiEnablements`.
    Enabled,
    /// Not listed, and the list is known complete.
    Disabled,
    /// Not listed, and the list may be incomplete.
    Unknown,
}

impl Cluster {
    /// The cluster's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// Whether the member serves `kind` in `api_version` (Karmada's `Cluster.APIEnablement`).
    pub fn api_enablement(&self, api_version: &str, kind: &str) -> ApiEnablementStatus {
        let Some(status) = &self.status else {
            return ApiEnablementStatus::Unknown;
        };
        let listed = status
            .api_enablements
            .iter()
            .filter(|e| e.group_version == api_version)
            .any(|e| e.resources.iter().any(|r| r.kind == kind));
        if listed {
            return ApiEnablementStatus::Enabled;
        }
        let complete = status
            .conditions
            .iter()
            .any(|c| c.type_ == CONDITION_COMPLETE_API_ENABLEMENTS && c.status == "True");
        if complete {
            ApiEnablementStatus::Disabled
        } else {
            ApiEnablementStatus::Unknown
        }
    }

    /// Whether the cluster is being deleted.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }
}

impl Cluster {
    /// What Karmada's aggregated API server does to a Cluster on create (with the default-on gate
    /// CustomizedClusterResourceModeling): moves a deprecated `zone` into an empty `zones`, and
    /// fills the default nine-grade resource model when none is given, otherwise standardizes
    /// the models (sorted by grade, first grade's minimums 0, last grade's maximums MaxInt64).
    pub fn apply_server_defaults(&mut self) {
        let spec = &mut self.spec;
        if !spec.zone.is_empty() && spec.zones.is_empty() {
            spec.zones.push(std::mem::take(&mut spec.zone));
        }
        if spec.resource_models.is_empty() {
            spec.resource_models = default_resource_models();
            return;
        }
        spec.resource_models.sort_by_key(|m| m.grade);
        if let Some(first) = spec.resource_models.first_mut() {
            for range in &mut first.ranges {
                range.min = crate::Quantity::from_i64(0, range.min.format());
            }
        }
        if let Some(last) = spec.resource_models.last_mut() {
            for range in &mut last.ranges {
                range.max = crate::Quantity::from_i64(i64::MAX, range.max.format());
            }
        }
    }
}

/// Karmada's default resource models: grade 0 cpu [0,1) memory [0,4Gi); grade 1 [1,2)
/// [4Gi,16Gi); grades 2–7 cpu [2^(g-1), 2^g) memory [2^(g+2)Gi, 2^(g+3)Gi); grade 8 cpu
/// [128, ∞) memory [1024Gi, ∞).
pub fn default_resource_models() -> Vec<ResourceModel> {
    use crate::{Quantity, QuantityFormat};
    const GI: i64 = 1024 * 1024 * 1024;
    let bounds: [(i64, i64, i64, i64); 9] = [
        (0, 1, 0, 4),
        (1, 2, 4, 16),
        (2, 4, 16, 32),
        (4, 8, 32, 64),
        (8, 16, 64, 128),
        (16, 32, 128, 256),
        (32, 64, 256, 512),
        (64, 128, 512, 1024),
        (128, i64::MAX, 1024, i64::MAX),
    ];
    bounds
        .iter()
        .zip(0u32..)
        .map(|(&(cpu_min, cpu_max, mem_min, mem_max), grade)| {
            let mem = |gi: i64| {
                let bytes = if gi == i64::MAX { i64::MAX } else { gi * GI };
                Quantity::from_i64(bytes, QuantityFormat::BinarySI)
            };
            ResourceModel {
                grade,
                ranges: vec![
                    ResourceModelRange {
                        name: "cpu".into(),
                        min: Quantity::from_i64(cpu_min, QuantityFormat::DecimalSI),
                        max: Quantity::from_i64(cpu_max, QuantityFormat::DecimalSI),
                    },
                    ResourceModelRange {
                        name: "memory".into(),
                        min: mem(mem_min),
                        max: mem(mem_max),
                    },
                ],
            }
        })
        .collect()
}
