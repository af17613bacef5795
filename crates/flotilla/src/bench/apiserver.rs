//! `flotilla bench apiserver`: `flotilla up` on redb as a child process, driven over HTTPS by
//! concurrent kube-rs clients. Baseline in the same run: `GET /version` round trips, the
//! cheapest authenticated request the server answers.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// What the run measured.
#[derive(Debug, Default)]
pub struct Figures {
    pub version_per_s: f64,
    pub version_p99_ms: f64,
    pub creates_per_s: f64,
    pub create_p50_ms: f64,
    pub create_p99_ms: f64,
    pub get_p99_ms: Vec<(usize, f64)>,
    pub list_p99_ms: Vec<(usize, f64)>,
    pub watch_deliveries_per_s: f64,
    pub rss_mib: f64,
    pub objects: usize,
}

/// The server under test.
struct Server {
    child: Child,
    kubeconfig: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(dir: &Path) -> anyhow::Result<Server> {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(std::env::current_exe().context("find the flotilla binary")?)
        .args([
            "up",
            "--store",
            "redb",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .context("start flotilla up")?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let kubeconfig = loop {
        let line = lines
            .next()
            .context("flotilla up exited before it was ready")??;
        if let Some(path) = line.strip_prefix("export KUBECONFIG=") {
            break std::path::PathBuf::from(path.trim());
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(Server { child, kubeconfig })
}

fn rss_mib(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("VmRSS in /proc/<pid>/status")?;
    Ok(kib / 1024.0)
}

fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    samples.sort_unstable();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index].as_secs_f64() * 1000.0
}

async fn client(kubeconfig: &Path) -> anyhow::Result<kube::Client> {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig)?,
        &kube::config::KubeConfigOptions::default(),
    )
    .await?;
    Ok(kube::Client::try_from(config)?)
}

fn deployment(name: &str) -> anyhow::Result<Deployment> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "bench"}},
            "template": {
                "metadata": {"labels": {"app": "bench"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
            }
        }
    }))?)
}

/// Creates deployments `from..to` with `clients` concurrent clients; returns latencies.
async fn create_range(
    clients: &[kube::Client],
    from: usize,
    to: usize,
) -> anyhow::Result<Vec<Duration>> {
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(from));
    let mut tasks = Vec::new();
    for client in clients {
        let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= to {
                    break;
                }
                let object = deployment(&format!("bench-{i:07}"))?;
                let started = Instant::now();
                api.create(&PostParams::default(), &object).await?;
                latencies.push(started.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    Ok(all)
}

async fn read_percentiles(
    client: &kube::Client,
    objects: usize,
    lists: usize,
) -> anyhow::Result<(f64, f64)> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let mut gets = Vec::new();
    for i in 0..500 {
        let name = format!("bench-{:07}", (i * 7919) % objects);
        let started = Instant::now();
        api.get(&name).await?;
        gets.push(started.elapsed());
    }
    let mut list_times = Vec::new();
    for _ in 0..lists {
        let started = Instant::now();
        let list = api.list(&ListParams::default()).await?;
        list_times.push(started.elapsed());
        anyhow::ensure!(
            list.items.len() == objects,
            "listed {} of {objects}",
            list.items.len()
        );
    }
    Ok((
        percentile(&mut gets, 0.99),
        percentile(&mut list_times, 0.99),
    ))
}

async fn version_baseline(
    clients: &[kube::Client],
    duration: Duration,
) -> anyhow::Result<(f64, f64)> {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in clients {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let t = Instant::now();
                client.apiserver_version().await?;
                latencies.push(t.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    let rate = all.len() as f64 / started.elapsed().as_secs_f64();
    Ok((rate, percentile(&mut all, 0.99)))
}

async fn watch_rate(
    clients: &[kube::Client],
    watchers: usize,
    updates: usize,
) -> anyhow::Result<f64> {
    let api: Api<Deployment> = Api::namespaced(clients[0].clone(), "default");
    let rv = api
        .list_metadata(&ListParams::default().limit(1))
        .await?
        .metadata
        .resource_version
        .context("list resourceVersion")?;
    let mut streams = Vec::new();
    for w in 0..watchers {
        let api: Api<Deployment> = Api::namespaced(clients[w % clients.len()].clone(), "default");
        let params = kube::api::WatchParams::default()
            .labels("app=bench")
            .timeout(290);
        streams.push(api.watch(&params, &rv).await?.boxed());
    }
    let started = Instant::now();
    let mut readers = Vec::new();
    for mut stream in streams {
        readers.push(tokio::spawn(async move {
            let mut seen = 0;
            while seen < updates {
                match tokio::time::timeout(Duration::from_secs(120), stream.next()).await {
                    Ok(Some(Ok(kube::api::WatchEvent::Modified(_)))) => seen += 1,
                    Ok(Some(Ok(_))) => {}
                    Ok(Some(Err(e))) => anyhow::bail!("watch error: {e}"),
                    Ok(None) => anyhow::bail!("watch ended after {seen} events"),
                    Err(_) => anyhow::bail!("watch stalled after {seen} events"),
                }
            }
            Ok(())
        }));
    }
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut writers = Vec::new();
    for client in clients {
        let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
        let next = next.clone();
        writers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= updates {
                    break;
                }
                let patch = json!({"metadata": {"annotations": {"bench/round": i.to_string()}}});
                api.patch(
                    &format!("bench-{i:07}"),
                    &PatchParams::default(),
                    &Patch::Merge(patch),
                )
                .await?;
            }
            anyhow::Ok(())
        }));
    }
    for writer in writers {
        writer.await??;
    }
    for reader in readers {
        reader.await??;
    }
    Ok((watchers * updates) as f64 / started.elapsed().as_secs_f64())
}

