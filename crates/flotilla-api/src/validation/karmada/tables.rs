//! What Karmada's CRD schemas require, enumerate, bound and default, per kind (from the
//! kubebuilder markers on `pkg/apis/*/v1alpha1` and `work/v1alpha2` types, Karmada v1.19).
//! Only constraints are listed: fields without one are not mentioned.

use super::schema::{Constraint, Rule::*};

const SELECTOR_OPS: &[&str] = &["add", "remove", "replace"];
const PURGE_MODES_APPLICATION: &[&str] = &["Directly", "Gracefully", "Never"];
const PURGE_MODES_CLUSTER: &[&str] = &["Directly", "Gracefully"];

/// `Placement` (policies and bindings alike, under `spec.placement`).
pub const PLACEMENT: &[Constraint] = &[
    (
        "spec.placement.clusterAffinity.labelSelector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    (
        "spec.placement.clusterAffinity.fieldSelector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    (
        "spec.placement.clusterAffinities[]",
        Required(&["affinityName"]),
    ),
    (
        "spec.placement.clusterAffinities[].affinityName",
        MinLength(1),
    ),
    (
        "spec.placement.clusterAffinities[].affinityName",
        MaxLength(32),
    ),
    (
        "spec.placement.clusterAffinities[].labelSelector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    (
        "spec.placement.clusterAffinities[].fieldSelector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    (
        "spec.placement.clusterAffinities[].overflowAffinities[]",
        Required(&["affinityName"]),
    ),
    (
        "spec.placement.clusterAffinities[].overflowAffinities[].affinityName",
        MinLength(1),
    ),
    (
        "spec.placement.clusterAffinities[].overflowAffinities[].affinityName",
        MaxLength(32),
    ),
    (
        "spec.placement.spreadConstraints[].spreadByField",
        Enum(&["cluster", "region", "zone", "provider"]),
    ),
    (
        "spec.placement.replicaScheduling.replicaSchedulingType",
        DefaultStr("Divided"),
    ),
    (
        "spec.placement.replicaScheduling.replicaSchedulingType",
        Enum(&["Duplicated", "Divided"]),
    ),
    (
        "spec.placement.replicaScheduling.replicaDivisionPreference",
        Enum(&["Aggregated", "Weighted"]),
    ),
    (
        "spec.placement.replicaScheduling.weightPreference.dynamicWeight",
        Enum(&["AvailableReplicas"]),
    ),
    (
        "spec.placement.replicaScheduling.weightPreference.staticWeightList[]",
        Required(&["targetCluster", "weight"]),
    ),
    (
        "spec.placement.replicaScheduling.weightPreference.staticWeightList[].weight",
        Minimum(1),
    ),
    (
        "spec.placement.workloadAffinity.affinity",
        Required(&["groupByLabelKey"]),
    ),
    (
        "spec.placement.workloadAffinity.antiAffinity",
        Required(&["groupByLabelKey"]),
    ),
];

/// `FailoverBehavior` and `conflictResolution` (policies and bindings alike).
pub const FAILOVER: &[Constraint] = &[
    (
        "spec.failover.application",
        Required(&["decisionConditions"]),
    ),
    (
        "spec.failover.application.decisionConditions.tolerationSeconds",
        DefaultInt(300),
    ),
    (
        "spec.failover.application.purgeMode",
        DefaultStr("Gracefully"),
    ),
    (
        "spec.failover.application.purgeMode",
        Enum(PURGE_MODES_APPLICATION),
    ),
    (
        "spec.failover.application.statePreservation",
        Required(&["rules"]),
    ),
    (
        "spec.failover.application.statePreservation.rules[]",
        Required(&["aliasLabelName", "jsonPath"]),
    ),
    ("spec.failover.cluster.purgeMode", DefaultStr("Gracefully")),
    ("spec.failover.cluster.purgeMode", Enum(PURGE_MODES_CLUSTER)),
    (
        "spec.failover.cluster.statePreservation",
        Required(&["rules"]),
    ),
    (
        "spec.failover.cluster.statePreservation.rules[]",
        Required(&["aliasLabelName", "jsonPath"]),
    ),
    ("spec.conflictResolution", DefaultStr("Abort")),
    ("spec.conflictResolution", Enum(&["Abort", "Overwrite"])),
];

/// `PropagationSpec` outside placement and failover.
pub const PROPAGATION: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["resourceSelectors"])),
    ("spec.resourceSelectors", MinItems(1)),
    (
        "spec.resourceSelectors[]",
        Required(&["apiVersion", "kind"]),
    ),
    (
        "spec.resourceSelectors[].labelSelector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    ("spec.activationPreference", Enum(&["Lazy"])),
    ("spec.priority", DefaultInt(0)),
    ("spec.preemption", DefaultStr("Never")),
    ("spec.preemption", Enum(&["Always", "Never"])),
    ("spec.schedulerName", DefaultStr("default-scheduler")),
    (
        "spec.schedulePriority",
        Required(&["priorityClassName", "priorityClassSource"]),
    ),
    (
        "spec.schedulePriority.priorityClassSource",
        Enum(&["KubePriorityClass"]),
    ),
];

