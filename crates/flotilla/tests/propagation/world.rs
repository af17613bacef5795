//! The test world: an in-process control plane, the live scheduler, the propagation
//! controllers, and Ready Cluster objects with their execution namespaces.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::Cluster;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_runtime::Shutdown;
use flotilla_scheduler::run::{Metrics, Scheduler, SchedulerConfig};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

pub struct World {
    _running: flotilla_apiserver::Running,
    pub client: kube::Client,
    shutdown: Shutdown,
}

impl Drop for World {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// A fixture of `tests/propagation/`, parsed.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/propagation/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    yaml_serde::from_str(&text).expect("fixture is YAML")
}

impl World {
    pub async fn start(clusters: &[&str]) -> World {
        Self::start_with(
            clusters,
            flotilla_controllers::ControllerOptions::default(),
            SchedulerConfig::default(),
        )
        .await
    }

    /// A world whose propagation controllers run with `options` (feature gates) and whose
    /// scheduler runs with `scheduler`.
    pub async fn start_with(
        clusters: &[&str],
        options: flotilla_controllers::ControllerOptions,
        scheduler: SchedulerConfig,
    ) -> World {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let store = Arc::new(flotilla_store::MemoryStore::new());
        let running = flotilla_apiserver::Builder::new(store)
            .start()
            .await
            .expect("API server starts");
        let client = flotilla_apiserver::client::in_process(
            &running.server,
            UserInfo {
                name: "propagation-test".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                ..UserInfo::default()
            },
        );
        for cluster in clusters {
            add_cluster(&client, cluster).await;
        }
        let shutdown = Shutdown::new();
        let scheduler = Scheduler::new(client.clone(), scheduler, Metrics::default());
        tokio::spawn(scheduler.run(shutdown.clone()));
        let context = flotilla_controllers::Context::new(
            client.clone(),
            Arc::new(flotilla_member::StaticMemberClients::new()),
            None,
        )
        .with_options(options);
        for start in [
            flotilla_controllers::detector::start,
            flotilla_controllers::binding::start,
            flotilla_controllers::binding_status::start,
            flotilla_controllers::namespace::start,
            flotilla_controllers::dependencies::start,
        ] {
            tokio::spawn(start(context.clone(), shutdown.child()));
        }
        World {
            _running: running,
            client,
            shutdown,
        }
    }

    /// Starts one more controller (opt-in: `start` only runs the propagation controllers) with
    /// its own context built with `options` (feature gates, failover flags).
    pub fn run_controller(
        &self,
        start: fn(
            flotilla_controllers::Context,
            Shutdown,
        ) -> flotilla_controllers::manager::ControllerTask,
        options: flotilla_controllers::ControllerOptions,
    ) {
        let context = flotilla_controllers::Context::new(
            self.client.clone(),
            Arc::new(flotilla_member::StaticMemberClients::new()),
            None,
        )
        .with_options(options);
        tokio::spawn(start(context, self.shutdown.child()));
    }

    /// Creates `object` (any kind the server serves).
    pub async fn apply(&self, object: Value) {
        let api_version = object["apiVersion"].as_str().expect("apiVersion");
        let kind = object["kind"].as_str().expect("kind");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let (resource, capabilities) = kube::discovery::pinned_kind(
            &self.client,
            &GroupVersionKind::gvk(group, version, kind),
        )
        .await
        .expect("kind is served");
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default");
        let api: Api<DynamicObject> = match capabilities.scope {
            kube::discovery::Scope::Namespaced => {
                Api::namespaced_with(self.client.clone(), namespace, &resource)
            }
            kube::discovery::Scope::Cluster => Api::all_with(self.client.clone(), &resource),
        };
        let object: DynamicObject = serde_json::from_value(object).expect("object");
        api.create(&PostParams::default(), &object)
            .await
            .expect("created");
    }
}

/// A Ready Push cluster with room for GPUs, and its execution namespace.
pub async fn add_cluster(client: &kube::Client, name: &str) {
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": format!("karmada-es-{name}")}}))
                .expect("namespace"),
        )
        .await
        .expect("execution namespace");
    let api = Api::<Cluster>::all(client.clone());
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push", "apiEndpoint": format!("https://{name}.example:6443"), "region": name},
    }))
    .expect("cluster");
    api.create(&PostParams::default(), &cluster)
        .await
        .expect("cluster created");
    let status = json!({"status": {
        "kubernetesVersion": "v1.32.0",
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
            "message": "cluster is healthy and ready to accept workloads",
            "lastTransitionTime": "2026-12-01T00:00:00Z"}],
        "apiEnablements": [
            {"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]},
            {"groupVersion": "batch/v1", "resources": [{"name": "jobs", "kind": "Job"}]},
            {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"},
                {"name": "namespaces", "kind": "Namespace"}]},
            {"groupVersion": "rbac.authorization.k8s.io/v1",
                "resources": [{"name": "clusterroles", "kind": "ClusterRole"}]},
            {"groupVersion": "example.com/v1", "resources": [{"name": "widgets", "kind": "Widget"}]}],
        "resourceSummary": {
            "allocatable": {"cpu": "1000", "memory": "100Ti", "pods": "1000", "nvidia.com/gpu": "200"},
            "allocated": {"cpu": "0", "memory": "0", "pods": "0"},
        },
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("cluster status");
}

/// Polls `check` (patiently, without a timing assertion) until it yields a value.
pub async fn eventually<T, F, Fut>(what: &str, check: F) -> T
where
    F: Fn() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..600 {
        if let Some(value) = check().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}

/// A one-replica nginx Deployment `name` in `namespace`, labelled `app: <name>`.
pub fn deployment(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {
                "containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
}

/// A PropagationPolicy `name` in `namespace` selecting the Deployment `target` by name and
/// placing it on `cluster`.
pub fn policy(namespace: &str, name: &str, target: &str, cluster: &str) -> Value {
    json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": target}],
            "placement": {"clusterAffinity": {"clusterNames": [cluster]}}}})
}
