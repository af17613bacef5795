//! The accurate estimator inside the control plane (Karmada's `--enable-scheduler-estimator`,
//! without a separate estimator deployment per member): the run loop watches the nodes and pods
//! of every reachable `Push` member and keeps a [`NodeIndex`] per member, rebuilt from the
//! watch caches when something changed and the last build is older than
//! [`REBUILD_INTERVAL`] (so a busy member costs at most one rebuild per interval, however many
//! bindings are scheduled).
//!
//! The scheduler reaches members through a [`MemberConnector`] the embedding process supplies
//! (`flotilla up` adapts flotilla-member's clients built from each Cluster's Secret), so this
//! crate needs nothing but a `kube::Client` per member.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use flotilla_api::karmada::Cluster;
use flotilla_runtime::Shutdown;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use k8s_openapi::api::core::v1::{Node, Pod, ResourceQuota};
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use parking_lot::Mutex;
use tracing::{debug, warn};

use crate::estimator::{AccurateEstimator, NodeIndex};

/// Oldest a member's node index may be while its nodes or pods keep changing.
pub const REBUILD_INTERVAL: Duration = Duration::from_secs(1);

/// How the scheduler gets a client for a member cluster.
pub trait MemberConnector: Send + Sync + fmt::Debug {
    /// A client of the member `cluster`, or why there is none (the message is logged; it must
    /// not contain credentials).
    fn connect(&self, cluster: &str) -> BoxFuture<'static, Result<kube::Client, String>>;
}

struct Member {
    nodes: Store<Node>,
    pods: Store<Pod>,
    /// The member's ResourceQuotas (the estimator's quota rule, [`crate::estimator::quota`]).
    quotas: Store<ResourceQuota>,
    /// Bumped on every node or pod event.
    version: Arc<AtomicU64>,
    /// Bumped on every ResourceQuota event: a quota change rebuilds the index at once (quotas
    /// change rarely, and a stale one would let a workload past a new quota).
    quota_version: Arc<AtomicU64>,
    built: Mutex<Option<Built>>,
    scope: Shutdown,
}

struct Built {
    version: u64,
    quota_version: u64,
    at: Instant,
    index: Arc<NodeIndex>,
}

/// Per-member node and pod watches and the indexes built from them.
pub struct MemberNodes {
    connector: Arc<dyn MemberConnector>,
    members: Mutex<HashMap<String, Arc<Member>>>,
    /// Where the estimators it builds count their estimates.
    metrics: Option<flotilla_runtime::EstimatorMetrics>,
}

impl fmt::Debug for MemberNodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<String> = self.members.lock().keys().cloned().collect();
        names.sort();
        f.debug_struct("MemberNodes")
            .field("members", &names)
            .finish_non_exhaustive()
    }
}

/// Keeps what the estimator needs and drops the rest (managed fields, images, conditions of
/// pods, …): a 5,000-node member then costs a few MiB.
fn slim_node(node: &mut Node) {
    node.metadata.managed_fields = None;
    if let Some(status) = node.status.as_mut() {
        status.images = None;
        status.conditions = None;
        status.node_info = None;
        status.addresses = None;
        status.volumes_attached = None;
        status.volumes_in_use = None;
    }
}

fn slim_pod(pod: &mut Pod) {
    pod.metadata.managed_fields = None;
    pod.metadata.annotations = None;
    pod.metadata.labels = None;
    if let Some(status) = pod.status.as_mut() {
        let phase = status.phase.take();
        *status = Default::default();
        status.phase = phase;
    }
    if let Some(spec) = pod.spec.as_mut() {
        spec.volumes = None;
        for container in spec
            .containers
            .iter_mut()
            .chain(spec.init_containers.iter_mut().flatten())
        {
            container.env = None;
            container.env_from = None;
            container.volume_mounts = None;
            container.args = None;
            container.command = None;
            container.liveness_probe = None;
            container.readiness_probe = None;
            container.startup_probe = None;
        }
    }
}

