//! The agent's run loop. One *session* per set of credentials: load both kubeconfigs, register
//! (retrying), then renew the Lease and run the controllers until the session ends. A session
//! ends on shutdown, or when a kubeconfig or a file it names changes — then the next one starts
//! with fresh clients (certificate rotation without a restart).

use std::sync::Arc;
use std::time::Duration;

use flotilla_controllers::manager::{Context, controller_names, run_controllers};
use flotilla_member::StaticMemberClients;
use flotilla_runtime::{ControllerSelection, Shutdown};

use crate::backoff::Backoff;
use crate::kubeconfig::{KubeconfigError, KubeconfigSource, Loaded};
use crate::lease;
use crate::metrics::Metrics;
use crate::register::{self, RegisterError, Topology};

/// The controllers Karmada's agent runs for its member, by name; those present in
/// `flotilla_controllers::CONTROLLERS` are started. `serviceExport` and `endpointsliceCollect`
/// report the member's EndpointSlices (the controller manager does it for Push members only);
/// `endpointsliceCollect` idles without gate `MultiClusterService`.
pub const AGENT_CONTROLLERS: &[&str] = &[
    "clusterStatus",
    "execution",
    "workStatus",
    "serviceExport",
    "endpointsliceCollect",
];

/// What the agent needs.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// The Cluster's name on the control plane.
    pub cluster_name: String,
    /// The control plane.
    pub control: KubeconfigSource,
    /// The member (the agent applies Works there and reads its status).
    pub member: KubeconfigSource,
    /// The Lease's `leaseDurationSeconds` (Karmada: 40 s).
    pub lease_duration: Duration,
    /// How often the Lease is renewed (Karmada: a quarter of the duration).
    pub renew_interval: Duration,
    /// How often the kubeconfig files are checked for changes.
    pub reload_interval: Duration,
    /// The first retry delay after a failed request; doubles up to `renew_interval`.
    pub retry_initial: Duration,
    /// `--controllers` among [`AGENT_CONTROLLERS`] (`*` = all).
    pub controllers: String,
    /// Region, zones and provider written into the Cluster.
    pub topology: Topology,
    /// The member API endpoint to register (default: the member kubeconfig's server).
    pub api_endpoint: Option<String>,
    /// `--concurrent-work-syncs`: Works the execution controller syncs at once.
    pub concurrent_work_syncs: usize,
    /// Controllers the caller runs beside the agent (the binary's `certRotation`): accepted by
    /// `--controllers`, not started here.
    pub extra_controllers: Vec<&'static str>,
    /// `--feature-gates` (Karmada's agent has them too; `MultiClusterService` switches on
    /// `endpointsliceCollect`).
    pub feature_gates: flotilla_controllers::FeatureGates,
}

impl AgentConfig {
    /// Karmada's timings for `cluster_name`.
    pub fn new(
        cluster_name: impl Into<String>,
        control: KubeconfigSource,
        member: KubeconfigSource,
    ) -> Self {
        AgentConfig {
            cluster_name: cluster_name.into(),
            control,
            member,
            lease_duration: Duration::from_secs(40),
            renew_interval: Duration::from_secs(10),
            reload_interval: Duration::from_secs(10),
            retry_initial: Duration::from_millis(500),
            controllers: "*".into(),
            topology: Topology::default(),
            api_endpoint: None,
            concurrent_work_syncs: flotilla_controllers::options::DEFAULT_CONCURRENT_WORK_SYNCS,
            extra_controllers: Vec::new(),
            feature_gates: flotilla_controllers::FeatureGates::default(),
        }
    }
}

/// Why the agent stopped.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Register(#[from] RegisterError),
    #[error(transparent)]
    Selection(#[from] flotilla_runtime::SelectionError),
}

/// Runs until `shutdown`, or until registration is refused for good.
pub async fn run(
    config: AgentConfig,
    metrics: Metrics,
    shutdown: Shutdown,
) -> Result<(), AgentError> {
    let (all, off) = controller_names();
    let mut known: Vec<&str> = AGENT_CONTROLLERS
        .iter()
        .copied()
        .filter(|name| all.contains(name))
        .collect();
    known.extend(config.extra_controllers.iter().copied());
    let off: Vec<&str> = off.into_iter().filter(|n| known.contains(n)).collect();
    let selection = Arc::new(ControllerSelection::parse(
        &config.controllers,
        &known,
        &off,
    )?);
    let mut backoff = Backoff::new(
        config.retry_initial,
        config.renew_interval.max(config.retry_initial),
    );
    loop {
        let fingerprint = (config.control.fingerprint(), config.member.fingerprint());
        let clients = match load(&config).await {
            Ok(clients) => clients,
            Err(error) => {
                tracing::error!(%error, "cannot load a kubeconfig; waiting for it to change");
                tokio::select! {
                    () = shutdown.cancelled() => return Ok(()),
                    () = changed(&config, fingerprint) => continue,
                }
            }
        };
        let term = shutdown.child();
        let mut task = tokio::spawn(session(
            config.clone(),
            clients,
            metrics.clone(),
            selection.clone(),
            term.clone(),
        ));
        tokio::select! {
            () = shutdown.cancelled() => {
                term.cancel();
                let _ = task.await;
                return Ok(());
            }
            () = changed(&config, fingerprint) => {
                tracing::info!("a kubeconfig or a file it names changed: reconnecting with the new credentials");
                term.cancel();
                let _ = (&mut task).await;
                backoff.reset();
            }
            result = &mut task => {
                term.cancel();
                match result {
                    Ok(Err(error)) if error.is_fatal() => return Err(error.into()),
                    Ok(Err(error)) => tracing::warn!(%error, "session ended"),
                    Ok(Ok(())) => {}
                    Err(error) => tracing::error!(%error, "the session task failed"),
                }
                tokio::select! {
                    () = shutdown.cancelled() => return Ok(()),
                    () = tokio::time::sleep(backoff.next_delay()) => {}
                }
            }
        }
    }
}

