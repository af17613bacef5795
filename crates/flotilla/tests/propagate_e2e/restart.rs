//! A control plane killed with SIGKILL while it propagates, restarted on its redb data
//! directory: every Deployment converges in the right members, and deleting the templates
//! afterwards leaves no member object, Work or binding behind. The members are simulated in
//! this test process, so they outlive the control plane.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use flotilla_sim::{Sim, SimConfig};

use crate::support::{ControlPlane, await_value, eventually};

const COUNT: usize = 20;
const NAMESPACE: &str = "e2e-restart";
const MEMBERS: [&str; 2] = ["east", "west"];

/// Two simulated members and their kubeconfig (one context each, named after the member).
async fn members(dir: &Path) -> (Sim, PathBuf) {
    let mut yaml = String::from("seed: 7\nclusters:\n");
    for name in MEMBERS {
        yaml.push_str(&format!(
            "- name: {name}\n  region: r-{name}\n  zones: [z1]\n  nodePools: [{{name: cpu, count: 3, profile: cpu}}]\n"
        ));
    }
    let spec = SimConfig::from_yaml(&yaml)
        .and_then(|c| c.validate())
        .expect("a valid sim config");
    let sim = Sim::start(&spec, IpAddr::V4(Ipv4Addr::LOCALHOST), dir)
        .await
        .expect("the members start");
    let kubeconfig = dir.join("members.kubeconfig");
    flotilla_sim::kubeconfig::write(&kubeconfig, &sim.clusters, None).expect("kubeconfig");
    (sim, kubeconfig)
}

/// The namespace and the Deployments (nothing selects them yet).
fn templates() -> String {
    let mut yaml = format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {NAMESPACE}\n");
    for i in 0..COUNT {
        yaml.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i:02}\n  namespace: {NAMESPACE}\n  labels: {{fleet: restart}}\n\
             spec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: app-{i:02}}}\n  template:\n    metadata:\n      labels: {{app: app-{i:02}}}\n\
             \x20   spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n        resources:\n          requests: {{cpu: 10m, memory: 16Mi}}\n"
        ));
    }
    yaml
}

/// The policy claiming them all, Duplicated to both members.
fn policy() -> String {
    format!(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata:\n  name: fleet\n  namespace: {NAMESPACE}\n\
         spec:\n  resourceSelectors:\n  - apiVersion: apps/v1\n    kind: Deployment\n    labelSelector:\n      matchLabels: {{fleet: restart}}\n\
         \x20 placement:\n    clusterAffinity:\n      clusterNames: [east, west]\n    replicaScheduling:\n      replicaSchedulingType: Duplicated\n"
    )
}

/// `ready/total` over the Deployments of [`NAMESPACE`] in a member (ready = readyReplicas 1).
async fn member_deployments(plane: &ControlPlane, member: &str) -> String {
    let out = plane
        .kubectl(&[
            "--context",
            member,
            "-n",
            NAMESPACE,
            "get",
            "deployments",
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}={.status.readyReplicas} {end}",
        ])
        .await;
    let total = out.split_whitespace().count();
    let ready = out.split_whitespace().filter(|d| d.ends_with("=1")).count();
    format!("{member}:{ready}/{total}")
}

