//! The bench's world: `flotilla sim` in a child process (so that its memory and CPU are not
//! counted as the control plane's), and in this process the control plane `flotilla up` runs —
//! API server on the store `up` uses (redb, here in a temporary directory; or memory), the
//! scheduler, every controller — with the members joined in push mode through `flotilla
//! join`'s code.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use flotilla_api::karmada::Cluster;
use flotilla_apiserver::auth::authn::UserInfo;
use futures::StreamExt;
use kube::api::Api;
use tokio::io::AsyncBufReadExt;

use crate::join::{self, JoinRequest};
use crate::up::StoreKind;

/// `flotilla sim` in a child process, started by this same binary; killed when this is dropped
/// (every exit path of a bench, errors and Ctrl-C included).
pub struct SimChild {
    child: tokio::process::Child,
    pid: u32,
    /// The kubeconfig the sim wrote, one context per cluster.
    pub kubeconfig: PathBuf,
    _dir: tempfile::TempDir,
}

impl SimChild {
    /// Starts `flotilla sim` with the arguments `args` gives for a fresh temporary directory
    /// (where it may write a configuration file), and waits up to `ready_within` until the sim
    /// printed its `export KUBECONFIG=` line.
    pub async fn start(
        args: impl FnOnce(&Path) -> anyhow::Result<Vec<std::ffi::OsString>>,
        ready_within: Duration,
    ) -> anyhow::Result<SimChild> {
        let dir = tempfile::tempdir().context("a temporary directory for the sim")?;
        let kubeconfig = dir.path().join("members.kubeconfig");
        let exe = std::env::current_exe().context("find the flotilla binary")?;
        let mut child = tokio::process::Command::new(exe)
            .arg("sim")
            .args(args(dir.path())?)
            .arg("--kubeconfig-out")
            .arg(&kubeconfig)
            .arg("--data-dir")
            .arg(dir.path().join("sim"))
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("start `flotilla sim`")?;
        let pid = child.id().context("the sim's process id")?;
        let stdout = child.stdout.take().context("the sim's stdout")?;
        let mut sim = SimChild {
            child,
            pid,
            kubeconfig,
            _dir: dir,
        };
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        loop {
            let line = tokio::time::timeout(ready_within, lines.next_line())
                .await
                .with_context(|| format!("the sim did not start within {ready_within:?}"))?
                .context("read the sim's output")?;
            match line {
                Some(line) if line.starts_with("export KUBECONFIG=") => break,
                Some(_) => {}
                None => {
                    let status = sim.child.wait().await.ok();
                    anyhow::bail!("`flotilla sim` exited before it was ready ({status:?})");
                }
            }
        }
        // Keep draining its stdout so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(sim)
    }

    /// CPU seconds of the sim process so far.
    pub fn cpu_seconds(&self) -> f64 {
        cpu_seconds_of(&format!("/proc/{}/stat", self.pid))
    }

    /// RSS of the sim process, MiB.
    pub fn rss_mib(&self) -> f64 {
        status_kib(&format!("/proc/{}/status", self.pid), "VmRSS:") / 1024.0
    }

    /// Peak RSS of the sim process, MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        status_kib(&format!("/proc/{}/status", self.pid), "VmHWM:") / 1024.0
    }
}

/// The simulated members of `bench propagate`.
pub struct Members {
    pub sim: SimChild,
    pub names: Vec<String>,
}

impl Members {
    /// Starts `clusters` clusters named `member1..` with `nodes` cpu nodes each and waits until
    /// the sim wrote their kubeconfig.
    pub async fn start(clusters: usize, nodes: usize) -> anyhow::Result<Members> {
        let args = |_: &Path| {
            Ok([
                "--count",
                &clusters.to_string(),
                "--nodes",
                &nodes.to_string(),
                "--start-latency",
                "0",
                "--lease-renew-interval",
                "60s",
                // The members' objects as plain JSON: compact storage saves the sim memory at
                // issue-4 scale and costs it CPU, which here would be taken from the control
                // plane on the same cores.
                "--plain-storage",
            ]
            .into_iter()
            .map(Into::into)
            .collect())
        };
        Ok(Members {
            sim: SimChild::start(args, Duration::from_secs(600)).await?,
            names: (1..=clusters).map(|i| format!("member{i}")).collect(),
        })
    }
}

fn status_kib(path: &str, field: &str) -> f64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
}

/// RSS of this process (the control plane and the bench's clients), MiB.
pub fn rss_mib() -> f64 {
    status_kib("/proc/self/status", "VmRSS:") / 1024.0
}

/// Peak RSS of this process, MiB.
pub fn peak_rss_mib() -> f64 {
    status_kib("/proc/self/status", "VmHWM:") / 1024.0
}

