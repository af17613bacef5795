//! `flotilla up`: the all-in-one control plane — store, API server over HTTPS, credentials and a
//! kubeconfig in the data directory.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use flotilla_apiserver::auth::kubeconfig::{
    KubeconfigCredentials, KubeconfigNames, write_kubeconfig,
};
use flotilla_apiserver::auth::{pki::Pki, tls};
use flotilla_store::Store;

/// Which store backs the control plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StoreKind {
    Memory,
    Redb,
    Etcd,
}

/// Options of `flotilla up`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpOptions {
    /// The store: the embedded redb file (durable), etcd, or memory (nothing survives).
    #[arg(long, value_enum, default_value = "redb")]
    pub store: StoreKind,
    /// etcd endpoints for `--store etcd`, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:2379")]
    pub etcd_endpoints: Vec<String>,
    /// Where the store file, credentials and kubeconfig live.
    #[arg(long, default_value = "./flotilla-data")]
    pub data_dir: PathBuf,
    /// Address to serve HTTPS on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// The address members use to reach this control plane (kube-apiserver's
    /// `--advertise-address`; an IP or a DNS name, without the port): the server of
    /// `kube-public/cluster-info` that bootstrap-token registration reads, and a name in the
    /// serving certificate. Default: the listen address (127.0.0.1 when listening on all).
    #[arg(long)]
    pub advertise_address: Option<String>,
    /// More names (IPs or DNS names, comma separated) the serving certificate is valid for,
    /// like kubeadm's `--apiserver-cert-extra-sans`; the certificate is reissued when they change.
    #[arg(long, value_delimiter = ',')]
    pub tls_san: Vec<String>,
    /// kube-apiserver's `--shutdown-delay-duration`: after SIGTERM, keep serving this long with
    /// `/readyz` failing, so load balancers stop sending requests before the process goes.
    #[arg(long, default_value = "0s", value_parser = crate::bench::parse_duration)]
    pub shutdown_delay_duration: std::time::Duration,
    /// A static token file (kube-apiserver's --token-auth-file CSV format).
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// The longest lifetime of a certificate the CSR signer issues (kube-controller-manager's
    /// `--cluster-signing-duration`); a request's `expirationSeconds` may ask for less.
    #[arg(long, default_value = "8760h", value_parser = crate::bench::parse_duration)]
    pub cluster_signing_duration: std::time::Duration,
    /// Controllers to run, Karmada's syntax: `*` (every default-on controller), `name`, `-name`.
    #[arg(long, default_value = "*")]
    pub controllers: String,
    /// Where Prometheus scrapes every component's metrics (plain HTTP, `/metrics`), like
    /// Karmada's `--metrics-bind-address`; `0` turns it off.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_metrics_address)]
    pub metrics_bind_address: MetricsAddress,
    /// Karmada's `--enable-scheduler-estimator`: the scheduler also counts replicas per node
    /// from every Push member's nodes and pods (watched in process; no estimator to deploy).
    /// Needed by the NodeCount and GPU topology extensions.
    #[arg(long)]
    pub enable_scheduler_estimator: bool,
    /// Run Karmada's descheduler (an addon there, off by default): replicas of dynamically
    /// divided Deployments that a member cannot schedule go back to the scheduler. Same as
    /// adding `descheduler` to `--controllers` (which wins if it says `-descheduler`).
    #[arg(long)]
    pub enable_descheduler: bool,
    /// The descheduler's `--descheduling-interval`: time between two passes over the bindings.
    #[arg(long, default_value = "2m", value_parser = crate::bench::parse_duration)]
    pub descheduling_interval: std::time::Duration,
    /// The descheduler's `--unschedulable-threshold`: how long a pod must have been
    /// unschedulable before its replica is taken from its cluster.
    #[arg(long, default_value = "5m", value_parser = crate::bench::parse_duration)]
    pub unschedulable_threshold: std::time::Duration,
    /// Also start three simulated GPU member clusters (cn-shanghai, us-west-2, eu-central-1)
    /// in this process, join them in push mode, and add their contexts to the kubeconfig.
    #[arg(long)]
    pub demo: bool,
    /// How long Events are kept after they were last written (kube-apiserver's `--event-ttl`):
    /// e.g. `1h`, `30m`, `90s`; `0` keeps them forever.
    #[arg(long, default_value = "1h", value_parser = crate::bench::parse_duration)]
    pub event_ttl: std::time::Duration,
    /// The most object data (MiB) the API server's watch cache keeps in its window of recent
    /// changes, the history a watch resumes from (besides at most 100,000 changes): a watcher
    /// further behind gets `410 Expired` and relists. Larger keeps longer history under heavy
    /// writes, at that much memory.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub watch_cache_window_mib: u32,
    /// kube-apiserver's `--service-cluster-ip-range` (IPv4): Services created without a
    /// cluster IP get one of it, and its first address is the `default/kubernetes` Service's.
    /// The default is kubeadm's and `karmadactl init`'s.
    #[arg(long, default_value = "10.96.0.0/12", value_parser = parse_service_range)]
    pub service_cluster_ip_range: String,
    /// Karmada's feature gates, its syntax: `Failover=true,StatefulFailoverInjection=true`, or
    /// `AllAlpha=true,AllBeta=true` as Karmada's own deployment sets them. Defaults are
    /// Karmada's (`Failover` off: no taint manager, no ClusterTaintPolicy controller).
    #[arg(long, default_value = "", value_parser = parse_feature_gates)]
    pub feature_gates: flotilla_controllers::FeatureGates,
    /// Run the taint manager (with the `Failover` gate), Karmada's `--enable-taint-manager`.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_taint_manager: bool,
    /// Let NoExecute cluster taints evict workloads (Karmada's
    /// `--enable-no-execute-taint-eviction`, default false).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub enable_no_execute_taint_eviction: bool,
    /// How a NoExecute eviction purges the old copy when the policy sets no
    /// `failover.cluster`: `Gracefully` or `Directly`.
    #[arg(long, default_value = "Gracefully", value_parser = parse_purge_mode)]
    pub no_execute_taint_eviction_purge_mode: flotilla_controllers::PurgeMode,
    /// The longest a graceful eviction keeps the old copy (e.g. `10m`).
    #[arg(long, default_value = "10m", value_parser = crate::bench::parse_duration)]
    pub graceful_eviction_timeout: std::time::Duration,
    /// Evictions per second during cluster failover (0: one per 30 minutes).
    #[arg(long, default_value = "0.5", value_parser = parse_eviction_rate)]
    pub resource_eviction_rate: f32,
    /// Works the execution controller syncs at once (Karmada's `--concurrent-work-syncs`;
    /// Flotilla's default is higher than Karmada's 5, as each sync mostly waits on a member).
    #[arg(long, default_value_t = flotilla_controllers::options::DEFAULT_CONCURRENT_WORK_SYNCS, value_parser = parse_work_syncs)]
    pub concurrent_work_syncs: usize,
    /// Admit ClusterTaintPolicies with NoExecute taints (karmada-webhook's
    /// `--allow-no-execute-taint-policy`, default false: such a taint evicts every workload
    /// that does not tolerate it).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub allow_no_execute_taint_policy: bool,
    /// How often each FederatedHPA is evaluated (Karmada's
    /// `--horizontal-pod-autoscaler-sync-period`).
    #[arg(long, default_value = "15s", value_parser = crate::bench::parse_duration)]
    pub horizontal_pod_autoscaler_sync_period: std::time::Duration,
    /// How long a FederatedHPA without a scale-down stabilization window of its own keeps its
    /// highest recent recommendation (`--horizontal-pod-autoscaler-downscale-stabilization`).
    #[arg(long, default_value = "5m", value_parser = crate::bench::parse_duration)]
    pub horizontal_pod_autoscaler_downscale_stabilization: std::time::Duration,
    /// The change of the usage ratio (from 1.0) below which a FederatedHPA does not scale
    /// (`--horizontal-pod-autoscaler-tolerance`).
    #[arg(long, default_value_t = 0.1)]
    pub horizontal_pod_autoscaler_tolerance: f64,
    /// After a pod starts, how long its CPU samples may be skipped
    /// (`--horizontal-pod-autoscaler-cpu-initialization-period`).
    #[arg(long, default_value = "5m", value_parser = crate::bench::parse_duration)]
    pub horizontal_pod_autoscaler_cpu_initialization_period: std::time::Duration,
    /// After a pod starts, how long readiness changes count as its first
    /// (`--horizontal-pod-autoscaler-initial-readiness-delay`).
    #[arg(long, default_value = "30s", value_parser = crate::bench::parse_duration)]
    pub horizontal_pod_autoscaler_initial_readiness_delay: std::time::Duration,
}

