//! The cluster proxy's member side: the API server's [`ClusterProxy`] hook implemented over
//! [`MemberClients`], so `/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}`
//! reaches the member: as the caller, through the member's impersonator (Karmada's unified
//! auth), or with the control plane's credentials for `system:masters`. The member clients exist only once
//! the API server runs (they read Clusters and Secrets through it), hence the late binding.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use flotilla_apiserver::ApiError;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::cluster_proxy::{ClusterProxy, ProxyBody};
use flotilla_member::proxy::Impersonation;
use flotilla_member::{MemberClients, MemberError};

/// The hook; [`MemberProxy::bind`] supplies the member clients after start.
#[derive(Debug, Default)]
pub struct MemberProxy {
    members: OnceLock<Arc<dyn MemberClients>>,
}

impl MemberProxy {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Sets the member clients (the first call wins).
    pub fn bind(&self, members: Arc<dyn MemberClients>) {
        let _ = self.members.set(members);
    }
}

fn unavailable(message: String) -> ApiError {
    ApiError::new(503, "ServiceUnavailable", message)
}

/// Callers in this group may do anything on the control plane (read the members' Secrets
/// included), so the proxy sends their requests with the control plane's own credentials.
const MASTERS: &str = "system:masters";

impl ClusterProxy for MemberProxy {
    fn forward(
        &self,
        cluster: String,
        caller: UserInfo,
        request: http::Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<http::Response<ProxyBody>, ApiError>> + Send>> {
        let members = self.members.get().cloned();
        Box::pin(async move {
            let members =
                members.ok_or_else(|| unavailable("the cluster proxy is starting".into()))?;
            let member_error = |e: MemberError| match e {
                MemberError::UnknownCluster { .. } => ApiError::new(
                    404,
                    "NotFound",
                    format!("clusters.cluster.karmada.io {cluster:?} not found"),
                ),
                other => unavailable(other.to_string()),
            };
            let response = if caller.groups.iter().any(|g| g == MASTERS) {
                let client = members.client(&cluster).await.map_err(member_error)?;
                flotilla_member::proxy::forward(&client, request).await
            } else {
                // Everyone else reaches the member as themselves: the member's impersonator
                // acts as the caller, and the member's RBAC decides (Karmada's unified auth).
                let client = members
                    .impersonator_client(&cluster)
                    .await
                    .map_err(member_error)?
                    .ok_or_else(|| {
                        unavailable(format!(
                            "cluster {cluster:?} has no spec.impersonatorSecretRef, so the proxy \
                             cannot act as {:?} there; join the cluster again (flotilla join is \
                             idempotent) to create its impersonator",
                            caller.name
                        ))
                    })?;
                let impersonation = Impersonation::of(&caller.name, &caller.groups);
                flotilla_member::proxy::forward_as(&client, request, Some(&impersonation)).await
            }
            .map_err(|e| unavailable(format!("cluster {cluster:?}: {e}")))?;
            Ok(response.map(ProxyBody::new))
        })
    }
}
