//! Field tables for core `v1` Container and what hangs off it: env, ports, resources, probes, lifecycle, security context.
//!
//! Generated from the `json` and `protobuf` struct tags of k8s.io/api and k8s.io/apimachinery
//! v0.35.7 (the release k8s-pb 0.9 was built from), matched to k8s-pb fields by field number.

use super::super::json::message;
use k8s_pb::api::core::v1 as pb;

message!(pb::AppArmorProfile {
    req r#type "type",
    ptr localhost_profile "localhostProfile",
});

message!(pb::Capabilities {
    opt add "add",
    opt drop "drop",
});

message!(pb::ConfigMapEnvSource {
    inline local_object_reference,
    ptr optional "optional",
});

message!(pb::ConfigMapKeySelector {
    inline local_object_reference,
    req key "key",
    ptr optional "optional",
});

message!(pb::Container {
    req name "name",
    opt image "image",
    opt command "command",
    opt args "args",
    opt working_dir "workingDir",
    opt ports "ports",
    opt env_from "envFrom",
    opt env "env",
    opt resources "resources",
    opt resize_policy "resizePolicy",
    ptr restart_policy "restartPolicy",
    opt restart_policy_rules "restartPolicyRules",
    opt volume_mounts "volumeMounts",
    opt volume_devices "volumeDevices",
    ptr liveness_probe "livenessProbe",
    ptr readiness_probe "readinessProbe",
    ptr startup_probe "startupProbe",
    ptr lifecycle "lifecycle",
    opt termination_message_path "terminationMessagePath",
    opt termination_message_policy "terminationMessagePolicy",
    opt image_pull_policy "imagePullPolicy",
    ptr security_context "securityContext",
    opt stdin "stdin",
    opt stdin_once "stdinOnce",
    opt tty "tty",
});

message!(pb::ContainerExtendedResourceRequest {
    req container_name "containerName",
    req resource_name "resourceName",
    req request_name "requestName",
});

message!(pb::ContainerImage {
    req names "names",
    opt size_bytes "sizeBytes",
});

message!(pb::ContainerPort {
    opt name "name",
    opt host_port "hostPort",
    req container_port "containerPort",
    opt protocol "protocol",
    opt host_ip "hostIP",
});

message!(pb::ContainerResizePolicy {
    req resource_name "resourceName",
    req restart_policy "restartPolicy",
});

message!(pb::ContainerRestartRule {
    opt action "action",
    ptr exit_codes "exitCodes",
});

message!(pb::ContainerRestartRuleOnExitCodes {
    opt operator "operator",
    opt values "values",
});

message!(pb::ContainerState {
    ptr waiting "waiting",
    ptr running "running",
    ptr terminated "terminated",
});

message!(pb::ContainerStateRunning {
    opt started_at "startedAt",
});

message!(pb::ContainerStateTerminated {
    req exit_code "exitCode",
    opt signal "signal",
    opt reason "reason",
    opt message "message",
    opt started_at "startedAt",
    opt finished_at "finishedAt",
    opt container_id "containerID",
});

message!(pb::ContainerStateWaiting {
    opt reason "reason",
    opt message "message",
});

message!(pb::ContainerStatus {
    req name "name",
    opt state "state",
    opt last_state "lastState",
    req ready "ready",
    req restart_count "restartCount",
    req image "image",
    req image_id "imageID",
    opt container_id "containerID",
    ptr started "started",
    opt allocated_resources "allocatedResources",
    ptr resources "resources",
    opt volume_mounts "volumeMounts",
    ptr user "user",
    opt allocated_resources_status "allocatedResourcesStatus",
    ptr stop_signal "stopSignal",
});

message!(pb::ContainerUser {
    ptr linux "linux",
});

message!(pb::EnvFromSource {
    opt prefix "prefix",
    ptr config_map_ref "configMapRef",
    ptr secret_ref "secretRef",
});

message!(pb::EnvVar {
    req name "name",
    opt value "value",
    ptr value_from "valueFrom",
});

message!(pb::EnvVarSource {
    ptr field_ref "fieldRef",
    ptr resource_field_ref "resourceFieldRef",
    ptr config_map_key_ref "configMapKeyRef",
    ptr secret_key_ref "secretKeyRef",
    ptr file_key_ref "fileKeyRef",
});

message!(pb::EphemeralContainer {
    inline ephemeral_container_common,
    opt target_container_name "targetContainerName",
});

