//! Builders for simulated clusters and an `eventually` helper with a patience setting.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use flotilla_sim::{Sim, SimConfig};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kube::api::{Api, PostParams};
use serde_json::Value;

pub const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A running sim with its credentials directory.
pub struct World {
    pub sim: Sim,
    pub dir: tempfile::TempDir,
}

impl World {
    pub async fn from_yaml(yaml: &str) -> World {
        let spec = SimConfig::from_yaml(yaml)
            .and_then(|c| c.validate())
            .expect("a valid config");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sim = Sim::start(&spec, LOCALHOST, dir.path())
            .await
            .expect("the sim starts");
        World { sim, dir }
    }

    /// One cluster `c1` with `nodes` cpu nodes.
    pub async fn cpu(nodes: usize, extra: &str) -> World {
        World::from_yaml(&format!(
            "seed: 1\n{extra}\nclusters:\n- name: c1\n  zones: [z1, z2, z3]\n  nodePools: [{{name: cpu, count: {nodes}, profile: cpu}}]\n"
        ))
        .await
    }

    pub fn client(&self) -> kube::Client {
        self.sim.clusters[0].client()
    }
}

/// Polls `check` every 100 ms until it returns `Some`, for at most `patience` (of the clock in
/// use: paused tests spend no real time).
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

pub const PATIENCE: Duration = Duration::from_secs(120);

pub async fn create<K>(client: &kube::Client, ns: &str, object: Value) -> K
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    let object: K = serde_json::from_value(object).expect("a valid object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("created")
}

pub async fn pods(client: &kube::Client, ns: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    api.list(&Default::default())
        .await
        .expect("pods list")
        .items
}

pub fn condition<'a>(
    pod: &'a Pod,
    kind: &str,
) -> Option<&'a k8s_openapi::api::core::v1::PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

/// The status of `pod`'s container `name`.
pub fn container<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == name)
}
