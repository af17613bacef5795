//! The cluster proxy reaches the member with the control plane's credentials for admins,
//! streams a watch, is for callers allowed `clusters/proxy` only, and will not act as another
//! caller on a cluster without an impersonator (the impersonated path itself runs in
//! `tests/propagate_e2e/proxy.rs`).

use std::time::Duration;

use flotilla_api::karmada::Cluster;
use flotilla_apiserver::auth::authn::UserInfo;
use futures::{AsyncBufReadExt as _, StreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::support::{World, ready};

const SIM: &str = "seed: 6\nstartLatency: '0'\nclusters:\n- name: m1\n  nodePools: [{name: p, count: 3, profile: cpu}]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_proxy_reaches_the_member_streams_watches_and_is_for_admins_only() {
    let world = World::start(SIM).await;
    world.join("m1").await;
    world
        .cluster_until("m1", "Ready", |c| {
            ready(c).is_some_and(|(s, _)| s == "True")
        })
        .await;
    let base = "/apis/cluster.karmada.io/v1alpha1/clusters/m1/proxy";
    let get = |path: String| {
        http::Request::get(path)
            .body(Vec::new())
            .expect("a request")
    };
    let nodes: serde_json::Value = world
        .client
        .request(get(format!("{base}/api/v1/nodes")))
        .await
        .expect("nodes through the proxy");
    assert_eq!(nodes["kind"], "NodeList");
    assert_eq!(nodes["items"].as_array().map(Vec::len), Some(3));
    let version: serde_json::Value = world
        .client
        .request(get(format!("{base}/version")))
        .await
        .expect("version through the proxy");
    assert!(
        version["gitVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("v1."))
    );

    // A watch streams events as they happen.
    let lines = world
        .client
        .request_stream(get(format!(
            "{base}/api/v1/namespaces/default/configmaps?watch=1"
        )))
        .await
        .expect("a watch through the proxy");
    let mut lines = lines.lines();
    let cm: ConfigMap = serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "through", "namespace": "default"}}))
    .expect("a configmap");
    Api::<ConfigMap>::namespaced(world.member("m1").client(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .expect("created in the member");
    // The member's own `kube-root-ca.crt` may come first.
    let event = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next())
            .await
            .expect("an event arrives")
            .expect("a line")
            .expect("readable");
        let event: serde_json::Value = serde_json::from_str(&line).expect("a watch event");
        if event["object"]["metadata"]["name"] != "kube-root-ca.crt" {
            break event;
        }
    };
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "through");

    // Not allowed clusters/proxy: 403, and the member is never asked.
    let user = flotilla_apiserver::client::in_process(
        &world.running.server,
        UserInfo {
            name: "jane".into(),
            groups: vec!["system:authenticated".into()],
            ..UserInfo::default()
        },
    );
    let denied = user
        .request_text(get(format!("{base}/api/v1/nodes")))
        .await
        .expect_err("forbidden");
    assert!(
        matches!(&denied, kube::Error::Api(s) if s.code == 403),
        "{denied:?}"
    );
    // Allowed clusters/proxy but not an admin: the proxy acts as jane through the member's
    // impersonator, and says what to do when the cluster has none.
    let role: ClusterRole = serde_json::from_value(json!({"metadata": {"name": "jane-proxy"},
        "rules": [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/proxy"],
            "resourceNames": ["m1"], "verbs": ["get"]}]}))
    .expect("a role");
    Api::<ClusterRole>::all(world.client.clone())
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "jane-proxy"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "jane-proxy"},
        "subjects": [{"kind": "User", "name": "jane"}]}))
    .expect("a binding");
    Api::<ClusterRoleBinding>::all(world.client.clone())
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    Api::<Cluster>::all(world.client.clone())
        .patch(
            "m1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"impersonatorSecretRef": null}})),
        )
        .await
        .expect("the impersonator reference removed");
    let refused = crate::support::eventually(
        crate::support::PATIENCE,
        "the proxy refuses to act as jane without an impersonator",
        || async {
            match user.request_text(get(format!("{base}/api"))).await {
                Err(kube::Error::Api(s)) if s.code == 503 => Some(s.message),
                _ => None,
            }
        },
    )
    .await;
    assert!(
        refused.contains("no spec.impersonatorSecretRef")
            && refused.contains("\"jane\"")
            && refused.contains("join the cluster again"),
        "{refused}"
    );
    // An unknown cluster is 404.
    let missing = world
        .client
        .request_text(get(
            "/apis/cluster.karmada.io/v1alpha1/clusters/nope/proxy/api".into(),
        ))
        .await
        .expect_err("not found");
    assert!(
        matches!(&missing, kube::Error::Api(s) if s.code == 404),
        "{missing:?}"
    );
}