pub(crate) fn parse_feature_gates(
    text: &str,
) -> Result<flotilla_controllers::FeatureGates, String> {
    flotilla_controllers::FeatureGates::parse(text).map_err(|e| e.to_string())
}

fn parse_purge_mode(text: &str) -> Result<flotilla_controllers::PurgeMode, String> {
    flotilla_controllers::PurgeMode::parse(text).map_err(|e| e.to_string())
}

pub(crate) fn parse_work_syncs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(format!("{text:?} is not a number of Works from 1 to 4096")),
    }
}

fn parse_eviction_rate(text: &str) -> Result<f32, String> {
    flotilla_controllers::options::parse_eviction_rate(text).map_err(|e| e.to_string())
}

impl UpOptions {
    /// The controllers' feature gates and failover flags.
    /// `--controllers`, with `descheduler` added by `--enable-descheduler`.
    pub fn controller_list(&self) -> String {
        if self.enable_descheduler {
            format!(
                "{},{}",
                self.controllers,
                flotilla_controllers::descheduler::NAME
            )
        } else {
            self.controllers.clone()
        }
    }

    pub fn controller_options(&self) -> flotilla_controllers::ControllerOptions {
        flotilla_controllers::ControllerOptions {
            gates: self.feature_gates.clone(),
            failover: flotilla_controllers::FailoverOptions {
                enable_taint_manager: self.enable_taint_manager,
                enable_no_execute_taint_eviction: self.enable_no_execute_taint_eviction,
                no_execute_taint_eviction_purge_mode: self.no_execute_taint_eviction_purge_mode,
                graceful_eviction_timeout: self.graceful_eviction_timeout,
                resource_eviction_rate: self.resource_eviction_rate,
                ..flotilla_controllers::FailoverOptions::default()
            },
            concurrent_work_syncs: self.concurrent_work_syncs,
            hpa: flotilla_controllers::options::HpaOptions {
                sync_period: self.horizontal_pod_autoscaler_sync_period,
                tunables: flotilla_controllers::lifted::hpa::Tunables {
                    tolerance: self.horizontal_pod_autoscaler_tolerance,
                    cpu_initialization_period: signed(
                        self.horizontal_pod_autoscaler_cpu_initialization_period,
                    ),
                    initial_readiness_delay: signed(
                        self.horizontal_pod_autoscaler_initial_readiness_delay,
                    ),
                    downscale_stabilization: signed(
                        self.horizontal_pod_autoscaler_downscale_stabilization,
                    ),
                },
            },
            descheduler: flotilla_controllers::descheduler::DeschedulerOptions {
                interval: self.descheduling_interval,
                unschedulable_threshold: self.unschedulable_threshold,
            },
        }
    }
}

