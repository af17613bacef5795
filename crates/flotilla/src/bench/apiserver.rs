//! `flotilla bench apiserver`: `flotilla up` on redb as a child process, driven over HTTPS by
//! concurrent kube-rs clients. Baseline in the same run: `GET /version` round trips, the
//! cheapest authenticated request the server answers.
//!
//! Each target of the API server (creates/s, a list of 100,000 Deployments from the watch
//! cache, RSS with 100,000 stored Deployments) is reported with its ratio to the target and to
//! the baseline. A list is timed twice: by a kube-rs typed `list` (what a Rust client sees,
//! decoding included) and as raw bytes over HTTPS (the server's part: from the request to the
//! last byte, nothing decoded). The server's CPU time per create comes from
//! `/proc/<pid>/stat`, which a busy machine disturbs less than wall-clock rates.

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
    /// Raw lists over HTTPS, bytes not decoded, one entry per size.
    pub raw_lists: Vec<RawLists>,
    pub watch_deliveries_per_s: f64,
    /// Server CPU (user + system) per create, in microseconds.
    pub server_cpu_us_per_create: f64,
    /// Server CPU per `GET /version`, in microseconds.
    pub server_cpu_us_per_version: f64,
    /// RSS of the server before the first create.
    pub rss_empty_mib: f64,
    /// RSS right after the last create, before the large lists.
    pub rss_stored_mib: f64,
    /// After the last create, how long `up`'s own controllers (resource detector, garbage
    /// collector, …) kept the server busy working off the burst, and the CPU they spent: the
    /// lists wait for that, so they time the list and not the backlog.
    pub settle_s: f64,
    pub settle_cpu_s: f64,
    /// RSS at the end of the run (after the lists): what the target is judged on.
    pub rss_mib: f64,
    pub objects: usize,
}

/// Raw lists of one size over HTTPS: the first list of that many objects (nothing listed them
/// before it) apart from the warm ones that follow.
#[derive(Debug, Default, Clone, Copy)]
pub struct RawLists {
    pub objects: usize,
    pub first_ms: f64,
    /// P99 of the lists after the first (with 10 lists, the slowest).
    pub warm_p99_ms: f64,
    /// Server CPU (user + system) per warm list.
    pub server_cpu_ms: f64,
    pub bytes: usize,
}

impl RawLists {
    /// The slowest the list was, first one included: what the target is judged on.
    pub fn worst_ms(&self) -> f64 {
        self.first_ms.max(self.warm_p99_ms)
    }
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

/// CPU time (user + system) the process has used so far, in seconds.
fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .context("/proc/<pid>/stat format")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |index: usize| -> anyhow::Result<f64> {
        Ok(fields
            .get(index - 3)
            .context("/proc/<pid>/stat fields")?
            .parse::<f64>()?)
    };
    // utime is field 14, stime field 15, in clock ticks (100 per second on Linux).
    Ok((ticks(14)? + ticks(15)?) / 100.0)
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

/// `1 + warm` raw lists over HTTPS: each timed from sending the request to the last byte of
/// the body, which is read into a buffer and not decoded.
/// Waits until the server is idle (under a tenth of a core over 250 ms, at most 60 s); returns
/// the seconds waited and the server CPU seconds spent meanwhile.
async fn settle(pid: u32) -> anyhow::Result<(f64, f64)> {
    const TICK: Duration = Duration::from_millis(250);
    let started = Instant::now();
    let cpu_start = cpu_seconds(pid)?;
    let mut cpu = cpu_start;
    while started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(TICK).await;
        let now = cpu_seconds(pid)?;
        let busy = now - cpu;
        cpu = now;
        if busy < TICK.as_secs_f64() / 10.0 {
            break;
        }
    }
    Ok((started.elapsed().as_secs_f64(), cpu - cpu_start))
}

