//! `flotilla bench sim`: clusters × nodes × pods through Deployments in one process. Reports time
//! to all-ready, pods scheduled per second (end to end through the API, and the scheduler's
//! in-memory decisions alone at the same node count), and RSS (when all pods are Ready, once
//! the clusters have settled, and per cluster); the baseline, measured in the same run after
//! the clusters are gone (so it does not count in their RSS), is the rate of bare pod creates
//! into one API server (what every scheduled pod costs at least once more).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;

/// Options of `flotilla bench sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimBenchOptions {
    /// Simulated clusters.
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    /// Nodes per cluster.
    #[arg(long, default_value_t = 5_000)]
    pub nodes: usize,
    /// Pods per cluster (through Deployments of --pods-per-deployment replicas).
    #[arg(long, default_value_t = 20_000)]
    pub pods: usize,
    #[arg(long, default_value_t = 200)]
    pub pods_per_deployment: usize,
    /// Start latency of pods.
    #[arg(long, default_value = "0")]
    pub start_latency: String,
    /// Lease renewal interval (a 5,000-node cluster renews 500 Leases/s at 10s).
    #[arg(long, default_value = "60s")]
    pub lease_renew_interval: String,
    /// Seconds to wait after all pods are Ready before the settled RSS is read (the clusters'
    /// store history is kept 10 s).
    #[arg(long, default_value_t = 15)]
    pub settle_secs: u64,
    /// Store the clusters' objects as plain JSON (docs/sim.md, "Compact storage"), to compare.
    #[arg(long)]
    pub plain_storage: bool,
}

#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub clusters: usize,
    pub nodes: usize,
    pub pods: usize,
    pub start_s: f64,
    pub all_ready_s: f64,
    pub scheduled_per_s: f64,
    pub decisions_per_s: f64,
    pub baseline_creates_per_s: f64,
    /// RSS when every pod is Ready.
    pub rss_mib: f64,
    /// RSS `settle_secs` later (compaction has dropped the pod phase's history).
    pub rss_settled_mib: f64,
    /// Peak RSS of the process (VmHWM).
    pub rss_peak_mib: f64,
    /// (settled RSS − RSS before the clusters started) / clusters.
    pub rss_per_cluster_mib: f64,
    /// CPU seconds (all threads) spent starting the clusters and nodes.
    pub start_cpu_s: f64,
    /// CPU seconds (all threads) from the first Deployment to all pods Ready: with other
    /// processes sharing the cores, the figure that does not depend on them.
    pub pods_cpu_s: f64,
}

fn cpu_s() -> f64 {
    super::propagate::world::cpu_seconds_of("/proc/self/stat")
}

fn rss_mib() -> f64 {
    status_mib("VmRSS:")
}

/// A `/proc/self/status` figure in kB, as MiB (0 where unreadable).
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map(|kib| kib / 1024.0)
        .unwrap_or(0.0)
}

fn bare_pod(name: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name},
        "spec": {"schedulerName": "none", "containers": [{"name": "c", "image": "x",
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}))
    .expect("a pod")
}

/// Bare pod creates/s into one API server on the memory store (in-process client, 64 at once).
async fn baseline(count: usize) -> anyhow::Result<f64> {
    let store = std::sync::Arc::new(flotilla_store::MemoryStore::new());
    let running = flotilla_apiserver::Builder::new(store).start().await?;
    let user = flotilla_apiserver::auth::authn::UserInfo {
        name: "bench".into(),
        groups: vec!["system:masters".into()],
        ..Default::default()
    };
    let client = flotilla_apiserver::client::in_process(&running.server, user);
    let api: Api<Pod> = Api::namespaced(client, "default");
    let started = Instant::now();
    let results: Vec<Result<Pod, kube::Error>> = futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &bare_pod(&format!("p{i}")))
                    .await
            }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    let ok = results.iter().filter(|r| r.is_ok()).count();
    Ok(ok as f64 / started.elapsed().as_secs_f64())
}

