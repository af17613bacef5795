//! The world of these tests: `flotilla up` as a child process (the real binary), the real kubectl
//! against its kubeconfig (contexts `flotilla` and one per member), and bounded polling.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Child;

/// How long any one expectation may take to come true before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// The members of `up --demo`.
pub const MEMBERS: [&str; 3] = ["cn-shanghai", "us-west-2", "eu-central-1"];

/// A running `flotilla up` and the kubeconfig it printed.
pub struct ControlPlane {
    pub child: Child,
    pub kubeconfig: PathBuf,
    /// kubectl's HOME and cache directory.
    pub home: PathBuf,
    /// Another kubeconfig kubectl merges in (the members' contexts when they are not the demo's).
    pub extra_kubeconfig: Option<PathBuf>,
}

impl ControlPlane {
    /// Starts `flotilla up <args>` and waits for its `export KUBECONFIG=` line.
    pub async fn start(args: &[&str], home: &Path) -> ControlPlane {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("up")
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .args(
                (!args.iter().any(|a| a.starts_with("--metrics-bind-address")))
                    .then_some(["--metrics-bind-address", "0"])
                    .into_iter()
                    .flatten(),
            )
            // `FLOTILLA_TEST_LOG=flotilla_controllers=debug` (with `--nocapture`) shows why a
            // scenario is slow; warnings only by default.
            .env(
                "RUST_LOG",
                std::env::var("FLOTILLA_TEST_LOG").unwrap_or_else(|_| "warn".to_owned()),
            )
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("flotilla up starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let kubeconfig = tokio::time::timeout(PATIENCE, async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .expect("stdout")
                    .expect("up exited before it was ready");
                if let Some(path) = line.strip_prefix("export KUBECONFIG=") {
                    return PathBuf::from(path.trim());
                }
            }
        })
        .await
        .expect("up gets ready");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        ControlPlane {
            child,
            kubeconfig,
            home: home.to_owned(),
            extra_kubeconfig: None,
        }
    }

    /// `up --demo` on a memory store, once every member is Ready (the scheduler places nothing
    /// on a cluster still tainted not-ready).
    pub async fn demo(dir: &Path) -> ControlPlane {
        ControlPlane::demo_with(dir, &[]).await
    }

    /// [`ControlPlane::demo`] with `extra` flags for `up` (feature gates, controllers).
    pub async fn demo_with(dir: &Path, extra: &[&str]) -> ControlPlane {
        let data = dir.join("data");
        let data = data.to_string_lossy();
        let mut args = vec!["--demo", "--store", "memory", "--data-dir", &data];
        args.extend_from_slice(extra);
        let plane = ControlPlane::start(&args, dir).await;
        plane.await_members_ready(&MEMBERS).await;
        plane
    }

    /// Waits until `kubectl get clusters` shows each of `names` Ready without taints.
    pub async fn await_members_ready(&self, names: &[&str]) {
        let mut want: Vec<String> = names.iter().map(|n| format!("{n} True []")).collect();
        want.sort();
        let want = want.join("\n");
        eventually("every member Ready and untainted", || async {
            let got = self
                .kubectl(&[
                    "get",
                    "clusters",
                    "-o",
                    "jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type==\"Ready\")].status} {.spec.taints}{\"\\n\"}{end}",
                ])
                .await;
            let mut got: Vec<String> = got
                .lines()
                .map(|l| {
                    // An absent taint list prints as nothing.
                    if l.split_whitespace().count() == 2 {
                        format!("{l} []")
                    } else {
                        l.to_owned()
                    }
                })
                .collect();
            got.sort();
            let got = got.join("\n");
            if got == want { Ok(()) } else { Err(got) }
        })
        .await;
    }

    /// Runs kubectl 1.33 against this control plane; requires success and returns stdout.
    pub async fn kubectl(&self, args: &[&str]) -> String {
        match self.try_kubectl(args).await {
            Ok(out) => out,
            Err(err) => panic!("kubectl {} failed: {err}", args.join(" ")),
        }
    }

    /// `KUBECONFIG` for kubectl: the control plane's file, then the extra one.
    fn kubeconfig_env(&self) -> std::ffi::OsString {
        let mut value = self.kubeconfig.clone().into_os_string();
        if let Some(extra) = &self.extra_kubeconfig {
            value.push(":");
            value.push(extra);
        }
        value
    }

    /// Runs kubectl 1.33; stdout on success, stderr on failure.
    pub async fn try_kubectl(&self, args: &[&str]) -> Result<String, String> {
        let output = tokio::process::Command::new(kubectl_binary())
            .args(args)
            .env("KUBECONFIG", self.kubeconfig_env())
            .env("HOME", &self.home)
            .env("KUBECACHEDIR", self.home.join("kube-cache"))
            .output()
            .await
            .expect("kubectl runs");
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }

    /// `kubectl apply -f -` of `yaml` on the control plane (or a member with `--context`).
    pub async fn apply(&self, context: Option<&str>, yaml: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = self.home.join(format!("manifest-{n}.yaml"));
        std::fs::write(&path, yaml).expect("write a manifest");
        let path = path.to_string_lossy().into_owned();
        let mut args = Vec::new();
        if let Some(context) = context {
            args.extend(["--context", context]);
        }
        args.extend(["apply", "-f", &path]);
        self.kubectl(&args).await
    }

    /// `kubectl [--context c] -n ns get <what> --ignore-not-found -o jsonpath=<path>`.
    pub async fn get(&self, context: Option<&str>, ns: &str, what: &str, jsonpath: &str) -> String {
        let output = format!("jsonpath={jsonpath}");
        let mut args = Vec::new();
        if let Some(context) = context {
            args.extend(["--context", context]);
        }
        args.extend(["-n", ns, "get", what, "--ignore-not-found", "-o", &output]);
        self.kubectl(&args).await
    }

    /// Per member, `jsonpath` of `what` in `ns` (empty when absent), as `member=value` lines.
    pub async fn per_member(&self, ns: &str, what: &str, jsonpath: &str) -> String {
        let mut lines = Vec::new();
        for member in MEMBERS {
            let value = self.get(Some(member), ns, what, jsonpath).await;
            lines.push(format!("{member}={value}"));
        }
        lines.join("\n")
    }

    /// The reasons of the core/v1 Events about `kind/name` in `ns` (what `kubectl describe` and
    /// `kubectl get events` show), sorted and deduplicated.
    pub async fn event_reasons(&self, ns: &str, kind: &str, name: &str) -> Vec<String> {
        let selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
        let out = self
            .kubectl(&[
                "-n",
                ns,
                "get",
                "events",
                "--field-selector",
                &selector,
                "-o",
                "jsonpath={range .items[*]}{.reason}{\"\\n\"}{end}",
            ])
            .await;
        let mut reasons: Vec<String> = out.lines().map(str::to_owned).collect();
        reasons.sort();
        reasons.dedup();
        reasons
    }

    /// `(name, endpoints, endpointslice.kubernetes.io/managed-by)` of the EndpointSlices
    /// labelled `kubernetes.io/service-name=<service>` in `ns` of the control plane (`None`) or
    /// a member, sorted.
    pub async fn endpoint_slices(
        &self,
        context: Option<&str>,
        ns: &str,
        service: &str,
    ) -> Vec<(String, usize, String)> {
        let selector = format!("kubernetes.io/service-name={service}");
        let mut args = Vec::new();
        if let Some(context) = context {
            args.extend(["--context", context]);
        }
        args.extend([
            "-n",
            ns,
            "get",
            "endpointslices",
            "-l",
            &selector,
            "-o",
            "json",
        ]);
        let out = self.kubectl(&args).await;
        let list: serde_json::Value = serde_json::from_str(&out).expect("a list");
        let mut found: Vec<(String, usize, String)> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                (
                    s["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    s["endpoints"].as_array().map_or(0, Vec::len),
                    s["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect();
        found.sort();
        found
    }

    /// Waits until the Events about `kind/name` include every reason of `want`.
    pub async fn await_events(&self, ns: &str, kind: &str, name: &str, want: &[&str]) {
        eventually(
            &format!("events {want:?} on {kind} {ns}/{name}"),
            || async {
                let got = self.event_reasons(ns, kind, name).await;
                if want.iter().all(|w| got.iter().any(|g| g == w)) {
                    Ok(())
                } else {
                    Err(format!("{got:?}"))
                }
            },
        )
        .await;
    }
}

/// Polls `check` every 200 ms until it returns `Ok`, for at most [`PATIENCE`]; fails the test
/// with `what` and the last observed state (the `Err`) otherwise.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        match check().await {
            Ok(value) => return value,
            Err(observed) => assert!(
                tokio::time::Instant::now() < deadline,
                "not within {PATIENCE:?}: {what}; last observed:\n{observed}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until `observe` returns `want`; the error shows the last value observed.
pub async fn await_value<F, Fut>(what: &str, want: &str, mut observe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = String>,
{
    eventually(what, || {
        let fut = observe();
        async move {
            let got = fut.await;
            if got == want {
                Ok(())
            } else {
                Err(format!("{got}\n(want {want})"))
            }
        }
    })
    .await;
}

/// kubectl 1.33 (Debian's kubectl package); fails the test when it is missing (never skips).
pub fn kubectl_binary() -> PathBuf {
    for dir in [
        "/usr/lib/google-cloud-sdk/bin",
        "/usr/bin",
        "/usr/local/bin",
    ] {
        let path = Path::new(dir).join("kubectl.1.33");
        if path.exists() {
            return path;
        }
    }
    panic!("kubectl.1.33 not found: install Debian's kubectl package (scripts/test does)");
}
