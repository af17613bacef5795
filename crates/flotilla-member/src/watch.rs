//! Watches of a member's nodes and pods that feed a [`Tracker`]: the informers of Karmada's
//! cluster status controller, but keeping only what the summaries need (a node's allocatable
//! and readiness, a pod's node, phase and effective requests), decoded into slim views so that
//! a 5,000-node member costs kilobytes per node less than full objects would.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_runtime::Shutdown;
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::PodSpec;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::runtime::{WatchStreamExt as _, watcher};
use serde::Deserialize;
use tokio::sync::watch;

use crate::lifted::requests::pod_requests;
use crate::summary::{NodeFacts, PodFacts, Tracker};

macro_rules! view {
    ($ty:ident, $kind:literal, $plural:literal, $scope:ident) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = "v1";
            const GROUP: &'static str = "";
            const KIND: &'static str = $kind;
            const VERSION: &'static str = "v1";
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::$scope;
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = ObjectMeta;
            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// Only the identity of an object: labels, annotations and managed fields (large on GPU
/// nodes) are skipped while decoding.
fn slim_meta<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Slim {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        namespace: Option<String>,
        #[serde(default)]
        resource_version: Option<String>,
        #[serde(default)]
        uid: Option<String>,
    }
    let slim = Slim::deserialize(deserializer)?;
    Ok(ObjectMeta {
        name: slim.name,
        namespace: slim.namespace,
        resource_version: slim.resource_version,
        uid: slim.uid,
        ..ObjectMeta::default()
    })
}

/// The parts of a Node the summaries read.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeView {
    #[serde(default, deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub status: Option<NodeStatusView>,
}
view!(NodeView, "Node", "nodes", ClusterResourceScope);

#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeStatusView {
    #[serde(default)]
    pub allocatable: Option<BTreeMap<String, K8sQuantity>>,
    #[serde(default)]
    pub conditions: Option<Vec<ConditionView>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ConditionView {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub status: String,
}

/// The parts of a Pod the summaries read.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodView {
    #[serde(default, deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<PodSpec>,
    #[serde(default)]
    pub status: Option<PodStatusView>,
}
view!(PodView, "Pod", "pods", NamespaceResourceScope);

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodStatusView {
    #[serde(default)]
    pub phase: Option<String>,
}

impl NodeView {
    pub fn facts(&self) -> NodeFacts {
        let status = self.status.as_ref();
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        let allocatable = status
            .and_then(|s| s.allocatable.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|(name, q)| {
                flotilla_api::Quantity::parse(&q.0)
                    .ok()
                    .map(|q| (name.clone(), q))
            })
            .collect();
        NodeFacts { ready, allocatable }
    }
}

impl PodView {
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or_default(),
            self.metadata.name.as_deref().unwrap_or_default()
        )
    }

    pub fn facts(&self) -> PodFacts {
        let phase = self.status.as_ref().and_then(|s| s.phase.as_deref());
        PodFacts {
            node_name: self
                .spec
                .as_ref()
                .and_then(|s| s.node_name.clone())
                .unwrap_or_default(),
            terminal: matches!(phase, Some("Succeeded") | Some("Failed")),
            requests: self.spec.as_ref().map(pod_requests).unwrap_or_default(),
        }
    }
}

/// Running watches of one member's nodes and pods. Dropping it stops them.
#[derive(Debug)]
pub struct MemberWatch {
    tracker: Arc<parking_lot::Mutex<Tracker>>,
    nodes_synced: watch::Receiver<bool>,
    pods_synced: watch::Receiver<bool>,
    stop: Shutdown,
}

