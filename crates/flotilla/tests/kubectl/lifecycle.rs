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