struct Clients {
    control: Loaded,
    member: Loaded,
}

async fn load(config: &AgentConfig) -> Result<Clients, KubeconfigError> {
    Ok(Clients {
        control: config.control.load().await?,
        member: config.member.load().await?,
    })
}

/// Resolves when either kubeconfig (or a file it names) differs from `fingerprint`.
async fn changed(config: &AgentConfig, fingerprint: (u64, u64)) {
    // Files are checked on a timer: the agent has no inotify dependency, and kubelets check
    // their rotated certificates the same way.
    loop {
        tokio::time::sleep(config.reload_interval).await;
        if (config.control.fingerprint(), config.member.fingerprint()) != fingerprint {
            return;
        }
    }
}

/// One session: register, then heartbeat and controllers until `term`.
async fn session(
    config: AgentConfig,
    clients: Clients,
    metrics: Metrics,
    selection: Arc<ControllerSelection>,
    term: Shutdown,
) -> Result<(), RegisterError> {
    let name = config.cluster_name.clone();
    let mut backoff = Backoff::new(
        config.retry_initial,
        config.renew_interval.max(config.retry_initial),
    );
    let control = clients.control.client.clone();
    let cluster_uid = loop {
        let attempt = async {
            let id = register::member_id(&clients.member.client).await?;
            let endpoint = config
                .api_endpoint
                .as_deref()
                .unwrap_or(&clients.member.endpoint);
            register::register(&control, &name, &id, endpoint, &config.topology).await
        };
        match attempt.await {
            Ok(uid) => break uid,
            Err(error) if error.is_fatal() => {
                tracing::error!(cluster = %name, %error, "registration refused");
                return Err(error);
            }
            Err(error) => {
                if matches!(error, RegisterError::ControlPlane { .. }) {
                    metrics.connection_errors.inc();
                }
                let delay = backoff.next_delay();
                tracing::warn!(cluster = %name, %error, retry_in = ?delay, "cannot register; retrying");
                tokio::select! {
                    () = term.cancelled() => return Ok(()),
                    () = tokio::time::sleep(delay) => {}
                }
            }
        }
    };
    backoff.reset();

    let members = Arc::new(StaticMemberClients::new());
    members.insert(name.clone(), clients.member.client.clone());
    let informers = flotilla_runtime::Informers::new(control.clone());
    let context = Context {
        client: control.clone(),
        member_objects: Arc::new(flotilla_controllers::member_cache::MemberCache::new(
            members.clone(),
        )),
        members,
        cluster: Some(name.clone()),
        metrics: metrics.controllers.clone(),
        informers: informers.clone(),
        interpreter: Arc::new(flotilla_controllers::interpreter::Customizations::new(
            informers,
        )),
        options: Arc::new(flotilla_controllers::ControllerOptions {
            concurrent_work_syncs: config.concurrent_work_syncs,
            gates: config.feature_gates.clone(),
            ..Default::default()
        }),
    };
    let controllers_term = term.child();
    let controllers = {
        let term = controllers_term.clone();
        tokio::spawn(async move { run_controllers(context, &selection, term).await })
    };

    let duration = i32::try_from(config.lease_duration.as_secs()).unwrap_or(i32::MAX);
    loop {
        let renewal = tokio::time::timeout(
            config.lease_duration,
            lease::renew(
                &control,
                &name,
                &cluster_uid,
                duration,
                jiff::Timestamp::now(),
            ),
        );
        let delay = match renewal.await {
            Ok(Ok(_)) => {
                backoff.reset();
                tracing::debug!(cluster = %name, "lease renewed");
                config.renew_interval
            }
            outcome => {
                metrics.connection_errors.inc();
                let delay = backoff.next_delay();
                match outcome {
                    Ok(Err(error)) => {
                        tracing::warn!(cluster = %name, %error, retry_in = ?delay, "cannot renew the lease on the control plane; retrying")
                    }
                    _ => {
                        tracing::warn!(cluster = %name, retry_in = ?delay, "renewing the lease on the control plane timed out; retrying")
                    }
                }
                delay
            }
        };
        tokio::select! {
            () = term.cancelled() => break,
            () = tokio::time::sleep(delay) => {}
        }
    }
    controllers_term.cancel();
    let _ = controllers.await;
    Ok(())
}
