//! `flotilla agent`: the pull-mode agent (`flotilla_agent`) with its flags and the Prometheus
//! endpoint (`--metrics-bind-address`, like Karmada's agent).

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
    /// Kubeconfig of the control plane (re-read when it or a file it names changes).
    #[arg(long)]
    pub kubeconfig: PathBuf,
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
    /// Controllers to run among clusterStatus, execution and workStatus (`*` = all).
    #[arg(long, default_value = "*")]
    pub controllers: String,
    /// Works the execution controller syncs at once (Karmada's `--concurrent-work-syncs`).
    #[arg(long, default_value_t = flotilla_controllers::options::DEFAULT_CONCURRENT_WORK_SYNCS, value_parser = crate::up::parse_work_syncs)]
    pub concurrent_work_syncs: usize,
}

/// Runs the agent until SIGINT or SIGTERM.
pub async fn run(args: AgentArgs) -> anyhow::Result<()> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    let metrics = Metrics::default();
    let mut registry = Registry::default();
    metrics.register(&mut registry);
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
        KubeconfigSource::new(&args.kubeconfig, args.context.clone()),
        KubeconfigSource::new(&args.cluster_kubeconfig, args.cluster_context.clone()),
    );
    config.lease_duration = args.cluster_lease_duration;
    config.renew_interval = args.cluster_lease_duration / 4;
    config.controllers = args.controllers.clone();
    config.concurrent_work_syncs = args.concurrent_work_syncs;
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
    tracing::info!(cluster = %args.cluster_name, "agent starting");
    let result = flotilla_agent::run(config, metrics, shutdown).await;
    signal.abort();
    metrics_server.abort();
    result.with_context(|| format!("agent for cluster {}", args.cluster_name))
}
