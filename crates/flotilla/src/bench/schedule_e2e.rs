//! The end-to-end half of `flotilla bench schedule`: the live scheduler (the same run loop `up`
//! starts) against an in-process API server on redb, as in `up`. Two figures:
//!
//! - **backlog**: N bindings exist before the scheduler starts (a restart, or a burst that
//!   arrived while it was down); bindings/s from scheduler start until every binding's
//!   `status.schedulerObservedGeneration` caught up with its generation. The baseline, measured in
//!   the same run on the same server, is the rate at which the API server accepts the same
//!   binding writes (the scheduler cannot write placements faster than the server takes writes).
//! - **live**: N more bindings created by 32 concurrent clients while the scheduler runs; for each,
//!   the time from its create returning to the scheduler's result being visible in a watch
//!   (P50/P99).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use flotilla_api::karmada::{Cluster, ResourceBinding, ResourceBindingSpec};
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_runtime::Shutdown;
use flotilla_scheduler::run::{Metrics, Scheduler, SchedulerConfig};
use futures::TryStreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher;
use parking_lot::Mutex;
use serde_json::json;

/// Measured end-to-end figures.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct E2eFigures {
    pub bindings: usize,
    /// Scheduler workers.
    pub workers: usize,
    /// Baseline: binding creates per second accepted by the same API server (32 writers).
    pub baseline_creates_per_s: f64,
    /// Backlog drained: bindings scheduled per second.
    pub backlog_per_s: f64,
    /// Backlog rate / baseline create rate.
    pub backlog_vs_baseline: f64,
    /// Live: bindings per second from the first create to the last result.
    pub live_per_s: f64,
    /// Live rate / baseline create rate.
    pub live_vs_baseline: f64,
    /// Live: create → scheduled, P50 ms.
    pub live_p50_ms: f64,
    /// Live: create → scheduled, P99 ms.
    pub live_p99_ms: f64,
    /// Bindings the scheduler reported unschedulable (still counted as handled).
    pub unschedulable: usize,
    /// Process CPU (API server, store, scheduler and the bench's own watch) per binding create
    /// in the baseline, ms. CPU per item varies far less than rates on a shared machine.
    pub baseline_cpu_ms_per_create: f64,
    /// Process CPU per binding scheduled in the backlog phase, ms.
    pub backlog_cpu_ms_per_binding: f64,
    /// Process CPU per binding in the live phase (its create included), ms.
    pub live_cpu_ms_per_binding: f64,
    /// Events the scheduler recorded for both phases (on each binding and on its template),
    /// counted once their writes settled.
    pub events_recorded: usize,
    /// Events expected: two per binding (a full event buffer drops events, as client-go does).
    pub events_expected: usize,
    /// Store revisions written per redb commit (group commit) in the backlog phase.
    pub backlog_writes_per_commit: f64,
    /// Store revisions written per redb commit in the live phase.
    pub live_writes_per_commit: f64,
}

/// Store revisions written per commit between two readings of the store's counters.
fn writes_per_commit(
    before: flotilla_store_redb::RedbStats,
    after: flotilla_store_redb::RedbStats,
) -> f64 {
    (after.writes - before.writes) as f64 / (after.commits - before.commits).max(1) as f64
}

