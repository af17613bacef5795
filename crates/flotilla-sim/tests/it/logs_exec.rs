//! `kubectl logs` and `kubectl exec` against a simulated cluster: the container model's output,
//! the options, kube's errors, exit codes and stdin, over the WebSocket protocol kubectl ≥ 1.30
//! speaks (and the clear refusal an older, SPDY-only kubectl gets).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use serde_json::json;

use crate::kubectl::kubectl_binary;
use crate::support::{PATIENCE, World, create, eventually};

/// What a kubectl run printed and how it exited.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(version: &str, dir: &Path, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Ran {
    let mut child = Command::new(kubectl_binary(version))
        .args(["--context", "m1"])
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", dir)
        .env("KUBECACHEDIR", dir.join("cache"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("a stdin pipe");
        pipe.write_all(text.as_bytes()).expect("stdin written");
    }
    let output = child.wait_with_output().expect("kubectl ends");
    Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_logs_and_execs_commands_in_simulated_containers() {
    let world = World::from_yaml(
        "seed: 3\nstartLatency: '0'\nclusters:\n- {name: m1, nodePools: [{name: p, count: 2, profile: cpu}]}\n",
    )
    .await;
    let config = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&config, &world.sim.clusters, None).expect("written");
    let client = world.client();
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "web"},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}),
    )
    .await;
    create::<Pod>(&client, "default", json!({"metadata": {"name": "ticker"},
        "spec": {"containers": [{"name": "c", "image": "busybox",
            "env": [{"name": "WHO", "value": "sim"}],
            "command": ["sh", "-c", "echo hello from $WHO; while true; do echo tick; sleep 1; done"]}]}})).await;
    create::<Pod>(
        &client,
        "default",
        json!({"metadata": {"name": "two"},
        "spec": {"containers": [
            {"name": "a", "image": "busybox", "command": ["echo", "from-a"]},
            {"name": "b", "image": "busybox", "args": ["sh", "-c", "echo from-b"]}]}}),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    eventually(PATIENCE, "the pods run", || async {
        for name in ["web", "ticker", "two"] {
            let pod = pods.get(name).await.ok()?;
            (pod.status?.phase.as_deref() == Some("Running")).then_some(())?;
        }
        Some(())
    })
    .await;
    // A few ticks' worth of virtual (and real) time.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let dir = world.dir.path();
    let kubectl = |args: &[&str]| run("1.33", dir, &config, args, None);

    let web = kubectl(&["logs", "web"]);
    assert_eq!(web.code, Some(0), "{}", web.stderr);
    assert!(
        web.stdout.contains("start worker processes"),
        "an nginx pod logs its start: {}",
        web.stdout
    );

    let ticker = kubectl(&["logs", "ticker"]);
    assert!(
        ticker.stdout.starts_with("hello from sim\ntick\n"),
        "{}",
        ticker.stdout
    );
    assert!(
        ticker.stdout.lines().filter(|l| *l == "tick").count() >= 2,
        "{}",
        ticker.stdout
    );
    let tail = kubectl(&["logs", "ticker", "--tail=1"]);
    assert_eq!(tail.stdout, "tick\n", "{}", tail.stderr);
    let stamped = kubectl(&["logs", "ticker", "--tail=2", "--timestamps"]);
    for line in stamped.stdout.lines() {
        let (time, text) = line.split_once(' ').expect("a timestamp and the line");
        assert!(
            time.parse::<jiff::Timestamp>().is_ok() && time.ends_with('Z') && time.len() == 30,
            "{line}"
        );
        assert_eq!(text, "tick");
    }
    let negative = kubectl(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/ticker/log?tailLines=-1",
    ]);
    assert!(
        negative
            .stderr
            .contains("tailLines: Invalid value: -1: must be greater than or equal to 0"),
        "{}",
        negative.stderr
    );

    assert_eq!(kubectl(&["logs", "two", "-c", "b"]).stdout, "from-b\n");
    // Following a program that ended ends; following one that runs streams its new lines.
    let ended = kubectl(&["logs", "-f", "two", "-c", "a"]);
    assert_eq!((ended.code, ended.stdout.as_str()), (Some(0), "from-a\n"));
    let mut follower = Command::new(kubectl_binary("1.33"))
        .args(["--context", "m1", "logs", "-f", "ticker", "--tail=0"])
        .env("KUBECONFIG", &config)
        .env("HOME", dir)
        .env("KUBECACHEDIR", dir.join("cache"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    follower.kill().expect("killed");
    let followed = follower.wait_with_output().expect("ended");
    let followed = String::from_utf8_lossy(&followed.stdout);
    assert!(
        followed.lines().count() >= 1 && followed.lines().all(|l| l == "tick"),
        "new ticks stream: {followed:?}"
    );
    let ambiguous = kubectl(&["get", "--raw", "/api/v1/namespaces/default/pods/two/log"]);
    assert!(
        ambiguous
            .stderr
            .contains("a container name must be specified for pod two, choose one of: [a b]"),
        "{}",
        ambiguous.stderr
    );
    let unknown = kubectl(&["logs", "two", "-c", "nope"]);
    assert_ne!(unknown.code, Some(0));
    assert!(
        unknown
            .stderr
            .contains("container nope is not valid for pod two"),
        "{}",
        unknown.stderr
    );
    let raw_unknown = kubectl(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/two/log?container=nope",
    ]);
    assert!(
        raw_unknown
            .stderr
            .contains("container nope is not valid for pod two"),
        "the server says so too: {}",
        raw_unknown.stderr
    );
    let ghost = kubectl(&["logs", "ghost"]);
    assert!(
        ghost.stderr.contains("pods \"ghost\" not found"),
        "{}",
        ghost.stderr
    );

    let hello = kubectl(&["exec", "web", "--", "echo", "hello"]);
    assert_eq!(
        (hello.code, hello.stdout.as_str()),
        (Some(0), "hello\n"),
        "{}",
        hello.stderr
    );
    let failed = kubectl(&[
        "exec",
        "web",
        "--",
        "sh",
        "-c",
        "echo out; echo err >&2; exit 3",
    ]);
    assert_eq!(failed.code, Some(3), "{}", failed.stderr);
    assert!(
        failed
            .stderr
            .contains("command terminated with exit code 3"),
        "{}",
        failed.stderr
    );
    let piped = run(
        "1.33",
        dir,
        &config,
        &["exec", "-i", "ticker", "--", "cat"],
        Some("piped through\n"),
    );
    assert_eq!(
        (piped.code, piped.stdout.as_str()),
        (Some(0), "piped through\n"),
        "{}",
        piped.stderr
    );
    let env = kubectl(&["exec", "ticker", "--", "printenv", "WHO"]);
    assert_eq!(env.stdout, "sim\n");
    let missing = kubectl(&["exec", "two", "-c", "nope", "--", "true"]);
    assert!(
        missing
            .stderr
            .contains("container nope is not valid for pod two"),
        "{}",
        missing.stderr
    );

    // kubectl 1.28 speaks SPDY only: a clear refusal, not a hang.
    let old = run(
        "1.28",
        dir,
        &config,
        &["exec", "web", "--", "echo", "hello"],
        None,
    );
    assert_ne!(old.code, Some(0));
    assert!(old.stderr.contains("WebSocket only"), "{}", old.stderr);
}

