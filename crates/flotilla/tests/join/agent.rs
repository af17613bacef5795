//! The pull-mode agent: registers its member (`syncMode: Pull`, `spec.id`), renews its Lease,
//! counts and survives a lost control plane, follows a rewritten kubeconfig, and refuses to
//! register a member that is already registered under another name.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use flotilla_agent::{AgentConfig, KubeconfigSource, Metrics};
use flotilla_api::karmada::Cluster;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::support::{ControlPlane, Members, PATIENCE, eventually};

/// A TCP forwarder in front of the control plane that can be cut (connections reset, new ones
/// refused) and restored on the same port.
struct Proxy {
    address: SocketAddr,
    up: watch::Sender<bool>,
    connections: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("listen");
        let address = listener.local_addr().expect("address");
        let (up, mut changes) = watch::channel(true);
        let connections: Arc<Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        let tracked = connections.clone();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = accepted.clone();
        let task = tokio::spawn(async move {
            let mut listener = Some(listener);
            loop {
                if !*changes.borrow_and_update() {
                    listener = None;
                    if changes.changed().await.is_err() {
                        return;
                    }
                    continue;
                }
                let current = match &listener {
                    Some(l) => l,
                    None => match TcpListener::bind(address).await {
                        Ok(l) => listener.insert(l),
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    },
                };
                tokio::select! {
                    accepted = current.accept() => {
                        let Ok((mut inbound, _)) = accepted else { continue };
                        counted.fetch_add(1, Ordering::Relaxed);
                        let handle = tokio::spawn(async move {
                            if let Ok(mut outbound) = TcpStream::connect(target).await {
                                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                            }
                        });
                        tracked.lock().push(handle.abort_handle());
                    }
                    _ = changes.changed() => {}
                }
            }
        });
        Proxy {
            address,
            up,
            connections,
            accepted,
            task,
        }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.address.port())
    }

    /// The control plane goes away: open connections are reset, new ones refused.
    fn cut(&self) {
        self.up.send_replace(false);
        for connection in self.connections.lock().drain(..) {
            connection.abort();
        }
    }

    fn restore(&self) {
        self.up.send_replace(true);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.task.abort();
    }
}

/// The control plane's admin kubeconfig pointed at `url`.
fn kubeconfig_via(control: &ControlPlane, url: &str, path: &std::path::Path) {
    let text = std::fs::read_to_string(&control.kubeconfig).expect("the admin kubeconfig");
    std::fs::write(path, text.replace(&control.url, url)).expect("write a kubeconfig");
}

fn control_address(control: &ControlPlane) -> SocketAddr {
    control
        .url
        .trim_start_matches("https://")
        .parse()
        .expect("an address")
}

