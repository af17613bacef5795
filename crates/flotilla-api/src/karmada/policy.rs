//! `policy.karmada.io/v1alpha1` `PropagationPolicy` and `ClusterPropagationPolicy`: which
//! resources go where, and how replicas are divided.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, is_false, karmada_resource};

/// `replicaSchedulingType: Duplicated`.
pub const REPLICA_SCHEDULING_DUPLICATED: &str = "Duplicated";
/// `replicaSchedulingType: Divided`.
pub const REPLICA_SCHEDULING_DIVIDED: &str = "Divided";
/// `replicaDivisionPreference: Aggregated`.
pub const DIVISION_AGGREGATED: &str = "Aggregated";
/// `replicaDivisionPreference: Weighted`.
pub const DIVISION_WEIGHTED: &str = "Weighted";
/// `dynamicWeight: AvailableReplicas`.
pub const DYNAMIC_WEIGHT_AVAILABLE_REPLICAS: &str = "AvailableReplicas";
/// `spreadByField: cluster`.
pub const SPREAD_BY_CLUSTER: &str = "cluster";
/// `spreadByField: region`.
pub const SPREAD_BY_REGION: &str = "region";
/// `spreadByField: zone`.
pub const SPREAD_BY_ZONE: &str = "zone";
/// `spreadByField: provider`.
pub const SPREAD_BY_PROVIDER: &str = "provider";
/// The scheduler name bindings get when the policy names none.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// A namespaced propagation policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropagationPolicy {
    /// Always `policy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<PropagationPolicy>,
    /// Always `PropagationPolicy`.
    #[serde(default)]
    pub kind: Kind<PropagationPolicy>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the policy selects and how it places it.
    #[serde(default)]
    pub spec: PropagationSpec,
}
karmada_resource!(
    PropagationPolicy,
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "PropagationPolicy",
    plural = "propagationpolicies",
    scope = NamespaceResourceScope
);

/// A cluster-scoped propagation policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPropagationPolicy {
    /// Always `policy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<ClusterPropagationPolicy>,
    /// Always `ClusterPropagationPolicy`.
    #[serde(default)]
    pub kind: Kind<ClusterPropagationPolicy>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the policy selects and how it places it.
    #[serde(default)]
    pub spec: PropagationSpec,
}
karmada_resource!(
    ClusterPropagationPolicy,
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "ClusterPropagationPolicy",
    plural = "clusterpropagationpolicies",
    scope = ClusterResourceScope
);

/// `PropagationSpec`, shared by both policy kinds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PropagationSpec {
    /// The resource templates the policy propagates, by apiVersion and kind, and optionally by
    /// namespace, name or labels.
    #[serde(default)]
    pub resource_selectors: Vec<ResourceSelector>,
    /// Deprecated alias of `propagateDeps`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub association: bool,
    /// Also propagate what the selected workloads use (ConfigMaps, Secrets, ServiceAccounts,
    /// PersistentVolumeClaims named in their pod templates) to the same clusters.
    #[serde(default, skip_serializing_if = "is_false")]
    pub propagate_deps: bool,
    /// Which member clusters receive the resources and how replicas are shared among them.
    #[serde(default)]
    pub placement: Placement,
    /// Explicit priority: of several policies matching a template, the highest wins (ties go to
    /// the one with the more specific selector, then by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Whether this policy may take templates already claimed by a lower-priority policy:
    /// `Always` or `Never` (the default).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub preemption: String,
    /// OverridePolicies that must exist before the resources are propagated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependent_overrides: Vec<String>,
    /// The scheduler that places the bindings (`default-scheduler` unless set).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheduler_name: String,
    /// What happens when a cluster or an application in it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverBehavior>,
    /// What to do when a member already has an object of the same name that Karmada did not
    /// create: `Abort` (the default: report a conflict and leave it) or `Overwrite` (take it over).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub conflict_resolution: String,
    /// `Lazy`: a policy change takes effect only when the template next changes; empty: at once.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub activation_preference: String,
    /// Stop (some or all) dispatching of the resources to member clusters, keeping what is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<Suspension>,
    /// Keep the member clusters' copies when the template is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
    /// Where the bindings' scheduling priority comes from (a Kubernetes PriorityClass).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_priority: Option<SchedulePriority>,
}

