//! The test world: a control plane with the cluster controllers, simulated members, joining.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use flotilla_api::karmada::Cluster;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_controllers::Context;
use flotilla_controllers::cluster::ClusterOptions;
use flotilla_controllers::cluster::health::MonitorTimings;
use flotilla_controllers::cluster_status::StatusOptions;
use flotilla_runtime::Shutdown;
use flotilla_sim::{Sim, SimConfig};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

pub const PATIENCE: Duration = Duration::from_secs(60);

/// Shortened timings: probes every 200 ms, one second of failures or successes to flip.
pub fn status_options() -> StatusOptions {
    StatusOptions {
        update_frequency: Duration::from_millis(200),
        success_threshold: Duration::from_secs(1),
        failure_threshold: Duration::from_secs(1),
        probe_timeout: Duration::from_secs(1),
        cache_sync_timeout: Duration::from_secs(30),
        ..StatusOptions::default()
    }
}

pub struct World {
    pub running: flotilla_apiserver::Running,
    pub client: kube::Client,
    pub sim: Sim,
    /// The controllers' metrics (as `up` registers them on `/metrics`).
    pub metrics: flotilla_controllers::Metrics,
    _dir: tempfile::TempDir,
    shutdown: Shutdown,
}

impl Drop for World {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn admin(running: &flotilla_apiserver::Running, name: &str) -> kube::Client {
    flotilla_apiserver::client::in_process(
        &running.server,
        UserInfo {
            name: name.into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..UserInfo::default()
        },
    )
}

impl World {
    /// A control plane and the sim described by `sim_yaml`.
    pub async fn start(sim_yaml: &str) -> World {
        flotilla_apiserver::auth::tls::install_crypto_provider();
        let store = Arc::new(flotilla_store::MemoryStore::new());
        let proxy = cluster_proxy_hook();
        let running = flotilla_apiserver::Builder::new(store)
            .cluster_proxy(proxy.clone())
            .start()
            .await
            .expect("the control plane starts");
        let client = admin(&running, "clusters-test");
        let shutdown = Shutdown::new();
        let members: Arc<dyn flotilla_member::MemberClients> =
            flotilla_member::SecretMemberClients::start(
                admin(&running, "member-clients"),
                shutdown.clone(),
            );
        proxy.bind(members.clone());
        let context = Context::new(admin(&running, "controller-manager"), members, None);
        let metrics = context.metrics.clone();
        let options = ClusterOptions {
            monitor: MonitorTimings {
                period: Duration::from_millis(200),
                grace: Duration::from_secs(4),
                startup_grace: Duration::from_secs(6),
            },
            cleanup_check_interval: Duration::from_millis(500),
        };
        tokio::spawn(flotilla_controllers::cluster::run(
            context.clone(),
            options,
            shutdown.clone(),
        ));
        tokio::spawn(flotilla_controllers::cluster_status::run(
            context,
            status_options(),
            shutdown.clone(),
        ));
        let spec = SimConfig::from_yaml(sim_yaml)
            .and_then(|c| c.validate())
            .expect("a valid sim config");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sim = Sim::start(&spec, std::net::Ipv4Addr::LOCALHOST.into(), dir.path())
            .await
            .expect("the sim starts");
        World {
            running,
            client,
            sim,
            metrics,
            _dir: dir,
            shutdown,
        }
    }

    /// The controllers' metrics in Prometheus' text format.
    pub fn scrape(&self) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        self.metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
        text
    }

    pub fn member(&self, name: &str) -> &flotilla_sim::SimCluster {
        self.sim.cluster(name).expect("a sim cluster")
    }

    /// Joins sim cluster `name` in push mode, as `flotilla join` does.
    pub async fn join(&self, name: &str) {
        join(&self.client, self.member(name), name).await;
    }

    pub async fn cluster(&self, name: &str) -> Option<Cluster> {
        Api::<Cluster>::all(self.client.clone())
            .get_opt(name)
            .await
            .expect("read the cluster")
    }

    /// Waits until the cluster satisfies `check`.
    pub async fn cluster_until(
        &self,
        name: &str,
        what: &str,
        check: impl Fn(&Cluster) -> bool,
    ) -> Cluster {
        eventually(PATIENCE, what, || async {
            self.cluster(name).await.filter(|c| check(c))
        })
        .await
    }
}

/// Joins `member` to the control plane behind `control` as `name` (Push): its token and CA in
/// `karmada-cluster/<name>`, and the Cluster.
pub async fn join(control: &kube::Client, member: &flotilla_sim::SimCluster, name: &str) {
    let token = member_token(&member.client(), name).await;
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "karmada-cluster"},
        "data": {
            "token": base64::engine::general_purpose::STANDARD.encode(&token),
            "caBundle": base64::engine::general_purpose::STANDARD.encode(member.pki.ca_cert_pem()),
        },
    }))
    .expect("a secret");
    Api::<Secret>::namespaced(control.clone(), "karmada-cluster")
        .create(&PostParams::default(), &secret)
        .await
        .expect("the secret is created");
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push", "apiEndpoint": member.url, "id": member.cluster_id,
            "secretRef": {"namespace": "karmada-cluster", "name": name}},
    }))
    .expect("a cluster");
    Api::<Cluster>::all(control.clone())
        .create(&PostParams::default(), &cluster)
        .await
        .expect("the cluster is created");
}

fn cluster_proxy_hook() -> Arc<crate::cluster_proxy::MemberProxy> {
    crate::cluster_proxy::MemberProxy::new()
}

/// In the member: the service account `karmada-<name>` with full rights and its token.
async fn member_token(member: &kube::Client, name: &str) -> String {
    let sa = format!("karmada-{name}");
    let create = |path: &str, body: Value| {
        let request = http::Request::post(path)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&body).expect("JSON"))
            .expect("a request");
        let member = member.clone();
        async move {
            member
                .request_text(request)
                .await
                .expect("created in the member");
        }
    };
    create(
        "/api/v1/namespaces/karmada-cluster/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa}}),
    )
    .await;
    create(
        "/api/v1/namespaces/karmada-cluster/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": sa, "annotations": {"kubernetes.io/service-account.name": sa}}}),
    )
    .await;
    let role = format!("karmada-controller-manager:{sa}");
    create(
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                      {"nonResourceURLs": ["*"], "verbs": ["get"]}]}),
    )
    .await;
    create(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": "karmada-cluster"}]}),
    )
    .await;
    let secrets = Api::<Secret>::namespaced(member.clone(), "karmada-cluster");
    eventually(PATIENCE, "the member fills in the token", || async {
        let secret = secrets.get(&sa).await.ok()?;
        let token = secret.data?.get("token")?.0.clone();
        String::from_utf8(token).ok()
    })
    .await
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `patience`.
pub async fn eventually<T, F, Fut>(patience: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not within {patience:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn ready(cluster: &Cluster) -> Option<(String, String)> {
    let c = flotilla_controllers::cluster::health::ready_condition(cluster)?;
    Some((c.status.clone(), c.reason.clone()))
}

pub fn taint_keys(cluster: &Cluster) -> Vec<String> {
    cluster.spec.taints.iter().map(|t| t.key.clone()).collect()
}

pub fn ready_message(cluster: &Cluster) -> String {
    flotilla_controllers::cluster::health::ready_condition(cluster)
        .map(|c| c.message.clone())
        .unwrap_or_default()
}