/// Scheduler decisions/s at `nodes` nodes, in memory (no API writes).
fn decisions(nodes: usize, pods: usize) -> f64 {
    use flotilla_sim::scheduler::NodeIndex;
    let mut index = NodeIndex::new(1);
    for i in 0..nodes {
        let node: flotilla_sim::node::Node = serde_json::from_value(json!({"metadata": {"name": format!("n{i}"),
            "labels": {"kubernetes.io/hostname": format!("n{i}"), "topology.kubernetes.io/zone": format!("z{}", i % 3)}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}))
        .expect("a node");
        index.upsert_node(&std::sync::Arc::new(node));
    }
    // The sim's scheduler decides on the cached form of pods.
    let cached: Vec<flotilla_sim::pod::Pod> = (0..pods)
        .map(|i| {
            serde_json::to_value(bare_pod(&format!("p{i}")))
                .and_then(serde_json::from_value)
                .expect("a pod")
        })
        .collect();
    let started = Instant::now();
    for (i, pod) in cached.iter().enumerate() {
        let request = index.request_of(pod);
        if let Ok(node) = index.schedule(pod, &request) {
            index.place(&format!("p{i}"), &node, request);
        }
    }
    pods as f64 / started.elapsed().as_secs_f64()
}

pub async fn run(options: &SimBenchOptions) -> anyhow::Result<Figures> {
    let mut f = Figures {
        clusters: options.clusters,
        nodes: options.nodes,
        pods: options.pods,
        ..Default::default()
    };
    let rss_before = rss_mib();
    let yaml = format!(
        "seed: 1\nstartLatency: '{}'\nleaseRenewInterval: '{}'\ncompactStorage: {}\nclusters:\n{}",
        options.start_latency,
        options.lease_renew_interval,
        !options.plain_storage,
        (1..=options.clusters)
            .map(|i| format!(
                "- {{name: member{i}, nodePools: [{{name: pool, count: {}, profile: cpu}}]}}\n",
                options.nodes
            ))
            .collect::<String>()
    );
    let spec = flotilla_sim::SimConfig::from_yaml(&yaml)?.validate()?;
    let dir = tempfile::tempdir().context("a temporary directory")?;
    eprintln!(
        "bench sim: starting {} clusters × {} nodes",
        options.clusters, options.nodes
    );
    let started = Instant::now();
    let cpu_at_start = cpu_s();
    let sim = flotilla_sim::Sim::start(&spec, IpAddr::V4(Ipv4Addr::LOCALHOST), dir.path()).await?;
    f.start_s = started.elapsed().as_secs_f64();
    f.start_cpu_s = cpu_s() - cpu_at_start;
    let per_deployment = options.pods_per_deployment.max(1);
    let deployments = options.pods.div_ceil(per_deployment);
    eprintln!(
        "bench sim: {} pods per cluster through {deployments} Deployments",
        options.pods
    );
    let started = Instant::now();
    let cpu_at_pods = cpu_s();
    for cluster in &sim.clusters {
        let api: Api<Deployment> = Api::namespaced(cluster.client(), "default");
        for d in 0..deployments {
            let replicas = per_deployment.min(options.pods - d * per_deployment);
            let deployment: Deployment = serde_json::from_value(json!({
                "metadata": {"name": format!("load-{d}")},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": format!("load-{d}")}},
                    "template": {"metadata": {"labels": {"app": format!("load-{d}")}},
                        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}},
            }))?;
            api.create(&PostParams::default(), &deployment).await?;
        }
    }
    let total = options.pods * options.clusters;
    let mut all_bound_at = None;
    // Progress every 10 s, and a stall (nothing bound or readied for two minutes) is an error
    // naming how far it got, rather than an hour of waiting.
    let mut last_progress = (0u64, 0usize);
    let mut progress_at = Instant::now();
    let mut reported_at = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let bound: u64 = sim
            .clusters
            .iter()
            .map(|c| c.scheduler.bound.load(Ordering::Relaxed))
            .sum();
        if all_bound_at.is_none() && bound as usize >= total {
            all_bound_at = Some(started.elapsed());
        }
        // From each cluster's Deployment informer (what its controllers see), not a list through
        // the API four times a second: the observer should not load what it measures.
        let ready: usize = sim
            .clusters
            .iter()
            .flat_map(|c| c.stores.deployments.state())
            .map(|d| {
                d.status
                    .as_ref()
                    .and_then(|s| s.ready_replicas)
                    .unwrap_or(0) as usize
            })
            .sum();
        if ready >= total {
            break;
        }
        if (bound, ready) != last_progress {
            last_progress = (bound, ready);
            progress_at = Instant::now();
        } else if progress_at.elapsed() > Duration::from_secs(120) {
            anyhow::bail!(
                "stalled: {bound}/{total} pods bound and {ready}/{total} ready, no progress for 120 s"
            );
        }
        if reported_at.elapsed() >= Duration::from_secs(10) {
            reported_at = Instant::now();
            eprintln!(
                "bench sim: {:.0} s: {bound}/{total} bound, {ready}/{total} ready, RSS {:.0} MiB",
                started.elapsed().as_secs_f64(),
                rss_mib()
            );
        }
        if started.elapsed() > Duration::from_secs(3600) {
            anyhow::bail!("not all ready within an hour ({ready}/{total})");
        }
    }
    f.all_ready_s = started.elapsed().as_secs_f64();
    f.pods_cpu_s = cpu_s() - cpu_at_pods;
    let bound_s = all_bound_at.unwrap_or(started.elapsed()).as_secs_f64();
    f.scheduled_per_s = total as f64 / bound_s;
    f.rss_mib = rss_mib();
    eprintln!(
        "bench sim: all Ready, RSS {:.0} MiB; settling {} s",
        f.rss_mib, options.settle_secs
    );
    tokio::time::sleep(Duration::from_secs(options.settle_secs)).await;
    f.rss_settled_mib = rss_mib();
    f.rss_peak_mib = status_mib("VmHWM:");
    f.rss_per_cluster_mib = (f.rss_settled_mib - rss_before) / options.clusters.max(1) as f64;
    drop(sim);
    // After the clusters are gone, so that neither counts in their RSS.
    eprintln!("bench sim: baseline, bare pod creates into one API server");
    f.baseline_creates_per_s = baseline(options.pods.clamp(1_000, 20_000)).await?;
    eprintln!("bench sim: scheduler decisions at {} nodes", options.nodes);
    f.decisions_per_s = decisions(options.nodes, options.pods.min(20_000));
    Ok(f)
}