/// Selects resources by apiVersion/kind and optionally namespace, name or labels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSelector {
    /// apiVersion of the target.
    #[serde(default)]
    pub api_version: String,
    /// Kind of the target.
    #[serde(default)]
    pub kind: String,
    /// Namespace (PP: defaulted to the policy's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name; when set the label selector is ignored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
}

/// `Placement`: cluster affinity, tolerations, spread constraints and replica scheduling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The clusters that may receive the resources (names, labels, fields; exclusive with
    /// `clusterAffinities`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_affinity: Option<ClusterAffinity>,
    /// Ordered affinity groups tried one after another. An empty list and an absent one differ,
    /// as in Karmada (a present empty list schedules nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_affinities: Option<Vec<ClusterAffinityTerm>>,
    /// Cluster taints the resources tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_tolerations: Vec<Toleration>,
    /// How the chosen clusters are spread over clusters, regions, zones or providers (minimum
    /// and maximum groups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread_constraints: Vec<SpreadConstraint>,
    /// How replicas are scheduled: `Duplicated` (every cluster runs all of them; the default
    /// when absent) or `Divided` (shared among the clusters, by weight or by capacity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_scheduling: Option<ReplicaSchedulingStrategy>,
    /// Workload (anti-)affinity groups (feature gate WorkloadAffinity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<WorkloadAffinitySchema>")]
    pub workload_affinity: Option<serde_json::Value>,
}

/// The shape of `placement.workloadAffinity`, for the published schema (the field is kept as
/// JSON and read by the detector).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct WorkloadAffinitySchema {
    /// Workloads whose values of this label key match are placed together.
    affinity: Option<WorkloadAffinityTermSchema>,
    /// Workloads whose values of this label key match are kept apart.
    anti_affinity: Option<WorkloadAffinityTermSchema>,
}

/// One term of `placement.workloadAffinity`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct WorkloadAffinityTermSchema {
    /// The label key of the workload template whose value names its group.
    group_by_label_key: String,
}

impl Placement {
    /// Go's `Placement.ReplicaSchedulingType()`: `Duplicated` when `replicaScheduling` is nil.
    pub fn replica_scheduling_type(&self) -> &str {
        match &self.replica_scheduling {
            None => REPLICA_SCHEDULING_DUPLICATED,
            Some(strategy) => &strategy.replica_scheduling_type,
        }
    }
}

/// Selects clusters by labels, fields, names; minus exclusions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinity {
    /// Cluster labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// `provider`, `region`, `zone` expressions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<FieldSelector>,
    /// Cluster names (empty = any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_names: Vec<String>,
    /// Excluded cluster names (Go's `ExcludeClusters`).
    #[serde(default, rename = "exclude", skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

/// Field selector over `provider`, `region` and `zone`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldSelector {
    /// Expressions, ANDed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
}

/// One named group of `clusterAffinities`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinityTerm {
    /// Unique name of the group.
    #[serde(default)]
    pub affinity_name: String,
    /// The inline affinity.
    #[serde(flatten)]
    pub cluster_affinity: ClusterAffinity,
    /// Tiers used when the primary clusters lack capacity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflow_affinities: Vec<OverflowClusterAffinity>,
}

/// An overflow tier.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverflowClusterAffinity {
    /// Name of the tier.
    #[serde(default)]
    pub affinity_name: String,
    /// The inline affinity.
    #[serde(flatten)]
    pub cluster_affinity: ClusterAffinity,
}

/// A spread constraint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadConstraint {
    /// `cluster`, `region`, `zone` or `provider`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub spread_by_field: String,
    /// A cluster label key.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub spread_by_label: String,
    /// Upper bound on groups.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub max_groups: usize,
    /// Lower bound on groups.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub min_groups: usize,
}

fn is_zero_usize(value: &usize) -> bool {
    *value == 0
}

