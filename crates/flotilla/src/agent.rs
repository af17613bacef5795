//! `flotilla agent`: the pull-mode agent (`flotilla_agent`) with its flags and the Prometheus
//! endpoint (`--metrics-bind-address`, like Karmada's agent). With `--bootstrap-server` and
//! `--token` it first obtains its own control-plane kubeconfig (`bootstrap`, `discovery`), as
//! `karmadactl register` does for Karmada's agent. `certRotation` (`rotation`) renews that
//! certificate before it expires.

pub mod bootstrap;
pub mod discovery;
pub mod rotation;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use flotilla_agent::{AgentConfig, KubeconfigSource, Metrics};
use prometheus_client::registry::Registry;

/// Options of `flotilla agent`.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentArgs {
    /// Name of the Cluster on the control plane.
    #[arg(long)]
    pub cluster_name: String,
    /// Kubeconfig of the control plane (re-read when it or a file it names changes). With
    /// `--bootstrap-server`: where the agent's own kubeconfig is kept (default
    /// `<cert-dir>/karmada-agent.conf`).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Context of the control plane kubeconfig.
    #[arg(long)]
    pub context: Option<String>,
    /// Kubeconfig of the member cluster the agent serves.
    #[arg(long)]
    pub cluster_kubeconfig: PathBuf,
    /// Context of the member kubeconfig.
    #[arg(long)]
    pub cluster_context: Option<String>,
    /// The member API endpoint to register (default: the member kubeconfig's server).
    #[arg(long)]
    pub cluster_api_endpoint: Option<String>,
    /// Region of the member (`spec.region`).
    #[arg(long)]
    pub cluster_region: Option<String>,
    /// Availability zones of the member (`spec.zones`), comma separated.
    #[arg(long, value_delimiter = ',')]
    pub cluster_zones: Vec<String>,
    /// Cloud provider of the member (`spec.provider`).
    #[arg(long)]
    pub cluster_provider: Option<String>,
    /// Where `/metrics` is served (Karmada's agent: `:8080`).
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_bind_address: SocketAddr,
    /// The heartbeat Lease's duration (renewed every quarter of it).
    #[arg(long, default_value = "40s", value_parser = crate::bench::parse_duration)]
    pub cluster_lease_duration: Duration,
    /// Controllers to run among clusterStatus, execution, workStatus, serviceExport,
    /// endpointsliceCollect and certRotation (`*` = all; `-name` turns one off).
    #[arg(long, default_value = "*")]
    pub controllers: String,
    /// Karmada's feature gates, its syntax (`MultiClusterService=true` starts
    /// endpointsliceCollect).
    #[arg(long, default_value = "", value_parser = crate::up::parse_feature_gates)]
    pub feature_gates: flotilla_controllers::FeatureGates,
    /// Works the execution controller syncs at once (Karmada's `--concurrent-work-syncs`).
    #[arg(long, default_value_t = flotilla_controllers::options::DEFAULT_CONCURRENT_WORK_SYNCS, value_parser = crate::up::parse_work_syncs)]
    pub concurrent_work_syncs: usize,
    /// How often certRotation checks whether the agent's certificate is due for renewal.
    #[arg(long, default_value = "5m", value_parser = rotation::parse_interval)]
    pub cert_rotation_checking_interval: Duration,
    /// certRotation renews the certificate once no more than this fraction of its lifetime
    /// remains.
    #[arg(long, default_value_t = 0.2, value_parser = rotation::parse_threshold)]
    pub cert_rotation_remaining_time_threshold: f64,
    #[command(flatten)]
    pub bootstrap: BootstrapArgs,
}

/// Registering with a bootstrap token instead of a ready kubeconfig (`karmadactl register`'s
/// flags).
#[derive(Debug, Clone, clap::Args)]
pub struct BootstrapArgs {
    /// The control plane to bootstrap from: HOST:PORT or https://HOST:PORT.
    #[arg(long)]
    pub bootstrap_server: Option<String>,
    /// The bootstrap token (`flotilla token create`), `[a-z0-9]{6}.[a-z0-9]{16}`.
    #[arg(long)]
    pub token: Option<String>,
    /// The control plane CA's public key hash, `sha256:<hex>`; repeatable or comma separated.
    #[arg(long, value_delimiter = ',')]
    pub discovery_token_ca_cert_hash: Vec<String>,
    /// Trust the CA cluster-info names without a pinned hash (anyone between the member and
    /// the control plane can then impersonate it).
    #[arg(long)]
    pub discovery_token_unsafe_skip_ca_verification: bool,
    /// Where the bootstrapped kubeconfig (with the agent's key and certificate) is written.
    #[arg(long, default_value = "./flotilla-agent")]
    pub cert_dir: PathBuf,
    /// How long discovery, and each certificate request (bootstrap or rotation), may take.
    #[arg(long, default_value = "5m", value_parser = crate::bench::parse_duration)]
    pub discovery_timeout: Duration,
    /// The lifetime asked for the agent's certificate, when bootstrapping and when rotating
    /// (Karmada: a year).
    #[arg(long, default_value_t = 31_536_000, value_parser = clap::value_parser!(i32).range(600..))]
    pub cert_expiration_seconds: i32,
}

/// The file name Karmada gives the agent's bootstrapped kubeconfig.
const AGENT_KUBECONFIG: &str = "karmada-agent.conf";

