//! `flotilla sim`: simulated member clusters in one process, and `flotilla sim fault` to break
//! them on demand through the running sim's control endpoint.

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use flotilla_sim::config::SimConfig;
use flotilla_sim::control::{self, FaultRequest};

/// `flotilla sim [options]` or `flotilla sim fault …`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimArgs {
    #[command(subcommand)]
    pub action: Option<SimAction>,
    #[command(flatten)]
    pub run: SimOptions,
}

#[derive(Debug, clap::Subcommand)]
pub enum SimAction {
    /// Inject or lift a fault in a running sim (reads the control endpoint from its kubeconfig).
    Fault(FaultOptions),
}

/// Options of `flotilla sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimOptions {
    /// YAML file with clusters and node pools (see docs/sim.md).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Cluster names, comma separated (instead of --config).
    #[arg(long, value_delimiter = ',', conflicts_with = "config")]
    pub clusters: Vec<String>,
    /// Number of clusters named <prefix>1..<prefix>N (instead of --clusters).
    #[arg(long, conflicts_with_all = ["config", "clusters"])]
    pub count: Option<usize>,
    /// Name prefix for --count.
    #[arg(long, default_value = "member")]
    pub prefix: String,
    /// Nodes per cluster with --clusters/--count.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true)]
    pub nodes: i64,
    /// Node profile with --clusters/--count: cpu, gpu-a100 or gpu-h100.
    #[arg(long, default_value = "cpu")]
    pub node_profile: String,
    /// Address every cluster listens on (each on its own free port).
    #[arg(long, default_value = "127.0.0.1")]
    pub listen: IpAddr,
    /// Where to write the kubeconfig (one context per cluster, named after it).
    #[arg(long, default_value = "./flotilla-sim.kubeconfig")]
    pub kubeconfig_out: PathBuf,
    /// Seed of node names, zones, latencies and scheduling tie-breaks (overrides the config).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Time from binding to Running+Ready (`1s`; `0` allowed).
    #[arg(long)]
    pub start_latency: Option<String>,
    /// Run time of Job pods before they succeed (`5s`).
    #[arg(long)]
    pub job_duration: Option<String>,
    /// How long pods stay on NotReady nodes before eviction (`300s`).
    #[arg(long)]
    pub eviction_timeout: Option<String>,
    /// How often node Leases are renewed (`10s`).
    #[arg(long)]
    pub lease_renew_interval: Option<String>,
    /// The window the metrics.k8s.io API averages usage over (`15s`; docs/sim.md, "Metrics").
    #[arg(long)]
    pub metrics_window: Option<String>,
    /// Record the clusters' own control loops in managedFields, as a real cluster does (by
    /// default only users' writes are; see docs/sim.md, "managedFields").
    #[arg(long)]
    pub track_own_writes: bool,
    /// Store the clusters' objects as plain JSON instead of compressed against each other
    /// (docs/sim.md, "Compact storage"); for comparison.
    #[arg(long)]
    pub plain_storage: bool,
    /// Give each cluster a kind cluster's system components: a `<cluster>-control-plane` node
    /// with the static control-plane pods, CoreDNS and kube-proxy (docs/sim.md).
    #[arg(long)]
    pub system_components: bool,
    /// Where the clusters' CAs and certificates are kept (default: a temporary directory).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// Options of `flotilla sim fault`.
#[derive(Debug, Clone, clap::Args)]
pub struct FaultOptions {
    /// The kubeconfig `flotilla sim --kubeconfig-out` wrote.
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// The cluster to break or mend.
    #[arg(long)]
    pub cluster: String,
    /// down, up, blackhole, slow, readyz-fail or nodes-notready.
    #[arg(value_parser = ["down", "up", "blackhole", "slow", "readyz-fail", "nodes-notready"])]
    pub fault: String,
    /// Delay of every response, for `slow` (`2s`).
    #[arg(long)]
    pub delay: Option<String>,
    /// Nodes to take NotReady, for `nodes-notready`.
    #[arg(long, default_value_t = 1)]
    pub count: usize,
}