fn signed(duration: std::time::Duration) -> jiff::SignedDuration {
    jiff::SignedDuration::try_from(duration).unwrap_or(jiff::SignedDuration::MAX)
}

/// `--metrics-bind-address`: an address, or off.
#[derive(Debug, Clone, Copy)]
pub struct MetricsAddress(pub Option<SocketAddr>);

fn parse_service_range(text: &str) -> Result<String, String> {
    match flotilla_apiserver::service_ips::ServiceIps::parse(text) {
        Some(_) => Ok(text.to_owned()),
        None => Err(format!(
            "{text:?} is not an IPv4 range in CIDR notation with at least 4 addresses (e.g. 10.96.0.0/12)"
        )),
    }
}

fn parse_metrics_address(text: &str) -> Result<MetricsAddress, String> {
    if text == "0" {
        return Ok(MetricsAddress(None));
    }
    text.parse()
        .map(|a| MetricsAddress(Some(a)))
        .map_err(|_| format!("{text:?} is not host:port (or 0 to turn metrics off)"))
}

/// Compacts a memory store's history in the background, as kube-apiserver compacts etcd
/// (redb compacts itself): superseded versions older than five minutes and more than 100,000
/// revisions back go. Without it every version ever written stays in memory.
pub fn spawn_compaction(store: Arc<dyn Store>) {
    let compactor = flotilla_store::Compactor::new(flotilla_store::Retention::default());
    tokio::spawn(async move {
        if let Err(error) = compactor
            .run(store, std::time::Duration::from_secs(10))
            .await
        {
            tracing::warn!(%error, "store compaction stopped");
        }
    });
}

