//! Field tables for core `v1` Pod, PodSpec, PodTemplateSpec and scheduling constraints (affinity, tolerations, topology spread).
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::super::json::message;
use k8s_pb::api::core::v1 as pb;

message!(pb::Affinity {
    ptr node_affinity "nodeAffinity",
    ptr pod_affinity "podAffinity",
    ptr pod_anti_affinity "podAntiAffinity",
});

message!(pb::HostAlias {
    req ip "ip",
    opt hostnames "hostnames",
});

message!(pb::HostIp {
    req ip "ip",
});

message!(pb::NodeAffinity {
    ptr required_during_scheduling_ignored_during_execution "requiredDuringSchedulingIgnoredDuringExecution",
    opt preferred_during_scheduling_ignored_during_execution "preferredDuringSchedulingIgnoredDuringExecution",
});

message!(pb::NodeSelector {
    req node_selector_terms "nodeSelectorTerms",
});

message!(pb::NodeSelectorRequirement {
    req key "key",
    req operator "operator",
    opt values "values",
});

message!(pb::NodeSelectorTerm {
    opt match_expressions "matchExpressions",
    opt match_fields "matchFields",
});

message!(pb::Pod {
    opt metadata "metadata",
    opt spec "spec",
    opt status "status",
});

message!(pb::PodAffinity {
    opt required_during_scheduling_ignored_during_execution "requiredDuringSchedulingIgnoredDuringExecution",
    opt preferred_during_scheduling_ignored_during_execution "preferredDuringSchedulingIgnoredDuringExecution",
});

message!(pb::PodAffinityTerm {
    ptr label_selector "labelSelector",
    opt namespaces "namespaces",
    req topology_key "topologyKey",
    ptr namespace_selector "namespaceSelector",
    opt match_label_keys "matchLabelKeys",
    opt mismatch_label_keys "mismatchLabelKeys",
});

message!(pb::PodAntiAffinity {
    opt required_during_scheduling_ignored_during_execution "requiredDuringSchedulingIgnoredDuringExecution",
    opt preferred_during_scheduling_ignored_during_execution "preferredDuringSchedulingIgnoredDuringExecution",
});

message!(pb::PodCondition {
    req r#type "type",
    opt observed_generation "observedGeneration",
    req status "status",
    opt last_probe_time "lastProbeTime",
    opt last_transition_time "lastTransitionTime",
    opt reason "reason",
    opt message "message",
});

message!(pb::PodDnsConfig {
    opt nameservers "nameservers",
    opt searches "searches",
    opt options "options",
});

message!(pb::PodDnsConfigOption {
    opt name "name",
    ptr value "value",
});

message!(pb::PodExtendedResourceClaimStatus {
    req request_mappings "requestMappings",
    req resource_claim_name "resourceClaimName",
});

message!(pb::PodIp {
    req ip "ip",
});

message!(pb::PodOs {
    req name "name",
});

message!(pb::PodReadinessGate {
    req condition_type "conditionType",
});

message!(pb::PodResourceClaim {
    req name "name",
    ptr resource_claim_name "resourceClaimName",
    ptr resource_claim_template_name "resourceClaimTemplateName",
});

message!(pb::PodResourceClaimStatus {
    req name "name",
    ptr resource_claim_name "resourceClaimName",
});

message!(pb::PodSchedulingGate {
    req name "name",
});

message!(pb::PodSecurityContext {
    ptr se_linux_options "seLinuxOptions",
    ptr windows_options "windowsOptions",
    ptr run_as_user "runAsUser",
    ptr run_as_group "runAsGroup",
    ptr run_as_non_root "runAsNonRoot",
    opt supplemental_groups "supplementalGroups",
    ptr supplemental_groups_policy "supplementalGroupsPolicy",
    ptr fs_group "fsGroup",
    opt sysctls "sysctls",
    ptr fs_group_change_policy "fsGroupChangePolicy",
    ptr seccomp_profile "seccompProfile",
    ptr app_armor_profile "appArmorProfile",
    ptr se_linux_change_policy "seLinuxChangePolicy",
});

