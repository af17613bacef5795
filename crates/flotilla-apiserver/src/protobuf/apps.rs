//! Field tables for `apps/v1`: Deployment, StatefulSet, DaemonSet, ReplicaSet.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::apps::v1 as pb;

message!(pb::DaemonSet {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::DaemonSetCondition {
    req r#type "type",
    req status "status",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::DaemonSetSpec {
    ptr selector "selector",
    req template "template",
    opt update_strategy "updateStrategy",
    opt min_ready_seconds "minReadySeconds",
    ptr revision_history_limit "revisionHistoryLimit",
});

message!(pb::DaemonSetStatus {
    req current_number_scheduled "currentNumberScheduled",
    req number_misscheduled "numberMisscheduled",
    req desired_number_scheduled "desiredNumberScheduled",
    req number_ready "numberReady",
    opt observed_generation "observedGeneration",
    opt updated_number_scheduled "updatedNumberScheduled",
    opt number_available "numberAvailable",
    opt number_unavailable "numberUnavailable",
    ptr collision_count "collisionCount",
    opt conditions "conditions",
});

message!(pb::DaemonSetUpdateStrategy {
    opt r#type "type",
    ptr rolling_update "rollingUpdate",
});

message!(pb::Deployment {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::DeploymentCondition {
    req r#type "type",
    req status "status",
    opt last_update_time "lastUpdateTime",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::DeploymentSpec {
    ptr replicas "replicas",
    ptr selector "selector",
    req template "template",
    opt strategy "strategy",
    opt min_ready_seconds "minReadySeconds",
    ptr revision_history_limit "revisionHistoryLimit",
    opt paused "paused",
    ptr progress_deadline_seconds "progressDeadlineSeconds",
});

message!(pb::DeploymentStatus {
    opt observed_generation "observedGeneration",
    opt replicas "replicas",
    opt updated_replicas "updatedReplicas",
    opt ready_replicas "readyReplicas",
    opt available_replicas "availableReplicas",
    opt unavailable_replicas "unavailableReplicas",
    ptr terminating_replicas "terminatingReplicas",
    opt conditions "conditions",
    ptr collision_count "collisionCount",
});

message!(pb::DeploymentStrategy {
    opt r#type "type",
    ptr rolling_update "rollingUpdate",
});

message!(pb::ReplicaSet {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::ReplicaSetCondition {
    req r#type "type",
    req status "status",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::ReplicaSetSpec {
    ptr replicas "replicas",
    opt min_ready_seconds "minReadySeconds",
    ptr selector "selector",
    opt template "template",
});

message!(pb::ReplicaSetStatus {
    req replicas "replicas",
    opt fully_labeled_replicas "fullyLabeledReplicas",
    opt ready_replicas "readyReplicas",
    opt available_replicas "availableReplicas",
    ptr terminating_replicas "terminatingReplicas",
    opt observed_generation "observedGeneration",
    opt conditions "conditions",
});

message!(pb::RollingUpdateDaemonSet {
    ptr max_unavailable "maxUnavailable",
    ptr max_surge "maxSurge",
});

message!(pb::RollingUpdateDeployment {
    ptr max_unavailable "maxUnavailable",
    ptr max_surge "maxSurge",
});

message!(pb::RollingUpdateStatefulSetStrategy {
    ptr partition "partition",
    ptr max_unavailable "maxUnavailable",
});

message!(pb::StatefulSet {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::StatefulSetCondition {
    req r#type "type",
    req status "status",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::StatefulSetOrdinals {
    req start "start",
});

message!(pb::StatefulSetPersistentVolumeClaimRetentionPolicy {
    opt when_deleted "whenDeleted",
    opt when_scaled "whenScaled",
});

message!(pb::StatefulSetSpec {
    ptr replicas "replicas",
    ptr selector "selector",
    req template "template",
    opt volume_claim_templates "volumeClaimTemplates",
    req service_name "serviceName",
    opt pod_management_policy "podManagementPolicy",
    opt update_strategy "updateStrategy",
    ptr revision_history_limit "revisionHistoryLimit",
    opt min_ready_seconds "minReadySeconds",
    ptr persistent_volume_claim_retention_policy "persistentVolumeClaimRetentionPolicy",
    ptr ordinals "ordinals",
});

message!(pb::StatefulSetStatus {
    opt observed_generation "observedGeneration",
    req replicas "replicas",
    opt ready_replicas "readyReplicas",
    opt current_replicas "currentReplicas",
    opt updated_replicas "updatedReplicas",
    opt current_revision "currentRevision",
    opt update_revision "updateRevision",
    ptr collision_count "collisionCount",
    opt conditions "conditions",
    req available_replicas "availableReplicas",
});

message!(pb::StatefulSetUpdateStrategy {
    opt r#type "type",
    ptr rolling_update "rollingUpdate",
});