/// Counts the Events in `namespaces`, waiting (up to 30 s) until the count stops growing
/// or reaches `expected`.
async fn settled_events(
    client: &kube::Client,
    namespaces: &[&str],
    expected: usize,
) -> anyhow::Result<usize> {
    let mut last = 0;
    let mut steady = 0;
    for _ in 0..150 {
        let mut count = 0;
        for namespace in namespaces {
            let api =
                Api::<k8s_openapi::api::core::v1::Event>::namespaced(client.clone(), namespace);
            count += api
                .list_metadata(&Default::default())
                .await
                .context("list the scheduler's events")?
                .items
                .len();
        }
        if count >= expected {
            return Ok(count);
        }
        steady = if count == last { steady + 1 } else { 0 };
        if steady >= 5 {
            break;
        }
        last = count;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(last)
}

fn cpu_s() -> f64 {
    super::propagate::world::cpu_seconds_of("/proc/self/stat")
}

const WRITERS: usize = 32;

fn binding(
    namespace: &str,
    i: usize,
    spec: &ResourceBindingSpec,
) -> anyhow::Result<ResourceBinding> {
    let mut spec = serde_json::to_value(spec)?;
    spec["resource"]["namespace"] = json!(namespace);
    Ok(serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        // The scheduler only takes bindings a policy claimed (Karmada's permanent-id label).
        "metadata": {"name": format!("app-{i}-deployment"), "namespace": namespace,
            "labels": {"propagationpolicy.karmada.io/permanent-id": "3c1f9a52-7d64-4b8e-9f0a-5e2d8c6b1a47"}},
        "spec": spec,
    }))?)
}

/// Creates `specs` in `namespace` with [`WRITERS`] concurrent writers; returns per-binding
/// create-completed instants by name.
async fn create_all(
    client: &kube::Client,
    namespace: &str,
    specs: &[ResourceBindingSpec],
) -> anyhow::Result<HashMap<String, Instant>> {
    let api = Api::<ResourceBinding>::namespaced(client.clone(), namespace);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = Arc::new(Mutex::new(HashMap::with_capacity(specs.len())));
    let specs: Arc<Vec<ResourceBinding>> = Arc::new(
        specs
            .iter()
            .enumerate()
            .map(|(i, s)| binding(namespace, i, s))
            .collect::<anyhow::Result<_>>()?,
    );
    let mut tasks = Vec::new();
    for _ in 0..WRITERS {
        let (api, next, done, specs) = (api.clone(), next.clone(), done.clone(), specs.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(object) = specs.get(i) else {
                    return anyhow::Ok(());
                };
                api.create(&PostParams::default(), object)
                    .await
                    .context("create a binding")?;
                let name = object.metadata.name.clone().unwrap_or_default();
                done.lock().insert(name, Instant::now());
            }
        }));
    }
    for task in tasks {
        task.await??;
    }
    let map = std::mem::take(&mut *done.lock());
    Ok(map)
}

fn is_handled(binding: &ResourceBinding) -> bool {
    let generation = binding.metadata.generation.unwrap_or(0);
    binding
        .status
        .as_ref()
        .is_some_and(|s| s.scheduler_observed_generation >= generation && generation > 0)
}

fn is_unschedulable(binding: &ResourceBinding) -> bool {
    binding.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Scheduled" && c.status == "False")
    })
}

/// Watches `namespace` until `expected` bindings are handled; returns when each was first seen
/// handled, and how many were unschedulable.
async fn wait_handled(
    client: kube::Client,
    namespace: String,
    expected: usize,
) -> anyhow::Result<(HashMap<String, Instant>, usize)> {
    let api = Api::<ResourceBinding>::namespaced(client, &namespace);
    let mut seen = HashMap::with_capacity(expected);
    let mut unschedulable = 0;
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    while seen.len() < expected {
        let Some(event) = stream.try_next().await.context("watch bindings")? else {
            anyhow::bail!("the binding watch ended");
        };
        let objects: Vec<ResourceBinding> = match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => vec![o],
            _ => Vec::new(),
        };
        for object in objects {
            if is_handled(&object) {
                let name = object.metadata.name.clone().unwrap_or_default();
                if let std::collections::hash_map::Entry::Vacant(entry) = seen.entry(name) {
                    entry.insert(Instant::now());
                    if is_unschedulable(&object) {
                        unschedulable += 1;
                    }
                }
            }
        }
    }
    Ok((seen, unschedulable))
}

fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index].as_secs_f64() * 1000.0
}

