//! `flotilla bench clusters`: N simulated clusters of M nodes joined to an in-process control
//! plane (Push, Cluster + Secret) running the `cluster` and `clusterStatus` controllers with
//! Karmada's timings. Reports registration time per cluster (Cluster created → Ready with a
//! node summary of all M nodes; P50/P99), the status controller's CPU per cluster per minute
//! (process CPU in a steady window minus the same window measured before any join: the
//! baseline is the sim alone), and RSS before and after (the delta is what tracking the
//! members costs the control plane; the sim shares the process).

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use flotilla_api::karmada::Cluster;
use flotilla_apiserver::auth::authn::UserInfo;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::json;

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
    pub rss_before_mib: f64,
    pub rss_after_mib: f64,
}

fn rss_mib() -> f64 {
    super::propagate::world::rss_mib()
}

/// Process CPU time (user + system) of this process.
fn cpu_seconds() -> f64 {
    super::propagate::world::cpu_seconds_of("/proc/self/stat")
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
    let mut f = Figures {
        clusters: options.clusters,
        nodes: options.nodes,
        ..Default::default()
    };
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
    let spec = flotilla_sim::SimConfig::from_yaml(&yaml)?.validate()?;
    let dir = tempfile::tempdir().context("a temporary directory")?;
    eprintln!(
        "bench clusters: starting {} simulated clusters × {} nodes",
        options.clusters, options.nodes
    );
    let sim = flotilla_sim::Sim::start(&spec, IpAddr::V4(Ipv4Addr::LOCALHOST), dir.path()).await?;
    let mut tokens = Vec::new();
    for cluster in &sim.clusters {
        tokens.push(member_token(&cluster.client(), &cluster.name).await?);
    }

    let store = Arc::new(flotilla_store::MemoryStore::new());
    let running = flotilla_apiserver::Builder::new(store).start().await?;
    let control = admin(&running, "bench");
    let shutdown = flotilla_runtime::Shutdown::new();
    let members: Arc<dyn flotilla_member::MemberClients> =
        flotilla_member::SecretMemberClients::start(admin(&running, "members"), shutdown.clone());
    let context =
        flotilla_controllers::Context::new(admin(&running, "controller-manager"), members, None);
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
        "bench clusters: baseline window of {:?} (sim alone)",
        options.window
    );
    let cpu = cpu_seconds();
    tokio::time::sleep(options.window).await;
    let baseline = cpu_seconds() - cpu;
    f.baseline_cpu_ms_per_minute = baseline * 1000.0 * 60.0 / options.window.as_secs_f64();
    f.rss_before_mib = rss_mib();

    let secrets = Api::<Secret>::namespaced(control.clone(), "karmada-cluster");
    let clusters = Api::<Cluster>::all(control.clone());
    let mut registration = Vec::new();
    for (cluster, token) in sim.clusters.iter().zip(&tokens) {
        let name = &cluster.name;
        let secret: Secret = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": "karmada-cluster"},
            "data": {"token": base64::engine::general_purpose::STANDARD.encode(token),
                "caBundle": base64::engine::general_purpose::STANDARD.encode(cluster.pki.ca_cert_pem())},
        }))?;
        secrets.create(&PostParams::default(), &secret).await?;
        let object: Cluster = serde_json::from_value(json!({
            "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": cluster.url, "id": cluster.cluster_id,
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
    }
    registration.sort_by(f64::total_cmp);
    f.registration_p50_s = percentile(&registration, 50.0);
    f.registration_p99_s = percentile(&registration, 99.0);
    f.registration_max_s = registration.last().copied().unwrap_or(0.0);

    eprintln!("bench clusters: steady window of {:?}", options.window);
    let cpu = cpu_seconds();
    tokio::time::sleep(options.window).await;
    let steady = cpu_seconds() - cpu;
    let extra = (steady - baseline).max(0.0);
    f.cpu_ms_per_cluster_minute =
        extra * 1000.0 * 60.0 / options.window.as_secs_f64() / options.clusters.max(1) as f64;
    f.rss_after_mib = rss_mib();
    shutdown.cancel();
    drop(sim);
    Ok(f)
}

pub fn report(f: &Figures) {
    println!(
        "clusters × nodes                {} × {}",
        f.clusters, f.nodes
    );
    println!(
        "registration to Ready+summary   P50 {:.3} s  P99 {:.3} s  max {:.3} s  (target P99 < 1 s)",
        f.registration_p50_s, f.registration_p99_s, f.registration_max_s
    );
    println!(
        "status collection CPU           {:.1} ms per cluster per minute (baseline: sim alone {:.0} ms/min)",
        f.cpu_ms_per_cluster_minute, f.baseline_cpu_ms_per_minute
    );
    println!(
        "RSS (sim + control plane)       {:.0} MiB before joining, {:.0} MiB tracking all ({:+.0} MiB)",
        f.rss_before_mib,
        f.rss_after_mib,
        f.rss_after_mib - f.rss_before_mib
    );
    println!(
        "{}",
        json!({"bench": "clusters", "clusters": f.clusters, "nodes": f.nodes,
            "registration_p50_s": f.registration_p50_s, "registration_p99_s": f.registration_p99_s,
            "registration_max_s": f.registration_max_s,
            "cpu_ms_per_cluster_minute": f.cpu_ms_per_cluster_minute,
            "baseline_cpu_ms_per_minute": f.baseline_cpu_ms_per_minute,
            "rss_before_mib": f.rss_before_mib, "rss_after_mib": f.rss_after_mib})
    );
}
