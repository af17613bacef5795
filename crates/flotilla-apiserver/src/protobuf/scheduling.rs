//! Field tables for `scheduling.k8s.io/v1`: PriorityClass.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::scheduling::v1 as pb;

message!(pb::PriorityClass {
    opt metadata "metadata",
    req value "value",
    opt global_default "globalDefault",
    opt description "description",
    ptr preemption_policy "preemptionPolicy",
});