async fn open_store(options: &UpOptions) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match options.store {
        StoreKind::Memory => {
            let store: Arc<dyn Store> = Arc::new(flotilla_store::MemoryStore::new());
            spawn_compaction(store.clone());
            store
        }
        StoreKind::Redb => {
            let dir = options.data_dir.join("store");
            Arc::new(
                flotilla_store_redb::RedbStore::open(
                    &dir,
                    flotilla_store_redb::RedbOptions::default(),
                )
                .with_context(|| format!("open the redb store in {}", dir.display()))?,
            )
        }
        StoreKind::Etcd => {
            let etcd = flotilla_store_etcd::EtcdOptions::new(options.etcd_endpoints.clone());
            Arc::new(
                flotilla_store_etcd::EtcdStore::connect(etcd)
                    .await
                    .with_context(|| {
                        format!("connect to etcd at {}", options.etcd_endpoints.join(","))
                    })?,
            )
        }
    })
}

/// Runs the control plane until SIGINT or SIGTERM.
pub async fn run(options: UpOptions) -> anyhow::Result<()> {
    tls::install_crypto_provider();
    let (known, off) = flotilla_controllers::manager::controller_names();
    let selection =
        flotilla_runtime::ControllerSelection::parse(&options.controller_list(), &known, &off)?;
    std::fs::create_dir_all(&options.data_dir)
        .with_context(|| format!("create the data directory {}", options.data_dir.display()))?;
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("listen on {}", options.listen))?;
    let address = listener
        .local_addr()
        .context("read the listening address")?;
    let mut hosts = vec!["localhost".to_owned()];
    if !address.ip().is_unspecified() {
        hosts.push(address.ip().to_string());
    }
    hosts.extend(options.advertise_address.iter().cloned());
    hosts.extend(
        options
            .tls_san
            .iter()
            .filter(|h| !h.trim().is_empty())
            .cloned(),
    );
    let pki = Arc::new(
        Pki::load_or_create(&options.data_dir.join("pki"), &hosts)
            .context("create or load the certificates")?,
    );
    let server_config = tls::server_config(&pki, std::slice::from_ref(pki.ca_cert_der()))
        .context("configure TLS")?;
    let signing_key = flotilla_apiserver::auth::jwt::SigningKey::load_or_create(pki.dir())
        .context("create or load the service-account signing key")?;
    let store = open_store(&options).await?;
    let proxy = crate::cluster_proxy::MemberProxy::new();
    let search = flotilla_controllers::search::SearchCache::new();
    let metrics_adapter = crate::resource_metrics::MetricsAdapter::new();
    let mut running = flotilla_apiserver::Builder::new(store)
        .allow_no_execute_taint_policy(options.allow_no_execute_taint_policy)
        .federated_quota_enforcement(options.feature_gates.federated_quota_enforcement())
        .multiple_pod_templates_scheduling(
            options
                .feature_gates
                .enabled("MultiplePodTemplatesScheduling"),
        )
        .cluster_proxy(proxy.clone())
        .search(Arc::new(crate::search::Search(search.clone())))
        .resource_metrics(Arc::new(metrics_adapter.clone()))
        .service_account_key(Arc::new(signing_key))
        .root_ca(pki.ca_cert_pem())
        .csr_signing(pki.clone(), options.cluster_signing_duration)
        .event_ttl(options.event_ttl)
        .cache_window_bytes((options.watch_cache_window_mib as usize).saturating_mul(1 << 20))
        .service_cluster_ip_range(&options.service_cluster_ip_range)
        .context("--service-cluster-ip-range")?
        .start()
        .await
        .context("start the API server")?;
    let mut authenticator = running.authenticator();
    if let Some(path) = &options.token_auth_file {
        authenticator = authenticator
            .with_token_file(path)
            .with_context(|| format!("load the token file {}", path.display()))?;
    }
    let host = if address.ip().is_unspecified() {
        "127.0.0.1".to_owned()
    } else if address.is_ipv6() {
        format!("[{}]", address.ip())
    } else {
        address.ip().to_string()
    };
    let url = format!("https://{host}:{}", address.port());
    let kubeconfig = options.data_dir.join("kubeconfig");
    write_kubeconfig(
        &kubeconfig,
        &KubeconfigCredentials::admin(&pki, &url),
        &KubeconfigNames::default(),
    )
    .with_context(|| format!("write {}", kubeconfig.display()))?;
    let kubeconfig = std::fs::canonicalize(&kubeconfig).unwrap_or(kubeconfig);
    // `default/kubernetes` at the advertised address: an IP given as `--advertise-address`,
    // else the listen address (127.0.0.1 when listening on all).
    let service_address = options
        .advertise_address
        .as_deref()
        .and_then(|host| host.trim_matches(['[', ']']).parse().ok())
        .unwrap_or(if address.ip().is_unspecified() {
            std::net::IpAddr::from([127, 0, 0, 1])
        } else {
            address.ip()
        });
    running.keep_kubernetes_service(
        std::net::SocketAddr::new(service_address, address.port()),
        options.store != StoreKind::Etcd,
    );
    // Pull-mode registration: cluster-info and the RBAC `karmadactl init` creates.
    let advertised = match &options.advertise_address {
        Some(host) => format!("https://{}:{}", bracket_ipv6(host), address.port()),
        None => url.clone(),
    };
    crate::registration::ensure(
        &component_client(&running, "installer"),
        &advertised,
        pki.ca_cert_pem(),
    )
    .await
    .context("set up bootstrap-token registration")?;
    // The multi-cluster services API's CRDs (ServiceExport, ServiceImport), which Karmada's
    // installer puts on every control plane.
    flotilla_controllers::service_export::api::ensure_crds(&component_client(
        &running,
        "installer",
    ))
    .await
    .context("install the multicluster.x-k8s.io CRDs")?;
    let components = flotilla_runtime::Shutdown::new();
    let mut registry = prometheus_client::registry::Registry::default();
    let scheduler_metrics = flotilla_scheduler::run::Metrics::default();
    scheduler_metrics.register(&mut registry);
    let controller_metrics = flotilla_controllers::Metrics::default();
    controller_metrics.register(&mut registry);
    flotilla_runtime::queue::metrics::register(&mut registry);
    running.server.register_metrics(&mut registry);
    let registry = Arc::new(registry);
    // kube-apiserver serves its metrics on its own port too: the same registry at `/metrics`.
    running.server.metrics_text().bind({
        let registry = registry.clone();
        Arc::new(move || crate::metrics::encode(&registry))
    });
    let metrics_server = match options.metrics_bind_address.0 {
        Some(address) => {
            // Metrics are not worth refusing to run the control plane over (a second `up` on
            // one machine, say): say so loudly and go on.
            match crate::metrics::serve(address, registry, components.clone()).await {
                Ok(task) => Some(task),
                Err(error) => {
                    tracing::warn!(error = format!("{error:#}"), "metrics are not served");
                    None
                }
            }
        }
        None => None,
    };
    // Push members are reached with the Cluster's endpoint and the token and CA of the Secret
    // its `spec.secretRef` names; the cluster proxy, the controllers and the scheduler's
    // estimator share the clients.
    let members: Arc<dyn flotilla_member::MemberClients> =
        flotilla_member::SecretMemberClients::start(
            component_client(&running, "member-clients"),
            components.clone(),
        );
    proxy.bind(members.clone());
    // karmada-metrics-adapter's resource metrics: every member's metrics API, merged.
    metrics_adapter.bind(
        component_client(&running, "karmada-metrics-adapter"),
        members.clone(),
    );
    // karmada-search: every replica caches what the ResourceRegistries ask for itself (not
    // leader-elected, as karmada-search is not).
    let search_task = tokio::spawn(flotilla_controllers::search::run(
        component_client(&running, "karmada-search"),
        members.clone(),
        search,
        components.clone(),
    ));
    let estimator = options.enable_scheduler_estimator.then(|| {
        flotilla_scheduler::run::members::MemberNodes::with_metrics(
            Arc::new(MemberConnector(members.clone())),
            Some(controller_metrics.estimator.clone()),
        )
    });
    let scheduler = start_scheduler(
        &running,
        &components,
        scheduler_metrics,
        estimator,
        &options.feature_gates,
    );
    let controllers = start_controller_manager(
        &running,
        &components,
        selection,
        members,
        controller_metrics,
        Arc::new(options.controller_options()),
    );
    // The demo's members join once the controllers run: a durable store remembers the members
    // of an earlier run, and their removal waits for the cluster controller to release them.
    let _demo = if options.demo {
        let demo = crate::demo::start(&component_client(&running, "demo"), &kubeconfig).await?;
        print!("{}", demo.sim.table());
        Some(demo)
    } else {
        None
    };
    println!("Flotilla is ready at {url}");
    println!("export KUBECONFIG={}", kubeconfig.display());
    tracing::info!(%url, store = ?options.store, "serving");
    flotilla_apiserver::serve::serve_tls(
        listener,
        running
            .server
            .clone()
            .with_shutdown_delay(options.shutdown_delay_duration),
        server_config,
        Arc::new(authenticator),
        shutdown_signal(),
    )
    .await
    .context("serve")?;
    components.cancel();
    if let Err(error) = scheduler.await {
        tracing::warn!(%error, "the scheduler task failed");
    }
    let _ = search_task.await;
    if let Err(error) = controllers.await {
        tracing::warn!(%error, "the controller manager task failed");
    }
    if let Some(task) = metrics_server {
        let _ = task.await;
    }
    tracing::info!("shut down");
    drop(running);
    Ok(())
}

