//! `work.karmada.io/v1alpha2` `ResourceBinding` and `ClusterResourceBinding`: a template bound to
//! a policy, the scheduler's input (replicas, requirements, placement) and its result
//! (`spec.clusters`).

use schemars::JsonSchema;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelector, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use super::policy::{FailoverBehavior, Placement, Suspension as PolicySuspension};
use super::{ApiVersion, Kind, ResourceList, is_false, is_zero_i32, is_zero_i64, karmada_resource};

/// Condition type written by the scheduler.
pub const CONDITION_SCHEDULED: &str = "Scheduled";
/// `Scheduled` reason on success.
pub const REASON_SUCCESS: &str = "Success";
/// `Scheduled` reason for unexpected errors.
pub const REASON_SCHEDULER_ERROR: &str = "SchedulerError";
/// `Scheduled` reason when no cluster passed the filters.
pub const REASON_NO_CLUSTER_FIT: &str = "NoClusterFit";
/// `Scheduled` reason when capacity is short.
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";
/// `Scheduled` message on success.
pub const MESSAGE_SCHEDULED: &str = "Binding has been scheduled successfully.";
/// Annotation recording the placement of the last successful schedule.
pub const ANNOTATION_APPLIED_PLACEMENT: &str = "policy.karmada.io/applied-placement";

/// A namespaced binding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBinding {
    /// Always `work.karmada.io/v1alpha2`.
    #[serde(default)]
    pub api_version: ApiVersion<ResourceBinding>,
    /// Always `ResourceBinding`.
    #[serde(default)]
    pub kind: Kind<ResourceBinding>,
    /// Standard object metadata (decoded here without `managedFields`: `crate::meta`).
    #[serde(default, deserialize_with = "crate::meta::without_managed_fields")]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: ResourceBindingSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResourceBindingStatus>,
}
karmada_resource!(
    ResourceBinding,
    group = "work.karmada.io",
    version = "v1alpha2",
    kind = "ResourceBinding",
    plural = "resourcebindings",
    scope = NamespaceResourceScope
);

/// A cluster-scoped binding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceBinding {
    /// Always `work.karmada.io/v1alpha2`.
    #[serde(default)]
    pub api_version: ApiVersion<ClusterResourceBinding>,
    /// Always `ClusterResourceBinding`.
    #[serde(default)]
    pub kind: Kind<ClusterResourceBinding>,
    /// Standard object metadata (decoded here without `managedFields`: `crate::meta`).
    #[serde(default, deserialize_with = "crate::meta::without_managed_fields")]
    pub metadata: ObjectMeta,
    /// Desired state.
    #[serde(default)]
    pub spec: ResourceBindingSpec,
    /// Observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResourceBindingStatus>,
}
karmada_resource!(
    ClusterResourceBinding,
    group = "work.karmada.io",
    version = "v1alpha2",
    kind = "ClusterResourceBinding",
    plural = "clusterresourcebindings",
    scope = ClusterResourceScope
);

/// `ResourceBindingSpec`, shared by both binding kinds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingSpec {
    /// The template.
    #[serde(default)]
    pub resource: ObjectReference,
    /// Propagate dependencies.
    #[serde(default, skip_serializing_if = "is_false")]
    pub propagate_deps: bool,
    /// Per-replica needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_requirements: Option<ReplicaRequirements>,
    /// Desired replicas.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub replicas: i32,
    /// Multi-template components.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<Component>,
    /// The scheduling result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<TargetCluster>,
    /// Copy of the policy's placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Clusters being evicted from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graceful_eviction_tasks: Vec<GracefulEvictionTask>,
    /// Independent bindings this (dependency) binding follows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_by: Vec<BindingSnapshot>,
    /// The scheduler that handles this binding.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheduler_name: String,
    /// Failover behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverBehavior>,
    /// `Abort` or `Overwrite`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub conflict_resolution: String,
    /// A Fresh reschedule is due when this is after `status.lastScheduledTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_triggered_at: Option<Time>,
    /// Suspension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<BindingSuspension>,
    /// Keep member objects when the template is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserve_resources_on_deletion: Option<bool>,
    /// Queue priority.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_priority: Option<BindingSchedulePriority>,
    /// Workload affinity groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_affinity_groups: Option<WorkloadAffinityGroups>,
}

impl ResourceBindingSpec {
    /// Whether `name` is in `spec.clusters`.
    pub fn target_contains(&self, name: &str) -> bool {
        self.clusters.iter().any(|c| c.name == name)
    }

    /// Replicas currently assigned to `name` (0 if none).
    pub fn assigned_replicas_for_cluster(&self, name: &str) -> i32 {
        self.clusters
            .iter()
            .find(|c| c.name == name)
            .map_or(0, |c| c.replicas)
    }

    /// Whether `name` is the source of a graceful eviction task.
    pub fn cluster_in_graceful_eviction_tasks(&self, name: &str) -> bool {
        self.graceful_eviction_tasks
            .iter()
            .any(|t| t.from_cluster == name)
    }

    /// Go's `IsWorkload`: replicas, requirements or components present.
    pub fn is_workload(&self) -> bool {
        self.replicas > 0 || self.replica_requirements.is_some() || !self.components.is_empty()
    }
}

