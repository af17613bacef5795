//! The one Flotilla binary. Only this crate parses flags and sets up logging.

mod agent;
mod bench;
mod cluster_proxy;
mod demo;
mod interpret;
mod join;
mod metrics;
mod registration;
mod resource_metrics;
mod schedule;
mod search;
mod sim;
mod token;
mod up;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use serde_json::json;

#[derive(Debug, Parser)]
#[command(
    name = "flotilla",
    version,
    about = "A Karmada-compatible multi-cluster control plane in one binary"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the control plane: store, API server over HTTPS, credentials and a kubeconfig.
    Up(Box<up::UpOptions>),
    /// What-if scheduling: schedule a workload onto clusters from files, as Karmada would.
    Schedule(schedule::ScheduleArgs),
    /// Simulated member clusters (API server, nodes, scheduler, controllers) and their faults.
    Sim(Box<sim::SimArgs>),
    /// Register a member cluster in push mode (Karmada's `karmadactl join`).
    Join(join::JoinArgs),
    /// Remove a member cluster: the Cluster, its Secret, its execution namespace, and what join
    /// created in the member.
    Unjoin(join::UnjoinArgs),
    /// The pull-mode agent: registers a member (syncMode Pull), heartbeats, runs its controllers.
    Agent(Box<agent::AgentArgs>),
    /// Bootstrap tokens for pull-mode registration (Karmada's `karmadactl token`).
    Token(token::TokenArgs),
    /// Check ResourceInterpreterCustomizations, or run one interpreter operation locally on
    /// objects from files (Karmada's `karmadactl interpret`).
    Interpret(interpret::InterpretArgs),
    /// Measure hot paths against baselines measured in the same run.
    Bench {
        #[command(subcommand)]
        target: BenchTarget,
    },
}

#[derive(Debug, Subcommand)]
enum BenchTarget {
    /// The pure scheduling core (bindings/s, P99) and the accurate estimator on a large member.
    Schedule {
        /// Clusters in the snapshot.
        #[arg(long, default_value_t = 100)]
        clusters: usize,
        /// Bindings of mixed strategies.
        #[arg(long, default_value_t = 10_000)]
        bindings: usize,
        /// Nodes of the member the accurate estimator counts.
        #[arg(long, default_value_t = 5_000)]
        nodes: usize,
        /// Bindings per phase of the end-to-end run (live scheduler + in-process API server on
        /// redb); 0 skips it.
        #[arg(long, default_value_t = 10_000)]
        e2e_bindings: usize,
        /// Scheduler workers in the end-to-end run (0: the scheduler's default).
        #[arg(long, default_value_t = 0)]
        e2e_workers: usize,
    },
    /// The API server over HTTPS on redb: creates/s with P50/P99, get/list P99, watch fan-out,
    /// RSS per stored Deployments.
    Apiserver {
        /// Deployments stored by the end of the run.
        #[arg(long, default_value_t = 100_000)]
        objects: usize,
        /// Concurrent kube-rs clients.
        #[arg(long, default_value_t = 32)]
        clients: usize,
    },
    /// Simulated clusters: time to all-ready, pods scheduled/s, RSS (100 × 5,000 nodes by default).
    Sim(bench::sim::SimBenchOptions),
    /// Member clusters joined to a control plane: registration time to Ready with summaries,
    /// status-collection CPU per cluster, RSS (100 × 5,000 nodes by default).
    Clusters(bench::clusters::ClustersBenchOptions),
    /// Propagation end to end (control plane + sim members in push mode): apply→applied latency
    /// one at a time, and a burst's time to all applied/ready, Works/s, RSS and CPU.
    Propagate(bench::propagate::PropagateBenchOptions),
    /// Store backends: puts/s (1 and 64 writers), watch fan-out, range of 100,000 keys.
    Store {
        /// Backends to measure, comma separated: memory, redb, etcd.
        #[arg(long, value_delimiter = ',', default_value = "memory,redb,etcd")]
        backends: Vec<String>,
        /// How long each put measurement runs.
        #[arg(long, default_value = "3s", value_parser = bench::parse_duration)]
        duration: Duration,
        /// Keys loaded for the range measurement.
        #[arg(long, default_value_t = 100_000)]
        range_keys: usize,
        /// Directory for the redb file and the fsync baseline (default: a temporary directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// An etcd to measure; without it the bench starts its own single-member etcd.
        #[arg(long, value_delimiter = ',')]
        etcd_endpoints: Vec<String>,
    },
}

