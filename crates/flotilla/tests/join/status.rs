//! The unified health view `GET /apis/cluster.karmada.io/v1alpha1/clusters/status` and
//! `kubectl get clusters` (wide) with the real kubectl.

use flotilla_api::karmada::Cluster;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::push::join_args;
use crate::support::{ControlPlane, KUBECTL_VERSIONS, Members, flotilla, kubectl, ok};

/// What a cluster status controller writes for a healthy member with 2 × 8 GPUs, 3 in use.
fn healthy_status() -> Value {
    json!({"status": {
        "kubernetesVersion": "v1.32.0",
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
            "message": "cluster is healthy and ready to accept workloads",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}],
        "nodeSummary": {"totalNum": 2, "readyNum": 2},
        "resourceSummary": {
            "allocatable": {"cpu": "192", "nvidia.com/gpu": "16"},
            "allocated": {"cpu": "4", "nvidia.com/gpu": "3"},
        },
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_view_and_kubectl_get_clusters_show_every_member_in_one_request() {
    let control = ControlPlane::start("viewer-token,viewer,u-2,viewers\n").await;
    let members = Members::start(&["m1", "m2"]).await;
    for name in ["m1", "m2"] {
        let mut args = join_args(&control, &members, name, name);
        args.extend([
            "--region".into(),
            format!("region-{name}"),
            "--zone".into(),
            "z1".into(),
            "--provider".into(),
            "sim".into(),
        ]);
        ok(&flotilla(&args.iter().map(String::as_str).collect::<Vec<_>>()).await);
    }
    let admin = control.client();
    Api::<Cluster>::all(admin.clone())
        .patch_status(
            "m1",
            &PatchParams::default(),
            &Patch::Merge(healthy_status()),
        )
        .await
        .expect("status written");

    let request = http::Request::get("/apis/cluster.karmada.io/v1alpha1/clusters/status")
        .body(Vec::new())
        .expect("a request");
    let view: Value = admin.request(request).await.expect("the view");
    assert_eq!(view["kind"], "ClusterHealthList");
    let items = view["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    let m1 = &items[0];
    assert_eq!(m1["name"], "m1");
    assert_eq!(m1["syncMode"], "Push");
    assert_eq!(m1["ready"]["status"], "True");
    assert_eq!(m1["ready"]["reason"], "ClusterReady");
    assert!(m1["ready"]["ageSeconds"].as_i64().expect("an age") > 0);
    assert_eq!(m1["kubernetesVersion"], "v1.32.0");
    assert_eq!(m1["nodes"], json!({"total": 2, "ready": 2}));
    assert_eq!(m1["gpus"]["allocatable"], 16);
    assert_eq!(m1["gpus"]["allocated"], 3);
    let m2 = &items[1];
    assert_eq!(m2["name"], "m2");
    assert_eq!(m2["ready"]["status"], "Unknown");
    assert_eq!(m2["region"], "region-m2");

    // Authorized like `list clusters`.
    let viewer = control.token_kubeconfig("viewer", "viewer-token");
    let home = control.dir.path();
    let denied = tokio::process::Command::new(crate::support::kubectl_binary("1.33"))
        .args([
            "get",
            "--raw",
            "/apis/cluster.karmada.io/v1alpha1/clusters/status",
        ])
        .env("KUBECONFIG", &viewer)
        .env("HOME", home)
        .output()
        .await
        .expect("kubectl runs");
    assert!(!denied.status.success());
    let message = String::from_utf8_lossy(&denied.stderr);
    assert!(
        message.contains("Forbidden") || message.contains("forbidden"),
        "{message}"
    );
    let role: k8s_openapi::api::rbac::v1::ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": "list-clusters"},
        "rules": [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters"], "verbs": ["list"]}]}))
    .expect("a role");
    let binding: k8s_openapi::api::rbac::v1::ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "viewers-list-clusters"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "list-clusters"},
        "subjects": [{"kind": "Group", "name": "viewers", "apiGroup": "rbac.authorization.k8s.io"}]}))
    .expect("a binding");
    Api::all(admin.clone())
        .create(&Default::default(), &role)
        .await
        .expect("role");
    Api::all(admin.clone())
        .create(&Default::default(), &binding)
        .await
        .expect("binding");
    let raw = crate::support::eventually(crate::support::PATIENCE, "RBAC allows the view", || {
        let viewer = viewer.clone();
        async move {
            let output = tokio::process::Command::new(crate::support::kubectl_binary("1.33"))
                .args([
                    "get",
                    "--raw",
                    "/apis/cluster.karmada.io/v1alpha1/clusters/status",
                ])
                .env("KUBECONFIG", &viewer)
                .env("HOME", home)
                .output()
                .await
                .expect("kubectl runs");
            output
                .status
                .success()
                .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        }
    })
    .await;
    let parsed: Value = serde_json::from_str(&raw).expect("JSON");
    assert_eq!(parsed["items"].as_array().map(Vec::len), Some(2));

    for version in KUBECTL_VERSIONS {
        let table = kubectl(version, &control.kubeconfig, home, &["get", "clusters"]).await;
        let lines: Vec<Vec<&str>> = table
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            lines[0],
            ["NAME", "VERSION", "MODE", "READY", "AGE"],
            "kubectl {version}: {table}"
        );
        assert_eq!(
            lines[1][..4],
            ["m1", "v1.32.0", "Push", "True"],
            "kubectl {version}: {table}"
        );
        assert_eq!(
            lines[2][..3],
            ["m2", "Push", "Unknown"],
            "kubectl {version}: {table}"
        );

        let wide = kubectl(
            version,
            &control.kubeconfig,
            home,
            &["get", "clusters", "-o", "wide"],
        )
        .await;
        let lines: Vec<Vec<&str>> = wide
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            lines[0],
            [
                "NAME",
                "VERSION",
                "MODE",
                "READY",
                "AGE",
                "ZONES",
                "REGION",
                "PROVIDER",
                "API-ENDPOINT",
                "GPU-ALLOCATABLE",
                "GPU-ALLOCATED"
            ],
            "kubectl {version}: {wide}"
        );
        let m1_url = members.cluster("m1").url.as_str();
        assert_eq!(
            lines[1][5..],
            ["z1", "region-m1", "sim", m1_url, "16", "3"],
            "kubectl {version}: {wide}"
        );
        assert_eq!(
            lines[2][4..],
            [
                "z1",
                "region-m2",
                "sim",
                members.cluster("m2").url.as_str(),
                "0",
                "0"
            ],
            "kubectl {version}: {wide}"
        );
    }
}
