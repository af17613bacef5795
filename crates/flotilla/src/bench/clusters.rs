//! `flotilla bench clusters`: N simulated clusters of M nodes, run by a `flotilla sim` child
//! process, joined to an in-process control plane (Push, Secret + Cluster) running the `cluster`
//! and `clusterStatus` controllers with Karmada's timings. Reports registration time per cluster
//! (Cluster created → Ready with a node summary of all M nodes; P50/P99/max), the control plane's
//! CPU per cluster per minute (this process's CPU in a steady window minus the same window
//! measured before any join), this process's RSS (the control plane's own: the members live in
//! the child), and the sim's RSS and CPU, read from `/proc/<child>`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use flotilla_api::karmada::Cluster;
use flotilla_apiserver::auth::authn::UserInfo;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

use super::propagate::world::{SimChild, cpu_seconds_of, peak_rss_mib, rss_mib};
use crate::join::probe;

/// Options of `flotilla bench clusters`.
#[derive(Debug, Clone, clap::Args)]
pub struct ClustersBenchOptions {
    /// Simulated clusters.
    #[arg(long, default_value_t = 100)]
    pub clusters: usize,
    /// Nodes per cluster (gpu-a100 profile).
    #[arg(long, default_value_t = 5_000)]
    pub nodes: usize,
    /// Steady-state window for the CPU figure (and the baseline before it).
    #[arg(long, default_value = "60s", value_parser = super::parse_duration)]
    pub window: Duration,
    /// Node Lease renewal interval of the simulated nodes.
    #[arg(long, default_value = "60s")]
    pub lease_renew_interval: String,
}

#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub clusters: usize,
    pub nodes: usize,
    pub registration_p50_s: f64,
    pub registration_p99_s: f64,
    pub registration_max_s: f64,
    pub cpu_ms_per_cluster_minute: f64,
    pub baseline_cpu_ms_per_minute: f64,
    /// This process (the control plane) before any join and tracking every member.
    pub rss_before_mib: f64,
    pub rss_after_mib: f64,
    pub rss_peak_mib: f64,
    /// The `flotilla sim` child.
    pub sim_rss_mib: f64,
    pub sim_peak_rss_mib: f64,
    pub sim_cpu_ms_per_minute: f64,
    pub sim_start_s: f64,
    /// `/proc/loadavg`'s 1-minute figure at the end of the steady window.
    pub load_average: f64,
}

