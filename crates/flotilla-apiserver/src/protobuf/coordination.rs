//! Field tables for `coordination.k8s.io/v1`: Lease.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::coordination::v1 as pb;

message!(pb::Lease {
    opt metadata "metadata",
    opt spec "spec",
});

message!(pb::LeaseSpec {
    ptr holder_identity "holderIdentity",
    ptr lease_duration_seconds "leaseDurationSeconds",
    ptr acquire_time "acquireTime",
    ptr renew_time "renewTime",
    ptr lease_transitions "leaseTransitions",
    ptr strategy "strategy",
    ptr preferred_holder "preferredHolder",
});
