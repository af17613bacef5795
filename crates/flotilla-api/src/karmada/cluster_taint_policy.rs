//! `policy.karmada.io/v1alpha1` `ClusterTaintPolicy`: taints the `cluster-taint-policy`
//! controller adds to (or removes from) the Clusters it targets when their status conditions
//! match.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::policy::ClusterAffinity;
use super::{ApiVersion, Kind, karmada_resource};

/// `operator: In`: the condition's status is one of `statusValues`.
pub const MATCH_OPERATOR_IN: &str = "In";
/// `operator: NotIn`: the condition's status is none of `statusValues`.
pub const MATCH_OPERATOR_NOT_IN: &str = "NotIn";

/// A cluster-scoped policy tying taints to cluster conditions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterTaintPolicy {
    /// Always `policy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<ClusterTaintPolicy>,
    /// Always `ClusterTaintPolicy`.
    #[serde(default)]
    pub kind: Kind<ClusterTaintPolicy>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The policy.
    #[serde(default)]
    pub spec: ClusterTaintPolicySpec,
}
karmada_resource!(
    ClusterTaintPolicy,
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "ClusterTaintPolicy",
    plural = "clustertaintpolicies",
    scope = ClusterResourceScope
);

/// `ClusterTaintPolicy.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterTaintPolicySpec {
    /// The clusters the policy looks after (absent: every cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_clusters: Option<ClusterAffinity>,
    /// Conditions, ANDed, under which the taints are added (empty: never).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_on_conditions: Vec<MatchCondition>,
    /// Conditions, ANDed, under which the taints are removed (empty: never).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_on_conditions: Vec<MatchCondition>,
    /// The taints added or removed (at least one).
    #[serde(default)]
    pub taints: Vec<PolicyTaint>,
}

/// One condition test: the cluster's `conditionType` condition has (`In`) or has not (`NotIn`)
/// one of `statusValues` as its status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchCondition {
    /// A `Cluster.status.conditions[].type`.
    #[serde(default)]
    pub condition_type: String,
    /// `In` or `NotIn`.
    #[serde(default)]
    pub operator: String,
    /// `True`, `False`, `Unknown`.
    #[serde(default)]
    pub status_values: Vec<String>,
}

/// A taint of a policy (Karmada's `policyv1alpha1.Taint`: no `timeAdded`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyTaint {
    /// The taint key.
    #[serde(default)]
    pub key: String,
    /// `NoSchedule` or `NoExecute`.
    #[serde(default)]
    pub effect: String,
    /// The taint value (optional).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
}
