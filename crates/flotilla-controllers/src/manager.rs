//! The controller table (Karmada's controller names, for `--controllers`) and the function that
//! starts the enabled ones under one shutdown scope.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use flotilla_api::karmada::{Cluster, Work, names};
use flotilla_member::MemberClients;
use flotilla_runtime::{ControllerSelection, Informers, Shared, Shutdown};

/// What every controller gets: the control-plane client, the shared informers and the way to
/// reach members.
#[derive(Clone)]
pub struct Context {
    /// Client of the control plane (in `up`, the API server's tower service in memory).
    pub client: kube::Client,
    /// Clients of member clusters, by cluster name.
    pub members: Arc<dyn MemberClients>,
    /// `None` in the controller manager: member-facing controllers (cluster status, execution,
    /// work status, service export, endpointslice collect) handle the `Push` clusters.
    /// `Some(name)` in the agent: they handle only that (`Pull`) cluster.
    pub cluster: Option<String>,
    /// The controllers' Prometheus metrics (registered by whoever serves `/metrics`).
    pub metrics: crate::metrics::Metrics,
    /// One watch and cache per kind, shared by the controllers given this context (and its
    /// clones); built on `client`.
    pub informers: Informers,
    /// The member informers, shared by the execution and work-status controllers given this
    /// context (and its clones); built on `members`.
    pub member_objects: Arc<crate::member_cache::MemberCache>,
    /// Feature gates and failover flags (Karmada's defaults unless `up` was told otherwise).
    pub options: Arc<crate::options::ControllerOptions>,
    /// The ResourceInterpreterCustomizations (Lua rules) consulted before the native
    /// interpreter; watched once a controller waits for them (`ready`).
    pub interpreter: Arc<crate::interpreter::Customizations>,
}

impl Context {
    /// A context with fresh (unregistered) metrics.
    pub fn new(
        client: kube::Client,
        members: Arc<dyn MemberClients>,
        cluster: Option<String>,
    ) -> Self {
        let informers = Informers::new(client.clone());
        Self {
            interpreter: Arc::new(crate::interpreter::Customizations::new(informers.clone())),
            informers,
            member_objects: Arc::new(crate::member_cache::MemberCache::new(members.clone())),
            client,
            members,
            cluster,
            metrics: crate::metrics::Metrics::default(),
            options: Arc::default(),
        }
    }
}

impl Context {
    /// The same context with other feature gates and failover flags.
    pub fn with_options(mut self, options: crate::options::ControllerOptions) -> Self {
        self.options = Arc::new(options);
        self
    }

    /// The Works the member-facing controllers handle: all of them in the controller manager,
    /// those of the cluster's execution space in the agent.
    pub(crate) fn member_works(&self) -> Shared<Work> {
        match &self.cluster {
            Some(cluster) => self
                .informers
                .namespaced(&names::execution_space_name(cluster)),
            None => self.informers.all(),
        }
    }

    /// Whether the member-facing controllers given this context serve `cluster`: the `Push`
    /// clusters in the controller manager, only its own cluster in the agent. Every member is
    /// served by exactly one process, so nothing it holds is applied or reported twice.
    pub fn handles(&self, cluster: &Cluster) -> bool {
        serves(self.cluster.as_deref(), cluster)
    }
}

