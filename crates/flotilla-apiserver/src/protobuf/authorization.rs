//! Field tables for `authorization.k8s.io/v1`: the access reviews.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::authorization::v1 as pb;

message!(pb::FieldSelectorAttributes {
    opt raw_selector "rawSelector",
    opt requirements "requirements",
});

message!(pb::LabelSelectorAttributes {
    opt raw_selector "rawSelector",
    opt requirements "requirements",
});

message!(pb::LocalSubjectAccessReview {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::NonResourceAttributes {
    opt path "path",
    opt verb "verb",
});

message!(pb::NonResourceRule {
    req verbs "verbs",
    opt non_resource_ur_ls "nonResourceURLs",
});

message!(pb::ResourceAttributes {
    opt namespace "namespace",
    opt verb "verb",
    opt group "group",
    opt version "version",
    opt resource "resource",
    opt subresource "subresource",
    opt name "name",
    ptr field_selector "fieldSelector",
    ptr label_selector "labelSelector",
});

message!(pb::ResourceRule {
    req verbs "verbs",
    opt api_groups "apiGroups",
    opt resources "resources",
    opt resource_names "resourceNames",
});

message!(pb::SelfSubjectAccessReview {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::SelfSubjectAccessReviewSpec {
    ptr resource_attributes "resourceAttributes",
    ptr non_resource_attributes "nonResourceAttributes",
});

message!(pb::SelfSubjectRulesReview {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::SelfSubjectRulesReviewSpec {
    opt namespace "namespace",
});

message!(pb::SubjectAccessReview {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::SubjectAccessReviewSpec {
    ptr resource_attributes "resourceAttributes",
    ptr non_resource_attributes "nonResourceAttributes",
    opt user "user",
    opt groups "groups",
    opt extra "extra",
    opt uid "uid",
});

message!(pb::SubjectAccessReviewStatus {
    req allowed "allowed",
    opt denied "denied",
    opt reason "reason",
    opt evaluation_error "evaluationError",
});

message!(pb::SubjectRulesReviewStatus {
    req resource_rules "resourceRules",
    req non_resource_rules "nonResourceRules",
    req incomplete "incomplete",
    opt evaluation_error "evaluationError",
});