/// The in-process components talk to the API server through its tower service, as
/// `system:masters` (the role karmada's components get through their kubeconfig), with the
/// `User-Agent` of the Karmada component they stand for (so their writes' field manager is
/// `karmada-scheduler` or `karmada-controller-manager`, as with Karmada).
fn component_client(running: &flotilla_apiserver::Running, name: &str) -> kube::Client {
    let agent = match name {
        "scheduler" => user_agent("karmada-scheduler"),
        "controller-manager" | "member-clients" => {
            flotilla_member::CONTROLLER_MANAGER_USER_AGENT.to_owned()
        }
        other => user_agent(&format!("flotilla-{other}")),
    };
    flotilla_apiserver::client::in_process_as(
        &running.server,
        flotilla_apiserver::auth::authn::UserInfo {
            name: format!("system:flotilla:{name}"),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..Default::default()
        },
        &agent,
    )
}

/// `<component>/v<version> (flotilla)`, client-go's `User-Agent` shape.
fn user_agent(component: &str) -> String {
    format!("{component}/v{} (flotilla)", env!("CARGO_PKG_VERSION"))
}

/// The scheduler, leader-elected on the `karmada-scheduler` Lease in `karmada-system` so that
/// several `up` processes on one etcd never both write placements.
fn start_scheduler(
    running: &flotilla_apiserver::Running,
    shutdown: &flotilla_runtime::Shutdown,
    metrics: flotilla_scheduler::run::Metrics,
    estimator: Option<Arc<flotilla_scheduler::run::members::MemberNodes>>,
    gates: &flotilla_controllers::FeatureGates,
) -> tokio::task::JoinHandle<()> {
    let workload_affinity = gates.enabled("WorkloadAffinity");
    let overcommit_protection = gates.enabled("SchedulingOvercommitProtection");
    let client = component_client(running, "scheduler");
    // Karmada's scheduler registers the WorkloadAffinity plugins only with the gate on.
    let framework = flotilla_scheduler::Registry::in_tree_gated(workload_affinity)
        .framework(&["*"])
        .expect("`*` is always a valid plugin list");
    let identity = lease_identity();
    let elector = flotilla_runtime::LeaderElector::new(
        client.clone(),
        flotilla_runtime::LeaseConfig::new("karmada-system", "karmada-scheduler", identity),
    );
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        elector
            .run(&shutdown, move |term| {
                let scheduler = flotilla_scheduler::run::Scheduler::new(
                    client.clone(),
                    flotilla_scheduler::run::SchedulerConfig {
                        members: estimator.clone(),
                        framework: framework.clone(),
                        workload_affinity,
                        overcommit_protection,
                        ..Default::default()
                    },
                    metrics.clone(),
                );
                async move {
                    if let Err(error) = scheduler.run(term).await {
                        tracing::error!(%error, "the scheduler stopped");
                    }
                }
            })
            .await;
    })
}