impl SimOptions {
    /// The configuration these options describe (file or quick flags, then overrides).
    pub fn config(&self) -> anyhow::Result<SimConfig> {
        let mut config = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("read {}", path.display()))?;
                SimConfig::from_yaml(&text).with_context(|| format!("in {}", path.display()))?
            }
            None => {
                let names: Vec<String> = match self.count {
                    Some(n) => (1..=n).map(|i| format!("{}{i}", self.prefix)).collect(),
                    None if !self.clusters.is_empty() => self.clusters.clone(),
                    None => vec![format!("{}1", self.prefix)],
                };
                SimConfig::quick(&names, self.nodes, &self.node_profile)
            }
        };
        if self.seed.is_some() {
            config.seed = self.seed;
        }
        if self.track_own_writes {
            config.track_own_writes = Some(true);
        }
        if self.plain_storage {
            config.compact_storage = Some(false);
        }
        if self.system_components {
            config.system_components = Some(true);
        }
        for (flag, slot) in [
            (&self.start_latency, &mut config.start_latency),
            (&self.job_duration, &mut config.job_duration),
            (&self.eviction_timeout, &mut config.eviction_timeout),
            (&self.lease_renew_interval, &mut config.lease_renew_interval),
            (&self.metrics_window, &mut config.metrics_window),
        ] {
            if flag.is_some() {
                slot.clone_from(flag);
            }
        }
        Ok(config)
    }
}

pub async fn run(args: SimArgs) -> anyhow::Result<()> {
    match args.action {
        Some(SimAction::Fault(options)) => fault(options).await,
        None => serve(args.run).await,
    }
}

async fn serve(options: SimOptions) -> anyhow::Result<()> {
    let mut config = options.config()?;
    let seed = *config.seed.get_or_insert_with(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let spec = config.validate().context("invalid sim configuration")?;
    let temp = tempfile::tempdir().context("create a temporary directory")?;
    let dir = options
        .data_dir
        .clone()
        .unwrap_or_else(|| temp.path().to_owned());
    let nodes: usize = spec.clusters.iter().map(|c| c.node_count()).sum();
    eprintln!(
        "flotilla sim: starting {} cluster(s), {nodes} node(s), seed {seed}",
        spec.clusters.len()
    );
    let sim = Arc::new(
        flotilla_sim::Sim::start(&spec, options.listen, &dir)
            .await
            .context("start the simulated clusters")?,
    );
    let (control, _control_task) = control::start(sim.clone()).await?;
    flotilla_sim::kubeconfig::write(&options.kubeconfig_out, &sim.clusters, Some(&control))?;
    let kubeconfig = std::fs::canonicalize(&options.kubeconfig_out)
        .unwrap_or_else(|_| options.kubeconfig_out.clone());
    print!("{}", sim.table());
    println!("export KUBECONFIG={}", kubeconfig.display());
    println!(
        "fault control endpoint: {} (recorded in the kubeconfig)",
        control.url
    );
    tracing::info!(clusters = sim.clusters.len(), "simulation ready");
    shutdown_signal().await;
    drop(sim);
    Ok(())
}

async fn fault(options: FaultOptions) -> anyhow::Result<()> {
    let control = flotilla_sim::kubeconfig::read_control(&options.kubeconfig)?;
    let request = FaultRequest {
        cluster: options.cluster.clone(),
        fault: options.fault.clone(),
        delay: options.delay.clone(),
        count: (options.fault == "nodes-notready").then_some(options.count),
    };
    if request.fault == "slow" && request.delay.is_none() {
        anyhow::bail!("slow needs --delay (for example --delay 2s)");
    }
    let body = serde_json::to_value(&request).context("encode the request")?;
    let answer = control::call(&control, "POST", "/v1/faults", Some(body))
        .await
        .with_context(|| format!("apply {} to {}", options.fault, options.cluster))?;
    println!(
        "{}",
        serde_json::to_string_pretty(&answer).unwrap_or_default()
    );
    Ok(())
}

async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
