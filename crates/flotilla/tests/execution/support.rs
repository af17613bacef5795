//! The world of the execution tests: a control plane with the execution and work-status
//! controllers, two simulated members (`m1`, `m2`) reached through `StaticMemberClients`.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{Cluster, Work, names};
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_controllers::{Context, execution, work_status};
use flotilla_member::StaticMemberClients;
use flotilla_runtime::Shutdown;
use flotilla_sim::{Sim, SimConfig};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

pub struct World {
    pub control: kube::Client,
    /// The controllers' metrics (every controller this world starts records into them).
    pub metrics: flotilla_controllers::Metrics,
    members: Arc<StaticMemberClients>,
    /// The controllers' shared informers (those started later subscribe late).
    informers: flotilla_runtime::Informers,
    sim: Sim,
    shutdown: Shutdown,
    _running: flotilla_apiserver::Running,
    _dir: tempfile::TempDir,
}

impl Drop for World {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl World {
    pub async fn start() -> World {
        let store = Arc::new(flotilla_store::MemoryStore::new());
        let running = flotilla_apiserver::Builder::new(store)
            .start()
            .await
            .expect("the control plane starts");
        let control = flotilla_apiserver::client::in_process(
            &running.server,
            UserInfo {
                name: "execution-test".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                ..UserInfo::default()
            },
        );
        let spec = SimConfig::from_yaml(
            "seed: 1\nstartLatency: 0s\nclusters:\n\
             - name: m1\n  nodePools: [{name: cpu, count: 2, profile: cpu}]\n\
             - name: m2\n  nodePools: [{name: cpu, count: 2, profile: cpu}]\n",
        )
        .and_then(|c| c.validate())
        .expect("a valid sim config");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sim = Sim::start(&spec, IpAddr::V4(Ipv4Addr::LOCALHOST), dir.path())
            .await
            .expect("the members start");
        let members = Arc::new(StaticMemberClients::new());
        for cluster in &sim.clusters {
            members.insert(cluster.name.clone(), cluster.client());
        }
        let world = World {
            control: control.clone(),
            members: members.clone(),
            metrics: flotilla_controllers::Metrics::default(),
            informers: flotilla_runtime::Informers::new(control.clone()),
            sim,
            shutdown: Shutdown::new(),
            _running: running,
            _dir: dir,
        };
        for name in ["m1", "m2"] {
            world.join(name).await;
        }
        let ctx = world.context(None);
        tokio::spawn(execution::start(ctx.clone(), world.shutdown.child()));
        tokio::spawn(work_status::start(ctx, world.shutdown.child()));
        world
    }

    fn context(&self, cluster: Option<&str>) -> Context {
        Context {
            client: self.control.clone(),
            member_objects: Arc::new(flotilla_controllers::member_cache::MemberCache::new(
                self.members.clone(),
            )),
            members: self.members.clone(),
            cluster: cluster.map(str::to_owned),
            metrics: self.metrics.clone(),
            informers: self.informers.clone(),
            interpreter: Arc::new(flotilla_controllers::interpreter::Customizations::new(
                self.informers.clone(),
            )),
            options: Arc::default(),
        }
    }

    /// Adds the rest of the pipeline: the resource detector, the scheduler, the binding and
    /// binding status controllers, with the members' API enablements and capacity on their
    /// Clusters for the scheduler.
    pub async fn start_pipeline(&self) {
        let clusters: Api<Cluster> = Api::all(self.control.clone());
        for name in ["m1", "m2"] {
            let status = json!({"status": {
                "apiEnablements": [{"groupVersion": "apps/v1",
                    "resources": [{"name": "deployments", "kind": "Deployment"}]}],
                "resourceSummary": {
                    "allocatable": {"cpu": "100", "memory": "100Gi", "pods": "100"},
                    "allocated": {"cpu": "0", "memory": "0", "pods": "0"}},
            }});
            clusters
                .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
                .await
                .expect("cluster status");
        }
        let scheduler = flotilla_scheduler::run::Scheduler::new(
            self.control.clone(),
            flotilla_scheduler::run::SchedulerConfig::default(),
            flotilla_scheduler::run::Metrics::default(),
        );
        tokio::spawn(scheduler.run(self.shutdown.child()));
        let ctx = self.context(None);
        for start in [
            flotilla_controllers::detector::start,
            flotilla_controllers::binding::start,
            flotilla_controllers::binding_status::start,
        ] {
            tokio::spawn(start(ctx.clone(), self.shutdown.child()));
        }
    }

    /// Runs the member-side controllers as the agent of `cluster` does (only its Works).
    pub fn start_agent(&self, cluster: &str) {
        let ctx = self.context(Some(cluster));
        tokio::spawn(execution::start(ctx.clone(), self.shutdown.child()));
        tokio::spawn(work_status::start(ctx, self.shutdown.child()));
    }

