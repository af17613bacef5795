//! Field tables for `networking.k8s.io/v1`: Ingress, IngressClass, NetworkPolicy.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::networking::v1 as pb;

message!(pb::HttpIngressPath {
    opt path "path",
    ptr path_type "pathType",
    req backend "backend",
});

message!(pb::HttpIngressRuleValue {
    req paths "paths",
});

message!(pb::Ingress {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::IngressBackend {
    ptr service "service",
    ptr resource "resource",
});

message!(pb::IngressClass {
    opt metadata "metadata",
    opt spec "spec",
});

message!(pb::IngressClassParametersReference {
    ptr a_pi_group "apiGroup",
    req kind "kind",
    req name "name",
    ptr scope "scope",
    ptr namespace "namespace",
});

message!(pb::IngressClassSpec {
    opt controller "controller",
    ptr parameters "parameters",
});

message!(pb::IngressLoadBalancerIngress {
    opt ip "ip",
    opt hostname "hostname",
    opt ports "ports",
});

message!(pb::IngressLoadBalancerStatus {
    opt ingress "ingress",
});

message!(pb::IngressPortStatus {
    req port "port",
    req protocol "protocol",
    ptr error "error",
});

message!(pb::IngressRule {
    opt host "host",
    inline ingress_rule_value,
});

message!(pb::IngressRuleValue {
    ptr http "http",
});

message!(pb::IngressServiceBackend {
    req name "name",
    opt port "port",
});

message!(pb::IngressSpec {
    ptr ingress_class_name "ingressClassName",
    ptr default_backend "defaultBackend",
    opt tls "tls",
    opt rules "rules",
});

message!(pb::IngressStatus {
    opt load_balancer "loadBalancer",
});

message!(pb::IngressTls {
    opt hosts "hosts",
    opt secret_name "secretName",
});

message!(pb::IpBlock {
    req cidr "cidr",
    opt except "except",
});

message!(pb::NetworkPolicy {
    opt metadata "metadata",
    opt spec "spec",
});

message!(pb::NetworkPolicyEgressRule {
    opt ports "ports",
    opt to "to",
});

message!(pb::NetworkPolicyIngressRule {
    opt ports "ports",
    opt from "from",
});

message!(pb::NetworkPolicyPeer {
    ptr pod_selector "podSelector",
    ptr namespace_selector "namespaceSelector",
    ptr ip_block "ipBlock",
});

message!(pb::NetworkPolicyPort {
    ptr protocol "protocol",
    ptr port "port",
    ptr end_port "endPort",
});

message!(pb::NetworkPolicySpec {
    req pod_selector "podSelector",
    opt ingress "ingress",
    opt egress "egress",
    opt policy_types "policyTypes",
});

message!(pb::ServiceBackendPort {
    opt name "name",
    opt number "number",
});