async fn start(data: &Path, home: &Path, members: &Path) -> ControlPlane {
    let data = data.to_string_lossy();
    let mut plane = ControlPlane::start(&["--store", "redb", "--data-dir", &data], home).await;
    // kubectl merges the control plane's kubeconfig with the members'.
    plane.extra_kubeconfig = Some(members.to_owned());
    plane
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_propagation_then_restart_converges_with_nothing_orphaned() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (_sim, members_kubeconfig) = members(&dir.path().join("sim")).await;
    let data = dir.path().join("data");
    let mut plane = start(&data, dir.path(), &members_kubeconfig).await;

    let control = plane.kubeconfig.to_string_lossy().into_owned();
    let members = members_kubeconfig.to_string_lossy().into_owned();
    for member in MEMBERS {
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args(["join", member, "--cluster-kubeconfig", &members])
            .args(["--cluster-context", member, "--kubeconfig", &control])
            .env("RUST_LOG", "warn")
            .output()
            .await
            .expect("flotilla join runs");
        assert!(
            output.status.success(),
            "join {member}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    plane.await_members_ready(&MEMBERS).await;

    plane.apply(None, &templates()).await;
    // The policy claims all 20 at once; kill as soon as the first Deployment Work exists, with
    // most bindings, Works and member objects still to come.
    plane.apply(None, &policy()).await;
    let works_at_kill = eventually("the first Deployment Work", || async {
        let out = plane
            .kubectl(&[
                "get",
                "works",
                "--all-namespaces",
                "-o",
                "jsonpath={range .items[*]}{.metadata.labels.resourcebinding\\.karmada\\.io/permanent-id} {end}",
            ])
            .await;
        let count = out.split_whitespace().count();
        if count > 0 { Ok(count) } else { Err(out) }
    })
    .await;
    plane.child.start_kill().expect("SIGKILL up");
    let status = plane.child.wait().await.expect("up exits");
    assert!(!status.success(), "killed: {status}");
    let mut before = Vec::new();
    for member in MEMBERS {
        before.push(member_deployments(&plane, member).await);
    }
    eprintln!("killed with {works_at_kill} Works; members then: {before:?}");

    let plane = start(&data, dir.path(), &members_kubeconfig).await;
    let converged = MEMBERS
        .iter()
        .map(|m| format!("{m}:{COUNT}/{COUNT}"))
        .collect::<Vec<_>>()
        .join(" ");
    let all = || async {
        let mut seen = Vec::new();
        for member in MEMBERS {
            seen.push(member_deployments(&plane, member).await);
        }
        seen.join(" ")
    };
    // Polled like `await_value`; on a timeout the failure also shows the bindings and Works, so
    // that a Deployment that never arrived can be traced to the step that stopped.
    let deadline = tokio::time::Instant::now() + crate::support::PATIENCE;
    loop {
        let seen = all().await;
        if seen == converged {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            let bindings = plane
                .try_kubectl(&["-n", NAMESPACE, "get", "rb", "-o", "wide"])
                .await;
            let works = plane
                .try_kubectl(&["get", "works", "-A", "-o", "wide"])
                .await;
            panic!(
                "not within {:?}: every Deployment ready in both members; last observed:\n\
                 {seen}\n(want {converged})\nbindings: {bindings:?}\nworks: {works:?}",
                crate::support::PATIENCE
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    await_value(
        "every template's status aggregated (2 ready each)",
        &vec!["2"; COUNT].join(" "),
        || async {
            plane
                .get(
                    None,
                    NAMESPACE,
                    "deployments",
                    "{range .items[*]}{.status.readyReplicas} {end}",
                )
                .await
                .trim_end()
                .to_owned()
        },
    )
    .await;
    let bindings = plane
        .get(
            None,
            NAMESPACE,
            "resourcebindings",
            "{range .items[*]}{.metadata.name} {end}",
        )
        .await;
    assert_eq!(bindings.split_whitespace().count(), COUNT, "{bindings}");

    plane
        .kubectl(&[
            "-n",
            NAMESPACE,
            "delete",
            "deployments",
            "-l",
            "fleet=restart",
        ])
        .await;
    let empty = MEMBERS
        .iter()
        .map(|m| format!("{m}:0/0"))
        .collect::<Vec<_>>()
        .join(" ");
    await_value("no Deployment left in the members", &empty, all).await;
    await_value("no Deployment Work left", "", || async {
        plane
            .kubectl(&[
                "get",
                "works",
                "--all-namespaces",
                "-o",
                "jsonpath={range .items[?(@.metadata.annotations.resourcebinding\\.karmada\\.io/namespace==\"e2e-restart\")]}{.metadata.namespace}/{.metadata.name} {end}",
            ])
            .await
    })
    .await;
    await_value("no binding left", "", || {
        plane.get(
            None,
            NAMESPACE,
            "resourcebindings",
            "{range .items[*]}{.metadata.name} {end}",
        )
    })
    .await;
}
