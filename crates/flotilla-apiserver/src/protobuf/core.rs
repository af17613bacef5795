//! Field tables for core `v1` objects other than pods: Namespace, ConfigMap, Secret, Service, ServiceAccount, ResourceQuota, LimitRange, Endpoints, ReplicationController, references.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::json::message;
use k8s_pb::api::core::v1 as pb;

mod container;
mod pod;
mod volume;

message!(pb::AttachedVolume {
    req name "name",
    req device_path "devicePath",
});

message!(pb::ClientIpConfig {
    ptr timeout_seconds "timeoutSeconds",
});

message!(pb::ConfigMap {
    opt metadata "metadata",
    ptr immutable "immutable",
    opt data "data",
    opt binary_data "binaryData",
});

message!(pb::ConfigMapNodeConfigSource {
    req namespace "namespace",
    req name "name",
    opt uid "uid",
    opt resource_version "resourceVersion",
    req kubelet_config_key "kubeletConfigKey",
});

message!(pb::DaemonEndpoint {
    req port "Port",
});

message!(pb::EndpointAddress {
    req ip "ip",
    opt hostname "hostname",
    ptr node_name "nodeName",
    ptr target_ref "targetRef",
});

message!(pb::EndpointPort {
    opt name "name",
    req port "port",
    opt protocol "protocol",
    ptr app_protocol "appProtocol",
});

message!(pb::EndpointSubset {
    opt addresses "addresses",
    opt not_ready_addresses "notReadyAddresses",
    opt ports "ports",
});

message!(pb::Endpoints {
    opt metadata "metadata",
    opt subsets "subsets",
});

message!(pb::LimitRange {
    opt metadata "metadata",
    opt spec "spec",
});

message!(pb::LimitRangeItem {
    req r#type "type",
    opt max "max",
    opt min "min",
    opt default "default",
    opt default_request "defaultRequest",
    opt max_limit_request_ratio "maxLimitRequestRatio",
});

message!(pb::LimitRangeSpec {
    req limits "limits",
});

message!(pb::LoadBalancerIngress {
    opt ip "ip",
    opt hostname "hostname",
    ptr ip_mode "ipMode",
    opt ports "ports",
});

message!(pb::LoadBalancerStatus {
    opt ingress "ingress",
});

message!(pb::LocalObjectReference {
    opt name "name",
});

message!(pb::ModifyVolumeStatus {
    opt target_volume_attributes_class_name "targetVolumeAttributesClassName",
    req status "status",
});

