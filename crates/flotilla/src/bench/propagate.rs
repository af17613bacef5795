//! `flotilla bench propagate`: the control plane `flotilla up` runs (API server on a memory store,
//! scheduler, every controller) with `flotilla sim` members joined in push mode, measuring
//! propagation end to end:
//!
//! - **one at a time** (`--sequential N`): on three idle clusters, N times: apply a
//!   PropagationPolicy and a Deployment, wait until it is applied in all three members, then the
//!   next. Latency P50/P95/P99 from the first create to *applied* (below) and to *ready*.
//! - **burst** (`--deployments N`): one policy per group of three clusters, then N Deployments
//!   created by `--writers` concurrent clients, each Divided over its group's three clusters by
//!   static weight 2:1:1. Time until all are applied and ready, Works/s, latency P50/P99,
//!   control-plane RSS and CPU seconds (the sim runs in a child process and is reported apart).
//!
//! *Applied*: for every target cluster the Work exists with `Applied=True` (the execution
//! controller sets it once the member's API server accepted the object), and the replicas of
//! the Works' manifests add up to the template's replicas. *Ready*: the template's aggregated
//! `status.readyReplicas` equals its replicas (members ran the pods and the status came back).
//!
//! The baseline, measured in the same run on a fresh API server, is the raw Work create rate
//! (and single-create latency): the floor every propagated Work pays at least once.

mod baseline;
mod check;
mod report;
mod track;
pub(crate) mod world;
mod writes;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use flotilla_api::karmada::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use parking_lot::Mutex;
use serde_json::{Value, json};

use track::{Expect, Tracker};

use check::{explain_stall, verify};
use report::per;
pub use report::report;

/// Options of `flotilla bench propagate`.
#[derive(Debug, Clone, clap::Args)]
pub struct PropagateBenchOptions {
    /// Simulated member clusters.
    #[arg(long, default_value_t = 3)]
    pub clusters: usize,
    /// Nodes per member cluster.
    #[arg(long, default_value_t = 10)]
    pub nodes: usize,
    /// Workloads applied one at a time on the first three (idle) clusters; 0 skips.
    #[arg(long, default_value_t = 200)]
    pub sequential: usize,
    /// Deployments of the burst, each Divided over three clusters; 0 skips.
    #[arg(long, default_value_t = 0)]
    pub deployments: usize,
    /// Replicas of every Deployment (at least 4, so that weights 2:1:1 give each cluster one).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(4..))]
    pub replicas: u16,
    /// Concurrent clients creating the burst's Deployments.
    #[arg(long, default_value_t = 32)]
    pub writers: usize,
    /// Create the burst's Deployments at this steady rate (per second) instead of as fast as
    /// the writers can: the latency percentiles then measure the pipeline at that load, not a
    /// queue of all N.
    #[arg(long, value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// The control plane's store, as `flotilla up --store` (redb in a temporary directory).
    #[arg(long, value_enum, default_value = "redb")]
    pub store: crate::up::StoreKind,
    /// Give up on the burst after this long.
    #[arg(long, default_value = "600s", value_parser = super::parse_duration)]
    pub timeout: Duration,
    /// Also count the control plane's writes by what each changed (`create`, the fields
    /// written, an Event's reason): where the writes per workload go. Decodes every write in
    /// this process, so it costs control-plane CPU: for finding writes, not for timing.
    #[arg(long)]
    pub explain_writes: bool,
}

fn parse_rate(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!(
            "{value:?} is not a rate: give Deployments per second, a number above 0"
        )),
    }
}

/// Latency percentiles, ms.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Latency {
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    fn of(mut samples: Vec<Duration>) -> Latency {
        samples.sort();
        let at = |p: f64| {
            if samples.is_empty() {
                return 0.0;
            }
            let rank = ((p * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
            (samples[rank - 1].as_secs_f64() * 1e4).round() / 10.0
        };
        Latency {
            p50_ms: at(0.50),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
            max_ms: at(1.0),
        }
    }
}

/// Figures of the one-at-a-time phase.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Sequential {
    pub workloads: usize,
    /// Control-plane store writes per workload (all of them, from the first create until
    /// every workload was ready), and the resources they went to.
    pub writes_per_workload: f64,
    pub writes: Vec<(String, u64)>,
    /// With `--explain-writes`: writes by resource and what they changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writes_explained: Vec<(String, u64)>,
    pub applied: Latency,
    pub ready: Latency,
}