/// Runs the whole benchmark.
pub async fn run(objects: usize, clients_n: usize) -> anyhow::Result<Figures> {
    flotilla_apiserver::auth::tls::install_crypto_provider();
    let dir = tempfile::tempdir()?;
    let server = start_server(dir.path())?;
    let pid = server.child.id();
    let mut clients = Vec::new();
    for _ in 0..clients_n {
        clients.push(client(&server.kubeconfig).await?);
    }
    let mut figures = Figures {
        objects,
        ..Figures::default()
    };
    eprintln!("bench apiserver: baseline GET /version with {clients_n} clients");
    (figures.version_per_s, figures.version_p99_ms) =
        version_baseline(&clients, Duration::from_secs(3)).await?;
    let first = objects.min(10_000);
    eprintln!("bench apiserver: creating {first} Deployments");
    let started = Instant::now();
    let mut latencies = create_range(&clients, 0, first).await?;
    figures.creates_per_s = first as f64 / started.elapsed().as_secs_f64();
    figures.create_p50_ms = percentile(&mut latencies, 0.5);
    figures.create_p99_ms = percentile(&mut latencies, 0.99);
    let (get, list) = read_percentiles(&clients[0], first, 20).await?;
    figures.get_p99_ms.push((first, get));
    figures.list_p99_ms.push((first, list));
    eprintln!("bench apiserver: watch fan-out to 100 watchers");
    figures.watch_deliveries_per_s = watch_rate(&clients, 100, first.min(2_000)).await?;
    if objects > first {
        eprintln!("bench apiserver: creating up to {objects} Deployments");
        create_range(&clients, first, objects).await?;
        let (get, list) = read_percentiles(&clients[0], objects, 5).await?;
        figures.get_p99_ms.push((objects, get));
        figures.list_p99_ms.push((objects, list));
    }
    figures.rss_mib = rss_mib(pid)?;
    Ok(figures)
}

/// Prints the table and the JSON line.
pub fn report(f: &Figures) {
    println!("{:<48} {:>14}", "MEASURE", "VALUE");
    println!(
        "{:<48} {:>14.0}",
        "baseline: GET /version per s", f.version_per_s
    );
    println!(
        "{:<48} {:>14.2}",
        "baseline: GET /version P99 ms", f.version_p99_ms
    );
    println!(
        "{:<48} {:>14.0}",
        "Deployment creates per s", f.creates_per_s
    );
    println!("{:<48} {:>14.2}", "create P50 ms", f.create_p50_ms);
    println!("{:<48} {:>14.2}", "create P99 ms", f.create_p99_ms);
    for (n, v) in &f.get_p99_ms {
        println!("{:<48} {:>14.2}", format!("get P99 ms ({n} objects)"), v);
    }
    for (n, v) in &f.list_p99_ms {
        println!(
            "{:<48} {:>14.2}",
            format!("list all P99 ms ({n} objects)"),
            v
        );
    }
    println!(
        "{:<48} {:>14.0}",
        "watch deliveries per s (100 watchers)", f.watch_deliveries_per_s
    );
    println!(
        "{:<48} {:>14.1}",
        format!("server RSS MiB ({} Deployments)", f.objects),
        f.rss_mib
    );
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            (a / b * 100.0).round() / 100.0
        } else {
            0.0
        }
    };
    let figures: Value = json!({
        "bench": "apiserver",
        "store": "redb",
        "creates_per_s": f.creates_per_s.round(),
        "create_p50_ms": f.create_p50_ms,
        "create_p99_ms": f.create_p99_ms,
        "get_p99_ms": f.get_p99_ms.iter().map(|(n, v)| json!({"objects": n, "ms": v})).collect::<Vec<_>>(),
        "list_p99_ms": f.list_p99_ms.iter().map(|(n, v)| json!({"objects": n, "ms": v})).collect::<Vec<_>>(),
        "watch_deliveries_per_s": f.watch_deliveries_per_s.round(),
        "rss_mib": f.rss_mib,
        "objects": f.objects,
        "baselines": {"version_per_s": f.version_per_s.round(), "version_p99_ms": f.version_p99_ms},
        "ratios": {
            "creates_vs_version_round_trips": ratio(f.creates_per_s, f.version_per_s),
            "creates_vs_target_5000": ratio(f.creates_per_s, 5000.0),
            "rss_vs_target_600_mib": ratio(f.rss_mib, 600.0),
        },
    });
    println!("{figures}");
}