/// Reference to the template.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// apiVersion.
    #[serde(default)]
    pub api_version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
    /// Namespace (empty for cluster-scoped).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// UID (drives Webster tie-breaks).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// resourceVersion.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
}

/// Per-replica needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaRequirements {
    /// Node constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_claim: Option<NodeClaim>,
    /// Resources per replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_request: Option<ResourceList>,
    /// Namespace (gate ResourceQuotaEstimate).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// PriorityClass (gate ResourceQuotaEstimate).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub priority_class_name: String,
}

/// Node constraints of a replica.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaim {
    /// Required node affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_node_affinity: Option<NodeSelector>,
    /// Node selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Tolerations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

/// One pod template of a multi-template workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    /// Component name.
    #[serde(default)]
    pub name: String,
    /// Replicas.
    #[serde(default)]
    pub replicas: i32,
    /// Per-replica needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ComponentReplicaRequirementsSchema>")]
    pub replica_requirements: Option<serde_json::Value>,
}

/// The shape of a component's `replicaRequirements`, for the published schema (the field is
/// kept as JSON).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ComponentReplicaRequirementsSchema {
    /// Node constraints of each replica.
    node_claim: Option<NodeClaim>,
    /// Resources each replica requests.
    resource_request: Option<ResourceList>,
    /// The PriorityClass of each replica.
    priority_class_name: Option<String>,
}

/// A cluster in the scheduling result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetCluster {
    /// Cluster name.
    pub name: String,
    /// Replicas on it.
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub replicas: i32,
    /// Per-component replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<TargetComponent>,
}

impl TargetCluster {
    /// A target with `replicas` replicas.
    pub fn new(name: impl Into<String>, replicas: i32) -> Self {
        Self {
            name: name.into(),
            replicas,
            components: Vec::new(),
        }
    }
}

/// Replicas of one component on a cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TargetComponent {
    /// Component name.
    pub name: String,
    /// Replicas.
    #[serde(default)]
    pub replicas: i32,
}

/// A graceful eviction in progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GracefulEvictionTask {
    /// The cluster evicted from.
    #[serde(default)]
    pub from_cluster: String,
    /// `Directly`, `Gracefully`, `Never`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub purge_mode: String,
    /// Replicas being evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Reason.
    #[serde(default)]
    pub reason: String,
    /// Message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Producer.
    #[serde(default)]
    pub producer: String,
    /// Grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// Keep the member object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppress_deletion: Option<bool>,
    /// Preserved state.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub preserved_label_state: BTreeMap<String, String>,
    /// When the task was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// Targets before failover.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters_before_failover: Vec<String>,
}

/// An independent binding's result, copied into dependency bindings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BindingSnapshot {
    /// Namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Its clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<TargetCluster>,
}

/// Binding suspension: the policy's plus `scheduling`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BindingSuspension {
    /// The policy's suspension.
    #[serde(flatten)]
    pub policy: PolicySuspension,
    /// The scheduler ignores the binding while true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<bool>,
}

/// Queue priority of a binding.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BindingSchedulePriority {
    /// Priority (higher first).
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub priority: i32,
}

/// Workload affinity groups.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadAffinityGroups {
    /// `<key>=<value>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub affinity_group: String,
    /// `<key>=<value>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub anti_affinity_group: String,
}

impl WorkloadAffinityGroups {
    /// The groups a template with `labels` joins under `placement.workloadAffinity`, as
    /// Karmada's detector names them (`getWorkloadAffinityGroups`): for each of `affinity` and
    /// `antiAffinity`, `<groupByLabelKey>=<the template's value>` when the template carries
    /// that label. `None` when neither applies.
    pub fn of(
        placement: &super::Placement,
        labels: &std::collections::BTreeMap<String, String>,
    ) -> Option<Self> {
        let affinity = placement.workload_affinity.as_ref()?;
        let group = |term: &str| {
            let key = affinity.get(term)?.get("groupByLabelKey")?.as_str()?;
            labels.get(key).map(|value| format!("{key}={value}"))
        };
        let groups = Self {
            affinity_group: group("affinity").unwrap_or_default(),
            anti_affinity_group: group("antiAffinity").unwrap_or_default(),
        };
        (!groups.affinity_group.is_empty() || !groups.anti_affinity_group.is_empty())
            .then_some(groups)
    }
}

/// `ResourceBindingStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingStatus {
    /// Generation the scheduler last handled.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub scheduler_observed_generation: i64,
    /// The clusterAffinities term in force (Go: `SchedulerObservedAffinityName`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scheduler_observing_affinity_name: String,
    /// Time of the last successful schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scheduled_time: Option<Time>,
    /// `Scheduled`, `FullyApplied`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Per-cluster status.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregated_status: Vec<AggregatedStatusItem>,
}

/// One cluster's status of the workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AggregatedStatusItem {
    /// Cluster.
    #[serde(default)]
    pub cluster_name: String,
    /// The member object's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<super::JsonText>,
    /// Applied.
    #[serde(default, skip_serializing_if = "is_false")]
    pub applied: bool,
    /// Apply error.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub applied_message: String,
    /// `Healthy`, `Unhealthy`, `Unknown`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub health: String,
}

#[cfg(test)]
mod karmada_binding_helpers;
