//! get (tables, wide, yaml, jsonpath, selectors, all namespaces), watch, describe, explain,
//! api-resources.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::*;

#[test]
fn get_in_every_output_format() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("get-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let path = flotilla.file(&format!("{ns}.yaml"), DEPLOYMENT);
        flotilla.ok(version, &["apply", "-n", &ns, "-f", &path]);
        let table = flotilla.ok(version, &["get", "deploy", "-n", &ns]);
        let header: Vec<&str> = table
            .lines()
            .next()
            .expect("header")
            .split_whitespace()
            .collect();
        assert_eq!(
            header,
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            "kubectl.{version}"
        );
        assert!(table.contains("web") && table.contains("0/2"), "{table}");
        let wide = flotilla.ok(version, &["get", "deploy", "-n", &ns, "-o", "wide"]);
        assert!(
            wide.contains("CONTAINERS")
                && wide.contains("nginx:1.27,busybox:1.36")
                && wide.contains("app=web"),
            "{wide}"
        );
        let yaml = flotilla.ok(version, &["get", "deploy", "web", "-n", &ns, "-o", "yaml"]);
        assert!(
            yaml.contains("kind: Deployment") && yaml.contains("resourceVersion:"),
            "{yaml}"
        );
        let name = flotilla.ok(
            version,
            &[
                "get",
                "deploy",
                "-n",
                &ns,
                "-l",
                "app=web",
                "-o",
                "jsonpath={.items[*].metadata.name}",
            ],
        );
        assert_eq!(name, "web");
        let none = flotilla.ok(
            version,
            &["get", "deploy", "-n", &ns, "-l", "app=other", "-o", "name"],
        );
        assert_eq!(none.trim(), "");
        let all = flotilla.ok(version, &["get", "ns", "-A"]);
        assert!(all.contains("kube-system") && all.contains(&ns), "{all}");
        let everywhere = flotilla.ok(version, &["get", "deploy", "-A"]);
        assert!(
            everywhere
                .lines()
                .next()
                .expect("header")
                .starts_with("NAMESPACE"),
            "{everywhere}"
        );
    }
}

#[test]
fn get_watch_receives_live_updates() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let ns = format!("watch-{}", version.replace('.', "-"));
        flotilla.ok(version, &["create", "namespace", &ns]);
        let mut watch = Command::new(kubectl_binary(version))
            .args(["get", "configmaps", "-n", &ns, "-w", "--no-headers"])
            .env("KUBECONFIG", &flotilla.kubeconfig)
            .env("HOME", flotilla.dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubectl get -w");
        let stdout = watch.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Give the watch a moment to start, then create objects while it runs.
        std::thread::sleep(Duration::from_millis(500));
        for name in ["live-a", "live-b"] {
            flotilla.ok(
                version,
                &["create", "configmap", name, "-n", &ns, "--from-literal=k=v"],
            );
        }
        let mut seen = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(seen.iter().any(|l: &String| l.starts_with("live-a"))
            && seen.iter().any(|l: &String| l.starts_with("live-b")))
        {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => seen.push(line),
                Err(_) => panic!("kubectl.{version} get -w saw only {seen:?}"),
            }
        }
        let _ = watch.kill();
        let _ = watch.wait();
    }
}

#[test]
fn describe_explain_and_api_resources() {
    let flotilla = Flotilla::start();
    let path = flotilla.file("d.yaml", DEPLOYMENT);
    flotilla.ok("1.33", &["apply", "-f", &path]);
    let typo = flotilla.file(
        "typo.yaml",
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: typo\nspec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, name: web}\n  placment:\n    clusterAffinity: {clusterNames: [member1]}\n",
    );
    for version in VERSIONS {
        let described = flotilla.ok(version, &["describe", "deployment", "web"]);
        assert!(
            described.contains("Name:") && described.contains("nginx:1.27"),
            "{described}"
        );
        let explained = flotilla.ok(version, &["explain", "deployment.spec.replicas"]);
        assert!(
            explained.contains("replicas") && explained.contains("integer"),
            "kubectl.{version}: {explained}"
        );
        // Karmada's kinds publish their schemas, as their CRDs do in Karmada.
        let explained = flotilla.ok(
            version,
            &[
                "explain",
                "propagationpolicy.spec.placement.replicaScheduling",
            ],
        );
        assert!(
            explained.contains("replicaDivisionPreference")
                && explained.contains("weightPreference")
                && explained.contains("replicaSchedulingType"),
            "kubectl.{version}: {explained}"
        );
        let explained = flotilla.ok(version, &["explain", "pp.spec"]);
        let selectors = explained
            .lines()
            .find(|l| l.trim_start().starts_with("resourceSelectors"))
            .unwrap_or_else(|| panic!("kubectl.{version}: {explained}"));
        assert!(
            selectors.contains("-required-"),
            "kubectl.{version}: {selectors}"
        );
        let explained = flotilla.ok(version, &["explain", "rb.spec.clusters"]);
        assert!(
            explained.contains("replicas") && explained.contains("name"),
            "kubectl.{version}: {explained}"
        );
        let misspelt = flotilla.fails(version, &["apply", "-f", &typo]);
        assert!(
            misspelt.contains(r#"strict decoding error: unknown field "spec.placment""#),
            "kubectl.{version}: {misspelt}"
        );
        let resources = flotilla.ok(version, &["api-resources"]);
        let pp = resources
            .lines()
            .find(|l| l.starts_with("propagationpolicies"))
            .unwrap_or_else(|| panic!("propagationpolicies missing: {resources}"));
        assert!(
            pp.contains(" pp ")
                && pp.contains("policy.karmada.io/v1alpha1")
                && pp.contains("PropagationPolicy"),
            "{pp}"
        );
        let clusters = resources
            .lines()
            .find(|l| l.starts_with("clusters"))
            .expect("clusters");
        assert!(
            clusters.contains("cluster.karmada.io/v1alpha1") && clusters.contains("false"),
            "{clusters}"
        );
        // The aggregator's view: one Local APIService per served group version.
        let api_services = flotilla.ok(version, &["get", "apiservices"]);
        let header: Vec<&str> = api_services
            .lines()
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        assert_eq!(
            header,
            ["NAME", "SERVICE", "AVAILABLE", "AGE"],
            "{api_services}"
        );
        for name in ["v1.", "v1.apps", "v1alpha1.policy.karmada.io"] {
            let row = api_services
                .lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{name} missing: {api_services}"));
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells[1..3], ["Local", "True"], "{row}");
        }
    }
}