/// Figures of the burst.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Burst {
    pub deployments: usize,
    /// `--rate`: Deployments created per second (none: as fast as the writers could).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Control-plane store writes per Deployment, and by resource.
    pub writes_per_deployment: f64,
    pub writes: Vec<(String, u64)>,
    /// With `--explain-writes`: writes by resource and what they changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writes_explained: Vec<(String, u64)>,
    pub works: usize,
    pub create_s: f64,
    pub all_applied_s: f64,
    pub all_ready_s: f64,
    pub works_per_s: f64,
    pub applied: Latency,
    /// Create → ready (the template's aggregated `readyReplicas` reached its replicas).
    pub ready: Latency,
    pub control_plane_cpu_s: f64,
    pub sim_cpu_s: f64,
    pub control_plane_rss_mib: f64,
    pub control_plane_peak_rss_mib: f64,
    pub sim_rss_mib: f64,
    /// redb only: the writer's commits (each one fsync) during the burst, and store writes per
    /// commit (how well group commit batched them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_commits: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_writes_per_commit: Option<f64>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Figures {
    pub clusters: usize,
    pub nodes: usize,
    pub replicas: u16,
    pub start_s: f64,
    pub rss_before_control_plane_mib: f64,
    pub rss_idle_mib: f64,
    pub sequential: Option<Sequential>,
    pub burst: Option<Burst>,
    pub baseline: baseline::Baseline,
}

const SEQ_NS: &str = "bench-seq";
const BURST_NS: &str = "bench-burst";
const GROUP_LABEL: &str = "bench.flotilla.io/group";
const WEIGHTS: [i64; 3] = [2, 1, 1];

fn placement(clusters: &[String]) -> Value {
    json!({
        "clusterAffinity": {"clusterNames": clusters},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": clusters.iter().zip(WEIGHTS).map(|(c, w)|
                json!({"targetCluster": {"clusterNames": [c]}, "weight": w})).collect::<Vec<_>>()},
        },
    })
}

fn policy(namespace: &str, name: &str, selector: Value, clusters: &[String]) -> Value {
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": [selector], "placement": placement(clusters)},
    })
}

fn deployment(namespace: &str, name: &str, labels: Value, replicas: u16) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}},
    })
}

/// The three clusters of group `g` (fewer when there are fewer clusters).
fn group(names: &[String], g: usize) -> Vec<String> {
    (0..names.len().min(3))
        .map(|k| names[(g + k) % names.len()].clone())
        .collect()
}

async fn create_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .with_context(|| format!("create namespace {name}"))?;
    Ok(())
}

pub async fn run(options: &PropagateBenchOptions) -> anyhow::Result<Figures> {
    anyhow::ensure!(options.clusters >= 1, "--clusters must be at least 1");
    let mut f = Figures {
        clusters: options.clusters,
        nodes: options.nodes,
        replicas: options.replicas,
        ..Default::default()
    };
    let works = options.deployments.max(options.sequential) * options.clusters.min(3);
    eprintln!("bench propagate: baseline, raw Work creates into a fresh API server");
    f.baseline = baseline::measure(works.clamp(1_000, 10_000), options.writers.max(1)).await?;

    eprintln!(
        "bench propagate: starting {} simulated clusters × {} nodes (child process)",
        options.clusters, options.nodes
    );
    let started = Instant::now();
    let members = world::Members::start(options.clusters, options.nodes).await?;
    f.rss_before_control_plane_mib = world::rss_mib();
    let control = world::ControlPlane::start(options.store).await?;
    eprintln!("bench propagate: joining {} clusters", options.clusters);
    control
        .join(&members.sim.kubeconfig, &members.names)
        .await?;
    f.start_s = started.elapsed().as_secs_f64();
    let client = control.client.clone();
    let tracker = Tracker::default();
    let watches = tokio::spawn(tracker.clone().run(client.clone()));
    create_namespace(&client, SEQ_NS).await?;
    create_namespace(&client, BURST_NS).await?;
    f.rss_idle_mib = world::rss_mib();

    if options.sequential > 0 {
        let writes = writes::WriteCounter::start(&control.store, options.explain_writes).await?;
        let mut figures = sequential(options, &client, &tracker, &members.names).await?;
        figures.writes = writes.snapshot();
        figures.writes_explained = writes.explained();
        figures.writes_per_workload = per(&figures.writes, options.sequential);
        f.sequential = Some(figures);
    }
    if options.deployments > 0 {
        let writes = writes::WriteCounter::start(&control.store, options.explain_writes).await?;
        let commits_before = control.redb.as_ref().map(|redb| redb.stats());
        let mut figures = burst(options, &client, &tracker, &members).await?;
        if let (Some(redb), Some(before)) = (&control.redb, commits_before) {
            let after = redb.stats();
            figures.store_commits = Some(after.commits - before.commits);
            figures.store_writes_per_commit = Some(
                (after.writes - before.writes) as f64
                    / (after.commits - before.commits).max(1) as f64,
            );
        }
        figures.writes = writes.snapshot();
        figures.writes_explained = writes.explained();
        figures.writes_per_deployment = per(&figures.writes, options.deployments);
        f.burst = Some(figures);
    }
    verify(options, &members).await?;
    watches.abort();
    drop(control);
    drop(members);
    Ok(f)
}

