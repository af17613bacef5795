//! Field tables for `authentication.k8s.io/v1`: TokenRequest, TokenReview, SelfSubjectReview.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::authentication::v1 as pb;

message!(pb::BoundObjectReference {
    opt kind "kind",
    opt api_version "apiVersion",
    opt name "name",
    opt u_id "uid",
});

message!(pb::SelfSubjectReview {
    opt metadata "metadata",
    opt status "status",
});

message!(pb::SelfSubjectReviewStatus {
    opt user_info "userInfo",
});

message!(pb::TokenRequest {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::TokenRequestSpec {
    req audiences "audiences",
    ptr expiration_seconds "expirationSeconds",
    ptr bound_object_ref "boundObjectRef",
});

message!(pb::TokenRequestStatus {
    req token "token",
    req expiration_timestamp "expirationTimestamp",
});

message!(pb::TokenReview {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::TokenReviewSpec {
    opt token "token",
    opt audiences "audiences",
});

message!(pb::TokenReviewStatus {
    opt authenticated "authenticated",
    opt user "user",
    opt audiences "audiences",
    opt error "error",
});

message!(pb::UserInfo {
    opt username "username",
    opt uid "uid",
    opt groups "groups",
    opt extra "extra",
});
