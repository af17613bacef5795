//! Field tables for `rbac.authorization.k8s.io/v1`: Role, ClusterRole and their bindings.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::rbac::v1 as pb;

message!(pb::AggregationRule {
    opt cluster_role_selectors "clusterRoleSelectors",
});

message!(pb::ClusterRole {
    opt metadata "metadata",
    req rules "rules",
    ptr aggregation_rule "aggregationRule",
});

message!(pb::ClusterRoleBinding {
    opt metadata "metadata",
    opt subjects "subjects",
    req role_ref "roleRef",
});

message!(pb::PolicyRule {
    req verbs "verbs",
    opt api_groups "apiGroups",
    opt resources "resources",
    opt resource_names "resourceNames",
    opt non_resource_ur_ls "nonResourceURLs",
});

message!(pb::Role {
    opt metadata "metadata",
    req rules "rules",
});

message!(pb::RoleBinding {
    opt metadata "metadata",
    opt subjects "subjects",
    req role_ref "roleRef",
});

message!(pb::RoleRef {
    req api_group "apiGroup",
    req kind "kind",
    req name "name",
});

message!(pb::Subject {
    req kind "kind",
    opt api_group "apiGroup",
    req name "name",
    opt namespace "namespace",
});