async fn renew_time(leases: &Api<Lease>) -> Option<jiff::Timestamp> {
    let lease = leases.get_opt("m1").await.ok()??;
    lease.spec?.renew_time.map(|t| t.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_registers_heartbeats_counts_a_lost_control_plane_and_follows_its_kubeconfig() {
    let control = ControlPlane::start("").await;
    let members = Members::start(&["m1"]).await;
    let m1 = members.cluster("m1");
    let admin = control.client();
    let proxy = Proxy::start(control_address(&control)).await;
    let agent_kubeconfig = control.dir.path().join("agent.kubeconfig");
    kubeconfig_via(&control, &proxy.url(), &agent_kubeconfig);

    let mut config = AgentConfig::new(
        "m1",
        KubeconfigSource::new(&agent_kubeconfig, None),
        KubeconfigSource::new(&members.kubeconfig, Some("m1".into())),
    );
    config.lease_duration = Duration::from_secs(2);
    config.renew_interval = Duration::from_millis(200);
    config.reload_interval = Duration::from_millis(200);
    config.retry_initial = Duration::from_millis(100);
    let metrics = Metrics::default();
    let shutdown = flotilla_runtime::Shutdown::new();
    let agent = tokio::spawn(flotilla_agent::run(
        config,
        metrics.clone(),
        shutdown.clone(),
    ));

    // Registered in pull mode with the member's identity.
    let clusters: Api<Cluster> = Api::all(admin.clone());
    let cluster = eventually(PATIENCE, "the Cluster is registered", || {
        let clusters = clusters.clone();
        async move { clusters.get_opt("m1").await.ok().flatten() }
    })
    .await;
    assert_eq!(cluster.spec.sync_mode, "Pull");
    assert_eq!(cluster.spec.id, m1.cluster_id);
    assert_eq!(cluster.spec.api_endpoint, m1.url);
    assert!(
        cluster.spec.secret_ref.is_none(),
        "pull mode stores no member credentials"
    );
    // Its writes are recorded under Karmada's agent's name (from its User-Agent).
    let managers: Vec<&str> = cluster
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|entry| entry.manager.as_deref())
        .collect();
    assert!(
        !managers.is_empty() && managers.iter().all(|m| *m == "karmada-agent"),
        "{managers:?}"
    );

    // The heartbeat: a Lease named after the cluster, owned by it, renewed.
    let leases: Api<Lease> = Api::namespaced(admin.clone(), "karmada-cluster");
    let first = eventually(PATIENCE, "the Lease exists", || {
        let leases = leases.clone();
        async move { renew_time(&leases).await }
    })
    .await;
    let lease = leases.get("m1").await.expect("the Lease");
    let spec = lease.spec.clone().expect("a spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("m1"));
    assert_eq!(spec.lease_duration_seconds, Some(2));
    let owner = &lease.metadata.owner_references.expect("an owner")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Cluster", "m1")
    );
    assert_eq!(Some(owner.uid.as_str()), cluster.metadata.uid.as_deref());
    eventually(PATIENCE, "the Lease is renewed", || {
        let leases = leases.clone();
        async move { renew_time(&leases).await.filter(|t| *t > first) }
    })
    .await;
    assert_eq!(metrics.connection_errors.get(), 0);

    // The control plane goes away: counted, and retried.
    proxy.cut();
    eventually(PATIENCE, "connection errors are counted", || {
        let metrics = metrics.clone();
        async move { (metrics.connection_errors.get() >= 2).then_some(()) }
    })
    .await;
    let during = renew_time(&leases).await.expect("a renew time");
    proxy.restore();
    eventually(PATIENCE, "heartbeats resume", || {
        let leases = leases.clone();
        async move { renew_time(&leases).await.filter(|t| *t > during) }
    })
    .await;

    // A rewritten kubeconfig is followed without a restart: point it at a second route, then
    // take the first one away for good.
    let second = Proxy::start(control_address(&control)).await;
    kubeconfig_via(&control, &second.url(), &agent_kubeconfig);
    eventually(
        PATIENCE,
        "the agent reconnects through the new route",
        || {
            let accepted = second.accepted.clone();
            async move { (accepted.load(Ordering::Relaxed) > 0).then_some(()) }
        },
    )
    .await;
    proxy.cut();
    let errors = metrics.connection_errors.get();
    let before = renew_time(&leases).await.expect("a renew time");
    eventually(
        PATIENCE,
        "heartbeats continue through the new route",
        || {
            let leases = leases.clone();
            async move {
                renew_time(&leases)
                    .await
                    .filter(|t| *t > before + jiff::SignedDuration::from_millis(500))
            }
        },
    )
    .await;
    assert_eq!(
        metrics.connection_errors.get(),
        errors,
        "the agent no longer uses the old route"
    );

    // The same member under another name is refused for good.
    let mut other = AgentConfig::new(
        "m1-again",
        KubeconfigSource::new(&control.kubeconfig, None),
        KubeconfigSource::new(&members.kubeconfig, Some("m1".into())),
    );
    other.retry_initial = Duration::from_millis(100);
    let refused = flotilla_agent::run(other, Metrics::default(), flotilla_runtime::Shutdown::new())
        .await
        .expect_err("a second registration of the member");
    assert!(
        refused
            .to_string()
            .contains("already registered as cluster \"m1\""),
        "{refused}"
    );

    shutdown.cancel();
    agent
        .await
        .expect("the agent task")
        .expect("the agent stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flotilla_agent_serves_its_connection_error_counter_on_the_metrics_address() {
    let control = ControlPlane::start("").await;
    let members = Members::start(&["m2"]).await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["agent", "--cluster-name", "m2", "--kubeconfig"])
        .arg(&control.kubeconfig)
        .arg("--cluster-kubeconfig")
        .arg(&members.kubeconfig)
        .args(["--metrics-bind-address", "127.0.0.1:0"])
        .args(["--cluster-region", "eu-west-1", "--cluster-zones", "a,b"])
        .args(["--cluster-provider", "aws"])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("flotilla agent starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let line = lines
        .next_line()
        .await
        .expect("stdout")
        .expect("a first line");
    let address = line
        .strip_prefix("metrics on http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .expect("the metrics address")
        .to_owned();
    let clusters: Api<Cluster> = Api::all(control.client());
    let cluster = eventually(PATIENCE, "the agent registers m2", || {
        let clusters = clusters.clone();
        async move { clusters.get_opt("m2").await.ok().flatten() }
    })
    .await;
    assert_eq!(cluster.spec.sync_mode, "Pull");
    assert_eq!(cluster.spec.id, members.cluster("m2").cluster_id);
    assert_eq!(cluster.spec.region, "eu-west-1");
    assert_eq!(cluster.spec.zones, ["a", "b"]);
    assert_eq!(cluster.spec.provider, "aws");
    let mut stream = TcpStream::connect(&address).await.expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: agent\r\n\r\n")
        .await
        .expect("request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response");
    assert!(response.starts_with("HTTP/1.0 200"), "{response}");
    assert!(
        response.contains("karmada_agent_connection_errors_total 0"),
        "{response}"
    );
    let _ = child.start_kill();
}
