//! The heartbeat Lease of a `Pull` cluster (`karmada-cluster/<cluster>` in the control plane,
//! holder = the cluster name, owned by the Cluster): renewed every
//! `lease duration × renew fraction` (40 s × 0.25 = 10 s), as Kubernetes' node lease
//! controller does. The cluster controller counts each renewal as a health signal.

use std::time::Duration;

use flotilla_api::karmada::Cluster;
use flotilla_runtime::Shutdown;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::cluster::LEASE_NAMESPACE;

/// Renews the Lease of `cluster` until `shutdown`.
pub async fn renew(
    client: kube::Client,
    cluster: String,
    duration: Duration,
    fraction: f64,
    shutdown: Shutdown,
) {
    let interval = duration.mul_f64(fraction.clamp(0.01, 1.0));
    let leases = Api::<Lease>::namespaced(client.clone(), LEASE_NAMESPACE);
    let clusters = Api::<Cluster>::all(client);
    loop {
        if let Err(error) = renew_once(&leases, &clusters, &cluster, duration).await {
            tracing::warn!(cluster, %error, "cannot renew the cluster lease");
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(interval) => {}
        }
    }
}

async fn renew_once(
    leases: &Api<Lease>,
    clusters: &Api<Cluster>,
    cluster: &str,
    duration: Duration,
) -> Result<(), kube::Error> {
    let now = MicroTime(jiff::Timestamp::now());
    let seconds = i32::try_from(duration.as_secs()).unwrap_or(i32::MAX);
    let owner = match clusters.get_opt(cluster).await? {
        Some(c) => c.metadata.uid.map(|uid| {
            json!([{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
                "name": cluster, "uid": uid}])
        }),
        None => None,
    };
    match leases.get_opt(cluster).await? {
        None => {
            let mut lease = json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": cluster, "namespace": LEASE_NAMESPACE},
                "spec": {"holderIdentity": cluster, "leaseDurationSeconds": seconds,
                    "renewTime": now},
            });
            if let Some(owner) = owner {
                lease["metadata"]["ownerReferences"] = owner;
            }
            let lease: Lease = serde_json::from_value(lease).map_err(kube::Error::SerdeError)?;
            leases.create(&PostParams::default(), &lease).await?;
        }
        Some(existing) => {
            let mut patch = json!({"metadata": {"resourceVersion": existing.metadata.resource_version},
                "spec": {"holderIdentity": cluster, "leaseDurationSeconds": seconds, "renewTime": now}});
            if existing
                .metadata
                .owner_references
                .as_ref()
                .is_none_or(|o| o.is_empty())
                && let Some(owner) = owner
            {
                patch["metadata"]["ownerReferences"] = owner;
            }
            leases
                .patch(cluster, &PatchParams::default(), &Patch::Merge(patch))
                .await?;
        }
    }
    Ok(())
}