impl MemberNodes {
    pub fn new(connector: Arc<dyn MemberConnector>) -> Arc<Self> {
        Self::with_metrics(connector, None)
    }

    /// [`MemberNodes::new`] whose estimators count each member's estimate in `metrics`.
    pub fn with_metrics(
        connector: Arc<dyn MemberConnector>,
        metrics: Option<flotilla_runtime::EstimatorMetrics>,
    ) -> Arc<Self> {
        Arc::new(Self {
            connector,
            members: Mutex::new(HashMap::new()),
            metrics,
        })
    }

    /// Starts watching members that appeared and stops those that left or are not `Push`
    /// (Karmada reaches Pull members only through an estimator deployed in them).
    pub fn sync(self: &Arc<Self>, clusters: &[Cluster], shutdown: &Shutdown) {
        let wanted: BTreeMap<&str, &Cluster> = clusters
            .iter()
            .filter(|c| c.spec.sync_mode == "Push" && !c.is_deleting())
            .map(|c| (c.name(), c))
            .collect();
        let mut members = self.members.lock();
        members.retain(|name, member| {
            let keep = wanted.contains_key(name.as_str());
            if !keep {
                debug!(cluster = %name, "stopping the estimator's member watches");
                member.scope.cancel();
            }
            keep
        });
        for name in wanted.keys() {
            if members.contains_key(*name) {
                continue;
            }
            let (nodes, node_writer) = reflector::store();
            let (pods, pod_writer) = reflector::store();
            let (quotas, quota_writer) = reflector::store();
            let member = Arc::new(Member {
                nodes,
                pods,
                quotas,
                version: Arc::new(AtomicU64::new(0)),
                quota_version: Arc::new(AtomicU64::new(0)),
                built: Mutex::new(None),
                scope: shutdown.child(),
            });
            members.insert((*name).to_owned(), member.clone());
            tokio::spawn(watch_member(
                self.connector.clone(),
                (*name).to_owned(),
                member,
                node_writer,
                pod_writer,
                quota_writer,
            ));
        }
    }

    /// An accurate estimator over every member whose watches have listed; members still
    /// listing (or unreachable) are left out, so the general estimator alone answers for them.
    pub fn estimator(&self) -> AccurateEstimator {
        let members: Vec<(String, Arc<Member>)> = self
            .members
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut estimator = AccurateEstimator::default();
        if let Some(metrics) = &self.metrics {
            estimator = estimator.with_metrics(metrics.clone());
        }
        for (name, member) in members {
            if let Some(index) = member.index(&name) {
                estimator.insert_shared(name, index);
            }
        }
        estimator
    }
}

impl Member {
    fn index(&self, cluster: &str) -> Option<Arc<NodeIndex>> {
        let version = self.version.load(Ordering::Acquire);
        if version == 0 {
            return None; // not listed yet
        }
        let quota_version = self.quota_version.load(Ordering::Acquire);
        let mut built = self.built.lock();
        if let Some(b) = built.as_mut()
            && (b.version == version || b.at.elapsed() < REBUILD_INTERVAL)
        {
            if b.quota_version != quota_version {
                // Quotas changed: the same nodes with the new quotas, at once (a stale quota
                // would let a workload past it), without indexing the nodes again.
                let quotas: Vec<ResourceQuota> =
                    self.quotas.state().iter().map(|q| (**q).clone()).collect();
                b.index = Arc::new((*b.index).clone().with_quotas(&quotas));
                b.quota_version = quota_version;
            }
            return Some(b.index.clone());
        }
        let nodes: Vec<Node> = self.nodes.state().iter().map(|n| (**n).clone()).collect();
        let pods: Vec<Pod> = self.pods.state().iter().map(|p| (**p).clone()).collect();
        let quotas: Vec<ResourceQuota> =
            self.quotas.state().iter().map(|q| (**q).clone()).collect();
        match NodeIndex::new(&nodes, &pods).map(|index| index.with_quotas(&quotas)) {
            Ok(index) => {
                let index = Arc::new(index);
                *built = Some(Built {
                    version,
                    quota_version,
                    at: Instant::now(),
                    index: index.clone(),
                });
                Some(index)
            }
            Err(error) => {
                warn!(%cluster, %error, "cannot index the member's nodes; using the general estimator");
                None
            }
        }
    }
}