/// `OverrideSpec`.
pub const OVERRIDE: &[Constraint] = &[
    ("", Required(&["spec"])),
    (
        "spec.resourceSelectors[]",
        Required(&["apiVersion", "kind"]),
    ),
    ("spec.overrideRules[]", Required(&["overriders"])),
    (
        "spec.overrideRules[].overriders.plaintext[]",
        Required(&["operator", "path"]),
    ),
    (
        "spec.overrideRules[].overriders.plaintext[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overrideRules[].overriders.imageOverrider[]",
        Required(&["component", "operator"]),
    ),
    (
        "spec.overrideRules[].overriders.imageOverrider[].component",
        Enum(&["Registry", "Repository", "Tag"]),
    ),
    (
        "spec.overrideRules[].overriders.imageOverrider[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overrideRules[].overriders.imageOverrider[].predicate",
        Required(&["path"]),
    ),
    (
        "spec.overrideRules[].overriders.commandOverrider[]",
        Required(&["containerName", "operator"]),
    ),
    (
        "spec.overrideRules[].overriders.commandOverrider[].operator",
        Enum(&["add", "remove"]),
    ),
    (
        "spec.overrideRules[].overriders.argsOverrider[]",
        Required(&["containerName", "operator"]),
    ),
    (
        "spec.overrideRules[].overriders.argsOverrider[].operator",
        Enum(&["add", "remove"]),
    ),
    (
        "spec.overrideRules[].overriders.labelsOverrider[]",
        Required(&["operator", "value"]),
    ),
    (
        "spec.overrideRules[].overriders.labelsOverrider[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overrideRules[].overriders.annotationsOverrider[]",
        Required(&["operator", "value"]),
    ),
    (
        "spec.overrideRules[].overriders.annotationsOverrider[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overrideRules[].overriders.fieldOverrider[]",
        Required(&["fieldPath"]),
    ),
    (
        "spec.overrideRules[].overriders.fieldOverrider[].json[]",
        Required(&["operator", "subPath"]),
    ),
    (
        "spec.overrideRules[].overriders.fieldOverrider[].json[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overrideRules[].overriders.fieldOverrider[].yaml[]",
        Required(&["operator", "subPath"]),
    ),
    (
        "spec.overrideRules[].overriders.fieldOverrider[].yaml[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overriders.plaintext[]",
        Required(&["operator", "path"]),
    ),
    ("spec.overriders.plaintext[].operator", Enum(SELECTOR_OPS)),
    (
        "spec.overriders.imageOverrider[]",
        Required(&["component", "operator"]),
    ),
    (
        "spec.overriders.imageOverrider[].component",
        Enum(&["Registry", "Repository", "Tag"]),
    ),
    (
        "spec.overriders.imageOverrider[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overriders.imageOverrider[].predicate",
        Required(&["path"]),
    ),
    (
        "spec.overriders.commandOverrider[]",
        Required(&["containerName", "operator"]),
    ),
    (
        "spec.overriders.commandOverrider[].operator",
        Enum(&["add", "remove"]),
    ),
    (
        "spec.overriders.argsOverrider[]",
        Required(&["containerName", "operator"]),
    ),
    (
        "spec.overriders.argsOverrider[].operator",
        Enum(&["add", "remove"]),
    ),
    (
        "spec.overriders.labelsOverrider[]",
        Required(&["operator", "value"]),
    ),
    (
        "spec.overriders.labelsOverrider[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overriders.annotationsOverrider[]",
        Required(&["operator", "value"]),
    ),
    (
        "spec.overriders.annotationsOverrider[].operator",
        Enum(SELECTOR_OPS),
    ),
    ("spec.overriders.fieldOverrider[]", Required(&["fieldPath"])),
    (
        "spec.overriders.fieldOverrider[].json[]",
        Required(&["operator", "subPath"]),
    ),
    (
        "spec.overriders.fieldOverrider[].json[].operator",
        Enum(SELECTOR_OPS),
    ),
    (
        "spec.overriders.fieldOverrider[].yaml[]",
        Required(&["operator", "subPath"]),
    ),
    (
        "spec.overriders.fieldOverrider[].yaml[].operator",
        Enum(SELECTOR_OPS),
    ),
];

