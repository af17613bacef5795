//! The test world: a control plane (the API server on a memory store, served over HTTPS with its
//! own PKI and an admin kubeconfig), simulated members with their kubeconfig, the `flotilla`
//! binary and the real kubectl.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::auth::kubeconfig::{
    KubeconfigCredentials, KubeconfigNames, write_kubeconfig,
};
use flotilla_apiserver::auth::{pki::Pki, tls};
use flotilla_sim::{Sim, SimConfig};

pub const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A control plane served over HTTPS.
pub struct ControlPlane {
    pub running: flotilla_apiserver::Running,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub url: String,
    pub ca_pem: String,
    serving: tokio::task::JoinHandle<()>,
}

impl ControlPlane {
    /// Starts one; `tokens` is a kube-apiserver token file's content (may be empty).
    pub async fn start(tokens: &str) -> ControlPlane {
        tls::install_crypto_provider();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let pki = Pki::load_or_create(
            &dir.path().join("pki"),
            &["localhost".into(), "127.0.0.1".into()],
        )
        .expect("a PKI");
        let store = Arc::new(flotilla_store::MemoryStore::new());
        let running = flotilla_apiserver::Builder::new(store)
            .root_ca(pki.ca_cert_pem())
            .start()
            .await
            .expect("the API server starts");
        let mut authenticator = running.authenticator();
        if !tokens.is_empty() {
            let path = dir.path().join("tokens.csv");
            std::fs::write(&path, tokens).expect("write the token file");
            authenticator = authenticator.with_token_file(&path).expect("a token file");
        }
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(LOCALHOST, 0))
            .await
            .expect("listen");
        let address = listener.local_addr().expect("an address");
        let url = format!("https://127.0.0.1:{}", address.port());
        let server_config =
            tls::server_config(&pki, std::slice::from_ref(pki.ca_cert_der())).expect("TLS");
        let server = running.server.clone();
        let serving = tokio::spawn(async move {
            let _ = flotilla_apiserver::serve::serve_tls(
                listener,
                server,
                server_config,
                Arc::new(authenticator),
                std::future::pending(),
            )
            .await;
        });
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(
            &kubeconfig,
            &KubeconfigCredentials::admin(&pki, &url),
            &KubeconfigNames::default(),
        )
        .expect("write the kubeconfig");
        ControlPlane {
            running,
            dir,
            kubeconfig,
            url,
            ca_pem: pki.ca_cert_pem().to_owned(),
            serving,
        }
    }

    /// An in-process admin client.
    pub fn client(&self) -> kube::Client {
        flotilla_apiserver::client::in_process(
            &self.running.server,
            UserInfo {
                name: "test-admin".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                ..Default::default()
            },
        )
    }

    /// A kubeconfig for this server with a bearer token instead of the admin certificate.
    pub fn token_kubeconfig(&self, name: &str, token: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        write_token_kubeconfig(&path, &self.url, Some(&self.ca_pem), token);
        path
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

/// Writes a one-context kubeconfig with a bearer token.
pub fn write_token_kubeconfig(path: &Path, server: &str, ca_pem: Option<&str>, token: &str) {
    use base64::Engine as _;
    let ca = ca_pem
        .map(|pem| {
            format!(
                ", certificate-authority-data: {}",
                base64::engine::general_purpose::STANDARD.encode(pem)
            )
        })
        .unwrap_or_default();
    let yaml = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: '{server}'{ca}}}\nusers:\n- name: u\n  user: {{token: '{token}'}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    );
    std::fs::write(path, yaml).expect("write a kubeconfig");
}

/// Simulated members `names` (a few cpu nodes each) and their kubeconfig.
pub struct Members {
    pub sim: Sim,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

impl Members {
    pub async fn start(names: &[&str]) -> Members {
        let mut yaml = String::from("seed: 7\nclusters:\n");
        for name in names {
            yaml.push_str(&format!(
                "- name: {name}\n  region: r-{name}\n  zones: [z1]\n  nodePools: [{{name: gpu, count: 2, profile: gpu-a100}}]\n"
            ));
        }
        let spec = SimConfig::from_yaml(&yaml)
            .and_then(|c| c.validate())
            .expect("a valid sim config");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sim = Sim::start(&spec, LOCALHOST, dir.path())
            .await
            .expect("the members start");
        let kubeconfig = dir.path().join("members.kubeconfig");
        flotilla_sim::kubeconfig::write(&kubeconfig, &sim.clusters, None).expect("kubeconfig");
        Members {
            sim,
            dir,
            kubeconfig,
        }
    }

    pub fn cluster(&self, name: &str) -> &flotilla_sim::cluster::SimCluster {
        self.sim.cluster(name).expect("a member of this world")
    }
}

/// Runs the flotilla binary.
pub async fn flotilla(args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .env("RUST_LOG", "debug")
        .env_remove("KUBECONFIG")
        .output()
        .await
        .expect("flotilla runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Requires success and returns stdout.
pub fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "flotilla failed:\nstdout: {}\nstderr: {}",
        stdout(output),
        stderr(output)
    );
    stdout(output)
}

/// Requires failure and returns stderr.
pub fn failed(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "flotilla should have failed:\nstdout: {}",
        stdout(output)
    );
    stderr(output)
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `patience`.
pub async fn eventually<T, F, Fut>(patience: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {patience:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The kubectl versions the suite runs (as the kubectl suite does).
pub const KUBECTL_VERSIONS: &[&str] = &["1.27", "1.30", "1.33"];

/// The path of `kubectl.<version>`; fails the test when it is missing (never skips).
pub fn kubectl_binary(version: &str) -> PathBuf {
    let name = format!("kubectl.{version}");
    for dir in [
        "/usr/lib/google-cloud-sdk/bin",
        "/usr/bin",
        "/usr/local/bin",
    ] {
        let path = Path::new(dir).join(&name);
        if path.exists() {
            return path;
        }
    }
    panic!("{name} not found: install Debian's kubectl package (scripts/test does)");
}

/// Runs `kubectl.<version> args…` against `kubeconfig`; requires success, returns stdout.
pub async fn kubectl(version: &str, kubeconfig: &Path, home: &Path, args: &[&str]) -> String {
    let output = tokio::process::Command::new(kubectl_binary(version))
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", home)
        .env("KUBECACHEDIR", home.join(format!("cache-{version}")))
        .output()
        .await
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl.{version} {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}
