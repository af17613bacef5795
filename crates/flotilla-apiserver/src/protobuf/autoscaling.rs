//! Field tables for `autoscaling/v1`: Scale.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::autoscaling::v1 as pb;

message!(pb::Scale {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::ScaleSpec {
    opt replicas "replicas",
});

message!(pb::ScaleStatus {
    req replicas "replicas",
    opt selector "selector",
});