async fn sequential(
    options: &PropagateBenchOptions,
    client: &kube::Client,
    tracker: &Tracker,
    names: &[String],
) -> anyhow::Result<Sequential> {
    eprintln!(
        "bench propagate: {} workloads one at a time on 3 idle clusters",
        options.sequential
    );
    let clusters = group(names, 0);
    let policies = Api::<PropagationPolicy>::namespaced(client.clone(), SEQ_NS);
    let deployments = Api::<Deployment>::namespaced(client.clone(), SEQ_NS);
    let mut applied = Vec::new();
    let mut starts = Vec::new();
    for i in 0..options.sequential {
        let name = format!("seq-{i}");
        let key = (SEQ_NS.to_owned(), name.clone());
        tracker.expect(
            key.clone(),
            Expect {
                clusters: clusters.clone(),
                replicas: i64::from(options.replicas),
            },
        );
        let selector = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": name});
        let started = Instant::now();
        policies
            .create(
                &PostParams::default(),
                &serde_json::from_value(policy(SEQ_NS, &name, selector, &clusters))?,
            )
            .await
            .context("create a PropagationPolicy")?;
        deployments
            .create(
                &PostParams::default(),
                &serde_json::from_value(deployment(SEQ_NS, &name, json!({}), options.replicas))?,
            )
            .await
            .context("create a Deployment")?;
        let done = tracker.wait(Duration::from_secs(30), |a, _, _| a > i).await;
        anyhow::ensure!(done, "{name} not applied in 30 s: {:?}", tracker.missing(3));
        let (at, _) = tracker.times(&key);
        applied.push(at.map_or(Duration::ZERO, |at| at - started));
        starts.push((key, started));
    }
    // Ready comes later (pods start in the members, then the status travels back); wait for all.
    let n = options.sequential;
    let done = tracker
        .wait(Duration::from_secs(120), |_, r, _| r >= n)
        .await;
    anyhow::ensure!(done, "not every sequential workload became ready in 120 s");
    let ready = starts
        .iter()
        .filter_map(|(key, started)| tracker.times(key).1.map(|at| at - *started))
        .collect();
    Ok(Sequential {
        workloads: n,
        applied: Latency::of(applied),
        ready: Latency::of(ready),
        ..Default::default()
    })
}