/// CPU seconds (user + system) of a process from its `stat` file (Linux's 100 ticks/s).
pub fn cpu_seconds_of(path: &str) -> f64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = after.split_whitespace().collect();
            let utime: f64 = fields.get(11)?.parse().ok()?;
            let stime: f64 = fields.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(0.0)
}

/// The in-process control plane; dropping it stops the components.
pub struct ControlPlane {
    pub client: kube::Client,
    pub store: Arc<dyn flotilla_store::Store>,
    /// The redb store itself (its writer's counters), when the bench runs on redb.
    pub redb: Option<Arc<flotilla_store_redb::RedbStore>>,
    _running: flotilla_apiserver::Running,
    shutdown: flotilla_runtime::Shutdown,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The redb file's directory (removed when the bench ends).
    _data: Option<tempfile::TempDir>,
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.shutdown.cancel();
        for task in &self.tasks {
            task.abort();
        }
    }
}

pub fn admin(running: &flotilla_apiserver::Running, name: &str) -> kube::Client {
    flotilla_apiserver::client::in_process(
        &running.server,
        UserInfo {
            name: format!("system:flotilla:{name}"),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..Default::default()
        },
    )
}

impl ControlPlane {
    /// API server on `store` (redb: durable, in a temporary directory, with `up`'s options;
    /// memory: compacted as `up --store memory` does), the scheduler and every default
    /// controller, as `up` runs them (without leader election: one process).
    pub async fn start(kind: StoreKind) -> anyhow::Result<ControlPlane> {
        flotilla_apiserver::auth::tls::install_crypto_provider();
        let (store, redb, data): (Arc<dyn flotilla_store::Store>, _, _) = match kind {
            StoreKind::Memory => {
                let store: Arc<dyn flotilla_store::Store> =
                    Arc::new(flotilla_store::MemoryStore::new());
                crate::up::spawn_compaction(store.clone());
                (store, None, None)
            }
            StoreKind::Redb => {
                let dir = tempfile::tempdir().context("a temporary directory for the store")?;
                let store = flotilla_store_redb::RedbStore::open(
                    dir.path().join("store"),
                    flotilla_store_redb::RedbOptions::default(),
                )
                .context("open the redb store")?;
                let store = Arc::new(store);
                (store.clone(), Some(store), Some(dir))
            }
            StoreKind::Etcd => anyhow::bail!("bench propagate runs on redb or memory"),
        };
        let running = flotilla_apiserver::Builder::new(store.clone())
            .start()
            .await
            .context("start the API server")?;
        let shutdown = flotilla_runtime::Shutdown::new();
        let members: Arc<dyn flotilla_member::MemberClients> =
            flotilla_member::SecretMemberClients::start(
                admin(&running, "member-clients"),
                shutdown.clone(),
            );
        let scheduler = flotilla_scheduler::run::Scheduler::new(
            admin(&running, "scheduler"),
            flotilla_scheduler::run::SchedulerConfig::default(),
            flotilla_scheduler::run::Metrics::default(),
        );
        let term = shutdown.child();
        let scheduler = tokio::spawn(async move {
            if let Err(error) = scheduler.run(term).await {
                tracing::error!(%error, "the scheduler stopped");
            }
        });
        let (known, off) = flotilla_controllers::manager::controller_names();
        let selection = flotilla_runtime::ControllerSelection::parse("*", &known, &off)?;
        let context = flotilla_controllers::Context::new(
            admin(&running, "controller-manager"),
            members,
            None,
        );
        let term = shutdown.child();
        let controllers = tokio::spawn(async move {
            flotilla_controllers::run_controllers(context, &selection, term).await;
        });
        Ok(ControlPlane {
            client: admin(&running, "bench"),
            store,
            redb,
            _running: running,
            shutdown,
            tasks: vec![scheduler, controllers],
            _data: data,
        })
    }

    /// Joins every member in push mode (8 at a time) and waits until all are Ready.
    pub async fn join(&self, kubeconfig: &Path, names: &[String]) -> anyhow::Result<()> {
        let results: Vec<anyhow::Result<()>> = futures::stream::iter(names.iter().cloned())
            .map(|name| async move {
                let member = join::probe::load_member(kubeconfig, Some(&name)).await?;
                join::join(&self.client, &member, &JoinRequest::push(name.clone()))
                    .await
                    .with_context(|| format!("join {name}"))?;
                Ok(())
            })
            .buffer_unordered(8)
            .collect()
            .await;
        for result in results {
            result?;
        }
        let clusters = Api::<Cluster>::all(self.client.clone());
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let ready = clusters
                .list(&Default::default())
                .await
                .context("list Clusters")?
                .items
                .iter()
                .filter(|c| {
                    c.status.as_ref().is_some_and(|s| {
                        s.conditions
                            .iter()
                            .any(|c| c.type_ == "Ready" && c.status == "True")
                    })
                })
                .count();
            if ready >= names.len() {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "only {ready} of {} clusters Ready after 5 minutes",
                names.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
