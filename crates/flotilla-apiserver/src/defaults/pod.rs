//! Defaults of pod specs, wherever they are embedded, and of what pod specs hold (containers,
//! probes, volumes).
//!
//! Lifted (behaviour, not code) from k8s.io/kubernetes pkg/apis/core/v1 at v1.32:
//! - `SetDefaults_Pod` (defaults.go): Pods only, never templates — requests from limits,
//!   `enableServiceLinks`, host ports under `hostNetwork`. Pod-level resources (alpha, gate
//!   off in v1.32) are not defaulted.
//! - `SetDefaults_PodSpec`: dnsPolicy, restartPolicy, securityContext, grace period, scheduler.
//! - `SetDefaults_Container` / `SetDefaults_EphemeralContainer`: pull policy from the image tag
//!   (`parsers.ParseImageName`: no tag and no digest means `latest`), termination message.
//! - `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`, the declarative `+default=""` of
//!   `GRPCAction.service` and `+default="TCP"` of `ContainerPort.protocol`
//!   (zz_generated.defaults.go), `SetDefaults_ObjectFieldSelector`.
//! - `SetDefaults_Volume` (emptyDir when no source is set; image volumes are gated off in
//!   v1.32), `SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected,HostPath,ISCSI,RBD,AzureDisk,
//!   ScaleIO}VolumeSource`, `SetDefaults_ServiceAccountTokenProjection`,
//!   `SetDefaults_PersistentVolumeClaimSpec` for ephemeral volume claim templates.
//! - The call graph of `SetObjectDefaults_Pod` / `SetObjectDefaults_PodTemplate`
//!   (zz_generated.defaults.go), which decides what is defaulted where.
//!
//! `SetDefaults_ResourceList` (rounding quantities up to milli precision) is not ported.

use serde_json::Value;

use super::fields::{Obj, child, existing, items, or_insert, or_insert_int, or_insert_str, str_of};

/// `0644`, the mode of files projected from secrets, config maps and the downward API.
const DEFAULT_FILE_MODE: i64 = 0o644;

/// A Pod: `SetDefaults_Pod`, then the pod spec.
pub fn pod(pod: &mut Obj) {
    let Some(spec) = child(pod, "spec") else {
        return;
    };
    for key in ["containers", "initContainers"] {
        for container in items(spec, key) {
            requests_from_limits(container);
        }
    }
    or_insert(spec, "enableServiceLinks", true);
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for key in ["containers", "initContainers"] {
            for container in items(spec, key) {
                for port in items(container, "ports") {
                    let unset = port
                        .get("hostPort")
                        .is_none_or(|p| p.is_null() || p.as_f64() == Some(0.0));
                    if unset && let Some(container_port) = port.get("containerPort").cloned() {
                        port.insert("hostPort".into(), container_port);
                    }
                }
            }
        }
    }
    pod_spec(spec);
}

/// A `PodTemplateSpec` (`template` of workloads): the pod spec without the Pod-only defaults.
pub fn template(template: &mut Obj) {
    if let Some(spec) = child(template, "spec") {
        pod_spec(spec);
    }
}

/// Limits stand in for requests that are not given (Pods only, so templates stay as written).
fn requests_from_limits(container: &mut Obj) {
    let Some(resources) = existing(container, "resources") else {
        return;
    };
    let limits = match resources.get("limits").and_then(Value::as_object) {
        Some(limits) if !limits.is_empty() => limits.clone(),
        _ => return,
    };
    let Some(requests) = child(resources, "requests") else {
        return;
    };
    for (name, quantity) in limits {
        requests.entry(name).or_insert(quantity);
    }
}

/// `SetDefaults_PodSpec` and everything the generated defaulter reaches inside a pod spec.
fn pod_spec(spec: &mut Obj) {
    or_insert_str(spec, "dnsPolicy", "ClusterFirst");
    or_insert_str(spec, "restartPolicy", "Always");
    or_insert(spec, "securityContext", Obj::new());
    or_insert(spec, "terminationGracePeriodSeconds", 30);
    or_insert_str(spec, "schedulerName", "default-scheduler");
    for volume in items(spec, "volumes") {
        self::volume(volume);
    }
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, key) {
            container(c);
        }
    }
}

/// `SetDefaults_Container` plus the defaults of ports, env, probes and lifecycle handlers.
fn container(container: &mut Obj) {
    if str_of(container, "imagePullPolicy").is_empty() {
        let policy = if image_tag(str_of(container, "image")) == Some("latest") {
            "Always"
        } else {
            "IfNotPresent"
        };
        container.insert("imagePullPolicy".into(), policy.into());
    }
    or_insert_str(container, "terminationMessagePath", "/dev/termination-log");
    or_insert_str(container, "terminationMessagePolicy", "File");
    for port in items(container, "ports") {
        or_insert_str(port, "protocol", "TCP");
    }
    for env in items(container, "env") {
        if let Some(field_ref) = existing(env, "valueFrom").and_then(|v| existing(v, "fieldRef")) {
            field_selector(field_ref);
        }
    }
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = existing(container, key) {
            self::probe(probe);
        }
    }
    if let Some(lifecycle) = existing(container, "lifecycle") {
        for key in ["postStart", "preStop"] {
            if let Some(http_get) = existing(lifecycle, key).and_then(|h| existing(h, "httpGet")) {
                self::http_get(http_get);
            }
        }
    }
}