async fn watch_member(
    connector: Arc<dyn MemberConnector>,
    cluster: String,
    member: Arc<Member>,
    node_writer: reflector::store::Writer<Node>,
    pod_writer: reflector::store::Writer<Pod>,
    quota_writer: reflector::store::Writer<ResourceQuota>,
) {
    let client = loop {
        match connector.connect(&cluster).await {
            Ok(client) => break client,
            Err(error) => {
                debug!(%cluster, %error, "the estimator cannot reach the member yet");
                tokio::select! {
                    _ = member.scope.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                }
            }
        }
    };
    // Pods that hold resources: bound, not finished.
    let pod_config = watcher::Config::default()
        .fields("spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed");
    let nodes = reflector::reflector(
        node_writer,
        watcher::watcher(Api::<Node>::all(client.clone()), watcher::Config::default())
            .default_backoff()
            .modify(slim_node),
    );
    let pods = reflector::reflector(
        pod_writer,
        watcher::watcher(Api::<Pod>::all(client.clone()), pod_config)
            .default_backoff()
            .modify(slim_pod),
    );
    let quotas = reflector::reflector(
        quota_writer,
        watcher::watcher(
            Api::<ResourceQuota>::all(client),
            watcher::Config::default(),
        )
        .default_backoff()
        .modify(|quota| quota.metadata.managed_fields = None),
    );
    let nodes_listed = Arc::new(AtomicBool::new(false));
    let pods_listed = Arc::new(AtomicBool::new(false));
    let drive = |mut stream: BoxStream<'static, Result<Kind, watcher::Error>>,
                 listed: Arc<AtomicBool>,
                 other: Arc<AtomicBool>| {
        let member = member.clone();
        let cluster = cluster.clone();
        async move {
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Kind::Listed) => {
                        listed.store(true, Ordering::Release);
                        if other.load(Ordering::Acquire) {
                            member.version.fetch_add(1, Ordering::AcqRel);
                        }
                    }
                    Ok(Kind::Listing) => {}
                    Ok(Kind::Changed) => {
                        if listed.load(Ordering::Acquire) && other.load(Ordering::Acquire) {
                            member.version.fetch_add(1, Ordering::AcqRel);
                        }
                    }
                    Err(error) => debug!(%cluster, %error, "estimator watch"),
                }
            }
        }
    };
    let node_task = drive(
        nodes.map(|e| e.map(|e| kind(&e))).boxed(),
        nodes_listed.clone(),
        pods_listed.clone(),
    );
    let pod_task = drive(
        pods.map(|e| e.map(|e| kind(&e))).boxed(),
        pods_listed,
        nodes_listed,
    );
    // A quota change rebuilds the index at its next use.
    let quota_task = {
        let member = member.clone();
        let cluster = cluster.clone();
        let mut stream = quotas.map(|e| e.map(|e| kind(&e))).boxed();
        async move {
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Kind::Listed | Kind::Changed) => {
                        member.quota_version.fetch_add(1, Ordering::AcqRel);
                    }
                    Ok(Kind::Listing) => {}
                    Err(error) => debug!(%cluster, %error, "estimator quota watch"),
                }
            }
        }
    };
    tokio::select! {
        _ = member.scope.cancelled() => {}
        _ = futures::future::join3(node_task, pod_task, quota_task) => {}
    }
}

/// What a watch event means for the index, whatever the kind of object.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Listing,
    Listed,
    Changed,
}

fn kind<K>(event: &watcher::Event<K>) -> Kind {
    match event {
        watcher::Event::Init | watcher::Event::InitApply(_) => Kind::Listing,
        watcher::Event::InitDone => Kind::Listed,
        watcher::Event::Apply(_) | watcher::Event::Delete(_) => Kind::Changed,
    }
}