fn admin(running: &flotilla_apiserver::Running, name: &str) -> kube::Client {
    flotilla_apiserver::client::in_process(
        &running.server,
        UserInfo {
            name: name.into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..Default::default()
        },
    )
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Starts the members: `flotilla sim` in a child process with the bench's clusters, killed when
/// the returned [`SimChild`] is dropped (every exit path of [`run`], errors and Ctrl-C included).
async fn start_sim(options: &ClustersBenchOptions) -> anyhow::Result<SimChild> {
    let args = |dir: &Path| {
        let config = dir.join("sim.yaml");
        let yaml = format!(
            "seed: 1\nstartLatency: '0'\nleaseRenewInterval: '{}'\nclusters:\n{}",
            options.lease_renew_interval,
            (1..=options.clusters)
                .map(|i| format!(
                    "- {{name: member{i}, nodePools: [{{name: pool, count: {}, profile: gpu-a100}}]}}\n",
                    options.nodes
                ))
                .collect::<String>()
        );
        std::fs::write(&config, yaml).context("write the sim's configuration")?;
        Ok(vec!["--config".into(), config.into()])
    };
    SimChild::start(args, Duration::from_secs(3600)).await
}

/// Stops the control plane's controllers when [`measure`] returns, however it returns.
struct CancelOnDrop(flotilla_runtime::Shutdown);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// What the control plane needs to join one member.
struct Member {
    name: String,
    endpoint: String,
    ca_pem: String,
    id: String,
    token: String,
}

/// Reads a member's endpoint, CA and identity from the sim's kubeconfig and creates its service
/// account and token; the admin client is dropped afterwards.
async fn prepare(kubeconfig: &Path, name: String) -> anyhow::Result<Member> {
    let access = probe::load_member(kubeconfig, Some(&name)).await?;
    let facts = probe::probe(&access).await?;
    let token = member_token(&access.client, &name).await?;
    Ok(Member {
        name,
        endpoint: access.endpoint,
        ca_pem: access.ca_pem,
        id: facts.id,
        token,
    })
}

/// The member's `karmada-<name>` service account with full rights, and its token.
async fn member_token(member: &kube::Client, name: &str) -> anyhow::Result<String> {
    let sa = format!("karmada-{name}");
    let role = format!("karmada-controller-manager:{sa}");
    let objects = [
        (
            "/api/v1/namespaces/karmada-cluster/serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa}}),
        ),
        (
            "/api/v1/namespaces/karmada-cluster/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                "metadata": {"name": sa, "annotations": {"kubernetes.io/service-account.name": sa}}}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": role},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                          {"nonResourceURLs": ["*"], "verbs": ["get"]}]}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": role},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": "karmada-cluster"}]}),
        ),
    ];
    for (path, body) in objects {
        let request = http::Request::post(path)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body)?)?;
        member
            .request_text(request)
            .await
            .with_context(|| format!("create {path} in {name}"))?;
    }
    let secrets = Api::<Secret>::namespaced(member.clone(), "karmada-cluster");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(token) = secrets
            .get(&sa)
            .await
            .ok()
            .and_then(|s| s.data)
            .and_then(|d| d.get("token").map(|t| t.0.clone()))
        {
            return Ok(String::from_utf8(token)?);
        }
        anyhow::ensure!(Instant::now() < deadline, "no token for {sa} in {name}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub async fn run(options: &ClustersBenchOptions) -> anyhow::Result<Figures> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    eprintln!(
        "bench clusters: starting `flotilla sim` with {} clusters × {} nodes",
        options.clusters, options.nodes
    );
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("handle SIGTERM")?;
    // Ctrl-C, SIGTERM or an error drop the sim (while starting too), which kills the child.
    let work = async {
        let started = Instant::now();
        let sim = start_sim(options).await?;
        let sim_start_s = started.elapsed().as_secs_f64();
        let mut figures = measure(options, &sim).await?;
        figures.sim_start_s = sim_start_s;
        anyhow::Ok(figures)
    };
    tokio::select! {
        figures = work => figures,
        _ = tokio::signal::ctrl_c() => anyhow::bail!("interrupted; the sim was stopped"),
        _ = terminate.recv() => anyhow::bail!("terminated; the sim was stopped"),
    }
}