async fn raw_lists(
    client: &kube::Client,
    pid: u32,
    objects: usize,
    warm: usize,
) -> anyhow::Result<RawLists> {
    use futures::AsyncBufReadExt as _;
    let mut times = Vec::new();
    let mut body = Blocks::default();
    let mut cpu = 0.0;
    for i in 0..=warm {
        if i == 1 {
            cpu = cpu_seconds(pid)?;
        }
        let request = http::Request::get("/apis/apps/v1/namespaces/default/deployments")
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())?;
        body.clear();
        let started = Instant::now();
        // Each chunk as it arrives is appended to the body: one copy, as any client that keeps
        // the body makes. The body is kept in 1 MiB blocks: one growing `Vec` would copy the
        // whole body at every doubling on the first list (mimalloc reallocates huge blocks by
        // copying), and `read_to_end` would zero the whole spare capacity first (256 MiB for this
        // list), which are the reader's costs, not the server's.
        let mut stream = Box::pin(client.request_stream(request).await?);
        loop {
            let chunk = stream.fill_buf().await?;
            if chunk.is_empty() {
                break;
            }
            let n = chunk.len();
            body.extend_from_slice(chunk);
            stream.consume_unpin(n);
        }
        times.push(started.elapsed());
        // Each item names its kind once (the list's own kind is `DeploymentList`): counting
        // them checks the list is whole, outside the timed part.
        let whole = body.concat();
        let items = whole
            .windows(DEPLOYMENT_KIND.len())
            .filter(|w| *w == DEPLOYMENT_KIND)
            .count();
        anyhow::ensure!(items == objects, "raw list held {items} of {objects}");
    }
    let server_cpu_ms = (cpu_seconds(pid)? - cpu) * 1e3 / warm.max(1) as f64;
    let first_ms = times[0].as_secs_f64() * 1e3;
    Ok(RawLists {
        objects,
        first_ms,
        warm_p99_ms: percentile(&mut times[1..], 0.99),
        server_cpu_ms,
        bytes: body.len(),
    })
}

/// A response body kept as a list of fixed-size blocks, reused from one list to the next.
#[derive(Default)]
struct Blocks {
    blocks: Vec<Vec<u8>>,
    /// Blocks in use (the rest are kept for the next body).
    used: usize,
}

impl Blocks {
    const BLOCK: usize = 1 << 20;

    fn clear(&mut self) {
        for block in &mut self.blocks {
            block.clear();
        }
        self.used = 0;
    }

    fn extend_from_slice(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.used == 0 || self.blocks[self.used - 1].len() == Self::BLOCK {
                if self.used == self.blocks.len() {
                    self.blocks.push(Vec::with_capacity(Self::BLOCK));
                }
                self.used += 1;
            }
            let block = &mut self.blocks[self.used - 1];
            let n = bytes.len().min(Self::BLOCK - block.len());
            block.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
    }

    fn len(&self) -> usize {
        self.blocks[..self.used].iter().map(Vec::len).sum()
    }

    fn concat(&self) -> Vec<u8> {
        self.blocks[..self.used].concat()
    }
}

const DEPLOYMENT_KIND: &[u8] = br#""kind":"Deployment""#;

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
    let cpu = cpu_seconds(pid)?;
    let started = Instant::now();
    (figures.version_per_s, figures.version_p99_ms) =
        version_baseline(&clients, Duration::from_secs(3)).await?;
    let versions = figures.version_per_s * started.elapsed().as_secs_f64();
    figures.server_cpu_us_per_version = (cpu_seconds(pid)? - cpu) * 1e6 / versions.max(1.0);
    figures.rss_empty_mib = rss_mib(pid)?;
    let first = objects.min(10_000);
    eprintln!("bench apiserver: creating {first} Deployments");
    let cpu = cpu_seconds(pid)?;
    let started = Instant::now();
    let mut latencies = create_range(&clients, 0, first).await?;
    figures.creates_per_s = first as f64 / started.elapsed().as_secs_f64();
    figures.server_cpu_us_per_create = (cpu_seconds(pid)? - cpu) * 1e6 / first as f64;
    figures.create_p50_ms = percentile(&mut latencies, 0.5);
    figures.create_p99_ms = percentile(&mut latencies, 0.99);
    // Raw lists first, so that the first of them is the first list of these objects.
    figures
        .raw_lists
        .push(raw_lists(&clients[0], pid, first, 20).await?);
    let (get, list) = read_percentiles(&clients[0], first, 20).await?;
    figures.get_p99_ms.push((first, get));
    figures.list_p99_ms.push((first, list));
    eprintln!("bench apiserver: watch fan-out to 100 watchers");
    figures.watch_deliveries_per_s = watch_rate(&clients, 100, first.min(2_000)).await?;
    if objects > first {
        eprintln!("bench apiserver: creating up to {objects} Deployments");
        create_range(&clients, first, objects).await?;
        figures.rss_stored_mib = rss_mib(pid)?;
        (figures.settle_s, figures.settle_cpu_s) = settle(pid).await?;
        eprintln!("bench apiserver: listing {objects} Deployments");
        figures
            .raw_lists
            .push(raw_lists(&clients[0], pid, objects, 10).await?);
        let (get, list) = read_percentiles(&clients[0], objects, 5).await?;
        figures.get_p99_ms.push((objects, get));
        figures.list_p99_ms.push((objects, list));
    }
    if objects <= first {
        figures.rss_stored_mib = rss_mib(pid)?;
    }
    figures.rss_mib = rss_mib(pid)?;
    Ok(figures)
}