/// mimalloc instead of glibc's malloc: the control plane allocates and frees many small JSON
/// buffers per request, and glibc spent about a third of the CPU of `bench schedule`'s end-to-end
/// run in malloc/free/consolidate (docs/apiserver.md, "Allocator"), as in `bench sim`
/// (docs/sim.md, "Figures"). The `system-allocator` feature keeps glibc's, for heap profilers
/// that hook malloc (heaptrack).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e` (`mimalloc.h`; libmimalloc-sys names
/// no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long mimalloc keeps freed memory before returning it to the OS, ms (its own default is
/// 1,000). Returning it at once (0, this binary's setting until 2026-12-04) kept RSS lowest but
/// made every page freed in a write burst come back as a new page fault (zeroed, often a whole
/// 2 MiB huge page) moments later: ~170,000 minor faults in one `bench schedule` end-to-end run
/// against 25,000-47,000 with this delay and a purger, and ~11 % more process CPU (docs/apiserver.md, "Allocator").
const PURGE_DELAY_MS: i64 = 100;

/// How often the purger thread lets mimalloc return memory whose delay expired. mimalloc purges
/// only from inside its own calls, so an idle process would otherwise keep what it freed last
/// (with the 1 s default and no purger, `bench apiserver` ended at 597-608 MiB for 100,000
/// Deployments instead of 583-589).
const PURGE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

/// Freed memory goes back to the OS [`PURGE_DELAY_MS`] after it was freed, also when the process
/// is idle (a purger thread). `MIMALLOC_PURGE_DELAY` in the environment overrides the delay.
fn tune_allocator() {
    if cfg!(feature = "system-allocator") {
        return;
    }
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: `mi_option_set` only stores an option value, may be called at any time, from
        // any thread, and takes no pointers.
        #[allow(unsafe_code)]
        unsafe {
            libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS as _)
        };
    }
    let purger = std::thread::Builder::new()
        .name("mimalloc-purge".to_owned())
        .spawn(|| {
            loop {
                std::thread::sleep(PURGE_INTERVAL);
                // SAFETY: `mi_collect` takes no pointers; from any thread it frees that thread's
                // own empty pages and purges the process-wide arenas' expired ranges.
                #[allow(unsafe_code)]
                unsafe {
                    libmimalloc_sys::mi_collect(false)
                };
            }
        });
    if let Err(error) = purger {
        eprintln!("mimalloc purger thread not started: {error}");
    }
}

/// No transparent huge pages for this process (`prctl(PR_SET_THP_DISABLE)`, which covers the
/// memory mimalloc already reserved and advised for huge pages before `main`): for the simulated
/// clusters, whose heap is many small objects spread over the arenas, 2 MiB pages cost 5–8 % of
/// their RSS (1 × 5,000 nodes × 20,000 pods: 344 → 326 MiB per cluster, docs/sim.md, "fifth
/// round"). The control plane keeps the default.
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes a flag of this
        // process's memory map; it cannot invalidate any memory Rust holds.
        #[allow(unsafe_code)]
        let result = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
        if result != 0 {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "transparent huge pages stay enabled"
            );
        }
    }
}

fn main() -> anyhow::Result<()> {
    tune_allocator();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    if matches!(
        &cli.command,
        Command::Sim(_)
            | Command::Bench {
                target: BenchTarget::Sim(_)
            }
    ) {
        no_transparent_huge_pages();
    }
    if let Command::Schedule(args) = &cli.command {
        std::process::exit(schedule::main(args));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the tokio runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Up(options) => up::run(*options).await,
            Command::Schedule(_) => unreachable!("handled before the runtime starts"),
            Command::Sim(args) => sim::run(*args).await,
            Command::Join(args) => join::run_join(args).await,
            Command::Agent(args) => agent::run(*args).await,
            Command::Token(args) => token::run(args).await,
            Command::Interpret(args) => std::process::exit(interpret::main(&args).await),
            Command::Unjoin(args) => join::run_unjoin(args).await,
            Command::Bench { target } => match target {
                BenchTarget::Schedule {
                    clusters,
                    bindings,
                    nodes,
                    e2e_bindings,
                    e2e_workers,
                } => {
                    let figures = bench::schedule::run(clusters, bindings, nodes)?;
                    let e2e = if e2e_bindings > 0 {
                        Some(bench::schedule_e2e::run(clusters, e2e_bindings, e2e_workers).await?)
                    } else {
                        None
                    };
                    bench::schedule::report(&figures, e2e.as_ref());
                    Ok(())
                }
                BenchTarget::Apiserver { objects, clients } => {
                    let figures = bench::apiserver::run(objects, clients).await?;
                    bench::apiserver::report(&figures);
                    Ok(())
                }
                BenchTarget::Clusters(options) => {
                    let figures = bench::clusters::run(&options).await?;
                    bench::clusters::report(&figures);
                    Ok(())
                }
                BenchTarget::Propagate(options) => {
                    let figures = bench::propagate::run(&options).await?;
                    bench::propagate::report(&figures);
                    Ok(())
                }
                BenchTarget::Sim(options) => {
                    let figures = bench::sim::run(&options).await?;
                    bench::sim::report(&figures);
                    Ok(())
                }
                BenchTarget::Store {
                    backends,
                    duration,
                    range_keys,
                    dir,
                    etcd_endpoints,
                } => bench_store(backends, duration, range_keys, dir, etcd_endpoints).await,
            },
        }
    })
}