async fn measure(options: &ClustersBenchOptions, sim: &SimChild) -> anyhow::Result<Figures> {
    let mut f = Figures {
        clusters: options.clusters,
        nodes: options.nodes,
        ..Default::default()
    };
    let names: Vec<String> = (1..=options.clusters)
        .map(|i| format!("member{i}"))
        .collect();
    let prepared: Vec<anyhow::Result<Member>> = futures::stream::iter(names)
        .map(|name| prepare(&sim.kubeconfig, name))
        .buffered(8)
        .collect()
        .await;
    let members = prepared.into_iter().collect::<anyhow::Result<Vec<_>>>()?;

    let store = Arc::new(flotilla_store::MemoryStore::new());
    crate::up::spawn_compaction(store.clone());
    let running = flotilla_apiserver::Builder::new(store).start().await?;
    let control = admin(&running, "bench");
    let shutdown = flotilla_runtime::Shutdown::new();
    let _stop = CancelOnDrop(shutdown.clone());
    let member_clients: Arc<dyn flotilla_member::MemberClients> =
        flotilla_member::SecretMemberClients::start(admin(&running, "members"), shutdown.clone());
    let context = flotilla_controllers::Context::new(
        admin(&running, "controller-manager"),
        member_clients,
        None,
    );
    tokio::spawn(flotilla_controllers::cluster::run(
        context.clone(),
        Default::default(),
        shutdown.clone(),
    ));
    tokio::spawn(flotilla_controllers::cluster_status::run(
        context,
        Default::default(),
        shutdown.clone(),
    ));

    eprintln!(
        "bench clusters: baseline window of {:?} (control plane, no members)",
        options.window
    );
    let cpu = cpu_seconds_of("/proc/self/stat");
    tokio::time::sleep(options.window).await;
    let baseline = cpu_seconds_of("/proc/self/stat") - cpu;
    f.baseline_cpu_ms_per_minute = baseline * 1000.0 * 60.0 / options.window.as_secs_f64();
    f.rss_before_mib = rss_mib();

    let secrets = Api::<Secret>::namespaced(control.clone(), "karmada-cluster");
    let clusters = Api::<Cluster>::all(control.clone());
    let mut registration = Vec::new();
    for member in &members {
        let name = &member.name;
        let secret: Secret = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": "karmada-cluster"},
            "data": {"token": base64::engine::general_purpose::STANDARD.encode(&member.token),
                "caBundle": base64::engine::general_purpose::STANDARD.encode(&member.ca_pem)},
        }))?;
        secrets.create(&PostParams::default(), &secret).await?;
        let object: Cluster = serde_json::from_value(json!({
            "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": member.endpoint, "id": member.id,
                "secretRef": {"namespace": "karmada-cluster", "name": name}},
        }))?;
        let started = Instant::now();
        clusters.create(&PostParams::default(), &object).await?;
        loop {
            let done = clusters.get(name).await.ok().is_some_and(|c| {
                let status = c.status.unwrap_or_default();
                let ready = status
                    .conditions
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                let nodes = status.node_summary.map(|n| n.total_num as usize);
                ready && nodes == Some(options.nodes) && status.resource_summary.is_some()
            });
            if done {
                break;
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(600),
                "{name} not Ready with its summary within 10 minutes"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        registration.push(started.elapsed().as_secs_f64());
        if registration.len() % 10 == 0 {
            eprintln!(
                "bench clusters: {} joined; control plane RSS {:.0} MiB, sim RSS {:.0} MiB",
                registration.len(),
                rss_mib(),
                sim.rss_mib()
            );
        }
    }
    registration.sort_by(f64::total_cmp);
    f.registration_p50_s = percentile(&registration, 50.0);
    f.registration_p99_s = percentile(&registration, 99.0);
    f.registration_max_s = registration.last().copied().unwrap_or(0.0);

    eprintln!("bench clusters: steady window of {:?}", options.window);
    let cpu = cpu_seconds_of("/proc/self/stat");
    let sim_cpu = sim.cpu_seconds();
    tokio::time::sleep(options.window).await;
    let steady = cpu_seconds_of("/proc/self/stat") - cpu;
    let per_minute = 60.0 / options.window.as_secs_f64();
    f.sim_cpu_ms_per_minute = (sim.cpu_seconds() - sim_cpu) * 1000.0 * per_minute;
    let extra = (steady - baseline).max(0.0);
    f.cpu_ms_per_cluster_minute = extra * 1000.0 * per_minute / options.clusters.max(1) as f64;
    f.rss_after_mib = rss_mib();
    f.rss_peak_mib = peak_rss_mib();
    f.sim_rss_mib = sim.rss_mib();
    f.sim_peak_rss_mib = sim.peak_rss_mib();
    f.load_average = load_average();
    Ok(f)
}

pub fn report(f: &Figures) {
    println!(
        "clusters × nodes                {} × {} (sim started in {:.0} s)",
        f.clusters, f.nodes, f.sim_start_s
    );
    println!(
        "registration to Ready+summary   P50 {:.3} s  P99 {:.3} s  max {:.3} s  (target P99 < 1 s)",
        f.registration_p50_s, f.registration_p99_s, f.registration_max_s
    );
    println!(
        "status collection CPU           {:.1} ms per cluster per minute (control plane idle: {:.0} ms/min)",
        f.cpu_ms_per_cluster_minute, f.baseline_cpu_ms_per_minute
    );
    println!(
        "control-plane RSS               {:.0} MiB before joining, {:.0} MiB tracking all, peak {:.0} MiB (target < 1024)",
        f.rss_before_mib, f.rss_after_mib, f.rss_peak_mib
    );
    println!(
        "sim (child process)             RSS {:.0} MiB, peak {:.0} MiB, CPU {:.0} ms/min; load average {:.2}",
        f.sim_rss_mib, f.sim_peak_rss_mib, f.sim_cpu_ms_per_minute, f.load_average
    );
    println!(
        "{}",
        json!({"bench": "clusters", "clusters": f.clusters, "nodes": f.nodes,
            "registration_p50_s": f.registration_p50_s, "registration_p99_s": f.registration_p99_s,
            "registration_max_s": f.registration_max_s,
            "cpu_ms_per_cluster_minute": f.cpu_ms_per_cluster_minute,
            "baseline_cpu_ms_per_minute": f.baseline_cpu_ms_per_minute,
            "rss_before_mib": f.rss_before_mib, "rss_after_mib": f.rss_after_mib,
            "rss_peak_mib": f.rss_peak_mib, "sim_rss_mib": f.sim_rss_mib,
            "sim_peak_rss_mib": f.sim_peak_rss_mib, "sim_cpu_ms_per_minute": f.sim_cpu_ms_per_minute,
            "sim_start_s": f.sim_start_s, "load_average": f.load_average})
    );
}
