//! Starting `flotilla up` as a child process and running kubectl against it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The kubectl versions every suite runs with.
pub const VERSIONS: &[&str] = &["1.27", "1.30", "1.33"];

/// Where the kubectl package puts its versioned binaries.
const KUBECTL_DIRS: &[&str] = &[
    "/usr/lib/google-cloud-sdk/bin",
    "/usr/bin",
    "/usr/local/bin",
];

/// The path of `kubectl.<version>`; fails the test when it is missing (never skips).
pub fn kubectl_binary(version: &str) -> PathBuf {
    let name = format!("kubectl.{version}");
    for dir in KUBECTL_DIRS {
        let path = Path::new(dir).join(&name);
        if path.exists() {
            return path;
        }
    }
    panic!(
        "{name} not found in {KUBECTL_DIRS:?}: install Debian's kubectl package (scripts/test does)"
    );
}

/// A running `flotilla up` with its own data directory.
pub struct Flotilla {
    child: Child,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub url: String,
}

impl Flotilla {
    /// Starts `flotilla up --store memory` on a free port.
    pub fn start() -> Self {
        Self::start_with(tempfile::tempdir().expect("temporary directory"), "memory")
    }

    /// Starts `flotilla up` on `dir` with the given store.
    pub fn start_with(dir: tempfile::TempDir, store: &str) -> Self {
        Self::start_args(dir, &["--store", store])
    }

    /// Starts `flotilla up` on `dir` with these arguments (`--store …` among them).
    pub fn start_args(dir: tempfile::TempDir, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("up")
            .args(args)
            .args([
                "--listen",
                "127.0.0.1:0",
                // Tests run in parallel: none takes the default :8080 for metrics.
                "--metrics-bind-address",
                "127.0.0.1:0",
                "--data-dir",
            ])
            .arg(dir.path().join("data"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("flotilla up starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut url = String::new();
        let mut kubeconfig = PathBuf::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while kubeconfig.as_os_str().is_empty() {
            assert!(
                Instant::now() < deadline,
                "flotilla up did not get ready in 60 s"
            );
            let line = lines
                .next()
                .expect("flotilla up exited before it was ready")
                .expect("stdout is UTF-8");
            if let Some(rest) = line.strip_prefix("Flotilla is ready at ") {
                url = rest.trim().to_owned();
            }
            if let Some(rest) = line.strip_prefix("export KUBECONFIG=") {
                kubeconfig = PathBuf::from(rest.trim());
            }
        }
        // Keep draining stdout so the child never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Flotilla {
            child,
            dir,
            kubeconfig,
            url,
        }
    }

    /// Runs `kubectl.<version> args…` and returns its output.
    pub fn kubectl(&self, version: &str, args: &[&str]) -> Output {
        self.kubectl_with(version, args, &[], None)
    }

    /// Runs kubectl with extra environment and optional standard input.
    pub fn kubectl_with(
        &self,
        version: &str,
        args: &[&str],
        env: &[(&str, &str)],
        stdin: Option<&str>,
    ) -> Output {
        let mut command = Command::new(kubectl_binary(version));
        command
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env(
                "KUBECACHEDIR",
                self.dir.path().join(format!("cache-{version}")),
            )
            .env("HOME", self.dir.path())
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("kubectl runs");
        if let Some(input) = stdin {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("piped stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        child.wait_with_output().expect("kubectl finishes")
    }

    /// Runs kubectl and requires success; returns stdout.
    pub fn ok(&self, version: &str, args: &[&str]) -> String {
        let output = self.kubectl(version, args);
        assert!(
            output.status.success(),
            "kubectl.{version} {} failed:\nstdout: {}\nstderr: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("UTF-8 output")
    }

    /// Runs kubectl and requires failure; returns stderr.
    pub fn fails(&self, version: &str, args: &[&str]) -> String {
        let output = self.kubectl(version, args);
        assert!(
            !output.status.success(),
            "kubectl.{version} {} should have failed:\nstdout: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8(output.stderr).expect("UTF-8 output")
    }

    /// Writes a file in the data directory and returns its path as a string.
    pub fn file(&self, name: &str, content: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).expect("write a manifest");
        path.to_string_lossy().into_owned()
    }

    /// Sends a signal to the server without waiting.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Whether the server process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Sends a signal to the server and waits for it to exit.
    pub fn stop(mut self, signal: &str) -> tempfile::TempDir {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let _ = self.child.wait();
        let dir = tempfile::tempdir().expect("placeholder");
        std::mem::replace(&mut self.dir, dir)
    }
}

impl Drop for Flotilla {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repository's `examples/` directory.
pub fn example(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

pub const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        env: [{name: MODE, value: "a"}]
      - name: sidecar
        image: busybox:1.36
"#;