async fn bench_store(
    backends: Vec<String>,
    duration: Duration,
    range_keys: usize,
    dir: Option<PathBuf>,
    etcd_endpoints: Vec<String>,
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir().context("create a temporary directory")?;
    let dir = dir.unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    eprintln!("bench store: raw fsync rate of {}", dir.display());
    let fsync = bench::store::raw_fsync_rate(&dir, Duration::from_secs(3))?;
    let mut figures = Vec::new();
    let mut baselines = json!({"raw_fsync_per_s": fsync.round()});
    let mut ratios = json!({});
    for backend in &backends {
        match backend.as_str() {
            "memory" => {
                let store: Arc<dyn flotilla_store::Store> =
                    Arc::new(flotilla_store::MemoryStore::new());
                let f = bench::store::measure("memory", store, duration, range_keys).await?;
                ratios["memory_watch_deliveries_vs_target_200k"] =
                    ratio(f.watch_deliveries, 200_000.0);
                figures.push(f);
            }
            "redb" => {
                let path = dir.join("bench-redb");
                let store: Arc<dyn flotilla_store::Store> = Arc::new(
                    flotilla_store_redb::RedbStore::open(
                        &path,
                        flotilla_store_redb::RedbOptions::default(),
                    )
                    .with_context(|| format!("open redb in {}", path.display()))?,
                );
                let f = bench::store::measure("redb", store, duration, range_keys).await?;
                ratios["redb_puts_64_vs_raw_fsync"] = ratio(f.puts_64, fsync);
                ratios["redb_puts_64_vs_target_20k"] = ratio(f.puts_64, 20_000.0);
                figures.push(f);
            }
            "etcd" => {
                let (endpoints, _cluster) = if etcd_endpoints.is_empty() {
                    eprintln!("bench store: starting a single-member etcd");
                    let cluster = flotilla_store_etcd::testing::EtcdCluster::start(1)
                        .await
                        .context("start etcd (apt-get install etcd-server)")?;
                    (cluster.endpoints(), Some(cluster))
                } else {
                    (etcd_endpoints.clone(), None)
                };
                eprintln!("bench store: raw etcd-client puts with 1 and 64 writers");
                let raw_1 =
                    flotilla_store_etcd::raw_put_baseline(&endpoints, 1, 2048, duration).await?;
                let raw_64 =
                    flotilla_store_etcd::raw_put_baseline(&endpoints, 64, 2048, duration).await?;
                let store: Arc<dyn flotilla_store::Store> = Arc::new(
                    flotilla_store_etcd::EtcdStore::connect(flotilla_store_etcd::EtcdOptions::new(
                        endpoints.clone(),
                    ))
                    .await
                    .context("connect to etcd")?,
                );
                // The same operation as the baseline: unconditional puts through our store.
                eprintln!("bench store: etcd: unconditional puts through EtcdStore");
                let ours_1 =
                    flotilla_store_etcd::store_put_rate(store.clone(), 1, 2048, duration).await?;
                let ours_64 =
                    flotilla_store_etcd::store_put_rate(store.clone(), 64, 2048, duration).await?;
                let f = bench::store::measure("etcd", store, duration, range_keys).await?;
                baselines["etcd_client_puts_per_s_1_writer"] = json!(raw_1.round());
                baselines["etcd_client_puts_per_s_64_writers"] = json!(raw_64.round());
                baselines["etcd_store_unconditional_puts_per_s_1_writer"] = json!(ours_1.round());
                baselines["etcd_store_unconditional_puts_per_s_64_writers"] =
                    json!(ours_64.round());
                ratios["etcd_store_puts_1_vs_etcd_client"] = ratio(ours_1, raw_1);
                ratios["etcd_store_puts_64_vs_etcd_client"] = ratio(ours_64, raw_64);
                // Creates are compare-and-swap transactions (what the API server sends).
                ratios["etcd_cas_creates_1_vs_etcd_client_puts"] = ratio(f.puts_1, raw_1);
                ratios["etcd_cas_creates_64_vs_etcd_client_puts"] = ratio(f.puts_64, raw_64);
                figures.push(f);
            }
            other => anyhow::bail!("unknown backend {other:?}: use memory, redb or etcd"),
        }
    }
    bench::store::report(&figures, &baselines, &ratios);
    Ok(())
}

fn ratio(value: f64, baseline: f64) -> serde_json::Value {
    if baseline > 0.0 {
        json!((value / baseline * 100.0).round() / 100.0)
    } else {
        serde_json::Value::Null
    }
}