/// `SetDefaults_Probe` (non-pointer counts: zero means unset) and its handlers' defaults.
fn probe(probe: &mut Obj) {
    or_insert_int(probe, "timeoutSeconds", 1);
    or_insert_int(probe, "periodSeconds", 10);
    or_insert_int(probe, "successThreshold", 1);
    or_insert_int(probe, "failureThreshold", 3);
    if let Some(http_get) = existing(probe, "httpGet") {
        self::http_get(http_get);
    }
    if let Some(grpc) = existing(probe, "grpc") {
        or_insert(grpc, "service", "");
    }
}

fn http_get(action: &mut Obj) {
    or_insert_str(action, "path", "/");
    or_insert_str(action, "scheme", "HTTP");
}

fn field_selector(selector: &mut Obj) {
    or_insert_str(selector, "apiVersion", "v1");
}

/// `SetDefaults_Volume`: a volume without any source is an emptyDir; then the source's own.
fn volume(volume: &mut Obj) {
    let has_source = volume
        .iter()
        .any(|(key, value)| key != "name" && !value.is_null());
    if !has_source {
        volume.insert("emptyDir".into(), Value::Object(Obj::new()));
    }
    volume_sources(volume);
    if let Some(projected) = existing(volume, "projected") {
        or_insert(projected, "defaultMode", DEFAULT_FILE_MODE);
        for source in items(projected, "sources") {
            if let Some(downward) = existing(source, "downwardAPI") {
                downward_api_items(downward);
            }
            if let Some(token) = existing(source, "serviceAccountToken") {
                or_insert(token, "expirationSeconds", 3600);
            }
        }
    }
    for key in ["secret", "configMap"] {
        if let Some(source) = existing(volume, key) {
            or_insert(source, "defaultMode", DEFAULT_FILE_MODE);
        }
    }
    if let Some(downward) = existing(volume, "downwardAPI") {
        or_insert(downward, "defaultMode", DEFAULT_FILE_MODE);
        downward_api_items(downward);
    }
    if let Some(spec) = existing(volume, "ephemeral")
        .and_then(|e| existing(e, "volumeClaimTemplate"))
        .and_then(|t| child(t, "spec"))
    {
        claim_spec(spec);
    }
}

fn downward_api_items(downward: &mut Obj) {
    for item in items(downward, "items") {
        if let Some(field_ref) = existing(item, "fieldRef") {
            field_selector(field_ref);
        }
    }
}

/// Defaults of the sources pods and persistent volumes share (the keys are the same in a
/// `VolumeSource` and a `PersistentVolumeSource`).
pub fn volume_sources(source: &mut Obj) {
    if let Some(host_path) = existing(source, "hostPath") {
        or_insert(host_path, "type", "");
    }
    if let Some(iscsi) = existing(source, "iscsi") {
        or_insert_str(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = existing(source, "rbd") {
        or_insert_str(rbd, "pool", "rbd");
        or_insert_str(rbd, "user", "admin");
        or_insert_str(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(disk) = existing(source, "azureDisk") {
        or_insert(disk, "cachingMode", "ReadWrite");
        or_insert(disk, "kind", "Shared");
        or_insert(disk, "fsType", "ext4");
        or_insert(disk, "readOnly", false);
    }
    if let Some(scale_io) = existing(source, "scaleIO") {
        or_insert_str(scale_io, "storageMode", "ThinProvisioned");
        or_insert_str(scale_io, "fsType", "xfs");
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`.
pub fn claim_spec(spec: &mut Obj) {
    or_insert(spec, "volumeMode", "Filesystem");
}

/// The tag `ParseImageName` reports: `latest` when the reference has neither tag nor digest,
/// `None` when the reference does not parse (the pull policy then becomes IfNotPresent).
pub fn image_tag(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_component = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_component..].find(':') {
        Some(i) => (
            &name[..last_component + i],
            Some(&name[last_component + i + 1..]),
        ),
        None => (name, None),
    };
    if repository.is_empty() || tag == Some("") || digest == Some("") {
        return None;
    }
    // The domain (a first component with `.` or `:`, or `localhost`) may be mixed case; the
    // path may not.
    let path = match repository.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            rest
        }
        _ => repository,
    };
    if path.chars().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    match (tag, digest) {
        (Some(tag), _) => Some(tag),
        (None, Some(_)) => Some(""),
        (None, None) => Some("latest"),
    }
}