pub fn report(f: &Figures) {
    println!("{:<52} {:>14}", "MEASURE", "VALUE");
    println!(
        "{:<52} {:>14}",
        "clusters × nodes",
        format!("{} × {}", f.clusters, f.nodes)
    );
    println!("{:<52} {:>14}", "pods (all clusters)", f.pods * f.clusters);
    println!("{:<52} {:>14.1}", "start clusters and nodes s", f.start_s);
    println!("{:<52} {:>14.1}", "time to all-ready s", f.all_ready_s);
    println!(
        "{:<52} {:>14.0}",
        "pods scheduled/s (end to end, all clusters)", f.scheduled_per_s
    );
    println!(
        "{:<52} {:>14.0}",
        format!("scheduler decisions/s at {} nodes", f.nodes),
        f.decisions_per_s
    );
    println!(
        "{:<52} {:>14.0}",
        "baseline: bare pod creates/s (one API server)", f.baseline_creates_per_s
    );
    println!(
        "{:<52} {:>14.0}",
        "RSS MiB when all pods are Ready", f.rss_mib
    );
    println!("{:<52} {:>14.0}", "RSS MiB settled", f.rss_settled_mib);
    println!("{:<52} {:>14.0}", "peak RSS MiB", f.rss_peak_mib);
    println!(
        "{:<52} {:>14.0}",
        "RSS MiB per cluster (settled, net of the process)", f.rss_per_cluster_mib
    );
    println!(
        "{:<52} {:>14.1}",
        "CPU s starting clusters and nodes", f.start_cpu_s
    );
    println!(
        "{:<52} {:>14.1}",
        "CPU s from first Deployment to all Ready", f.pods_cpu_s
    );
    let total = (f.pods * f.clusters).max(1) as f64;
    println!(
        "{:<52} {:>14.2}",
        "CPU ms per pod (create → Ready)",
        f.pods_cpu_s * 1000.0 / total
    );
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            (a / b * 100.0).round() / 100.0
        } else {
            0.0
        }
    };
    println!(
        "{}",
        json!({
            "bench": "sim",
            "clusters": f.clusters, "nodes_per_cluster": f.nodes, "pods_per_cluster": f.pods,
            "start_s": (f.start_s * 10.0).round() / 10.0,
            "all_ready_s": (f.all_ready_s * 10.0).round() / 10.0,
            "pods_scheduled_per_s": f.scheduled_per_s.round(),
            "scheduler_decisions_per_s": f.decisions_per_s.round(),
            "rss_mib": f.rss_mib.round(),
            "rss_settled_mib": f.rss_settled_mib.round(),
            "rss_peak_mib": f.rss_peak_mib.round(),
            "rss_per_cluster_mib": f.rss_per_cluster_mib.round(),
            "start_cpu_s": (f.start_cpu_s * 10.0).round() / 10.0,
            "pods_cpu_s": (f.pods_cpu_s * 10.0).round() / 10.0,
            "baselines": {"bare_pod_creates_per_s": f.baseline_creates_per_s.round()},
            "ratios": {
                "scheduled_vs_bare_creates": ratio(f.scheduled_per_s, f.baseline_creates_per_s),
                "decisions_vs_target_2000": ratio(f.decisions_per_s, 2000.0),
            },
        })
    );
}
