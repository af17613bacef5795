//! An etcd cluster of one or more members on loopback, each its own process.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use etcd_client::{Client, ConnectOptions, GetOptions};
use tempfile::TempDir;
use tokio::time::Instant;

use super::{HarnessError, etcd_binary};

/// How long a member may take to serve its first read.
const READY_WITHIN: Duration = Duration::from_secs(30);
/// Start attempts, each with new ports (another process may take a port we picked).
const ATTEMPTS: usize = 3;
/// Room for a 1.5 MiB value (Kubernetes' limit) plus key and framing; etcd's default is 1.5 MiB.
const MAX_REQUEST_BYTES: &str = "4194304";

/// Running etcd members; killed and deleted on drop.
#[derive(Debug)]
pub struct EtcdCluster {
    members: Vec<Member>,
    dir: TempDir,
}

#[derive(Debug)]
struct Member {
    client_url: String,
    /// `None` once killed.
    process: Option<Child>,
}

impl EtcdCluster {
    /// Starts `members` members forming one cluster and waits until each serves reads.
    pub async fn start(members: usize) -> Result<EtcdCluster, HarnessError> {
        let binary = etcd_binary()?;
        let mut attempt = 1;
        loop {
            match Self::start_once(&binary, members).await {
                Err(HarnessError::Exited { log, .. })
                    if attempt < ATTEMPTS && log.contains("address already in use") =>
                {
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn start_once(binary: &Path, members: usize) -> Result<EtcdCluster, HarnessError> {
        let dir = temp_dir()?;
        let ports = free_ports(2 * members)?;
        let peer_url = |i: usize| format!("http://127.0.0.1:{}", ports[2 * i + 1]);
        let initial_cluster = (0..members)
            .map(|i| format!("m{i}={}", peer_url(i)))
            .collect::<Vec<_>>()
            .join(",");
        let token = dir
            .path()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "flotilla-test".into());
        let mut cluster = EtcdCluster {
            members: Vec::with_capacity(members),
            dir,
        };
        for i in 0..members {
            let client_url = format!("http://127.0.0.1:{}", ports[2 * i]);
            let log = File::create(cluster.log_path(i)).map_err(io("log file"))?;
            let log_err = log.try_clone().map_err(io("log file"))?;
            let process = Command::new(binary)
                .arg("--name")
                .arg(format!("m{i}"))
                .arg("--data-dir")
                .arg(cluster.dir.path().join(format!("m{i}")))
                .args(["--listen-client-urls", &client_url])
                .args(["--advertise-client-urls", &client_url])
                .args(["--listen-peer-urls", &peer_url(i)])
                .args(["--initial-advertise-peer-urls", &peer_url(i)])
                .args(["--initial-cluster", &initial_cluster])
                .args(["--initial-cluster-state", "new"])
                .args(["--initial-cluster-token", &token])
                .args(["--max-request-bytes", MAX_REQUEST_BYTES])
                // Loopback: a quick election after a member dies, without flapping on a busy
                // machine.
                .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
                .args(["--logger", "zap", "--log-level", "warn"])
                .stdin(Stdio::null())
                .stdout(Stdio::from(log))
                .stderr(Stdio::from(log_err))
                .spawn()
                .map_err(io("process"))?;
            cluster.members.push(Member {
                client_url,
                process: Some(process),
            });
        }
        for i in 0..members {
            cluster.wait_ready(i).await?;
        }
        Ok(cluster)
    }

    /// Every member's client URL, killed ones included.
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| m.client_url.clone()).collect()
    }

    /// The client URL of member `index`.
    pub fn endpoint(&self, index: usize) -> &str {
        &self.members[index].client_url
    }

    /// Kills member `index` with SIGKILL (no goodbye to its peers or clients) and reaps it.
    pub fn kill(&mut self, index: usize) {
        if let Some(mut process) = self.members[index].process.take() {
            // Fails only when the process has already exited, which is what we want.
            let _ = process.kill();
            let _ = process.wait();
        }
    }

    /// The index of the current leader, asked of the living members.
    pub async fn leader(&self) -> Option<usize> {
        let mut ids = Vec::new();
        let mut leader = None;
        for member in &self.members {
            let status = match member.process {
                Some(_) => member_status(&member.client_url).await,
                None => None,
            };
            ids.push(status.map(|(id, _)| id));
            leader = leader.or(status.map(|(_, leader)| leader).filter(|l| *l != 0));
        }
        let leader = leader?;
        ids.iter().position(|id| *id == Some(leader))
    }

    fn log_path(&self, index: usize) -> PathBuf {
        self.dir.path().join(format!("m{index}.log"))
    }

    fn log_tail(&self, index: usize) -> String {
        let log = std::fs::read_to_string(self.log_path(index)).unwrap_or_default();
        let start = log.len().saturating_sub(3000);
        let start = (start..log.len())
            .find(|i| log.is_char_boundary(*i))
            .unwrap_or(log.len());
        log[start..].to_owned()
    }

    async fn wait_ready(&mut self, index: usize) -> Result<(), HarnessError> {
        let deadline = Instant::now() + READY_WITHIN;
        let url = self.members[index].client_url.clone();
        loop {
            if let Some(process) = self.members[index].process.as_mut()
                && let Ok(Some(status)) = process.try_wait()
            {
                return Err(HarnessError::Exited {
                    member: index,
                    status,
                    log: self.log_tail(index),
                });
            }
            if serves_reads(&url).await {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(HarnessError::NotReady {
                    member: index,
                    seconds: READY_WITHIN.as_secs(),
                    log: self.log_tail(index),
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for index in 0..self.members.len() {
            self.kill(index);
        }
    }
}

/// Whether a linearizable read through `url` succeeds (the member is up and has a leader).
async fn serves_reads(url: &str) -> bool {
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_millis(500))
        .with_timeout(Duration::from_secs(1));
    let read = async {
        let mut client = Client::connect([url], Some(options)).await.ok()?;
        let count = GetOptions::new().with_count_only();
        client.get("health", Some(count)).await.ok()
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), read).await,
        Ok(Some(_))
    )
}

/// `(member id, leader id)` as member `url` sees them.
async fn member_status(url: &str) -> Option<(u64, u64)> {
    let options = ConnectOptions::new()
        .with_connect_timeout(Duration::from_millis(500))
        .with_timeout(Duration::from_secs(1));
    let status = async {
        let mut client = Client::connect([url], Some(options)).await.ok()?;
        let status = client.status().await.ok()?;
        Some((status.header()?.member_id(), status.leader()))
    };
    tokio::time::timeout(Duration::from_secs(2), status)
        .await
        .ok()
        .flatten()
}

fn temp_dir() -> Result<TempDir, HarnessError> {
    let shm = Path::new("/dev/shm");
    let mut builder = tempfile::Builder::new();
    builder.prefix("flotilla-etcd-");
    if shm.is_dir()
        && let Ok(dir) = builder.tempdir_in(shm)
    {
        return Ok(dir);
    }
    builder.tempdir().map_err(io("data directory"))
}

/// Ports free right now on 127.0.0.1 (all held at once, so they are distinct).
fn free_ports(count: usize) -> Result<Vec<u16>, HarnessError> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io("ports"))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io("ports"))
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> HarnessError {
    move |source| HarnessError::Io { what, source }
}