/// The control-plane kubeconfig to run with, and the bootstrap that must provide it first.
fn control_plane(args: &AgentArgs) -> anyhow::Result<(PathBuf, Option<bootstrap::Bootstrap>)> {
    let b = &args.bootstrap;
    let Some(server) = &b.bootstrap_server else {
        if b.token.is_some()
            || !b.discovery_token_ca_cert_hash.is_empty()
            || b.discovery_token_unsafe_skip_ca_verification
        {
            anyhow::bail!(
                "--token and --discovery-token-* bootstrap from a control plane: give it with --bootstrap-server"
            );
        }
        let path = args.kubeconfig.clone().context(
            "--kubeconfig (the control plane's) is required, or bootstrap with --bootstrap-server and --token",
        )?;
        return Ok((path, None));
    };
    let server = discovery::server_url(server)?;
    let token = b
        .token
        .as_deref()
        .context("--token is required with --bootstrap-server")?;
    let token = discovery::Token::parse(token)?;
    let pins = discovery::Pins::parse(&b.discovery_token_ca_cert_hash)?;
    if pins.is_empty() && !b.discovery_token_unsafe_skip_ca_verification {
        return Err(discovery::DiscoveryError::NoPins.into());
    }
    crate::join::input::check_cluster_name(&args.cluster_name).context("--cluster-name")?;
    let path = args
        .kubeconfig
        .clone()
        .unwrap_or_else(|| b.cert_dir.join(AGENT_KUBECONFIG));
    let plan = bootstrap::Bootstrap {
        server,
        token,
        pins,
        cluster_name: args.cluster_name.clone(),
        kubeconfig: path.clone(),
        timeout: b.discovery_timeout,
        expiration_seconds: b.cert_expiration_seconds,
    };
    Ok((path, Some(plan)))
}

/// Whether `--controllers` runs certRotation (on by default); the agent checks the other names.
fn rotation_selected(controllers: &str) -> anyhow::Result<bool> {
    let mut known: Vec<&str> = controllers
        .split(',')
        .map(|entry| entry.trim().trim_start_matches('-'))
        .filter(|name| *name != "*")
        .collect();
    known.push(rotation::NAME);
    let selection = flotilla_runtime::ControllerSelection::parse(controllers, &known, &[])?;
    Ok(selection.is_enabled(rotation::NAME))
}

/// Runs the agent until SIGINT or SIGTERM.
pub async fn run(args: AgentArgs) -> anyhow::Result<()> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    let (control_kubeconfig, bootstrap) = control_plane(&args)?;
    let rotate = rotation_selected(&args.controllers)?;
    if let Some(bootstrap) = &bootstrap {
        bootstrap::ensure_kubeconfig(bootstrap)
            .await
            .with_context(|| {
                format!(
                    "bootstrap cluster {} from {}",
                    args.cluster_name, bootstrap.server
                )
            })?;
    }
    let metrics = Metrics::default();
    let rotation_metrics = rotation::RotationMetrics::default();
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    rotation_metrics.register(&mut registry);
    let registry = Arc::new(registry);
    let listener = tokio::net::TcpListener::bind(args.metrics_bind_address)
        .await
        .with_context(|| format!("listen on {} for metrics", args.metrics_bind_address))?;
    let address = listener.local_addr().context("read the metrics address")?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let registry = registry.clone();
            async move {
                let mut text = String::new();
                match prometheus_client::encoding::text::encode(&mut text, &registry) {
                    Ok(()) => (
                        http::StatusCode::OK,
                        [(
                            http::header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        text,
                    ),
                    Err(error) => (
                        http::StatusCode::INTERNAL_SERVER_ERROR,
                        [(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                        error.to_string(),
                    ),
                }
            }
        }),
    );
    let metrics_server = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "the metrics endpoint stopped");
        }
    });
    println!("metrics on http://{address}/metrics");
    let mut config = AgentConfig::new(
        args.cluster_name.clone(),
        KubeconfigSource::new(&control_kubeconfig, args.context.clone()),
        KubeconfigSource::new(&args.cluster_kubeconfig, args.cluster_context.clone()),
    );
    config.lease_duration = args.cluster_lease_duration;
    config.renew_interval = args.cluster_lease_duration / 4;
    config.controllers = args.controllers.clone();
    config.extra_controllers = vec![rotation::NAME];
    config.concurrent_work_syncs = args.concurrent_work_syncs;
    config.feature_gates = args.feature_gates.clone();
    config.api_endpoint = args.cluster_api_endpoint.clone();
    config.topology = flotilla_agent::Topology {
        region: args.cluster_region.clone(),
        zones: args
            .cluster_zones
            .iter()
            .filter(|z| !z.is_empty())
            .cloned()
            .collect(),
        provider: args.cluster_provider.clone(),
    };
    let shutdown = flotilla_runtime::Shutdown::new();
    let signal = {
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            crate::up::shutdown_signal().await;
            shutdown.cancel();
        })
    };
    let rotation = rotate.then(|| {
        tokio::spawn(rotation::run(
            rotation::Rotation {
                kubeconfig: control_kubeconfig.clone(),
                context: args.context.clone(),
                cluster_name: args.cluster_name.clone(),
                interval: args.cert_rotation_checking_interval,
                threshold: args.cert_rotation_remaining_time_threshold,
                expiration_seconds: args.bootstrap.cert_expiration_seconds,
                timeout: args.bootstrap.discovery_timeout,
            },
            rotation_metrics,
            shutdown.clone(),
        ))
    });
    tracing::info!(cluster = %args.cluster_name, "agent starting");
    let result = flotilla_agent::run(config, metrics, shutdown).await;
    if let Some(rotation) = rotation {
        rotation.abort();
    }
    signal.abort();
    metrics_server.abort();
    result.with_context(|| format!("agent for cluster {}", args.cluster_name))
}

#[cfg(test)]
mod tests;