impl Drop for MemberWatch {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl MemberWatch {
    /// Starts watching `client`'s nodes and pods; the watches stop with `shutdown` or when the
    /// returned value is dropped.
    pub fn start(client: kube::Client, shutdown: &Shutdown) -> Self {
        let stop = shutdown.child();
        let tracker = Arc::new(parking_lot::Mutex::new(Tracker::new()));
        let (nodes_tx, nodes_synced) = watch::channel(false);
        let (pods_tx, pods_synced) = watch::channel(false);
        spawn_watch(
            Api::<NodeView>::all(client.clone()),
            tracker.clone(),
            nodes_tx,
            stop.clone(),
            |t: &mut Tracker, n: &NodeView| {
                t.upsert_node(n.metadata.name.as_deref().unwrap_or_default(), n.facts())
            },
            |t: &mut Tracker, n: &NodeView| {
                t.remove_node(n.metadata.name.as_deref().unwrap_or_default())
            },
            |t: &mut Tracker, listed: Tracker| t.take_nodes(listed),
        );
        spawn_watch(
            Api::<PodView>::all(client),
            tracker.clone(),
            pods_tx,
            stop.clone(),
            |t: &mut Tracker, p: &PodView| t.upsert_pod(&p.key(), p.facts()),
            |t: &mut Tracker, p: &PodView| t.remove_pod(&p.key()),
            |t: &mut Tracker, listed: Tracker| t.take_pods(listed),
        );
        MemberWatch {
            tracker,
            nodes_synced,
            pods_synced,
            stop,
        }
    }

    /// Whether both watches have completed their first list.
    pub fn synced(&self) -> bool {
        *self.nodes_synced.borrow() && *self.pods_synced.borrow()
    }

    /// Waits (at most `timeout`) until both watches have completed their first list.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        self.waiter().wait(timeout).await
    }

    /// Something to wait on for the first lists without borrowing the watch.
    pub fn waiter(&self) -> SyncWaiter {
        SyncWaiter {
            nodes: self.nodes_synced.clone(),
            pods: self.pods_synced.clone(),
        }
    }

    /// The facts and totals the watches maintain.
    pub fn tracker(&self) -> &Arc<parking_lot::Mutex<Tracker>> {
        &self.tracker
    }
}

/// Waits for a [`MemberWatch`]'s first lists.
#[derive(Debug)]
pub struct SyncWaiter {
    nodes: watch::Receiver<bool>,
    pods: watch::Receiver<bool>,
}

impl SyncWaiter {
    /// `true` once both watches have listed, `false` after `timeout` or when they stopped.
    pub async fn wait(mut self, timeout: Duration) -> bool {
        let both = async {
            let a = self.nodes.wait_for(|s| *s).await.is_ok();
            let b = self.pods.wait_for(|s| *s).await.is_ok();
            a && b
        };
        tokio::time::timeout(timeout, both).await.unwrap_or(false)
    }
}

fn spawn_watch<K>(
    api: Api<K>,
    tracker: Arc<parking_lot::Mutex<Tracker>>,
    synced: watch::Sender<bool>,
    stop: Shutdown,
    apply: fn(&mut Tracker, &K),
    delete: fn(&mut Tracker, &K),
    replace: fn(&mut Tracker, Tracker),
) where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    tokio::spawn(async move {
        // One unpaginated list, as client-go's informers get it from kube-apiserver's watch
        // cache: a 5,000-node member answers in one streamed response instead of ten
        // round trips of 500 (the largest part of a new member's registration time).
        let config = watcher::Config {
            page_size: None,
            ..watcher::Config::default()
        };
        let mut stream = watcher(api, config).default_backoff().boxed();
        // A relist is gathered as facts (not objects) and swapped in when complete.
        let mut listed = Tracker::new();
        loop {
            let event = tokio::select! {
                _ = stop.cancelled() => return,
                event = stream.next() => event,
            };
            match event {
                None => return,
                Some(Err(error)) => {
                    tracing::debug!(%error, kind = K::kind(&()).as_ref(), "member watch failed; retrying");
                }
                Some(Ok(watcher::Event::Init)) => listed = Tracker::new(),
                Some(Ok(watcher::Event::InitApply(object))) => apply(&mut listed, &object),
                Some(Ok(watcher::Event::InitDone)) => {
                    replace(&mut tracker.lock(), std::mem::take(&mut listed));
                    synced.send_replace(true);
                }
                Some(Ok(watcher::Event::Apply(object))) => apply(&mut tracker.lock(), &object),
                Some(Ok(watcher::Event::Delete(object))) => delete(&mut tracker.lock(), &object),
            }
        }
    });
}