message!(pb::EphemeralContainerCommon {
    req name "name",
    opt image "image",
    opt command "command",
    opt args "args",
    opt working_dir "workingDir",
    opt ports "ports",
    opt env_from "envFrom",
    opt env "env",
    opt resources "resources",
    opt resize_policy "resizePolicy",
    ptr restart_policy "restartPolicy",
    opt restart_policy_rules "restartPolicyRules",
    opt volume_mounts "volumeMounts",
    opt volume_devices "volumeDevices",
    ptr liveness_probe "livenessProbe",
    ptr readiness_probe "readinessProbe",
    ptr startup_probe "startupProbe",
    ptr lifecycle "lifecycle",
    opt termination_message_path "terminationMessagePath",
    opt termination_message_policy "terminationMessagePolicy",
    opt image_pull_policy "imagePullPolicy",
    ptr security_context "securityContext",
    opt stdin "stdin",
    opt stdin_once "stdinOnce",
    opt tty "tty",
});

message!(pb::ExecAction {
    opt command "command",
});

message!(pb::FileKeySelector {
    req volume_name "volumeName",
    req path "path",
    req key "key",
    ptr optional "optional",
});

message!(pb::GrpcAction {
    req port "port",
    ptr service "service",
});

message!(pb::HttpGetAction {
    opt path "path",
    req port "port",
    opt host "host",
    opt scheme "scheme",
    opt http_headers "httpHeaders",
});

message!(pb::HttpHeader {
    req name "name",
    req value "value",
});

message!(pb::Lifecycle {
    ptr post_start "postStart",
    ptr pre_stop "preStop",
    ptr stop_signal "stopSignal",
});

message!(pb::LifecycleHandler {
    ptr exec "exec",
    ptr http_get "httpGet",
    ptr tcp_socket "tcpSocket",
    ptr sleep "sleep",
});

message!(pb::LinuxContainerUser {
    req uid "uid",
    req gid "gid",
    opt supplemental_groups "supplementalGroups",
});

message!(pb::ObjectFieldSelector {
    opt api_version "apiVersion",
    req field_path "fieldPath",
});

message!(pb::Probe {
    inline handler,
    opt initial_delay_seconds "initialDelaySeconds",
    opt timeout_seconds "timeoutSeconds",
    opt period_seconds "periodSeconds",
    opt success_threshold "successThreshold",
    opt failure_threshold "failureThreshold",
    ptr termination_grace_period_seconds "terminationGracePeriodSeconds",
});

message!(pb::ProbeHandler {
    ptr exec "exec",
    ptr http_get "httpGet",
    ptr tcp_socket "tcpSocket",
    ptr grpc "grpc",
});

message!(pb::ResourceClaim {
    req name "name",
    opt request "request",
});

message!(pb::ResourceFieldSelector {
    opt container_name "containerName",
    req resource "resource",
    opt divisor "divisor",
});

message!(pb::ResourceHealth {
    req resource_id "resourceID",
    opt health "health",
});

message!(pb::ResourceRequirements {
    opt limits "limits",
    opt requests "requests",
    opt claims "claims",
});

message!(pb::ResourceStatus {
    req name "name",
    opt resources "resources",
});

message!(pb::SeLinuxOptions {
    opt user "user",
    opt role "role",
    opt r#type "type",
    opt level "level",
});

message!(pb::SeccompProfile {
    req r#type "type",
    ptr localhost_profile "localhostProfile",
});

message!(pb::SecretEnvSource {
    inline local_object_reference,
    ptr optional "optional",
});

message!(pb::SecretKeySelector {
    inline local_object_reference,
    req key "key",
    ptr optional "optional",
});

message!(pb::SecurityContext {
    ptr capabilities "capabilities",
    ptr privileged "privileged",
    ptr se_linux_options "seLinuxOptions",
    ptr windows_options "windowsOptions",
    ptr run_as_user "runAsUser",
    ptr run_as_group "runAsGroup",
    ptr run_as_non_root "runAsNonRoot",
    ptr read_only_root_filesystem "readOnlyRootFilesystem",
    ptr allow_privilege_escalation "allowPrivilegeEscalation",
    ptr proc_mount "procMount",
    ptr seccomp_profile "seccompProfile",
    ptr app_armor_profile "appArmorProfile",
});

message!(pb::SleepAction {
    req seconds "seconds",
});

message!(pb::TcpSocketAction {
    req port "port",
    opt host "host",
});

message!(pb::VolumeDevice {
    req name "name",
    req device_path "devicePath",
});

message!(pb::VolumeMount {
    req name "name",
    opt read_only "readOnly",
    ptr recursive_read_only "recursiveReadOnly",
    req mount_path "mountPath",
    opt sub_path "subPath",
    ptr mount_propagation "mountPropagation",
    opt sub_path_expr "subPathExpr",
});

message!(pb::VolumeMountStatus {
    req name "name",
    req mount_path "mountPath",
    opt read_only "readOnly",
    ptr recursive_read_only "recursiveReadOnly",
});

message!(pb::WindowsSecurityContextOptions {
    ptr gmsa_credential_spec_name "gmsaCredentialSpecName",
    ptr gmsa_credential_spec "gmsaCredentialSpec",
    ptr run_as_user_name "runAsUserName",
    ptr host_process "hostProcess",
});
