//! Kubernetes' built-in defaulting of the kinds Flotilla serves, so objects read back look the
//! way kube-apiserver would store them (and controllers, kubectl and member clusters see the
//! fields they expect).
//!
//! Lifted: each submodule ports, as behaviour written in our own code, the `SetDefaults_*`
//! functions of k8s.io/kubernetes pkg/apis/<group>/<version>/defaults.go (Kubernetes v1.32)
//! and the call graph of the generated `SetObjectDefaults_*` functions; its header names what
//! it follows. Features are taken as they are by default in v1.32.
//!
//! Rules every part keeps: a value the user set is never replaced (except where upstream does
//! so too: the namespace name label, a `None` session affinity's config), and defaulting is
//! idempotent, since the registry compares an update with the stored object after defaulting.
//! Objects work on plain JSON: a field of the wrong type is left for validation to reject.

mod apps;
mod autoscaling;
mod batch;
mod core;
mod fields;
mod networking;
mod pod;
mod rbac;
mod service;

use serde_json::Value;

/// Applies the defaults of `group/version, kind` to `object`; kinds without built-in defaults
/// (CRDs, Karmada's kinds) are left as they are.
pub fn apply(group: &str, version: &str, kind: &str, object: &mut Value) {
    let Some(object) = object.as_object_mut() else {
        return;
    };
    match (group, version, kind) {
        ("", "v1", "Pod") => pod::pod(object),
        ("", "v1", "PodTemplate") => core::pod_template(object),
        ("", "v1", "Service") => service::service(object),
        ("", "v1", "Secret") => core::secret(object),
        ("", "v1", "PersistentVolumeClaim") => core::persistent_volume_claim(object),
        ("", "v1", "PersistentVolume") => core::persistent_volume(object),
        ("", "v1", "Namespace") => core::namespace(object),
        ("", "v1", "Endpoints") => core::endpoints(object),
        ("", "v1", "LimitRange") => core::limit_range(object),
        ("", "v1", "Node") => core::node(object),
        ("apps", "v1", "Deployment") => apps::deployment(object),
        ("apps", "v1", "StatefulSet") => apps::stateful_set(object),
        ("apps", "v1", "DaemonSet") => apps::daemon_set(object),
        ("apps", "v1", "ReplicaSet") => apps::replica_set(object),
        ("batch", "v1", "Job") => batch::job(object),
        ("batch", "v1", "CronJob") => batch::cron_job(object),
        ("autoscaling", "v2", "HorizontalPodAutoscaler") => {
            autoscaling::horizontal_pod_autoscaler(object)
        }
        ("networking.k8s.io", "v1", "NetworkPolicy") => networking::network_policy(object),
        ("networking.k8s.io", "v1", "IngressClass") => networking::ingress_class(object),
        ("discovery.k8s.io", "v1", "EndpointSlice") => {
            crate::lifted::endpoint_slice::default(object)
        }
        ("scheduling.k8s.io", "v1", "PriorityClass") => {
            crate::lifted::priority_class::default(object)
        }
        ("rbac.authorization.k8s.io", "v1", "RoleBinding" | "ClusterRoleBinding") => {
            rbac::binding(object)
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
