//! `remedy.karmada.io/v1alpha1` `Remedy`: actions (such as `TrafficControl`) the remedy
//! controller publishes in `Cluster.status.remedyActions` while a cluster's status conditions
//! match. Systems outside the control plane read them and act.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, karmada_resource};

/// The condition type Karmada names for a member's Service domain name resolution.
pub const CONDITION_SERVICE_DOMAIN_NAME_RESOLUTION_READY: &str = "ServiceDomainNameResolutionReady";
/// `operator: Equal`: the condition's status is `conditionStatus`.
pub const REMEDY_OPERATOR_EQUAL: &str = "Equal";
/// `operator: NotEqual`: the condition's status is not `conditionStatus`.
pub const REMEDY_OPERATOR_NOT_EQUAL: &str = "NotEqual";
/// The action asking for traffic to be kept away from the cluster.
pub const REMEDY_ACTION_TRAFFIC_CONTROL: &str = "TrafficControl";

/// A cluster-scoped rule turning cluster conditions into remedy actions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Remedy {
    /// Always `remedy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<Remedy>,
    /// Always `Remedy`.
    #[serde(default)]
    pub kind: Kind<Remedy>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The rule.
    #[serde(default)]
    pub spec: RemedySpec,
}
karmada_resource!(
    Remedy,
    group = "remedy.karmada.io",
    version = "v1alpha1",
    kind = "Remedy",
    plural = "remedies",
    scope = ClusterResourceScope
);

/// `Remedy.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemedySpec {
    /// The clusters the rule looks at (absent: every cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_affinity: Option<RemedyClusterAffinity>,
    /// Tests of which any one holding makes the actions apply. Absent applies them
    /// at once; a present but empty list is kept apart because Karmada's controller never
    /// applies the actions for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_matches: Option<Vec<DecisionMatch>>,
    /// The actions published while the rule matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
}

/// Which clusters a Remedy looks at: only those named (Karmada's remedy-specific
/// `ClusterAffinity`, not the placement one: an empty list names no cluster).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RemedyClusterAffinity {
    /// Cluster names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_names: Vec<String>,
}

/// One decision test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionMatch {
    /// A test of one cluster condition (absent: the entry never holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_condition_match: Option<ClusterConditionRequirement>,
}

/// The cluster's `conditionType` condition has (`Equal`) or has not (`NotEqual`) the status
/// `conditionStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterConditionRequirement {
    /// A `Cluster.status.conditions[].type`.
    #[serde(default)]
    pub condition_type: String,
    /// `Equal` or `NotEqual`.
    #[serde(default)]
    pub operator: String,
    /// `True`, `False`, `Unknown`.
    #[serde(default)]
    pub condition_status: String,
}
