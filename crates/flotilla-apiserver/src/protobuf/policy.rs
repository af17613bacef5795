//! Field tables for `policy/v1`: PodDisruptionBudget, Eviction.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::policy::v1 as pb;

message!(pb::Eviction {
    opt metadata "metadata",
    ptr delete_options "deleteOptions",
});

message!(pb::PodDisruptionBudget {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::PodDisruptionBudgetSpec {
    ptr min_available "minAvailable",
    ptr selector "selector",
    ptr max_unavailable "maxUnavailable",
    ptr unhealthy_pod_eviction_policy "unhealthyPodEvictionPolicy",
});

message!(pb::PodDisruptionBudgetStatus {
    opt observed_generation "observedGeneration",
    opt disrupted_pods "disruptedPods",
    req disruptions_allowed "disruptionsAllowed",
    req current_healthy "currentHealthy",
    req desired_healthy "desiredHealthy",
    req expected_pods "expectedPods",
    opt conditions "conditions",
});
