//! Field tables for `certificates.k8s.io/v1`: CertificateSigningRequest (what `kubectl
//! certificate approve|deny` sends to the approval subresource).
//!
//! Written from the `json` and `protobuf` struct tags of k8s.io/api v0.35.7 (the release
//! k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::certificates::v1 as pb;

message!(pb::CertificateSigningRequest {
    opt metadata "metadata",
    req spec "spec",
    opt status "status",
});

message!(pb::CertificateSigningRequestSpec {
    req request "request",
    req signer_name "signerName",
    ptr expiration_seconds "expirationSeconds",
    opt usages "usages",
    opt username "username",
    opt uid "uid",
    opt groups "groups",
    opt extra "extra",
});

message!(pb::CertificateSigningRequestStatus {
    opt conditions "conditions",
    opt certificate "certificate",
});

message!(pb::CertificateSigningRequestCondition {
    req r#type "type",
    req status "status",
    opt reason "reason",
    opt message "message",
    opt last_update_time "lastUpdateTime",
    opt last_transition_time "lastTransitionTime",
});
