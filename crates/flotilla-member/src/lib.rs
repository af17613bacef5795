//! Reaching member clusters. Controllers never build member clients themselves: they ask a
//! [`MemberClients`] for the cluster by name, so a real cluster (Cluster + Secret, HTTPS) and a
//! simulated one take the same path, and tests can hand in clients directly.
//!
//! [`SecretMemberClients`] is the real implementation (Cluster + Secret, see [`secret`]);
//! [`health`] probes `/readyz`, [`discovery`] reads version and API enablements, [`watch`]
//! keeps a member's node and pod facts for the [`summary`] arithmetic, and [`proxy`] forwards
//! one request for the cluster proxy. Depends on flotilla-api and flotilla-runtime only.

pub mod discovery;
pub mod health;
pub mod lifted;
pub mod proxy;
pub mod secret;
pub mod summary;
pub mod watch;

use std::collections::BTreeMap;
use std::fmt;

pub use secret::SecretMemberClients;

/// The `User-Agent` of every request to a member and of the controllers' requests to the
/// control plane: the field manager of what they write is `karmada-controller-manager`, as
/// with Karmada (kube-apiserver names the manager after the agent's first word).
pub const CONTROLLER_MANAGER_USER_AGENT: &str = concat!(
    "karmada-controller-manager/v",
    env!("CARGO_PKG_VERSION"),
    " (flotilla)"
);

/// Why a member cluster cannot be reached. Messages never contain credentials.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    #[error("cluster {cluster:?} is not known")]
    UnknownCluster { cluster: String },
    #[error("cluster {cluster:?}: {message}")]
    Config { cluster: String, message: String },
    #[error("cluster {cluster:?}: {source}")]
    Kube {
        cluster: String,
        #[source]
        source: kube::Error,
    },
}

/// The seam through which every controller reaches a member's Kubernetes API.
#[async_trait::async_trait]
pub trait MemberClients: Send + Sync + fmt::Debug {
    /// A client for the member named `cluster`, authenticated as the control plane.
    async fn client(&self, cluster: &str) -> Result<kube::Client, MemberError>;

    /// Forgets any cached client of `cluster` (its Cluster or Secret changed or was deleted).
    fn invalidate(&self, cluster: &str);

    /// Changes whenever the client `client(cluster)` returns is a new one (e.g. rebuilt after
    /// the Secret changed), so that long-lived users such as watches can restart with it.
    fn client_generation(&self, _cluster: &str) -> u64 {
        0
    }

    /// A client for the member authenticated as its impersonator (the token of the Secret
    /// `spec.impersonatorSecretRef` names), for the cluster proxy to act as its caller; `None`
    /// when the Cluster names no impersonator.
    async fn impersonator_client(
        &self,
        _cluster: &str,
    ) -> Result<Option<kube::Client>, MemberError> {
        Ok(None)
    }
}

/// A fixed map of clients by cluster name (tests and in-process simulations).
#[derive(Default)]
pub struct StaticMemberClients {
    clients: parking_lot::RwLock<BTreeMap<String, kube::Client>>,
}

impl fmt::Debug for StaticMemberClients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticMemberClients")
            .field("clusters", &self.clients.read().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl StaticMemberClients {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces the client of `cluster`.
    pub fn insert(&self, cluster: impl Into<String>, client: kube::Client) {
        self.clients.write().insert(cluster.into(), client);
    }

    /// Removes the client of `cluster` (the member becomes unknown).
    pub fn remove(&self, cluster: &str) {
        self.clients.write().remove(cluster);
    }
}

#[async_trait::async_trait]
impl MemberClients for StaticMemberClients {
    async fn client(&self, cluster: &str) -> Result<kube::Client, MemberError> {
        self.clients
            .read()
            .get(cluster)
            .cloned()
            .ok_or_else(|| MemberError::UnknownCluster {
                cluster: cluster.to_owned(),
            })
    }

    fn invalidate(&self, _cluster: &str) {}
}