/// `ResourceBindingSpec` outside placement and failover (v1alpha2).
pub const BINDING: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["resource"])),
    ("spec.resource", Required(&["apiVersion", "kind", "name"])),
    ("spec.clusters[]", Required(&["name"])),
    (
        "spec.clusters[].components[]",
        Required(&["name", "replicas"]),
    ),
    ("spec.components[]", Required(&["name", "replicas"])),
    ("spec.components[].name", MaxLength(32)),
    (
        "spec.components[].replicaRequirements.resourceRequest{}",
        Quantity,
    ),
    ("spec.replicaRequirements.resourceRequest{}", Quantity),
    (
        "spec.gracefulEvictionTasks[]",
        Required(&["fromCluster", "producer", "reason"]),
    ),
    ("spec.gracefulEvictionTasks[].message", MaxLength(1024)),
    (
        "spec.gracefulEvictionTasks[].purgeMode",
        Enum(PURGE_MODES_APPLICATION),
    ),
    ("spec.gracefulEvictionTasks[].reason", MinLength(1)),
    ("spec.gracefulEvictionTasks[].reason", MaxLength(32)),
    ("spec.requiredBy[]", Required(&["name"])),
    ("spec.requiredBy[].clusters[]", Required(&["name"])),
    ("spec.schedulePriority.priority", DefaultInt(0)),
    ("status.aggregatedStatus[]", Required(&["clusterName"])),
    (
        "status.aggregatedStatus[].health",
        Enum(&["Healthy", "Unhealthy", "Unknown"]),
    ),
];

/// `Work`.
pub const WORK: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("status.manifestStatuses[]", Required(&["identifier"])),
    (
        "status.manifestStatuses[].identifier",
        Required(&["kind", "name", "ordinal", "resource", "version"]),
    ),
    (
        "status.manifestStatuses[].health",
        Enum(&["Healthy", "Unhealthy", "Unknown"]),
    ),
];

/// `FederatedResourceQuota`.
pub const FEDERATED_RESOURCE_QUOTA: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["overall"])),
    ("spec.overall{}", Quantity),
    (
        "spec.staticAssignments[]",
        Required(&["clusterName", "hard"]),
    ),
    ("spec.staticAssignments[].hard{}", Quantity),
];

/// `ClusterTaintPolicy`.
pub const CLUSTER_TAINT_POLICY: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["taints"])),
    ("spec.taints", MinItems(1)),
    ("spec.taints[]", Required(&["effect", "key"])),
    (
        "spec.addOnConditions[]",
        Required(&["conditionType", "operator", "statusValues"]),
    ),
    (
        "spec.removeOnConditions[]",
        Required(&["conditionType", "operator", "statusValues"]),
    ),
];

/// `FederatedHPA` (its defaults are autoscaling/v2's, applied by the caller). The metric and
/// behavior parts are the autoscaling/v2 types' markers, which Karmada's CRD embeds.
pub const FEDERATED_HPA: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["maxReplicas", "scaleTargetRef"])),
    (
        "spec.behavior.scaleDown.policies[]",
        Required(&["periodSeconds", "type", "value"]),
    ),
    ("spec.behavior.scaleDown.tolerance", Quantity),
    (
        "spec.behavior.scaleUp.policies[]",
        Required(&["periodSeconds", "type", "value"]),
    ),
    ("spec.behavior.scaleUp.tolerance", Quantity),
    ("spec.metrics[]", Required(&["type"])),
    (
        "spec.metrics[].containerResource",
        Required(&["container", "name", "target"]),
    ),
    (
        "spec.metrics[].containerResource.target",
        Required(&["type"]),
    ),
    (
        "spec.metrics[].containerResource.target.averageValue",
        Quantity,
    ),
    ("spec.metrics[].containerResource.target.value", Quantity),
    ("spec.metrics[].external", Required(&["metric", "target"])),
    ("spec.metrics[].external.metric", Required(&["name"])),
    (
        "spec.metrics[].external.metric.selector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    ("spec.metrics[].external.target", Required(&["type"])),
    ("spec.metrics[].external.target.averageValue", Quantity),
    ("spec.metrics[].external.target.value", Quantity),
    (
        "spec.metrics[].object",
        Required(&["describedObject", "metric", "target"]),
    ),
    (
        "spec.metrics[].object.describedObject",
        Required(&["kind", "name"]),
    ),
    ("spec.metrics[].object.metric", Required(&["name"])),
    (
        "spec.metrics[].object.metric.selector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    ("spec.metrics[].object.target", Required(&["type"])),
    ("spec.metrics[].object.target.averageValue", Quantity),
    ("spec.metrics[].object.target.value", Quantity),
    ("spec.metrics[].pods", Required(&["metric", "target"])),
    ("spec.metrics[].pods.metric", Required(&["name"])),
    (
        "spec.metrics[].pods.metric.selector.matchExpressions[]",
        Required(&["key", "operator"]),
    ),
    ("spec.metrics[].pods.target", Required(&["type"])),
    ("spec.metrics[].pods.target.averageValue", Quantity),
    ("spec.metrics[].pods.target.value", Quantity),
    ("spec.metrics[].resource", Required(&["name", "target"])),
    ("spec.metrics[].resource.target", Required(&["type"])),
    ("spec.metrics[].resource.target.averageValue", Quantity),
    ("spec.metrics[].resource.target.value", Quantity),
    ("spec.scaleTargetRef", Required(&["kind", "name"])),
];

/// `CronFederatedHPA`.
pub const CRON_FEDERATED_HPA: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["rules", "scaleTargetRef"])),
    ("spec.scaleTargetRef", Required(&["kind", "name"])),
    ("spec.rules[]", Required(&["name", "schedule"])),
    ("spec.rules[].name", MinLength(1)),
    ("spec.rules[].name", MaxLength(32)),
    ("spec.rules[].failedHistoryLimit", DefaultInt(3)),
    ("spec.rules[].failedHistoryLimit", Minimum(0)),
    ("spec.rules[].failedHistoryLimit", Maximum(32)),
    ("spec.rules[].successfulHistoryLimit", DefaultInt(3)),
    ("spec.rules[].successfulHistoryLimit", Minimum(1)),
    ("spec.rules[].successfulHistoryLimit", Maximum(32)),
    ("spec.rules[].suspend", DefaultBool(false)),
];