message!(pb::Namespace {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::NamespaceCondition {
    req r#type "type",
    req status "status",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::NamespaceSpec {
    opt finalizers "finalizers",
});

message!(pb::NamespaceStatus {
    opt phase "phase",
    opt conditions "conditions",
});

message!(pb::Node {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::NodeAddress {
    req r#type "type",
    req address "address",
});

message!(pb::NodeCondition {
    req r#type "type",
    req status "status",
    opt last_heartbeat_time "lastHeartbeatTime",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::NodeConfigSource {
    ptr config_map "configMap",
});

message!(pb::NodeConfigStatus {
    ptr assigned "assigned",
    ptr active "active",
    ptr last_known_good "lastKnownGood",
    opt error "error",
});

message!(pb::NodeDaemonEndpoints {
    opt kubelet_endpoint "kubeletEndpoint",
});

message!(pb::NodeFeatures {
    ptr supplemental_groups_policy "supplementalGroupsPolicy",
});

message!(pb::NodeRuntimeHandler {
    req name "name",
    ptr features "features",
});

message!(pb::NodeRuntimeHandlerFeatures {
    ptr recursive_read_only_mounts "recursiveReadOnlyMounts",
    ptr user_namespaces "userNamespaces",
});

message!(pb::NodeSpec {
    opt pod_cidr "podCIDR",
    opt pod_cid_rs "podCIDRs",
    opt provider_id "providerID",
    opt unschedulable "unschedulable",
    opt taints "taints",
    ptr config_source "configSource",
    opt external_id "externalID",
});

message!(pb::NodeStatus {
    opt capacity "capacity",
    opt allocatable "allocatable",
    opt phase "phase",
    opt conditions "conditions",
    opt addresses "addresses",
    opt daemon_endpoints "daemonEndpoints",
    opt node_info "nodeInfo",
    opt images "images",
    opt volumes_in_use "volumesInUse",
    opt volumes_attached "volumesAttached",
    ptr config "config",
    opt runtime_handlers "runtimeHandlers",
    ptr features "features",
    opt declared_features "declaredFeatures",
});

message!(pb::NodeSwapStatus {
    ptr capacity "capacity",
});

message!(pb::NodeSystemInfo {
    req machine_id "machineID",
    req system_uuid "systemUUID",
    req boot_id "bootID",
    req kernel_version "kernelVersion",
    req os_image "osImage",
    req container_runtime_version "containerRuntimeVersion",
    req kubelet_version "kubeletVersion",
    req kube_proxy_version "kubeProxyVersion",
    req operating_system "operatingSystem",
    req architecture "architecture",
    ptr swap "swap",
});

message!(pb::ObjectReference {
    opt kind "kind",
    opt namespace "namespace",
    opt name "name",
    opt uid "uid",
    opt api_version "apiVersion",
    opt resource_version "resourceVersion",
    opt field_path "fieldPath",
});

message!(pb::PersistentVolumeClaim {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::PersistentVolumeClaimCondition {
    req r#type "type",
    req status "status",
    opt last_probe_time "lastProbeTime",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::PersistentVolumeClaimStatus {
    opt phase "phase",
    opt access_modes "accessModes",
    opt capacity "capacity",
    opt conditions "conditions",
    opt allocated_resources "allocatedResources",
    opt allocated_resource_statuses "allocatedResourceStatuses",
    ptr current_volume_attributes_class_name "currentVolumeAttributesClassName",
    ptr modify_volume_status "modifyVolumeStatus",
});

message!(pb::PortStatus {
    req port "port",
    req protocol "protocol",
    ptr error "error",
});

message!(pb::ReplicationController {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::ReplicationControllerCondition {
    req r#type "type",
    req status "status",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::ReplicationControllerSpec {
    ptr replicas "replicas",
    opt min_ready_seconds "minReadySeconds",
    opt selector "selector",
    ptr template "template",
});

message!(pb::ReplicationControllerStatus {
    req replicas "replicas",
    opt fully_labeled_replicas "fullyLabeledReplicas",
    opt ready_replicas "readyReplicas",
    opt available_replicas "availableReplicas",
    opt observed_generation "observedGeneration",
    opt conditions "conditions",
});

message!(pb::ResourceQuota {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::ResourceQuotaSpec {
    opt hard "hard",
    opt scopes "scopes",
    ptr scope_selector "scopeSelector",
});

message!(pb::ResourceQuotaStatus {
    opt hard "hard",
    opt used "used",
});

message!(pb::ScopeSelector {
    opt match_expressions "matchExpressions",
});

message!(pb::ScopedResourceSelectorRequirement {
    req scope_name "scopeName",
    req operator "operator",
    opt values "values",
});

message!(pb::Secret {
    opt metadata "metadata",
    ptr immutable "immutable",
    opt data "data",
    opt string_data "stringData",
    opt r#type "type",
});

message!(pb::Service {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::ServiceAccount {
    opt metadata "metadata",
    opt secrets "secrets",
    opt image_pull_secrets "imagePullSecrets",
    ptr automount_service_account_token "automountServiceAccountToken",
});

message!(pb::ServicePort {
    opt name "name",
    opt protocol "protocol",
    ptr app_protocol "appProtocol",
    req port "port",
    opt target_port "targetPort",
    opt node_port "nodePort",
});

message!(pb::ServiceSpec {
    opt ports "ports",
    opt selector "selector",
    opt cluster_ip "clusterIP",
    opt cluster_ips "clusterIPs",
    opt r#type "type",
    opt external_ips "externalIPs",
    opt session_affinity "sessionAffinity",
    opt load_balancer_ip "loadBalancerIP",
    opt load_balancer_source_ranges "loadBalancerSourceRanges",
    opt external_name "externalName",
    opt external_traffic_policy "externalTrafficPolicy",
    opt health_check_node_port "healthCheckNodePort",
    opt publish_not_ready_addresses "publishNotReadyAddresses",
    ptr session_affinity_config "sessionAffinityConfig",
    opt ip_families "ipFamilies",
    ptr ip_family_policy "ipFamilyPolicy",
    ptr allocate_load_balancer_node_ports "allocateLoadBalancerNodePorts",
    ptr load_balancer_class "loadBalancerClass",
    ptr internal_traffic_policy "internalTrafficPolicy",
    ptr traffic_distribution "trafficDistribution",
});

message!(pb::ServiceStatus {
    opt load_balancer "loadBalancer",
    opt conditions "conditions",
});

message!(pb::SessionAffinityConfig {
    ptr client_ip "clientIP",
});

message!(pb::Taint {
    req key "key",
    opt value "value",
    req effect "effect",
    ptr time_added "timeAdded",
});