/// A container whose program ends is restarted as kubelet restarts it — at once, then after a
/// back-off in `CrashLoopBackOff` — with its last run in `lastState` and its log behind
/// `--previous`; with `restartPolicy: Never` the pod fails (`Error`), with `OnFailure` and exit
/// code 0 it completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn containers_whose_programs_end_restart_or_end_their_pods() {
    let world = World::from_yaml(
        "seed: 5\nstartLatency: '0'\nclusters:\n- {name: m1, nodePools: [{name: p, count: 2, profile: cpu}]}\n",
    )
    .await;
    let config = world.dir.path().join("sim.kubeconfig");
    flotilla_sim::kubeconfig::write(&config, &world.sim.clusters, None).expect("written");
    let client = world.client();
    let pod = |name: &str, policy: &str, script: &str| {
        json!({"metadata": {"name": name},
            "spec": {"restartPolicy": policy, "containers": [{"name": "app", "image": "busybox",
                "command": ["sh", "-c", script]}]}})
    };
    create::<Pod>(
        &client,
        "default",
        pod(
            "crasher",
            "Always",
            "echo starting; sleep 1; echo oops; exit 3",
        ),
    )
    .await;
    create::<Pod>(&client, "default", pod("once", "Never", "echo bye; exit 3")).await;
    create::<Pod>(&client, "default", pod("done", "OnFailure", "echo fine")).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");

    // Ran (1 s), restarted at once (1 s), then waits 10 s.
    let crashed = eventually(PATIENCE, "crasher in CrashLoopBackOff", || async {
        let pod = pods.get("crasher").await.ok()?;
        let status = pod.status?.container_statuses?.into_iter().next()?;
        let waiting = status.state.as_ref()?.waiting.clone()?;
        (waiting.reason.as_deref() == Some("CrashLoopBackOff")).then_some((status, waiting))
    })
    .await;
    let (status, waiting) = crashed;
    assert_eq!(status.restart_count, 1);
    assert!(!status.ready);
    let message = waiting.message.unwrap_or_default();
    assert!(
        message.starts_with("back-off 10s restarting failed container=app pod=crasher_default("),
        "{message}"
    );
    let last = status
        .last_state
        .and_then(|s| s.terminated)
        .expect("the last run");
    assert_eq!((last.exit_code, last.reason.as_deref()), (3, Some("Error")));

    let dir = world.dir.path();
    let kubectl = |args: &[&str]| run("1.33", dir, &config, args, None);
    let listed = kubectl(&["get", "pod", "crasher", "--no-headers"]);
    assert!(
        listed.stdout.contains("CrashLoopBackOff") && listed.stdout.contains(" 1 ("),
        "{}",
        listed.stdout
    );
    assert_eq!(
        kubectl(&["logs", "crasher", "--previous"]).stdout,
        "starting\noops\n"
    );
    // Waiting to restart, its log is the last run's.
    assert_eq!(kubectl(&["logs", "crasher"]).stdout, "starting\noops\n");

    eventually(PATIENCE, "once failed and done completed", || async {
        let phase = |pod: Pod| pod.status?.phase;
        let once = phase(pods.get("once").await.ok()?)?;
        let done = phase(pods.get("done").await.ok()?)?;
        (once == "Failed" && done == "Succeeded").then_some(())
    })
    .await;
    let listed = kubectl(&["get", "pods", "once", "done", "--no-headers"]);
    let status_of = |name: &str| {
        listed
            .stdout
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(2))
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(status_of("once"), "Error", "{}", listed.stdout);
    assert_eq!(status_of("done"), "Completed", "{}", listed.stdout);
    assert_eq!(kubectl(&["logs", "once"]).stdout, "bye\n");
}
