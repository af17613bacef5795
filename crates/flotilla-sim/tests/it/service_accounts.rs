//! What `flotilla join` relies on: a member's service-account token, created the way
//! `karmadactl join` creates it, is accepted over HTTPS and authorized by RBAC.

use std::time::Duration;

use base64::Engine as _;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use crate::support::{World, create, eventually};

async fn create_cluster_scoped<K>(client: &kube::Client, object: serde_json::Value)
where
    K: kube::Resource<Scope = k8s_openapi::ClusterResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
{
    let object: K = serde_json::from_value(object).expect("a valid object");
    Api::<K>::all(client.clone())
        .create(&PostParams::default(), &object)
        .await
        .expect("created");
}

async fn token_client(url: &str, ca_pem: &str, token: &str) -> kube::Client {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let yaml = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: m\n  cluster: {{server: '{url}', certificate-authority-data: {ca}}}\nusers:\n- name: sa\n  user: {{token: {token}}}\ncontexts:\n- name: m\n  context: {{cluster: m, user: sa}}\ncurrent-context: m\n"
    );
    let kubeconfig = Kubeconfig::from_yaml(&yaml).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

#[tokio::test]
async fn a_join_service_account_token_is_accepted_and_authorized_by_rbac() {
    let world = World::cpu(1, "").await;
    let admin = world.client();
    let cluster = &world.sim.clusters[0];
    // `karmada-cluster` exists in every Flotilla API server, members included.
    let _: ServiceAccount = create(
        &admin,
        "karmada-cluster",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "karmada-c1"}}),
    )
    .await;
    let _: Secret = create(
        &admin,
        "karmada-cluster",
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": "karmada-c1", "annotations": {"kubernetes.io/service-account.name": "karmada-c1"}}}),
    )
    .await;
    let secrets = Api::<Secret>::namespaced(admin.clone(), "karmada-cluster");
    let token = eventually(Duration::from_secs(20), "the token is filled in", || {
        let secrets = secrets.clone();
        async move {
            let secret = secrets.get("karmada-c1").await.ok()?;
            let data = secret.data?;
            let token = data.get("token")?;
            Some(String::from_utf8(token.0.clone()).expect("UTF-8 token"))
        }
    })
    .await;
    let member = token_client(&cluster.url, cluster.pki.ca_cert_pem(), &token).await;
    let nodes = Api::<k8s_openapi::api::core::v1::Node>::all(member.clone());
    let denied = nodes
        .list(&ListParams::default())
        .await
        .expect_err("no RBAC yet");
    assert!(
        matches!(&denied, kube::Error::Api(s) if s.code == 403),
        "{denied:?}"
    );

    create_cluster_scoped::<ClusterRole>(
        &admin,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "karmada-controller-manager:karmada-c1"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                      {"nonResourceURLs": ["*"], "verbs": ["get"]}]}),
    )
    .await;
    create_cluster_scoped::<ClusterRoleBinding>(
        &admin,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "karmada-controller-manager:karmada-c1"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                "name": "karmada-controller-manager:karmada-c1"},
            "subjects": [{"kind": "ServiceAccount", "name": "karmada-c1", "namespace": "karmada-cluster"}]}),
    )
    .await;
    let listed = eventually(Duration::from_secs(20), "RBAC allows the list", || {
        let nodes = nodes.clone();
        async move { nodes.list(&ListParams::default()).await.ok() }
    })
    .await;
    assert_eq!(listed.items.len(), 1);
}