async fn create_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let api = Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone());
    let namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    api.create(&PostParams::default(), &namespace)
        .await
        .with_context(|| format!("create namespace {name}"))?;
    Ok(())
}

async fn create_clusters(client: &kube::Client, clusters: Vec<Cluster>) -> anyhow::Result<()> {
    let api = Api::<Cluster>::all(client.clone());
    for mut cluster in clusters {
        let mut status = serde_json::to_value(cluster.status.take())?;
        status["conditions"] = json!([{"type": "Ready", "status": "True", "reason": "ClusterReady",
            "message": "cluster is healthy and ready to accept workloads",
            "lastTransitionTime": "2026-12-01T00:00:00Z"}]);
        let name = cluster.metadata.name.clone().unwrap_or_default();
        cluster.spec.api_endpoint = format!("https://{name}.example:6443");
        api.create(&PostParams::default(), &cluster)
            .await
            .with_context(|| format!("create cluster {name}"))?;
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": status})),
        )
        .await
        .with_context(|| format!("set the status of cluster {name}"))?;
    }
    Ok(())
}

/// Runs the end-to-end measurement with `clusters` clusters and `bindings` bindings per phase,
/// the scheduler running `workers` workers (0: its default).
pub async fn run(clusters: usize, bindings: usize, workers: usize) -> anyhow::Result<E2eFigures> {
    let dir = tempfile::tempdir().context("create a temporary directory")?;
    let redb = Arc::new(
        flotilla_store_redb::RedbStore::open(
            dir.path().join("bench.redb"),
            flotilla_store_redb::RedbOptions::default(),
        )
        .context("open redb")?,
    );
    let store: Arc<dyn flotilla_store::Store> = redb.clone();
    let running = flotilla_apiserver::Builder::new(store)
        .start()
        .await
        .context("start the API server")?;
    let client = flotilla_apiserver::client::in_process(
        &running.server,
        UserInfo {
            name: "system:flotilla:scheduler".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..UserInfo::default()
        },
    );
    create_clusters(&client, flotilla_scheduler::bench::clusters(clusters)).await?;
    let specs = flotilla_scheduler::bench::bindings(bindings);
    for namespace in ["baseline", "backlog", "live"] {
        create_namespace(&client, namespace).await?;
    }

    // Baseline: the API server's rate for the same binding writes. The scheduler is not running,
    // so these stay pending; they live in their own namespace and are deleted afterwards so that
    // the scheduler never sees them.
    eprintln!("bench schedule e2e: baseline, {bindings} binding creates with {WRITERS} writers");
    let started = Instant::now();
    let cpu = cpu_s();
    create_all(&client, "baseline", &specs).await?;
    let baseline_creates_per_s = bindings as f64 / started.elapsed().as_secs_f64();
    let baseline_cpu_ms_per_create = (cpu_s() - cpu) * 1000.0 / bindings as f64;
    Api::<ResourceBinding>::namespaced(client.clone(), "baseline")
        .delete_collection(&Default::default(), &Default::default())
        .await
        .context("delete the baseline bindings")?;

    eprintln!("bench schedule e2e: backlog of {bindings} bindings, then the scheduler starts");
    create_all(&client, "backlog", &specs).await?;
    let waiter = tokio::spawn(wait_handled(client.clone(), "backlog".into(), bindings));
    let shutdown = Shutdown::new();
    let mut config = SchedulerConfig::default();
    if workers > 0 {
        config.workers = workers;
    }
    let workers = config.workers;
    let scheduler = Scheduler::new(client.clone(), config, Metrics::default());
    let started = Instant::now();
    let cpu = cpu_s();
    let stats = redb.stats();
    let task = tokio::spawn(scheduler.run(shutdown.clone()));
    let (_, backlog_unschedulable) = waiter.await??;
    let backlog_per_s = bindings as f64 / started.elapsed().as_secs_f64();
    let backlog_cpu_ms_per_binding = (cpu_s() - cpu) * 1000.0 / bindings as f64;
    let backlog_writes_per_commit = writes_per_commit(stats, redb.stats());

    eprintln!("bench schedule e2e: live, {bindings} bindings created while the scheduler runs");
    let waiter = tokio::spawn(wait_handled(client.clone(), "live".into(), bindings));
    tokio::time::sleep(Duration::from_millis(200)).await; // let the watch start
    let started = Instant::now();
    let cpu = cpu_s();
    let stats = redb.stats();
    let created = create_all(&client, "live", &specs).await?;
    let (handled, live_unschedulable) = waiter.await??;
    let live_cpu_ms_per_binding = (cpu_s() - cpu) * 1000.0 / bindings as f64;
    let live_writes_per_commit = writes_per_commit(stats, redb.stats());
    let last = handled.values().max().copied().unwrap_or(started);
    let live_per_s = bindings as f64 / last.duration_since(started).as_secs_f64();
    let mut latencies: Vec<Duration> = handled
        .iter()
        .filter_map(|(name, at)| created.get(name).map(|c| at.saturating_duration_since(*c)))
        .collect();
    latencies.sort();
    let events_expected = 4 * bindings;
    let events_recorded = settled_events(&client, &["backlog", "live"], events_expected).await?;
    shutdown.cancel();
    let _ = task.await;
    drop(running);
    Ok(E2eFigures {
        bindings,
        workers,
        baseline_creates_per_s,
        backlog_per_s,
        backlog_vs_baseline: backlog_per_s / baseline_creates_per_s,
        live_per_s,
        live_vs_baseline: live_per_s / baseline_creates_per_s,
        live_p50_ms: percentile_ms(&latencies, 0.50),
        live_p99_ms: percentile_ms(&latencies, 0.99),
        unschedulable: backlog_unschedulable + live_unschedulable,
        baseline_cpu_ms_per_create,
        backlog_cpu_ms_per_binding,
        live_cpu_ms_per_binding,
        events_recorded,
        events_expected,
        backlog_writes_per_commit,
        live_writes_per_commit,
    })
}

