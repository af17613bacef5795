//! The heartbeat: a `coordination.k8s.io` Lease named after the cluster in `karmada-cluster` on
//! the control plane, owned by the Cluster, renewed every `renew_interval` (Karmada: 40 s
//! duration, renewed every 10 s). The cluster controller reads it to tell a live pull-mode
//! member from a silent one.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

/// Where agents' Leases live on the control plane.
pub const LEASE_NAMESPACE: &str = "karmada-cluster";
/// The field manager of the agent's writes.
pub const FIELD_MANAGER: &str = "karmada-agent";

/// Renews (or creates) the Lease of `cluster`, owned by the Cluster with `cluster_uid`.
pub async fn renew(
    control: &kube::Client,
    cluster: &str,
    cluster_uid: &str,
    duration_seconds: i32,
    now: jiff::Timestamp,
) -> Result<Lease, kube::Error> {
    let leases: Api<Lease> = Api::namespaced(control.clone(), LEASE_NAMESPACE);
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": cluster,
            "namespace": LEASE_NAMESPACE,
            "ownerReferences": [{
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "name": cluster,
                "uid": cluster_uid,
            }],
        },
        "spec": {
            "holderIdentity": cluster,
            "leaseDurationSeconds": duration_seconds,
            "renewTime": MicroTime(now),
        },
    });
    leases
        .patch(
            cluster,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(lease),
        )
        .await
}