async fn burst(
    options: &PropagateBenchOptions,
    client: &kube::Client,
    tracker: &Tracker,
    members: &world::Members,
) -> anyhow::Result<Burst> {
    let names = &members.names;
    let groups = names.len();
    eprintln!(
        "bench propagate: burst of {} Deployments over {groups} policies ({} writers{})",
        options.deployments,
        options.writers,
        options
            .rate
            .map(|rate| format!(", {rate} a second"))
            .unwrap_or_default()
    );
    let policies = Api::<PropagationPolicy>::namespaced(client.clone(), BURST_NS);
    for g in 0..groups {
        let selector = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "labelSelector": {"matchLabels": {GROUP_LABEL: format!("g{g}")}}});
        policies
            .create(
                &PostParams::default(),
                &serde_json::from_value(policy(
                    BURST_NS,
                    &format!("group-{g}"),
                    selector,
                    &group(names, g),
                ))?,
            )
            .await
            .context("create a PropagationPolicy")?;
    }
    let (applied_before, ready_before, works_before) = tracker.counts();
    for i in 0..options.deployments {
        tracker.expect(
            (BURST_NS.to_owned(), format!("app-{i}")),
            Expect {
                clusters: group(names, i % groups),
                replicas: i64::from(options.replicas),
            },
        );
    }
    let expected_works: usize = (0..options.deployments)
        .map(|i| group(names, i % groups).len())
        .sum();
    let created = Arc::new(Mutex::new(HashMap::with_capacity(options.deployments)));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let cpu_before = world::cpu_seconds_of("/proc/self/stat");
    let sim_cpu_before = members.sim.cpu_seconds();
    let started = Instant::now();
    let mut writers = Vec::new();
    for _ in 0..options.writers.max(1) {
        let api = Api::<Deployment>::namespaced(client.clone(), BURST_NS);
        let (created, next) = (created.clone(), next.clone());
        let (n, replicas, rate) = (options.deployments, options.replicas, options.rate);
        writers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= n {
                    return anyhow::Ok(());
                }
                if let Some(rate) = rate {
                    // The i-th create is due i/rate after the start; a writer that is late
                    // (the API server was slow) sends at once, and its latency counts from then.
                    let due = started + Duration::from_secs_f64(i as f64 / rate);
                    tokio::time::sleep_until(due.into()).await;
                }
                // Built when sent, so the bench holds no burst of typed Deployments in the
                // process whose RSS it reports.
                let name = format!("app-{i}");
                let labels = json!({GROUP_LABEL: format!("g{}", i % groups)});
                let object: Deployment =
                    serde_json::from_value(deployment(BURST_NS, &name, labels, replicas))?;
                let at = Instant::now();
                api.create(&PostParams::default(), &object)
                    .await
                    .context("create a Deployment")?;
                created.lock().insert(name, at);
            }
        }));
    }
    for writer in writers {
        writer.await??;
    }
    let create_s = started.elapsed().as_secs_f64();
    let n = options.deployments;
    let mut last_report = Instant::now();
    let mut last_counts = tracker.counts();
    let mut progress_at = Instant::now();
    loop {
        let finished = tracker
            .wait(Duration::from_secs(5), |a, r, _| {
                a >= applied_before + n && r >= ready_before + n
            })
            .await;
        let counts = tracker.counts();
        if finished {
            break;
        }
        if counts != last_counts {
            last_counts = counts;
            progress_at = Instant::now();
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            eprintln!(
                "bench propagate: {:.0} s: {}/{n} applied, {}/{n} ready, {} Works applied, RSS {:.0} MiB",
                started.elapsed().as_secs_f64(),
                counts.0 - applied_before,
                counts.1 - ready_before,
                counts.2 - works_before,
                world::rss_mib()
            );
        }
        if progress_at.elapsed() >= Duration::from_secs(60) || started.elapsed() >= options.timeout
        {
            let mut why = String::new();
            if let Some(key) = tracker.missing_keys(1).first() {
                why = explain_stall(client, members, key).await;
            }
            anyhow::bail!(
                "stalled or out of time after {:.0} s: {}/{n} applied, {}/{n} ready; e.g. {:?}\n  {why}",
                started.elapsed().as_secs_f64(),
                counts.0 - applied_before,
                counts.1 - ready_before,
                tracker.missing(3)
            );
        }
    }
    let finished_at = Instant::now();
    let control_plane_cpu_s = world::cpu_seconds_of("/proc/self/stat") - cpu_before;
    let sim_cpu_s = members.sim.cpu_seconds() - sim_cpu_before;
    // The instants the tracker saw each Deployment applied and ready (not when this loop woke).
    let created = created.lock();
    let mut latencies = Vec::with_capacity(n);
    let mut ready_latencies = Vec::with_capacity(n);
    let (mut last_applied, mut last_ready) = (started, started);
    for (name, at) in created.iter() {
        let (applied, ready) = tracker.times(&(BURST_NS.to_owned(), name.clone()));
        if let Some(applied) = applied {
            latencies.push(applied.saturating_duration_since(*at));
            last_applied = last_applied.max(applied);
        }
        let ready = ready.unwrap_or(finished_at);
        ready_latencies.push(ready.saturating_duration_since(*at));
        last_ready = last_ready.max(ready);
    }
    let all_applied_s = last_applied.duration_since(started).as_secs_f64();
    let all_ready_s = last_ready.duration_since(started).as_secs_f64();
    Ok(Burst {
        deployments: n,
        rate: options.rate,
        works: expected_works,
        create_s,
        all_applied_s,
        all_ready_s,
        works_per_s: expected_works as f64 / all_applied_s,
        applied: Latency::of(latencies),
        ready: Latency::of(ready_latencies),
        control_plane_cpu_s,
        sim_cpu_s,
        control_plane_rss_mib: world::rss_mib(),
        control_plane_peak_rss_mib: world::peak_rss_mib(),
        sim_rss_mib: members.sim.rss_mib(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::parse_rate;

    #[test]
    fn a_rate_is_a_positive_number_of_deployments_a_second() {
        assert_eq!(parse_rate("150"), Ok(150.0));
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        for bad in ["0", "-3", "fast", "NaN", "inf", ""] {
            let error = parse_rate(bad).expect_err(bad);
            assert!(error.contains("Deployments per second"), "{bad}: {error}");
        }
    }
}