/// Rows for the `flotilla bench schedule` table.
pub fn rows(f: &E2eFigures) -> Vec<(&'static str, String)> {
    vec![
        ("e2e: bindings per phase", f.bindings.to_string()),
        ("e2e: scheduler workers", f.workers.to_string()),
        (
            "baseline: API binding creates per s",
            format!("{:.0}", f.baseline_creates_per_s),
        ),
        (
            "e2e backlog: bindings scheduled per s",
            format!("{:.0}", f.backlog_per_s),
        ),
        (
            "e2e backlog rate / create baseline",
            format!("{:.2}", f.backlog_vs_baseline),
        ),
        (
            "e2e live: bindings scheduled per s",
            format!("{:.0}", f.live_per_s),
        ),
        (
            "e2e live rate / create baseline",
            format!("{:.2}", f.live_vs_baseline),
        ),
        (
            "e2e live: create→scheduled P50 ms",
            format!("{:.1}", f.live_p50_ms),
        ),
        (
            "e2e live: create→scheduled P99 ms",
            format!("{:.1}", f.live_p99_ms),
        ),
        ("e2e: unschedulable results", f.unschedulable.to_string()),
        (
            "baseline: process CPU ms per create",
            format!("{:.3}", f.baseline_cpu_ms_per_create),
        ),
        (
            "e2e backlog: process CPU ms per binding",
            format!("{:.3}", f.backlog_cpu_ms_per_binding),
        ),
        (
            "e2e live: process CPU ms per binding",
            format!("{:.3}", f.live_cpu_ms_per_binding),
        ),
        (
            "e2e: events recorded / expected",
            format!("{} / {}", f.events_recorded, f.events_expected),
        ),
        (
            "e2e backlog / live: store writes per commit",
            format!(
                "{:.1} / {:.1}",
                f.backlog_writes_per_commit, f.live_writes_per_commit
            ),
        ),
    ]
}