/// The controller manager, leader-elected on `karmada-system/karmada-controller-manager` like
/// Karmada's, running every controller `--controllers` enables.
fn start_controller_manager(
    running: &flotilla_apiserver::Running,
    shutdown: &flotilla_runtime::Shutdown,
    selection: flotilla_runtime::ControllerSelection,
    members: Arc<dyn flotilla_member::MemberClients>,
    metrics: flotilla_controllers::Metrics,
    options: Arc<flotilla_controllers::ControllerOptions>,
) -> tokio::task::JoinHandle<()> {
    let client = component_client(running, "controller-manager");
    let elector = flotilla_runtime::LeaderElector::new(
        client.clone(),
        flotilla_runtime::LeaseConfig::new(
            "karmada-system",
            "karmada-controller-manager",
            lease_identity(),
        ),
    );
    let shutdown = shutdown.clone();
    let selection = Arc::new(selection);
    tokio::spawn(async move {
        elector
            .run(&shutdown, move |term| {
                let informers = flotilla_runtime::Informers::new(client.clone());
                let context = flotilla_controllers::Context {
                    client: client.clone(),
                    member_objects: Arc::new(flotilla_controllers::member_cache::MemberCache::new(
                        members.clone(),
                    )),
                    members: members.clone(),
                    cluster: None,
                    metrics: metrics.clone(),
                    informers: informers.clone(),
                    interpreter: Arc::new(flotilla_controllers::interpreter::Customizations::new(
                        informers,
                    )),
                    options: options.clone(),
                };
                let selection = selection.clone();
                async move {
                    flotilla_controllers::run_controllers(context, &selection, term).await;
                }
            })
            .await;
    })
}