/// `Cluster` (served by Karmada's aggregated API server; these are its type's markers).
pub const CLUSTER: &[Constraint] = &[
    ("spec.id", MaxLength(128_000)),
    ("spec.resourceModels[].ranges[].min", Quantity),
    ("spec.resourceModels[].ranges[].max", Quantity),
];

/// `WorkloadRebalancer`.
pub const WORKLOAD_REBALANCER: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["workloads"])),
    ("spec.workloads", MinItems(1)),
    (
        "spec.workloads[]",
        Required(&["apiVersion", "kind", "name"]),
    ),
];

/// `Remedy`.
pub const REMEDY: &[Constraint] = &[
    ("", Required(&["spec"])),
    (
        "spec.decisionMatches[].clusterConditionMatch",
        Required(&["conditionStatus", "conditionType", "operator"]),
    ),
    (
        "spec.decisionMatches[].clusterConditionMatch.operator",
        Enum(&["Equal", "NotEqual"]),
    ),
];

/// `ResourceRegistry`: none. karmada-search serves it from its own API server, which decodes
/// the Go type and enforces no schema (its `+required` markers only document the OpenAPI), so
/// `resourceSelectors` and each selector's `apiVersion` and `kind` may be absent; Karmada's own
/// tests accept an empty selector list. Its rules are in `resource_registry.rs`.
pub const RESOURCE_REGISTRY: &[Constraint] = &[];

/// `MultiClusterService`.
pub const MULTI_CLUSTER_SERVICE: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["types"])),
    ("spec.ports[]", Required(&["port"])),
    ("spec.providerClusters[]", Required(&["name"])),
    ("spec.consumerClusters[]", Required(&["name"])),
];

/// `ResourceInterpreterCustomization`.
pub const RESOURCE_INTERPRETER_CUSTOMIZATION: &[Constraint] = &[
    ("", Required(&["spec"])),
    ("spec", Required(&["customizations", "target"])),
    ("spec.target", Required(&["apiVersion", "kind"])),
    ("spec.customizations.retention", Required(&["luaScript"])),
    (
        "spec.customizations.replicaResource",
        Required(&["luaScript"]),
    ),
    (
        "spec.customizations.componentResource",
        Required(&["luaScript"]),
    ),
    (
        "spec.customizations.replicaRevision",
        Required(&["luaScript"]),
    ),
    (
        "spec.customizations.statusReflection",
        Required(&["luaScript"]),
    ),
    (
        "spec.customizations.statusAggregation",
        Required(&["luaScript"]),
    ),
    (
        "spec.customizations.healthInterpretation",
        Required(&["luaScript"]),
    ),
    (
        "spec.customizations.dependencyInterpretation",
        Required(&["luaScript"]),
    ),
];

/// `ResourceInterpreterWebhookConfiguration`.
pub const RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATION: &[Constraint] = &[
    ("", Required(&["webhooks"])),
    (
        "webhooks[]",
        Required(&["clientConfig", "interpreterContextVersions", "name"]),
    ),
    (
        "webhooks[].clientConfig.service",
        Required(&["name", "namespace"]),
    ),
    (
        "webhooks[].rules[]",
        Required(&["apiGroups", "apiVersions", "kinds", "operations"]),
    ),
];
