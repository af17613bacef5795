//! Pull-mode registration from a bootstrap token, end to end: `flotilla up` (real HTTPS, its
//! cluster-info, signer and `agentcsrapproving`), `flotilla token create
//! --print-register-command`, then `flotilla agent` with only the bootstrap flags. A wrong CA
//! hash is refused before anything is written; a restarted agent reuses its kubeconfig; with
//! short certificates the agent renews its own (`certRotation`) and keeps heartbeating.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use flotilla_api::karmada::Cluster;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;

use crate::support::{Members, PATIENCE, eventually, failed, flotilla, ok, stderr};

/// `flotilla up --store memory` as a child process.
pub(crate) struct Up {
    child: std::process::Child,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) kubeconfig: PathBuf,
}

impl Up {
    pub(crate) fn start(extra: &[&str]) -> Up {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args([
                "up",
                "--store",
                "memory",
                "--listen",
                "127.0.0.1:0",
                "--metrics-bind-address",
                "127.0.0.1:0",
            ])
            .args(extra)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("flotilla up starts");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let deadline = Instant::now() + PATIENCE;
        let kubeconfig = loop {
            assert!(Instant::now() < deadline, "flotilla up did not get ready");
            let line = lines
                .next()
                .expect("flotilla up exited before it was ready")
                .expect("stdout is UTF-8");
            if let Some(rest) = line.strip_prefix("export KUBECONFIG=") {
                break PathBuf::from(rest.trim());
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Up {
            child,
            dir,
            kubeconfig,
        }
    }

    pub(crate) async fn client(&self) -> kube::Client {
        let kubeconfig =
            kube::config::Kubeconfig::read_from(&self.kubeconfig).expect("the admin kubeconfig");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("a client config");
        kube::Client::try_from(config).expect("a client")
    }
}

impl Drop for Up {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running `flotilla agent`, its output in `log`.
pub(crate) struct Agent {
    child: tokio::process::Child,
    log: PathBuf,
}

impl Agent {
    pub(crate) fn spawn(args: &[String], log: PathBuf) -> Agent {
        let out = std::fs::File::create(&log).expect("a log file");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args(args)
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG")
            .stdout(out.try_clone().expect("the log file"))
            .stderr(out)
            .kill_on_drop(true)
            .spawn()
            .expect("flotilla agent starts");
        Agent { child, log }
    }

    pub(crate) fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub(crate) async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// The agent command `token create --print-register-command` printed, for `cluster`.
pub(crate) fn agent_command(
    printed: &str,
    cluster: &str,
    members: &Path,
    cert_dir: &Path,
) -> Vec<String> {
    let line = printed
        .lines()
        .find(|l| l.starts_with("flotilla agent "))
        .unwrap_or_else(|| panic!("no agent command in {printed:?}"));
    let mut args: Vec<String> = line
        .split_whitespace()
        .skip(1)
        .map(|word| match word {
            "<CLUSTER_NAME>" => cluster.to_owned(),
            "<MEMBER_KUBECONFIG>" => members.display().to_string(),
            other => other.to_owned(),
        })
        .collect();
    args.extend(
        [
            "--cluster-context",
            cluster,
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--discovery-timeout",
            "30s",
            "--cert-dir",
        ]
        .map(str::to_owned),
    );
    args.push(cert_dir.display().to_string());
    args
}

fn flag<'a>(args: &'a [String], name: &str) -> &'a str {
    let at = args.iter().position(|a| a == name).expect("the flag");
    &args[at + 1]
}

pub(crate) fn ready(cluster: &Cluster) -> bool {
    cluster.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

async fn renew_time(leases: &Api<Lease>, name: &str) -> Option<jiff::Timestamp> {
    leases
        .get_opt(name)
        .await
        .ok()??
        .spec?
        .renew_time
        .map(|t| t.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_bootstraps_from_a_token_and_a_wrong_ca_hash_is_refused() {
    // Members are told the advertised address (cluster-info's server), not the listen address
    // the admin kubeconfig uses; the serving certificate names it and the extra SANs.
    let up = Up::start(&[
        "--advertise-address",
        "localhost",
        "--tls-san",
        "flotilla.example,10.1.2.3",
    ]);
    let certificate = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-ext", "subjectAltName", "-in"])
        .arg(up.dir.path().join("data/pki/apiserver.crt"))
        .output()
        .expect("openssl runs");
    let sans = String::from_utf8_lossy(&certificate.stdout);
    assert!(
        sans.contains("DNS:flotilla.example") && sans.contains("IP Address:10.1.2.3"),
        "{sans}"
    );
    let members = Members::start(&["m1"]).await;
    let admin = up.client().await;
    let control = up.kubeconfig.display().to_string();

    let printed = ok(&flotilla(&[
        "token",
        "create",
        "--print-register-command",
        "--kubeconfig",
        &control,
    ])
    .await);
    assert!(
        printed
            .lines()
            .any(|l| l.starts_with("karmadactl register localhost:")),
        "{printed}"
    );
    let cert_dir = up.dir.path().join("agent-m1");
    let args = agent_command(&printed, "m1", &members.kubeconfig, &cert_dir);
    let token = flag(&args, "--token").to_owned();
    let token_id = token.split('.').next().expect("an id").to_owned();
    let listed = ok(&flotilla(&["token", "list", "--kubeconfig", &control]).await);
    let row = listed
        .lines()
        .find(|l| l.starts_with(&token))
        .unwrap_or_else(|| panic!("{token} not listed: {listed}"));
    assert!(row.contains("authentication,signing"), "{row}");
    assert!(
        row.ends_with("system:bootstrappers:karmada:default-cluster-token"),
        "{row}"
    );

    // A CA hash that is not this control plane's: refused, naming the flag, before any CSR.
    let mut wrong = args.clone();
    let at = wrong
        .iter()
        .position(|a| a == "--discovery-token-ca-cert-hash")
        .expect("the hash flag");
    wrong[at + 1] = format!("sha256:{}", "0".repeat(64));
    let wrong_dir = up.dir.path().join("agent-wrong");
    let at = wrong
        .iter()
        .position(|a| a == "--cert-dir")
        .expect("the dir flag");
    wrong[at + 1] = wrong_dir.display().to_string();
    let wrong: Vec<&str> = wrong.iter().map(String::as_str).collect();
    let error = failed(&flotilla(&wrong).await);
    assert!(
        error.contains("--discovery-token-ca-cert-hash: the control plane's CA"),
        "{error}"
    );
    assert!(
        error.contains("matches none of the pinned hashes"),
        "{error}"
    );
    assert!(!error.contains("panicked"), "{error}");
    let csrs: Api<CertificateSigningRequest> = Api::all(admin.clone());
    assert!(
        csrs.list(&Default::default())
            .await
            .expect("list CSRs")
            .items
            .is_empty(),
        "no CSR for a refused control plane"
    );
    assert!(!wrong_dir.join("karmada-agent.conf").exists());

    // The agent with only the bootstrap flags: registered in Pull mode and Ready.
    let agent = Agent::spawn(&args, up.dir.path().join("agent-1.log"));
    let clusters: Api<Cluster> = Api::all(admin.clone());
    let cluster = eventually(PATIENCE, "the pull-mode Cluster m1 is Ready", || {
        let clusters = clusters.clone();
        async move { clusters.get_opt("m1").await.ok().flatten().filter(ready) }
    })
    .await;
    assert_eq!(cluster.spec.sync_mode, "Pull", "{}", agent.output());
    let kubeconfig = cert_dir.join("karmada-agent.conf");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&kubeconfig)
            .expect("the agent kubeconfig")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let issued = csrs
        .list(&Default::default())
        .await
        .expect("list CSRs")
        .items;
    let names: Vec<String> = issued
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "the RBAC generator's request is deleted: {names:?}"
    );
    assert!(names[0].starts_with("m1-"), "{names:?}");
    let csr = &issued[0];
    assert_eq!(csr.spec.signer_name, "kubernetes.io/kube-apiserver-client");
    assert_eq!(
        csr.spec.username.as_deref(),
        Some(format!("system:bootstrap:{token_id}").as_str())
    );
    assert!(
        csr.status
            .as_ref()
            .and_then(|s| s.certificate.as_ref())
            .is_some(),
        "issued"
    );

    // Restart-safe: with the token deleted, a restarted agent runs on its kubeconfig.
    agent.stop().await;
    let deleted = ok(&flotilla(&["token", "delete", &token, "--kubeconfig", &control]).await);
    assert_eq!(
        deleted.trim(),
        format!("bootstrap token {token_id:?} deleted")
    );
    let restarted_at = jiff::Timestamp::now();
    let agent = Agent::spawn(&args, up.dir.path().join("agent-2.log"));
    let leases: Api<Lease> = Api::namespaced(admin.clone(), "karmada-cluster");
    eventually(PATIENCE, "the restarted agent renews its Lease", || {
        let leases = leases.clone();
        async move {
            renew_time(&leases, "m1")
                .await
                .filter(|t| *t > restarted_at)
        }
    })
    .await;
    // Everything the agent did with its certificate was allowed by the RBAC bootstrap created.
    let first_log = std::fs::read_to_string(up.dir.path().join("agent-1.log")).unwrap_or_default();
    for log in [first_log, agent.output()] {
        assert!(!log.to_lowercase().contains("forbidden"), "{log}");
    }
    assert!(
        agent.output().contains("using the agent kubeconfig"),
        "{}",
        agent.output()
    );
    assert_eq!(
        csrs.list(&Default::default())
            .await
            .expect("list CSRs")
            .items
            .len(),
        1,
        "no new request on restart"
    );
    agent.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bootstrap_flags_are_checked_before_connecting() {
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--token",
                "abcdef.0123456789abcdef",
                "--discovery-token-unsafe-skip-ca-verification",
            ],
            "--bootstrap-server",
        ),
        (
            &[
                "--bootstrap-server",
                "127.0.0.1:1",
                "--token",
                "bad",
                "--discovery-token-unsafe-skip-ca-verification",
            ],
            "--token: the bootstrap token was not of the form",
        ),
        (
            &[
                "--bootstrap-server",
                "127.0.0.1:1",
                "--token",
                "abcdef.0123456789abcdef",
                "--discovery-token-ca-cert-hash",
                "sha256:xyz",
            ],
            "--discovery-token-ca-cert-hash: invalid discovery token CA certificate hash",
        ),
    ];
    for (extra, says) in cases {
        let mut args = vec![
            "agent",
            "--cluster-name",
            "m1",
            "--cluster-kubeconfig",
            "member",
        ];
        args.extend_from_slice(extra);
        let error = failed(&flotilla(&args).await);
        assert!(error.contains(says), "{extra:?}: {error}");
        assert!(!error.contains("panicked"), "{error}");
    }
    // Nothing listens: the flag is named once discovery gives up.
    let output = flotilla(&[
        "agent",
        "--cluster-name",
        "m1",
        "--cluster-kubeconfig",
        "member",
        "--bootstrap-server",
        "127.0.0.1:1",
        "--token",
        "abcdef.0123456789abcdef",
        "--discovery-token-unsafe-skip-ca-verification",
        "--discovery-timeout",
        "2s",
        "--metrics-bind-address",
        "127.0.0.1:0",
    ])
    .await;
    let error = stderr(&output);
    assert!(!output.status.success());
    assert!(
        error.contains(
            "--bootstrap-server https://127.0.0.1:1: cannot read kube-public/cluster-info within 2s"
        ),
        "{error}"
    );
}

/// The base64 client certificate in the agent's kubeconfig.
fn kubeconfig_certificate(path: &Path) -> Option<String> {
    kube::config::Kubeconfig::read_from(path)
        .ok()?
        .auth_infos
        .into_iter()
        .find_map(|a| a.auth_info?.client_certificate_data)
}

/// `GET /metrics` from the address the agent printed.
async fn scrape(log: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let Some(address) = log
        .lines()
        .find_map(|l| l.strip_prefix("metrics on http://"))
        .and_then(|rest| rest.strip_suffix("/metrics"))
    else {
        return String::new();
    };
    let Ok(mut stream) = tokio::net::TcpStream::connect(address).await else {
        return String::new();
    };
    let mut text = String::new();
    if stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: agent\r\n\r\n")
        .await
        .is_ok()
    {
        let _ = stream.read_to_string(&mut text).await;
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bootstrapped_agent_rotates_its_certificate_as_itself_and_keeps_heartbeating() {
    // Certificates of 600 s (Kubernetes' shortest `expirationSeconds`), valid 900 s with the
    // signer's 5-minute backdate: two thirds ahead when issued, so threshold 0.65 makes each one
    // due 15 s after it is issued.
    let up = Up::start(&["--cluster-signing-duration", "10m"]);
    let members = Members::start(&["m1"]).await;
    let admin = up.client().await;
    let control = up.kubeconfig.display().to_string();
    let printed = ok(&flotilla(&[
        "token",
        "create",
        "--print-register-command",
        "--kubeconfig",
        &control,
    ])
    .await);
    let cert_dir = up.dir.path().join("agent-m1");
    let mut args = agent_command(&printed, "m1", &members.kubeconfig, &cert_dir);
    args.extend(
        [
            "--cert-expiration-seconds",
            "600",
            "--cert-rotation-checking-interval",
            "1s",
            "--cert-rotation-remaining-time-threshold",
            "0.65",
        ]
        .map(str::to_owned),
    );
    let agent = Agent::spawn(&args, up.dir.path().join("agent.log"));
    let clusters: Api<Cluster> = Api::all(admin.clone());
    eventually(PATIENCE, "the pull-mode Cluster m1 is Ready", || {
        let clusters = clusters.clone();
        async move { clusters.get_opt("m1").await.ok().flatten().filter(ready) }
    })
    .await;
    let kubeconfig = cert_dir.join("karmada-agent.conf");
    let first = kubeconfig_certificate(&kubeconfig).expect("the bootstrapped certificate");
    let csrs: Api<CertificateSigningRequest> = Api::all(admin.clone());
    let bootstrapped = csrs.list(&Default::default()).await.expect("list CSRs");
    assert_eq!(bootstrapped.items.len(), 1, "only the bootstrap's request");
    assert!(
        bootstrapped.items[0]
            .spec
            .username
            .as_deref()
            .is_some_and(|u| u.starts_with("system:bootstrap:"))
    );

    // A second request, by the agent itself, approved by the selfclusteragent rule and issued.
    let renewal = eventually(
        PATIENCE,
        "the agent requests a new certificate as itself",
        || {
            let csrs = csrs.clone();
            async move {
                csrs.list(&Default::default())
                    .await
                    .ok()?
                    .items
                    .into_iter()
                    .find(|c| {
                        c.spec.username.as_deref() == Some("system:karmada:agent:m1")
                            && c.status
                                .as_ref()
                                .and_then(|s| s.certificate.as_ref())
                                .is_some()
                    })
            }
        },
    )
    .await;
    let name = renewal.metadata.name.clone().expect("a name");
    assert!(name.starts_with("m1-"), "{name}");
    assert_eq!(
        renewal.spec.signer_name,
        "kubernetes.io/kube-apiserver-client"
    );
    assert_eq!(renewal.spec.expiration_seconds, Some(600));
    let mut usages = renewal.spec.usages.clone().unwrap_or_default();
    usages.sort();
    assert_eq!(
        usages,
        ["client auth", "digital signature", "key encipherment"]
    );
    let approved = renewal
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Approved"))
        .expect("approved");
    assert_eq!(approved.reason.as_deref(), Some("AutoApproved"));
    assert_eq!(
        approved.message.as_deref(),
        Some("Auto approving self karmada agent certificate after SubjectAccessReview.")
    );

    // The kubeconfig now holds a renewed certificate, still private.
    let rotated = eventually(PATIENCE, "the kubeconfig's certificate changes", || {
        let kubeconfig = kubeconfig.clone();
        let first = first.clone();
        async move { kubeconfig_certificate(&kubeconfig).filter(|c| *c != first) }
    })
    .await;
    let issued: Vec<String> = csrs
        .list(&Default::default())
        .await
        .expect("list CSRs")
        .items
        .iter()
        .filter(|c| c.spec.username.as_deref() == Some("system:karmada:agent:m1"))
        .filter_map(|c| c.status.as_ref()?.certificate.as_ref())
        .map(|c| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &c.0))
        .collect();
    assert!(issued.contains(&rotated), "the kubeconfig holds a renewal");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&kubeconfig)
            .expect("the agent kubeconfig")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // The agent picks the new certificate up and keeps renewing its Lease with it.
    eventually(
        PATIENCE,
        "the agent reconnects with the renewed certificate",
        || {
            let log = agent.output();
            async move {
                log.contains("reconnecting with the new credentials")
                    .then_some(())
            }
        },
    )
    .await;
    let after = jiff::Timestamp::now();
    let leases: Api<Lease> = Api::namespaced(admin.clone(), "karmada-cluster");
    eventually(PATIENCE, "the Lease is renewed after the rotation", || {
        let leases = leases.clone();
        async move { renew_time(&leases, "m1").await.filter(|t| *t > after) }
    })
    .await;
    let log = agent.output();
    assert!(
        log.contains("certRotation: rotated the agent's certificate"),
        "{log}"
    );
    assert!(!log.to_lowercase().contains("forbidden"), "{log}");
    assert!(!log.contains("cannot renew"), "{log}");
    let metrics = eventually(PATIENCE, "the rotation is counted on /metrics", || {
        let log = log.clone();
        async move {
            let text = scrape(&log).await;
            text.lines()
                .any(|l| {
                    l.starts_with("flotilla_agent_certificate_rotations_total{result=\"success\"}")
                })
                .then_some(text)
        }
    })
    .await;
    assert!(!metrics.contains("result=\"failure\""), "{metrics}");
    agent.stop().await;
}
