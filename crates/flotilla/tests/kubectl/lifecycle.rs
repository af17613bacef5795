//! The server's lifecycle as a user sees it: restarts keep everything, SIGKILL loses nothing
//! acknowledged, anonymous requests are refused.

use crate::harness::*;

#[test]
fn restart_on_redb_keeps_objects_credentials_and_versions() {
    let flotilla = Flotilla::start_with(tempfile::tempdir().expect("dir"), "redb");
    flotilla.ok("1.33", &["create", "namespace", "kept"]);
    let before: i64 = flotilla
        .ok(
            "1.33",
            &[
                "get",
                "ns",
                "kept",
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ],
        )
        .parse()
        .expect("number");
    let kubeconfig = std::fs::read_to_string(&flotilla.kubeconfig).expect("kubeconfig");
    let dir = flotilla.stop("TERM");
    let again = Flotilla::start_with(dir, "redb");
    let ca_of = |config: &str| {
        config
            .lines()
            .find(|l| l.contains("certificate-authority-data"))
            .map(str::to_owned)
    };
    let kubeconfig_again = std::fs::read_to_string(&again.kubeconfig).expect("kubeconfig");
    assert_eq!(
        ca_of(&kubeconfig),
        ca_of(&kubeconfig_again),
        "the CA survives a restart"
    );
    again.ok("1.33", &["get", "namespace", "kept"]);
    again.ok("1.33", &["create", "namespace", "after"]);
    let after: i64 = again
        .ok(
            "1.33",
            &[
                "get",
                "ns",
                "after",
                "-o",
                "jsonpath={.metadata.resourceVersion}",
            ],
        )
        .parse()
        .expect("number");
    assert!(
        after > before,
        "resource versions stay monotonic across restarts ({before} → {after})"
    );
    // SIGKILL right after acknowledged writes: they are all there after a restart.
    for i in 0..5 {
        again.ok(
            "1.33",
            &[
                "create",
                "configmap",
                &format!("acked-{i}"),
                "--from-literal=k=v",
            ],
        );
    }
    let dir = again.stop("KILL");
    let third = Flotilla::start_with(dir, "redb");
    let names = third.ok("1.33", &["get", "configmaps", "-o", "name"]);
    for i in 0..5 {
        assert!(names.contains(&format!("configmap/acked-{i}")), "{names}");
    }
}

#[test]
fn requests_with_bad_credentials_get_401() {
    let flotilla = Flotilla::start();
    let output = std::process::Command::new(kubectl_binary("1.33"))
        .args([
            "get",
            "ns",
            "--server",
            &flotilla.url,
            "--insecure-skip-tls-verify",
            "--token=not-a-token",
        ])
        .env("KUBECONFIG", flotilla.dir.path().join("no-such-kubeconfig"))
        .env("HOME", flotilla.dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("kubectl runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Unauthorized") || stderr.contains("provide credentials"),
        "{stderr}"
    );
}

/// Health as a load balancer or a runbook reads it (`kubectl get --raw '/readyz?verbose'`): with
/// `--store etcd`, an instance that lost etcd reports `[-]etcd failed` and 500 on `/readyz`
/// (so traffic goes to the instances that still have it); `?exclude=` and the per-check paths
/// work as in kube-apiserver.
#[test]
fn readyz_fails_while_etcd_is_unreachable() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let mut etcd = runtime
        .block_on(flotilla_store_etcd::testing::EtcdCluster::start(1))
        .expect("etcd starts");
    let endpoint = etcd.endpoint(0).to_owned();
    let flotilla = Flotilla::start_args(
        tempfile::tempdir().expect("dir"),
        &["--store", "etcd", "--etcd-endpoints", &endpoint],
    );
    assert_eq!(
        flotilla.ok("1.33", &["get", "--raw", "/readyz?verbose"]),
        "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]shutdown ok\nreadyz check passed\n"
    );
    assert_eq!(flotilla.ok("1.33", &["get", "--raw", "/livez"]), "ok");
    assert_eq!(flotilla.ok("1.33", &["get", "--raw", "/readyz/etcd"]), "ok");

    etcd.kill(0);
    let refused = flotilla.fails("1.33", &["get", "--raw", "/readyz"]);
    assert!(
        refused.contains("[-]etcd failed: reason withheld")
            && refused.contains("readyz check failed"),
        "{refused}"
    );
    let refused = flotilla.fails("1.33", &["get", "--raw", "/readyz/etcd"]);
    assert!(refused.contains("internal server error"), "{refused}");
    // Excluding the store's checks (a liveness probe that should not restart the process
    // because etcd is away) passes, saying so.
    assert_eq!(
        flotilla.ok("1.33", &["get", "--raw", "/livez?exclude=etcd&verbose"]),
        "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\nlivez check passed\n"
    );
}

/// `--shutdown-delay-duration`: after SIGTERM the server fails `/readyz` (`[-]shutdown failed`)
/// while it still serves requests for the delay, then exits.
#[test]
fn readyz_fails_during_the_shutdown_delay() {
    let mut flotilla = Flotilla::start_args(
        tempfile::tempdir().expect("dir"),
        &["--store", "memory", "--shutdown-delay-duration", "4s"],
    );
    assert_eq!(flotilla.ok("1.33", &["get", "--raw", "/readyz"]), "ok");
    flotilla.signal("TERM");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let refused = loop {
        match flotilla.kubectl("1.33", &["get", "--raw", "/readyz"]) {
            output if !output.status.success() => {
                break String::from_utf8_lossy(&output.stderr).into_owned();
            }
            _ => {
                assert!(std::time::Instant::now() < deadline, "/readyz kept passing");
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    };
    assert!(
        refused.contains("[-]shutdown failed: reason withheld"),
        "{refused}"
    );
    // Still serving the API meanwhile.
    flotilla.ok("1.33", &["get", "namespaces", "default"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !flotilla.exited() {
        assert!(
            std::time::Instant::now() < deadline,
            "did not exit after the delay"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