/// [`Context::handles`] for a process serving `own` (the agent) or the Push clusters (`None`).
fn serves(own: Option<&str>, cluster: &Cluster) -> bool {
    match own {
        Some(own) => cluster.name() == own,
        None => cluster.spec.sync_mode == "Push",
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("members", &self.members)
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

/// A running controller: resolves when the controller stops (on shutdown or a fatal error).
pub type ControllerTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// One controller: its `--controllers` name, whether `*` enables it, and how to start it.
#[derive(Debug, Clone, Copy)]
pub struct ControllerSpec {
    pub name: &'static str,
    pub default_on: bool,
    pub start: fn(Context, Shutdown) -> ControllerTask,
}

/// Every controller Flotilla has, in start order. Names are Karmada's `--controllers` names;
/// `resourceDetector` and `dependenciesDistributor` (always on in Karmada, not switchable
/// there) are Flotilla's names.
pub const CONTROLLERS: &[ControllerSpec] = &[
    ControllerSpec {
        name: "cluster",
        default_on: true,
        start: crate::cluster::start,
    },
    ControllerSpec {
        name: "clusterStatus",
        default_on: true,
        start: crate::cluster_status::start,
    },
    ControllerSpec {
        name: "resourceDetector",
        default_on: true,
        start: crate::detector::start,
    },
    ControllerSpec {
        name: "binding",
        default_on: true,
        start: crate::binding::start,
    },
    ControllerSpec {
        name: "bindingStatus",
        default_on: true,
        start: crate::binding_status::start,
    },
    ControllerSpec {
        name: "dependenciesDistributor",
        default_on: true,
        start: crate::dependencies::start,
    },
    ControllerSpec {
        name: "namespace",
        default_on: true,
        start: crate::namespace::start,
    },
    ControllerSpec {
        name: crate::execution::NAME,
        default_on: true,
        start: crate::execution::start,
    },
    ControllerSpec {
        name: crate::work_status::NAME,
        default_on: true,
        start: crate::work_status::start,
    },
    ControllerSpec {
        name: crate::graceful_eviction::NAME,
        default_on: true,
        start: crate::graceful_eviction::start,
    },
    ControllerSpec {
        name: crate::application_failover::NAME,
        default_on: true,
        start: crate::application_failover::start,
    },
    ControllerSpec {
        name: crate::cluster_taint_policy::NAME,
        default_on: true,
        start: crate::cluster_taint_policy::start,
    },
    ControllerSpec {
        name: crate::cron_federated_hpa::NAME,
        default_on: true,
        start: crate::cron_federated_hpa::start,
    },
    ControllerSpec {
        name: crate::federated_hpa::NAME,
        default_on: true,
        start: crate::federated_hpa::start,
    },
    ControllerSpec {
        name: crate::workload_rebalancer::NAME,
        default_on: true,
        start: crate::workload_rebalancer::start,
    },
    ControllerSpec {
        name: crate::agent_csr_approving::NAME,
        default_on: true,
        start: crate::agent_csr_approving::start,
    },
    ControllerSpec {
        name: crate::remedy::NAME,
        default_on: true,
        start: crate::remedy::start,
    },
    ControllerSpec {
        name: crate::unified_auth::NAME,
        default_on: true,
        start: crate::unified_auth::start,
    },
    ControllerSpec {
        name: crate::federated_resource_quota::SYNC_NAME,
        default_on: true,
        start: crate::federated_resource_quota::sync::start,
    },
    ControllerSpec {
        name: crate::federated_resource_quota::STATUS_NAME,
        default_on: true,
        start: crate::federated_resource_quota::status::start,
    },
    // Idles without gate `FederatedQuotaEnforcement`.
    ControllerSpec {
        name: crate::federated_resource_quota::ENFORCEMENT_NAME,
        default_on: true,
        start: crate::federated_resource_quota::enforcement::start,
    },
    // Idle without gate `MultiClusterService` (alpha), as in Karmada.
    ControllerSpec {
        name: crate::multicluster_service::NAME,
        default_on: true,
        start: crate::multicluster_service::start,
    },
    ControllerSpec {
        name: crate::multicluster_service::collect::NAME,
        default_on: true,
        start: crate::multicluster_service::collect::start,
    },
    ControllerSpec {
        name: crate::multicluster_service::dispatch::NAME,
        default_on: true,
        start: crate::multicluster_service::dispatch::start,
    },
    // Karmada's ServiceExport/ServiceImport flow (`multicluster.x-k8s.io`), default-on.
    ControllerSpec {
        name: crate::service_export::NAME,
        default_on: true,
        start: crate::service_export::start,
    },
    ControllerSpec {
        name: crate::service_export::endpoint_slice::NAME,
        default_on: true,
        start: crate::service_export::endpoint_slice::start,
    },
    ControllerSpec {
        name: crate::service_export::service_import::NAME,
        default_on: true,
        start: crate::service_export::service_import::start,
    },
    // Off by default, as in Karmada (whose own deployment adds both to `--controllers`).
    ControllerSpec {
        name: crate::hpa_scale_target_marker::NAME,
        default_on: false,
        start: crate::hpa_scale_target_marker::start,
    },
    ControllerSpec {
        name: crate::deployment_replicas_syncer::NAME,
        default_on: false,
        start: crate::deployment_replicas_syncer::start,
    },
    // Karmada's karmada-descheduler, an addon there; `up --enable-descheduler` adds it.
    ControllerSpec {
        name: crate::descheduler::NAME,
        default_on: false,
        start: crate::descheduler::start,
    },
];

/// The names for [`ControllerSelection::parse`]: all, and those off by default.
pub fn controller_names() -> (Vec<&'static str>, Vec<&'static str>) {
    let all = CONTROLLERS.iter().map(|c| c.name).collect();
    let off = CONTROLLERS
        .iter()
        .filter(|c| !c.default_on)
        .map(|c| c.name)
        .collect();
    (all, off)
}

/// Starts every enabled controller and waits until all have stopped (after `shutdown`), then
/// stops the context's shared watches.
pub async fn run_controllers(
    context: Context,
    selection: &ControllerSelection,
    shutdown: Shutdown,
) {
    let mut tasks = Vec::new();
    for spec in CONTROLLERS {
        if !selection.is_enabled(spec.name) {
            tracing::info!(controller = spec.name, "disabled by --controllers");
            continue;
        }
        tracing::info!(controller = spec.name, "starting");
        tasks.push(tokio::spawn((spec.start)(
            context.clone(),
            shutdown.child(),
        )));
    }
    for task in tasks {
        if let Err(error) = task.await {
            tracing::error!(%error, "a controller task panicked");
        }
    }
    context.informers.stop();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(name: &str, sync_mode: &str) -> Cluster {
        let mut cluster = Cluster::default();
        cluster.metadata.name = Some(name.into());
        cluster.spec.sync_mode = sync_mode.into();
        cluster
    }

    #[test]
    fn the_controller_manager_serves_push_members_and_an_agent_only_its_own() {
        let (push, pull) = (cluster("push", "Push"), cluster("pull", "Pull"));
        assert!(serves(None, &push));
        assert!(!serves(None, &pull), "a Pull member is its agent's");
        assert!(serves(Some("pull"), &pull));
        assert!(!serves(Some("pull"), &push));
        assert!(!serves(Some("pull"), &cluster("other", "Pull")));
    }
}
