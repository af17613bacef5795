//! `apps.karmada.io/v1alpha1` `WorkloadRebalancer`: a one-shot request to reschedule the
//! bindings of some workloads afresh, with the result per workload in its status.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, is_zero_i64, karmada_resource};

/// `observedWorkloads[].result` of a workload whose binding was triggered.
pub const REBALANCE_SUCCESSFUL: &str = "Successful";
/// `observedWorkloads[].result` of a workload that cannot be rebalanced.
pub const REBALANCE_FAILED: &str = "Failed";
/// `observedWorkloads[].reason` when the workload has no binding.
pub const REBALANCE_BINDING_NOT_FOUND: &str = "ReferencedBindingNotFound";

/// A cluster-scoped rebalance request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRebalancer {
    /// Always `apps.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<WorkloadRebalancer>,
    /// Always `WorkloadRebalancer`.
    #[serde(default)]
    pub kind: Kind<WorkloadRebalancer>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The request.
    #[serde(default)]
    pub spec: WorkloadRebalancerSpec,
    /// What was done.
    #[serde(default)]
    pub status: WorkloadRebalancerStatus,
}
karmada_resource!(
    WorkloadRebalancer,
    group = "apps.karmada.io",
    version = "v1alpha1",
    kind = "WorkloadRebalancer",
    plural = "workloadrebalancers",
    scope = ClusterResourceScope
);

/// `WorkloadRebalancer.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRebalancerSpec {
    /// The workloads to reschedule (at least one).
    #[serde(default)]
    pub workloads: Vec<WorkloadReference>,
    /// Delete the rebalancer this long after it finished (absent: keep it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// A workload (resource template) by apiVersion, kind, namespace (empty: cluster-scoped)
/// and name (Karmada's `appsv1alpha1.ObjectReference`).
#[derive(
    Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadReference {
    /// The workload's API version.
    #[serde(default)]
    pub api_version: String,
    /// The workload's kind.
    #[serde(default)]
    pub kind: String,
    /// The workload's name.
    #[serde(default)]
    pub name: String,
    /// The workload's namespace; empty for a cluster-scoped workload.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// `WorkloadRebalancer.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRebalancerStatus {
    /// One entry per workload, ordered by apiVersion, kind, namespace, name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_workloads: Vec<ObservedWorkload>,
    /// The `metadata.generation` this status answers.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// When every workload got its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_time: Option<Time>,
}

/// The outcome for one workload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObservedWorkload {
    /// The workload.
    #[serde(default)]
    pub workload: WorkloadReference,
    /// `Successful` or `Failed`; empty while it is still to be done.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub result: String,
    /// Why it failed (`ReferencedBindingNotFound`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}
