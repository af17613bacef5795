//! Registering the member: a `Cluster` with `syncMode: Pull`, the member's `kube-system` UID
//! as `spec.id` and its API endpoint. A name held by another member, or the same member
//! registered under another name or in push mode, is refused (fatal: retrying cannot fix it).

use flotilla_api::karmada::Cluster;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};

/// Why registration failed.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    /// A request to the control plane failed (retried, counted as a connection error).
    #[error("control plane: cannot {step}: {source}")]
    ControlPlane {
        step: &'static str,
        #[source]
        source: kube::Error,
    },
    /// The member could not be read (retried).
    #[error("member: cannot read namespace kube-system: {0}")]
    Member(#[source] kube::Error),
    /// The registration conflicts with another one (fatal).
    #[error("{0}")]
    Conflict(String),
}

impl RegisterError {
    pub fn is_fatal(&self) -> bool {
        matches!(self, RegisterError::Conflict(_))
    }
}

/// The member's identity: `kube-system`'s UID.
pub async fn member_id(member: &kube::Client) -> Result<String, RegisterError> {
    let namespaces: Api<Namespace> = Api::all(member.clone());
    let kube_system = namespaces
        .get("kube-system")
        .await
        .map_err(RegisterError::Member)?;
    Ok(kube_system.metadata.uid.unwrap_or_default())
}

/// What the agent registers (Karmada agent's `--cluster-*` flags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    pub region: Option<String>,
    pub zones: Vec<String>,
    pub provider: Option<String>,
}

impl Topology {
    /// Writes the given fields into `spec`; true if anything changed.
    fn apply(&self, spec: &mut flotilla_api::karmada::ClusterSpec) -> bool {
        let before = spec.clone();
        if let Some(region) = &self.region {
            spec.region = region.clone();
        }
        if let Some(provider) = &self.provider {
            spec.provider = provider.clone();
        }
        if !self.zones.is_empty() {
            spec.zones = self.zones.clone();
            spec.zone.clear();
        }
        *spec != before
    }
}

/// Creates or refreshes the Cluster; returns its UID (the Lease's owner).
pub async fn register(
    control: &kube::Client,
    name: &str,
    id: &str,
    endpoint: &str,
    topology: &Topology,
) -> Result<String, RegisterError> {
    let clusters: Api<Cluster> = Api::all(control.clone());
    let failed = |step| move |source| RegisterError::ControlPlane { step, source };
    let list = clusters
        .list(&Default::default())
        .await
        .map_err(failed("list clusters"))?;
    if let Some(other) = list
        .items
        .iter()
        .find(|c| c.name() != name && !id.is_empty() && c.spec.id == id)
    {
        return Err(RegisterError::Conflict(format!(
            "this member (id {id}) is already registered as cluster {:?}; refusing to register it again as {name:?}",
            other.name()
        )));
    }
    let existing = list.items.into_iter().find(|c| c.name() == name);
    let cluster = match existing {
        None => {
            let mut cluster = Cluster::default();
            cluster.metadata.name = Some(name.to_owned());
            cluster.spec.sync_mode = "Pull".into();
            cluster.spec.id = id.to_owned();
            cluster.spec.api_endpoint = endpoint.to_owned();
            topology.apply(&mut cluster.spec);
            let created = clusters
                .create(&PostParams::default(), &cluster)
                .await
                .map_err(failed("create the Cluster"))?;
            tracing::info!(cluster = name, %id, "registered (syncMode Pull)");
            created
        }
        Some(cluster) if cluster.spec.sync_mode != "Pull" => {
            return Err(RegisterError::Conflict(format!(
                "cluster {name:?} is registered with syncMode {}: unjoin it before running an agent for it",
                cluster.spec.sync_mode
            )));
        }
        Some(cluster) if !cluster.spec.id.is_empty() && cluster.spec.id != id => {
            return Err(RegisterError::Conflict(format!(
                "cluster {name:?} is registered for another member (id {}, this member's id {id})",
                cluster.spec.id
            )));
        }
        Some(mut cluster) => {
            let topology_changed = topology.apply(&mut cluster.spec);
            if topology_changed || cluster.spec.id != id || cluster.spec.api_endpoint != endpoint {
                cluster.spec.id = id.to_owned();
                cluster.spec.api_endpoint = endpoint.to_owned();
                cluster = clusters
                    .replace(name, &PostParams::default(), &cluster)
                    .await
                    .map_err(failed("update the Cluster"))?;
            }
            cluster
        }
    };
    Ok(cluster.metadata.uid.unwrap_or_default())
}
