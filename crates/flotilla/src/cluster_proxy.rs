//! The cluster proxy's member side: the API server's [`ClusterProxy`] hook implemented over
//! [`MemberClients`], so `/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}`
//! reaches the member with the control plane's credentials. The member clients exist only once
//! the API server runs (they read Clusters and Secrets through it), hence the late binding.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use flotilla_apiserver::ApiError;
use flotilla_apiserver::cluster_proxy::{ClusterProxy, ProxyBody};
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

impl ClusterProxy for MemberProxy {
    fn forward(
        &self,
        cluster: String,
        request: http::Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<http::Response<ProxyBody>, ApiError>> + Send>> {
        let members = self.members.get().cloned();
        Box::pin(async move {
            let members =
                members.ok_or_else(|| unavailable("the cluster proxy is starting".into()))?;
            let client = members.client(&cluster).await.map_err(|e| match e {
                MemberError::UnknownCluster { .. } => ApiError::new(
                    404,
                    "NotFound",
                    format!("clusters.cluster.karmada.io {cluster:?} not found"),
                ),
                other => unavailable(other.to_string()),
            })?;
            let response = flotilla_member::proxy::forward(&client, request)
                .await
                .map_err(|e| unavailable(format!("cluster {cluster:?}: {e}")))?;
            Ok(response.map(ProxyBody::new))
        })
    }
}
