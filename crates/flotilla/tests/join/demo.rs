//! `flotilla up --demo`: the control plane with three simulated GPU clusters joined in push mode
//! and one kubeconfig for all four; the vLLM example propagates through the whole pipeline.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};

use crate::support::kubectl;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_demo_comes_up_with_three_gpu_clusters_and_propagates_the_vllm_example() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args([
            "up",
            "--demo",
            "--store",
            "memory",
            "--listen",
            "127.0.0.1:0",
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("flotilla up --demo starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut printed = Vec::new();
    let kubeconfig = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let line = lines
                .next_line()
                .await
                .expect("stdout")
                .expect("up exited early");
            if let Some(path) = line.strip_prefix("export KUBECONFIG=") {
                return std::path::PathBuf::from(path.trim());
            }
            printed.push(line);
        }
    })
    .await
    .expect("up --demo gets ready");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    assert_eq!(
        kubeconfig,
        std::fs::canonicalize(dir.path().join("data/kubeconfig")).expect("in the data dir")
    );
    let table = printed.join("\n");
    for name in ["cn-shanghai", "us-west-2", "eu-central-1"] {
        assert!(table.contains(name), "{table}");
    }

    let home = dir.path();
    let contexts = kubectl(
        "1.33",
        &kubeconfig,
        home,
        &["config", "get-contexts", "-o", "name"],
    )
    .await;
    let mut contexts: Vec<&str> = contexts.lines().collect();
    contexts.sort();
    assert_eq!(
        contexts,
        ["cn-shanghai", "eu-central-1", "flotilla", "us-west-2"]
    );

    // The cluster status controller reports each member Ready with its version and GPUs
    // (24 nodes × 8 A100s); wait for it without a timing assertion.
    let mut wide = String::new();
    for _ in 0..300 {
        wide = kubectl(
            "1.33",
            &kubeconfig,
            home,
            &["get", "clusters", "-o", "wide", "--no-headers"],
        )
        .await;
        let ready = wide
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some("True"))
            .count();
        if ready == 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let rows: Vec<Vec<&str>> = wide
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    // NAME VERSION MODE READY AGE ZONES REGION PROVIDER API-ENDPOINT GPU-ALLOCATABLE GPU-ALLOCATED
    let summary: Vec<(&str, &str, &str, &str, &str, &str, &str)> = rows
        .iter()
        .filter(|r| r.len() == 11)
        .map(|r| (r[0], r[2], r[3], r[6], r[7], r[9], r[10]))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "cn-shanghai",
                "Push",
                "True",
                "cn-shanghai",
                "aliyun",
                "192",
                "0"
            ),
            (
                "eu-central-1",
                "Push",
                "True",
                "eu-central-1",
                "aws",
                "192",
                "0"
            ),
            ("us-west-2", "Push", "True", "us-west-2", "aws", "192", "0"),
        ],
        "{wide}"
    );
    assert!(
        rows.iter().all(|r| r[1].starts_with("v1.32")),
        "every member reports its Kubernetes version: {wide}"
    );

    for (context, region) in [
        ("cn-shanghai", "cn-shanghai"),
        ("us-west-2", "us-west-2"),
        ("eu-central-1", "eu-central-1"),
    ] {
        let selector = format!("topology.kubernetes.io/region={region}");
        let nodes = kubectl(
            "1.33",
            &kubeconfig,
            home,
            &[
                "--context",
                context,
                "get",
                "nodes",
                "-l",
                &selector,
                "-o",
                "name",
            ],
        )
        .await;
        // 24 GPU workers and kind's control-plane node (the demo's system components).
        assert_eq!(nodes.lines().count(), 25, "{context}: {nodes}");
        assert!(
            nodes.contains(&format!("node/{context}-control-plane")),
            "{context}: {nodes}"
        );
        let gpus = kubectl(
            "1.33",
            &kubeconfig,
            home,
            &[
                "--context",
                context,
                "get",
                "nodes",
                "-o",
                "jsonpath={.items[0].status.allocatable.nvidia\\.com/gpu}",
            ],
        )
        .await;
        assert_eq!(gpus, "8", "{context}");
    }

    // The whole pipeline: the vLLM example (10 replicas, static weights 50:30:20, a regional
    // OverridePolicy) is detected, scheduled, rendered into Works, applied to the members whose
    // pods become ready, and the members' status comes back onto the template.
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vllm");
    let file = |name: &str| examples.join(name).to_string_lossy().into_owned();
    let (deployment, policy, overrides) = (
        file("deployment.yaml"),
        file("propagationpolicy.yaml"),
        file("overridepolicy.yaml"),
    );
    kubectl(
        "1.33",
        &kubeconfig,
        home,
        &["apply", "-f", &deployment, "-f", &policy, "-f", &overrides],
    )
    .await;
    let ready_in = |context: Option<&'static str>| {
        let kubeconfig = kubeconfig.clone();
        let home = home.to_owned();
        async move {
            let mut args = vec![];
            if let Some(context) = context {
                args.extend(["--context", context]);
            }
            args.extend([
                "get",
                "deployments",
                "-n",
                "default",
                "--ignore-not-found",
                "-o",
                "jsonpath={.items[?(@.metadata.name==\"vllm-inference\")].status.readyReplicas}",
            ]);
            kubectl("1.33", &kubeconfig, &home, &args).await
        }
    };
    let mut ready = String::new();
    for _ in 0..600 {
        ready = ready_in(None).await;
        if ready == "10" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(ready, "10", "the template's status aggregates the members'");
    // The OverridePolicy is applied last: a member may still be rolling out its overridden
    // pods (one unavailable at a time) after the first rollout made the template ready, so
    // each member is waited for too.
    for (context, replicas) in [
        ("cn-shanghai", "5"),
        ("us-west-2", "3"),
        ("eu-central-1", "2"),
    ] {
        let mut ready = String::new();
        for _ in 0..300 {
            ready = ready_in(Some(context)).await;
            if ready == replicas {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(ready, replicas, "{context}");
    }
    // One command shows the placement: per cluster ready/desired, and the GPUs it holds
    // (10 replicas × 2 GPUs). The binding's status may trail the template's by a write.
    let mut wide = String::new();
    for _ in 0..100 {
        wide = kubectl(
            "1.33",
            &kubeconfig,
            home,
            &["get", "rb", "-n", "default", "-o", "wide", "--no-headers"],
        )
        .await;
        if ["cn-shanghai:5/5", "us-west-2:3/3", "eu-central-1:2/2"]
            .iter()
            .all(|c| wide.contains(c))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let row: Vec<&str> = wide
        .lines()
        .find(|l| l.starts_with("vllm-inference-deployment "))
        .unwrap_or_else(|| panic!("the vLLM binding in:\n{wide}"))
        .split_whitespace()
        .collect();
    assert_eq!(
        row[1..3],
        ["True", "True"],
        "SCHEDULED, FULLYAPPLIED: {wide}"
    );
    let mut clusters: Vec<&str> = row[4].split(',').collect();
    clusters.sort_unstable();
    assert_eq!(
        clusters,
        ["cn-shanghai:5/5", "eu-central-1:2/2", "us-west-2:3/3"],
        "{wide}"
    );
    assert_eq!(row[5], "20", "GPUs: {wide}");

    // Writes carry the Karmada component's name as their field manager (from the User-Agent),
    // as with Karmada: the scheduler's placement, the controllers' Works and member objects.
    let managers = |context: Option<&'static str>, resource: &'static str, name: &'static str| {
        let kubeconfig = kubeconfig.clone();
        let home = home.to_owned();
        async move {
            let mut args = vec![];
            if let Some(context) = context {
                args.extend(["--context", context]);
            }
            args.extend([
                "get",
                resource,
                name,
                "-n",
                "default",
                "--show-managed-fields",
                "-o",
                "jsonpath={.metadata.managedFields[*].manager}",
            ]);
            let mut managers: Vec<String> = kubectl("1.33", &kubeconfig, &home, &args)
                .await
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            managers.sort();
            managers.dedup();
            managers
        }
    };
    assert_eq!(
        managers(None, "rb", "vllm-inference-deployment").await,
        ["karmada-controller-manager", "karmada-scheduler"]
    );
    assert_eq!(
        managers(Some("cn-shanghai"), "deployment", "vllm-inference").await,
        ["karmada-controller-manager"]
    );
    let _ = child.start_kill();
}

/// Starts `flotilla up --demo` on the redb store in `data`; returns the child and its kubeconfig
/// once it prints it (or fails with what it printed).
async fn start_demo(data: &std::path::Path) -> (tokio::process::Child, std::path::PathBuf) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args([
            "up",
            "--demo",
            "--listen",
            "127.0.0.1:0",
            "--metrics-bind-address",
            "0",
            "--data-dir",
        ])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("flotilla up --demo starts");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let kubeconfig = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            match lines.next_line().await.expect("stdout") {
                Some(line) => {
                    if let Some(path) = line.strip_prefix("export KUBECONFIG=") {
                        return std::path::PathBuf::from(path.trim());
                    }
                }
                None => {
                    let status = child.wait().await.expect("exit status");
                    panic!("up --demo exited before it was ready: {status}");
                }
            }
        }
    })
    .await
    .expect("up --demo gets ready");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, kubeconfig)
}

