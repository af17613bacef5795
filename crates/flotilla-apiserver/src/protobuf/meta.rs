//! Field tables for `meta.k8s.io/v1`: ObjectMeta, LabelSelector, DeleteOptions and friends.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb;

message!(pb::Condition {
    req r#type "type",
    req status "status",
    opt observed_generation "observedGeneration",
    req last_transition_time "lastTransitionTime",
    req reason "reason",
    req message "message",
});

message!(pb::DeleteOptions {
    ptr grace_period_seconds "gracePeriodSeconds",
    ptr preconditions "preconditions",
    ptr orphan_dependents "orphanDependents",
    ptr propagation_policy "propagationPolicy",
    opt dry_run "dryRun",
    ptr ignore_store_read_error_with_cluster_breaking_potential "ignoreStoreReadErrorWithClusterBreakingPotential",
});

message!(pb::FieldSelectorRequirement {
    req key "key",
    req operator "operator",
    opt values "values",
});

message!(pb::LabelSelector {
    opt match_labels "matchLabels",
    opt match_expressions "matchExpressions",
});

message!(pb::LabelSelectorRequirement {
    req key "key",
    req operator "operator",
    opt values "values",
});

message!(pb::ManagedFieldsEntry {
    opt manager "manager",
    opt operation "operation",
    opt api_version "apiVersion",
    ptr time "time",
    opt fields_type "fieldsType",
    ptr fields_v1 "fieldsV1",
    opt subresource "subresource",
});

message!(pb::ObjectMeta {
    opt name "name",
    opt generate_name "generateName",
    opt namespace "namespace",
    opt self_link "selfLink",
    opt uid "uid",
    opt resource_version "resourceVersion",
    opt generation "generation",
    opt creation_timestamp "creationTimestamp",
    ptr deletion_timestamp "deletionTimestamp",
    ptr deletion_grace_period_seconds "deletionGracePeriodSeconds",
    opt labels "labels",
    opt annotations "annotations",
    opt owner_references "ownerReferences",
    opt finalizers "finalizers",
    opt managed_fields "managedFields",
});

message!(pb::OwnerReference {
    req api_version "apiVersion",
    req kind "kind",
    req name "name",
    req uid "uid",
    ptr controller "controller",
    ptr block_owner_deletion "blockOwnerDeletion",
});

message!(pb::Preconditions {
    ptr uid "uid",
    ptr resource_version "resourceVersion",
});