/// Creates per second the API server must sustain.
const TARGET_CREATES_PER_S: f64 = 5_000.0;
/// The longest a list of 100,000 Deployments from the watch cache may take, in ms.
const TARGET_LIST_MS: f64 = 1_000.0;
/// The most the server may use with 100,000 stored Deployments, in MiB.
const TARGET_RSS_MIB: f64 = 600.0;

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        (a / b * 100.0).round() / 100.0
    } else {
        0.0
    }
}

impl Figures {
    /// The raw lists at the largest size measured.
    fn largest_raw_list(&self) -> RawLists {
        self.raw_lists.last().copied().unwrap_or_default()
    }

    /// RSS scaled to 100,000 Deployments (exact when the run stored 100,000).
    fn rss_per_100k_mib(&self) -> f64 {
        if self.objects == 0 {
            return 0.0;
        }
        self.rss_mib * 100_000.0 / self.objects as f64
    }

    /// What one stored Deployment adds to the RSS, in bytes.
    fn rss_bytes_per_object(&self) -> f64 {
        if self.objects == 0 {
            return 0.0;
        }
        (self.rss_mib - self.rss_empty_mib) * 1024.0 * 1024.0 / self.objects as f64
    }
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
        "{:<48} {:>14.1}",
        "baseline: server CPU us per GET /version", f.server_cpu_us_per_version
    );
    println!(
        "{:<48} {:>14.0}",
        "Deployment creates per s", f.creates_per_s
    );
    println!("{:<48} {:>14.2}", "create P50 ms", f.create_p50_ms);
    println!("{:<48} {:>14.2}", "create P99 ms", f.create_p99_ms);
    println!(
        "{:<48} {:>14.1}",
        "server CPU us per create", f.server_cpu_us_per_create
    );
    for (n, v) in &f.get_p99_ms {
        println!("{:<48} {:>14.2}", format!("get P99 ms ({n} objects)"), v);
    }
    for (n, v) in &f.list_p99_ms {
        println!(
            "{:<48} {:>14.2}",
            format!("list P99 ms, kube-rs typed ({n} objects)"),
            v
        );
    }
    for raw in &f.raw_lists {
        let n = raw.objects;
        println!(
            "{:<48} {:>14.2}",
            format!("first list ms, raw HTTPS ({n} objects)"),
            raw.first_ms
        );
        println!(
            "{:<48} {:>14.2}",
            format!("warm list P99 ms, raw HTTPS ({n} objects)"),
            raw.warm_p99_ms
        );
        println!(
            "{:<48} {:>14.2}",
            format!("server CPU ms per warm list ({n} objects)"),
            raw.server_cpu_ms
        );
        println!(
            "{:<48} {:>14.0}",
            format!("list body bytes per object ({n} objects)"),
            raw.bytes as f64 / n.max(1) as f64
        );
    }
    println!(
        "{:<48} {:>14.0}",
        "watch deliveries per s (100 watchers)", f.watch_deliveries_per_s
    );
    println!(
        "{:<48} {:>14.1}",
        "server busy after the last create, s", f.settle_s
    );
    println!(
        "{:<48} {:>14.1}",
        "server CPU s spent meanwhile (controllers)", f.settle_cpu_s
    );
    println!(
        "{:<48} {:>14.1}",
        "server RSS MiB before the first create", f.rss_empty_mib
    );
    println!(
        "{:<48} {:>14.1}",
        format!("server RSS MiB ({} Deployments, before lists)", f.objects),
        f.rss_stored_mib
    );
    println!(
        "{:<48} {:>14.1}",
        format!("server RSS MiB ({} Deployments)", f.objects),
        f.rss_mib
    );
    println!(
        "{:<48} {:>14.0}",
        "server RSS bytes per stored Deployment",
        f.rss_bytes_per_object()
    );
    let largest = f.largest_raw_list();
    let (list_n, list_ms) = (largest.objects, largest.worst_ms());
    let rss_100k = f.rss_per_100k_mib();
    println!();
    println!(
        "{:<40} {:>10} {:>10} {:>10} {:>18}",
        "TARGET", "MEASURED", "TARGET", "VS TARGET", "VS GET /version"
    );
    println!(
        "{:<40} {:>10.0} {:>10} {:>10.2} {:>18}",
        "Deployment creates per s",
        f.creates_per_s,
        ">= 5000",
        ratio(f.creates_per_s, TARGET_CREATES_PER_S),
        format!("{:.3} of its rate", ratio(f.creates_per_s, f.version_per_s)),
    );
    println!(
        "{:<40} {:>10.0} {:>10} {:>10.2} {:>18}",
        format!("list ms, worst incl. first ({list_n})"),
        list_ms,
        "< 1000",
        ratio(list_ms, TARGET_LIST_MS),
        format!("{:.0}x its P99", ratio(list_ms, f.version_p99_ms)),
    );
    println!(
        "{:<40} {:>10.0} {:>10} {:>10.2} {:>18}",
        "RSS MiB per 100,000 Deployments",
        rss_100k,
        "< 600",
        ratio(rss_100k, TARGET_RSS_MIB),
        format!("{:.1}x empty RSS", ratio(f.rss_mib, f.rss_empty_mib)),
    );
    let figures: Value = json!({
        "bench": "apiserver",
        "store": "redb",
        "creates_per_s": f.creates_per_s.round(),
        "create_p50_ms": f.create_p50_ms,
        "create_p99_ms": f.create_p99_ms,
        "server_cpu_us_per_create": f.server_cpu_us_per_create.round(),
        "get_p99_ms": f.get_p99_ms.iter().map(|(n, v)| json!({"objects": n, "ms": v})).collect::<Vec<_>>(),
        "list_p99_ms": f.list_p99_ms.iter().map(|(n, v)| json!({"objects": n, "ms": v})).collect::<Vec<_>>(),
        "raw_lists": f.raw_lists.iter().map(|r| json!({"objects": r.objects, "first_ms": r.first_ms, "warm_p99_ms": r.warm_p99_ms, "server_cpu_ms": r.server_cpu_ms, "bytes": r.bytes})).collect::<Vec<_>>(),
        "watch_deliveries_per_s": f.watch_deliveries_per_s.round(),
        "rss_empty_mib": f.rss_empty_mib,
        "rss_stored_mib": f.rss_stored_mib,
        "settle_s": f.settle_s,
        "settle_cpu_s": f.settle_cpu_s,
        "rss_mib": f.rss_mib,
        "rss_per_100k_mib": rss_100k,
        "rss_bytes_per_object": f.rss_bytes_per_object().round(),
        "objects": f.objects,
        "baselines": {
            "version_per_s": f.version_per_s.round(),
            "version_p99_ms": f.version_p99_ms,
            "server_cpu_us_per_version": f.server_cpu_us_per_version,
        },
        "ratios": {
            "creates_vs_version_round_trips": ratio(f.creates_per_s, f.version_per_s),
            "creates_vs_target_5000": ratio(f.creates_per_s, TARGET_CREATES_PER_S),
            "server_cpu_create_vs_version": ratio(f.server_cpu_us_per_create, f.server_cpu_us_per_version),
            "server_list_vs_target_1000_ms": ratio(list_ms, TARGET_LIST_MS),
            "server_list_vs_version_p99": ratio(list_ms, f.version_p99_ms),
            "rss_per_100k_vs_target_600_mib": ratio(rss_100k, TARGET_RSS_MIB),
            "rss_vs_target_600_mib": ratio(f.rss_mib, TARGET_RSS_MIB),
            "rss_vs_empty": ratio(f.rss_mib, f.rss_empty_mib),
        },
    });
    println!("{figures}");
}