/// A durable store remembers the previous run's demo members (gone with that process): a second
/// `up --demo` on the same data directory replaces them and propagates what the store holds to
/// the new members. Every cluster, the control plane included, has kube's `default/kubernetes`
/// Service; the control plane hands out the following addresses to Services, across restarts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_demo_starts_again_on_its_data_directory() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let home = dir.path();
    let data = dir.path().join("data");
    let (mut first, kubeconfig) = start_demo(&data).await;
    let manifest = dir.path().join("web.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n\
         spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}\n---\n\
         apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
         metadata: {name: web, namespace: default}\n\
         spec:\n  resourceSelectors: [{apiVersion: v1, kind: Service, name: web}]\n  \
         placement: {clusterAffinity: {clusterNames: [us-west-2]}}\n",
    )
    .expect("write the manifest");
    let manifest = manifest.to_str().expect("UTF-8 path");
    kubectl("1.33", &kubeconfig, home, &["apply", "-f", manifest]).await;
    let cluster_ips = |context: Option<&'static str>| {
        let kubeconfig = kubeconfig.clone();
        async move {
            let mut args = vec![
                "get",
                "svc",
                "-n",
                "default",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name}={.spec.clusterIP} {end}",
            ];
            if let Some(context) = context {
                args.extend(["--context", context]);
            }
            kubectl("1.33", &kubeconfig, home, &args).await
        }
    };
    assert_eq!(
        cluster_ips(None).await,
        "kubernetes=10.96.0.1 web=10.96.0.2 "
    );
    // Stopped the hard way: nothing is cleaned up on the way out.
    first.kill().await.expect("kill the first run");

    let (mut second, again) = start_demo(&data).await;
    assert_eq!(again, kubeconfig);
    let mut member = String::new();
    for _ in 0..300 {
        member = cluster_ips(Some("us-west-2")).await;
        if member.contains("web=") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        member.starts_with("kubernetes=10.96.0.1 web="),
        "the new member holds the propagated Service: {member}"
    );
    kubectl(
        "1.33",
        &kubeconfig,
        home,
        &["create", "service", "clusterip", "again", "--tcp=80:80"],
    )
    .await;
    assert_eq!(
        cluster_ips(None).await,
        "again=10.96.0.3 kubernetes=10.96.0.1 web=10.96.0.2 ",
        "addresses in use before the restart are not handed out again"
    );
    // The Service's endpoints name the API server's port, at a routable address.
    let port = |text: &str| text.rsplit(':').next().map(str::to_owned);
    let endpoints = kubectl(
        "1.33",
        &kubeconfig,
        home,
        &[
            "get",
            "endpointslice",
            "kubernetes",
            "-o",
            "jsonpath={.endpoints[0].addresses[0]}:{.ports[0].port}",
        ],
    )
    .await;
    let server = kubectl(
        "1.33",
        &kubeconfig,
        home,
        &[
            "config",
            "view",
            "--minify",
            "-o",
            "jsonpath={.clusters[0].cluster.server}",
        ],
    )
    .await;
    assert_eq!(port(&endpoints), port(&server), "{endpoints} vs {server}");
    assert!(!endpoints.starts_with("127."), "{endpoints}");
    let _ = second.start_kill();
}