    /// Switches the cluster's `syncMode`.
    pub async fn set_sync_mode(&self, name: &str, mode: &str) {
        let clusters: Api<Cluster> = Api::all(self.control.clone());
        let patch = json!({"spec": {"syncMode": mode}});
        clusters
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("sync mode");
    }

    /// The member's admin client.
    pub fn member(&self, name: &str) -> kube::Client {
        self.sim.cluster(name).expect("a known member").client()
    }

    /// A Push cluster with its execution namespace, Ready.
    async fn join(&self, name: &str) {
        let clusters: Api<Cluster> = Api::all(self.control.clone());
        let cluster: Cluster = serde_json::from_value(json!({
            "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": format!("https://{name}.example:6443")},
        }))
        .expect("cluster");
        clusters
            .create(&PostParams::default(), &cluster)
            .await
            .expect("cluster created");
        let namespaces: Api<Namespace> = Api::all(self.control.clone());
        let namespace: Namespace = serde_json::from_value(json!({
            "metadata": {"name": names::execution_space_name(name)}}))
        .expect("namespace");
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .expect("execution namespace");
        self.set_ready(name, true).await;
    }

    pub async fn set_ready(&self, name: &str, ready: bool) {
        let clusters: Api<Cluster> = Api::all(self.control.clone());
        let (status, reason) = if ready {
            ("True", "ClusterReady")
        } else {
            ("False", "ClusterNotReachable")
        };
        let patch = json!({"status": {"conditions": [{"type": "Ready", "status": status,
            "reason": reason, "message": "set by the test",
            "lastTransitionTime": "2026-12-01T00:00:00Z"}]}});
        clusters
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("cluster status");
    }

    pub fn work_name(&self, name: &str) -> String {
        names::work_name("Deployment", name, "default")
    }

    pub async fn create_work(&self, cluster: &str, name: &str, manifest: Value) {
        self.create_work_with(cluster, name, manifest, json!({}))
            .await;
    }

    /// A Work as the binding controller writes it (finalizer, manifest annotations), plus
    /// `spec` fields.
    pub async fn create_work_with(&self, cluster: &str, name: &str, manifest: Value, spec: Value) {
        let namespace = names::execution_space_name(cluster);
        let work_name = self.work_name(name);
        let mut manifest = manifest;
        let annotations = &mut manifest["metadata"]["annotations"];
        annotations["work.karmada.io/namespace"] = json!(namespace);
        annotations["work.karmada.io/name"] = json!(work_name);
        let mut spec = spec;
        spec["workload"] = json!({"manifests": [manifest]});
        let work: Work = serde_json::from_value(json!({
            "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": {"name": work_name, "namespace": namespace},
            "spec": spec,
        }))
        .expect("work");
        Api::<Work>::namespaced(self.control.clone(), &namespace)
            .create(&PostParams::default(), &work)
            .await
            .expect("work created");
    }

    pub async fn update_work(&self, cluster: &str, name: &str, manifest: Value) {
        let namespace = names::execution_space_name(cluster);
        let work_name = self.work_name(name);
        let mut manifest = manifest;
        let annotations = &mut manifest["metadata"]["annotations"];
        annotations["work.karmada.io/namespace"] = json!(namespace);
        annotations["work.karmada.io/name"] = json!(work_name);
        let patch = json!({"spec": {"workload": {"manifests": [manifest]}}});
        Api::<Work>::namespaced(self.control.clone(), &namespace)
            .patch(&work_name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("work updated");
    }

    pub async fn delete_work(&self, cluster: &str, name: &str) {
        Api::<Work>::namespaced(self.control.clone(), &names::execution_space_name(cluster))
            .delete(&self.work_name(name), &DeleteParams::default())
            .await
            .expect("work deleted");
    }

    pub async fn work(&self, cluster: &str, name: &str) -> Option<Work> {
        Api::<Work>::namespaced(self.control.clone(), &names::execution_space_name(cluster))
            .get_opt(&self.work_name(name))
            .await
            .expect("get work")
    }
}

/// A Deployment manifest as the binding controller renders it (managed label, template
/// generation).
pub fn deployment_manifest(name: &str, replicas: i32, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default",
            "labels": {"app": name, "karmada.io/managed": "true"},
            "annotations": {"resourcetemplate.karmada.io/generation": "1",
                "resourcetemplate.karmada.io/uid": "7f1d2c3b-0000-4000-8000-000000000001"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image,
                    "resources": {"requests": {"cpu": "100m"}}}]}}},
    })
}

/// Polls `check` every 50 ms until it returns `Some` (patience: one minute of real time).
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..1200 {
        if let Some(value) = check().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never happened: {what}");
}
