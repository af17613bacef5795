//! The one Flotilla binary. Only this crate parses flags and sets up logging.

mod bench;

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
    /// Measure hot paths against baselines measured in the same run.
    Bench {
        #[command(subcommand)]
        target: BenchTarget,
    },
}

#[derive(Debug, Subcommand)]
enum BenchTarget {
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
    },
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("start the tokio runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Bench { target } => match target {
                BenchTarget::Store {
                    backends,
                    duration,
                    range_keys,
                    dir,
                } => bench_store(backends, duration, range_keys, dir).await,
            },
        }
    })
}

async fn bench_store(
    backends: Vec<String>,
    duration: Duration,
    range_keys: usize,
    dir: Option<PathBuf>,
) -> anyhow::Result<()> {
    let temp = tempfile::tempdir().context("create a temporary directory")?;
    let dir = dir.unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    let fsync = bench::store::raw_fsync_rate(&dir, Duration::from_secs(2))?;
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
                    json!((f.watch_deliveries / 200_000.0 * 100.0).round() / 100.0);
                figures.push(f);
            }
            other => anyhow::bail!("unknown backend {other:?}: use memory, redb or etcd"),
        }
    }
    let _ = &mut baselines;
    bench::store::report(&figures, &baselines, &ratios);
    Ok(())
}