/// How replicas are scheduled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSchedulingStrategy {
    /// `Duplicated` (every cluster runs all replicas) or `Divided` (replicas are shared among the
    /// clusters; the default when `replicaScheduling` is given).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub replica_scheduling_type: String,
    /// For `Divided`: `Aggregated` (as few clusters as capacity allows) or `Weighted` (by
    /// `weightPreference`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub replica_division_preference: String,
    /// For `Weighted`: static weights per cluster, or dynamic weights from each cluster's
    /// available replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_preference: Option<ClusterPreferences>,
}

/// Static weights or a dynamic weight factor.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPreferences {
    /// Weights per group of clusters; replicas are divided in proportion.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_weight_list: Vec<StaticClusterWeight>,
    /// `AvailableReplicas`: weights follow how many replicas each cluster can still run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dynamic_weight: String,
}

/// A weight for the clusters an affinity matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaticClusterWeight {
    /// The clusters this weight applies to.
    #[serde(default)]
    pub target_cluster: ClusterAffinity,
    /// The weight (≥ 1).
    #[serde(default)]
    pub weight: i64,
}

/// Failover behaviour.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailoverBehavior {
    /// Application failover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<ApplicationFailoverBehavior>,
    /// Cluster failover.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterFailoverBehavior>,
}

/// Application failover.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationFailoverBehavior {
    /// When to fail over.
    #[serde(default)]
    pub decision_conditions: DecisionConditions,
    /// `Directly`, `Gracefully` or `Never`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub purge_mode: String,
    /// Grace period for `Gracefully`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// State to carry over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_preservation: Option<StatePreservation>,
}

/// Cluster failover.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFailoverBehavior {
    /// `Directly` or `Gracefully`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub purge_mode: String,
    /// State to carry over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_preservation: Option<StatePreservation>,
}

/// Failover decision conditions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionConditions {
    /// Seconds of unhealthiness tolerated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i32>,
}

/// State preservation rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatePreservation {
    /// Rules.
    #[serde(default)]
    pub rules: Vec<StatePreservationRule>,
}

/// One preserved value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatePreservationRule {
    /// Label name carrying the value.
    #[serde(default)]
    pub alias_label_name: String,
    /// JSONPath relative to `.status`.
    #[serde(default, rename = "jsonPath")]
    pub json_path: String,
}

/// Dispatch suspension.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suspension {
    /// Suspend dispatching to all clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatching: Option<bool>,
    /// Suspend dispatching to some clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatching_on_clusters: Option<SuspendClusters>,
}

/// Clusters whose dispatching is suspended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuspendClusters {
    /// Cluster names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_names: Vec<String>,
}

/// Where a binding's scheduling priority comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchedulePriority {
    /// `KubePriorityClass`.
    #[serde(default)]
    pub priority_class_source: String,
    /// The PriorityClass name.
    #[serde(default)]
    pub priority_class_name: String,
}

impl PropagationSpec {
    /// Applies Karmada's CRD defaults and mutating-webhook defaults that affect scheduling:
    /// `Divided` with an empty preference becomes `Weighted`; a spread constraint with neither
    /// field nor label spreads by `cluster`; `minGroups` 0 becomes 1. (A nil `replicaScheduling`
    /// stays nil, which means Duplicated.)
    pub fn apply_defaults(&mut self) {
        self.placement.apply_defaults();
    }
}

impl Placement {
    /// See [`PropagationSpec::apply_defaults`].
    pub fn apply_defaults(&mut self) {
        if let Some(strategy) = &mut self.replica_scheduling {
            if strategy.replica_scheduling_type.is_empty() {
                // CRD default.
                strategy.replica_scheduling_type = REPLICA_SCHEDULING_DIVIDED.to_owned();
            }
            if strategy.replica_scheduling_type == REPLICA_SCHEDULING_DIVIDED
                && strategy.replica_division_preference.is_empty()
            {
                strategy.replica_division_preference = DIVISION_WEIGHTED.to_owned();
            }
        }
        for constraint in &mut self.spread_constraints {
            if constraint.spread_by_field.is_empty() && constraint.spread_by_label.is_empty() {
                constraint.spread_by_field = SPREAD_BY_CLUSTER.to_owned();
            }
            if constraint.min_groups == 0 {
                constraint.min_groups = 1;
            }
        }
    }
}