message!(pb::PodSpec {
    opt volumes "volumes",
    opt init_containers "initContainers",
    req containers "containers",
    opt ephemeral_containers "ephemeralContainers",
    opt restart_policy "restartPolicy",
    ptr termination_grace_period_seconds "terminationGracePeriodSeconds",
    ptr active_deadline_seconds "activeDeadlineSeconds",
    opt dns_policy "dnsPolicy",
    opt node_selector "nodeSelector",
    opt service_account_name "serviceAccountName",
    opt service_account "serviceAccount",
    ptr automount_service_account_token "automountServiceAccountToken",
    opt node_name "nodeName",
    opt host_network "hostNetwork",
    opt host_pid "hostPID",
    opt host_ipc "hostIPC",
    ptr share_process_namespace "shareProcessNamespace",
    ptr security_context "securityContext",
    opt image_pull_secrets "imagePullSecrets",
    opt hostname "hostname",
    opt subdomain "subdomain",
    ptr affinity "affinity",
    opt scheduler_name "schedulerName",
    opt tolerations "tolerations",
    opt host_aliases "hostAliases",
    opt priority_class_name "priorityClassName",
    ptr priority "priority",
    ptr dns_config "dnsConfig",
    opt readiness_gates "readinessGates",
    ptr runtime_class_name "runtimeClassName",
    ptr enable_service_links "enableServiceLinks",
    ptr preemption_policy "preemptionPolicy",
    opt overhead "overhead",
    opt topology_spread_constraints "topologySpreadConstraints",
    ptr set_hostname_as_fqdn "setHostnameAsFQDN",
    ptr os "os",
    ptr host_users "hostUsers",
    opt scheduling_gates "schedulingGates",
    opt resource_claims "resourceClaims",
    ptr resources "resources",
    ptr hostname_override "hostnameOverride",
    ptr workload_ref "workloadRef",
});

message!(pb::PodStatus {
    opt observed_generation "observedGeneration",
    opt phase "phase",
    opt conditions "conditions",
    opt message "message",
    opt reason "reason",
    opt nominated_node_name "nominatedNodeName",
    opt host_ip "hostIP",
    opt host_ips "hostIPs",
    opt pod_ip "podIP",
    opt pod_ips "podIPs",
    ptr start_time "startTime",
    opt init_container_statuses "initContainerStatuses",
    opt container_statuses "containerStatuses",
    opt qos_class "qosClass",
    opt ephemeral_container_statuses "ephemeralContainerStatuses",
    opt resize "resize",
    opt resource_claim_statuses "resourceClaimStatuses",
    ptr extended_resource_claim_status "extendedResourceClaimStatus",
    opt allocated_resources "allocatedResources",
    ptr resources "resources",
});

message!(pb::PodTemplate {
    opt metadata "metadata",
    opt template "template",
});

message!(pb::PodTemplateSpec {
    opt metadata "metadata",
    opt spec "spec",
});

message!(pb::PreferredSchedulingTerm {
    req weight "weight",
    req preference "preference",
});

message!(pb::Sysctl {
    req name "name",
    req value "value",
});

message!(pb::Toleration {
    opt key "key",
    opt operator "operator",
    opt value "value",
    opt effect "effect",
    ptr toleration_seconds "tolerationSeconds",
});

message!(pb::TopologySpreadConstraint {
    req max_skew "maxSkew",
    req topology_key "topologyKey",
    req when_unsatisfiable "whenUnsatisfiable",
    ptr label_selector "labelSelector",
    ptr min_domains "minDomains",
    ptr node_affinity_policy "nodeAffinityPolicy",
    ptr node_taints_policy "nodeTaintsPolicy",
    opt match_label_keys "matchLabelKeys",
});

message!(pb::WeightedPodAffinityTerm {
    req weight "weight",
    req pod_affinity_term "podAffinityTerm",
});

message!(pb::WorkloadReference {
    req name "name",
    req pod_group "podGroup",
    opt pod_group_replica_key "podGroupReplicaKey",
});