/// The scheduler's way to members: the controllers' clients (built from each Cluster's Secret).
#[derive(Debug)]
struct MemberConnector(Arc<dyn flotilla_member::MemberClients>);

impl flotilla_scheduler::run::members::MemberConnector for MemberConnector {
    fn connect(
        &self,
        cluster: &str,
    ) -> futures::future::BoxFuture<'static, Result<kube::Client, String>> {
        let members = self.0.clone();
        let cluster = cluster.to_owned();
        Box::pin(async move { members.client(&cluster).await.map_err(|e| e.to_string()) })
    }
}

fn lease_identity() -> String {
    format!(
        "{}_{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "flotilla".into()),
        uuid::Uuid::new_v4()
    )
}

pub(crate) async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(error) => {
            tracing::warn!(%error, "cannot listen for SIGTERM");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: shutting down"),
    }
}

/// `host` as the authority of a URL: an IPv6 address in brackets.
fn bracket_ipv6(host: &str) -> String {
    let host = host.trim();
    if host.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Up {
        #[command(flatten)]
        options: super::UpOptions,
    }

    #[test]
    fn the_watch_cache_window_defaults_to_64_mib_and_must_be_positive() {
        let up = Up::try_parse_from(["up"]).expect("every flag has a default");
        assert_eq!(up.options.watch_cache_window_mib, 64);
        let up = Up::try_parse_from(["up", "--watch-cache-window-mib", "256"]).expect("valid");
        assert_eq!(up.options.watch_cache_window_mib, 256);
        for bad in ["0", "-1", "64Mi"] {
            let flag = format!("--watch-cache-window-mib={bad}");
            let error = Up::try_parse_from(["up", flag.as_str()])
                .expect_err("not a positive number of MiB")
                .to_string();
            assert!(error.contains("--watch-cache-window-mib"), "{error}");
        }
    }

    #[test]
    fn concurrent_work_syncs_reach_the_controllers_and_must_be_positive() {
        let up = Up::try_parse_from(["up"]).expect("every flag has a default");
        assert_eq!(
            up.options.controller_options().concurrent_work_syncs,
            flotilla_controllers::options::DEFAULT_CONCURRENT_WORK_SYNCS
        );
        let up = Up::try_parse_from(["up", "--concurrent-work-syncs", "5"]).expect("Karmada's");
        assert_eq!(up.options.controller_options().concurrent_work_syncs, 5);
        for bad in ["0", "-3", "many", "5000"] {
            let flag = format!("--concurrent-work-syncs={bad}");
            let error = Up::try_parse_from(["up", flag.as_str()])
                .expect_err("not a usable number of Works")
                .to_string();
            assert!(error.contains("--concurrent-work-syncs"), "{error}");
        }
    }
}
