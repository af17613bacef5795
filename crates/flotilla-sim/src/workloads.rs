//! Workload controllers with real status: Deployment → ReplicaSet → Pods, StatefulSet,
//! DaemonSet, CronJob → Job → Pods. They share the cluster's informers; changes to children enqueue their
//! controller owner (by ownerReference), one coalescing queue per controller. Creations and
//! deletions are remembered until the watch shows them ("expectations", as in
//! kube-controller-manager), so a lagging cache never causes double creation.

pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod job;
pub mod replicaset;
pub mod statefulset;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::node::Node;
use crate::pod::{Pod, WirePod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use kube::api::{Api, DeleteParams};
use parking_lot::Mutex;

use crate::cluster::{AbortOnDrop, Ctx, Stores};
use crate::informer::{Change, Informer};
use crate::queue::Queue;
use crate::scheduler::{PodKey, key_of};

/// Namespace and name of an object.
pub type Key = PodKey;

/// The workload informers (nodes and pods come from the cluster).
#[derive(Debug)]
pub struct Informers {
    pub deployments: Informer<Deployment>,
    pub replicasets: Informer<ReplicaSet>,
    pub statefulsets: Informer<StatefulSet>,
    pub daemonsets: Informer<DaemonSet>,
    pub jobs: Informer<Job>,
    pub cronjobs: Informer<CronJob>,
}

impl Informers {
    pub fn new(client: &kube::Client) -> Self {
        Informers {
            deployments: Informer::new(Api::all(client.clone())),
            replicasets: Informer::new(Api::all(client.clone())),
            statefulsets: Informer::new(Api::all(client.clone())),
            daemonsets: Informer::new(Api::all(client.clone())),
            jobs: Informer::new(Api::all(client.clone())),
            cronjobs: Informer::new(Api::all(client.clone())),
        }
    }

    pub fn start(
        self,
        nodes: crate::informer::Cache<Node>,
        pods: crate::informer::Cache<Pod>,
    ) -> (Stores, Vec<AbortOnDrop>) {
        let (deployments, a) = self.deployments.start();
        let (replicasets, b) = self.replicasets.start();
        let (statefulsets, c) = self.statefulsets.start();
        let (daemonsets, d) = self.daemonsets.start();
        let (jobs, e) = self.jobs.start();
        let (cronjobs, f) = self.cronjobs.start();
        (
            Stores {
                nodes,
                pods,
                deployments,
                replicasets,
                statefulsets,
                daemonsets,
                jobs,
                cronjobs,
            },
            [a, b, c, d, e, f].into_iter().map(AbortOnDrop).collect(),
        )
    }
}

/// Children by the uid of their controller owner.
#[derive(Debug, Default)]
pub struct OwnerIndex {
    children: Mutex<HashMap<String, BTreeSet<Key>>>,
}

impl OwnerIndex {
    fn update(&self, owner_uid: Option<&str>, key: Key, deleted: bool) {
        let Some(uid) = owner_uid else {
            return;
        };
        let mut children = self.children.lock();
        if deleted {
            if let Some(set) = children.get_mut(uid) {
                set.remove(&key);
                if set.is_empty() {
                    children.remove(uid);
                }
            }
        } else {
            children.entry(uid.to_owned()).or_default().insert(key);
        }
    }

    pub fn of(&self, owner_uid: &str) -> Vec<Key> {
        self.children
            .lock()
            .get(owner_uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// How long an expectation may wait for its watch event: a relist can skip events, and a
/// controller must not stall on them forever (kube-controller-manager uses 5 minutes).
pub const EXPECTATION_TTL: Duration = Duration::from_secs(60);

/// Names awaiting creation and deletion, and when the last expectation was set.
#[derive(Debug)]
struct Pending {
    adds: HashSet<String>,
    dels: HashSet<String>,
    since: tokio::time::Instant,
}

/// Creations and deletions not yet seen through the watch, per owner uid.
#[derive(Debug, Default)]
pub struct Expectations {
    pending: Mutex<HashMap<String, Pending>>,
}

impl Expectations {
    fn entry<R>(&self, owner: &str, f: impl FnOnce(&mut Pending) -> R) -> R {
        let mut pending = self.pending.lock();
        let entry = pending.entry(owner.to_owned()).or_insert_with(|| Pending {
            adds: HashSet::new(),
            dels: HashSet::new(),
            since: tokio::time::Instant::now(),
        });
        entry.since = tokio::time::Instant::now();
        f(entry)
    }

    pub fn expect_create(&self, owner: &str, name: &str) {
        self.entry(owner, |p| p.adds.insert(name.to_owned()));
    }

    pub fn expect_delete(&self, owner: &str, name: &str) {
        self.entry(owner, |p| p.dels.insert(name.to_owned()));
    }

    fn observe(&self, owner: &str, name: &str, deleted: bool) {
        let mut pending = self.pending.lock();
        if let Some(p) = pending.get_mut(owner) {
            p.adds.remove(name);
            if deleted {
                p.dels.remove(name);
            }
            if p.adds.is_empty() && p.dels.is_empty() {
                pending.remove(owner);
            }
        }
    }

    /// A failed write will never be observed.
    pub fn forget(&self, owner: &str, name: &str) {
        self.observe(owner, name, true);
    }

    /// A relist: the cache is the truth again.
    pub fn clear(&self) {
        self.pending.lock().clear();
    }

    /// Nothing outstanding (or only expectations older than [`EXPECTATION_TTL`]).
    pub fn satisfied(&self, owner: &str) -> bool {
        let mut pending = self.pending.lock();
        match pending.get(owner) {
            None => true,
            Some(p) if p.since.elapsed() > EXPECTATION_TTL => {
                pending.remove(owner);
                true
            }
            Some(_) => false,
        }
    }
}

/// Metadata with ownerReferences: `ObjectMeta`, and a cached pod's [`crate::pod::Meta`].
pub trait Owned {
    fn owners(&self) -> &[OwnerReference];
}

impl Owned for ObjectMeta {
    fn owners(&self) -> &[OwnerReference] {
        self.owner_references.as_deref().unwrap_or_default()
    }
}

impl Owned for crate::pod::Meta {
    fn owners(&self) -> &[OwnerReference] {
        self.owner_references().unwrap_or_default()
    }
}

/// The controller ownerReference of an object.
pub fn controller_of(meta: &impl Owned) -> Option<&OwnerReference> {
    meta.owners().iter().find(|o| o.controller == Some(true))
}

/// A controller ownerReference pointing at `owner`.
pub fn owner_reference<K: Resource<DynamicType = ()>>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.meta().name.clone().unwrap_or_default(),
        uid: owner.meta().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Ready for at least `min_ready_seconds`; else, when it will be.
pub fn availability(pod: &Pod, min_ready_seconds: i32) -> Result<(), Option<Duration>> {
    if !is_ready(pod) {
        return Err(None);
    }
    if min_ready_seconds <= 0 {
        return Ok(());
    }
    let since = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0);
    let Some(since) = since else {
        return Ok(());
    };
    let ready_for = jiff::Timestamp::now().duration_since(since);
    let needed = jiff::SignedDuration::from_secs(i64::from(min_ready_seconds));
    if ready_for >= needed {
        Ok(())
    } else {
        Err(Some(
            Duration::try_from(needed - ready_for).unwrap_or(Duration::from_secs(1)),
        ))
    }
}

/// Active: not finished and not being deleted.
pub fn is_active(pod: &Pod) -> bool {
    !crate::scheduler::is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// Creates a pod from a template with extra labels/annotations and a controller owner.
#[allow(clippy::too_many_arguments)]
pub async fn create_pod(
    ctx: &Ctx,
    namespace: &str,
    name: &str,
    template: &PodTemplateSpec,
    labels: &[(&str, String)],
    annotations: &[(&str, String)],
    owner: OwnerReference,
    adjust: impl FnOnce(&mut k8s_openapi::api::core::v1::Pod),
) -> Result<(), kube::Error> {
    let mut metadata = template.metadata.clone().unwrap_or_default();
    metadata.name = Some(name.to_owned());
    metadata.namespace = Some(namespace.to_owned());
    metadata.generate_name = None;
    let l = metadata.labels.get_or_insert_with(Default::default);
    for (k, v) in labels {
        l.insert((*k).to_owned(), v.clone());
    }
    if !annotations.is_empty() {
        let a = metadata.annotations.get_or_insert_with(Default::default);
        for (k, v) in annotations {
            a.insert((*k).to_owned(), v.clone());
        }
    }
    metadata.owner_references = Some(vec![owner]);
    let mut pod = k8s_openapi::api::core::v1::Pod {
        metadata,
        spec: template.spec.clone(),
        status: None,
    };
    adjust(&mut pod);
    crate::writes::create(ctx, Some(namespace), &pod).await
}

pub async fn delete_pod(ctx: &Ctx, namespace: &str, name: &str) -> Result<(), kube::Error> {
    let api: Api<WirePod> = Api::namespaced(ctx.client.clone(), namespace);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Every workload controller of one cluster.
#[derive(Debug)]
pub struct Workloads {
    pub deployments: Arc<Queue<Key>>,
    pub replicasets: Arc<Queue<Key>>,
    pub statefulsets: Arc<Queue<Key>>,
    pub daemonsets: Arc<Queue<Key>>,
    pub jobs: Arc<Queue<Key>>,
    pub cronjobs: Arc<Queue<Key>>,
    pub pods_by_owner: Arc<OwnerIndex>,
    pub rs_by_owner: Arc<OwnerIndex>,
    /// Jobs by the uid of their controller (a CronJob's).
    pub jobs_by_owner: Arc<OwnerIndex>,
    pub expectations: Arc<Expectations>,
    /// Jobs (by uid) the Job controller failed whose Failed status the cache may not show yet.
    pub failed_jobs: Mutex<HashSet<String>>,
    daemonset_keys: Arc<Mutex<BTreeSet<Key>>>,
    name_rngs: Mutex<HashMap<String, crate::rng::Rng>>,
}

fn key_of_meta(meta: &ObjectMeta) -> Key {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

impl Workloads {
    pub fn new() -> Arc<Self> {
        Arc::new(Workloads {
            deployments: Queue::new(),
            replicasets: Queue::new(),
            statefulsets: Queue::new(),
            daemonsets: Queue::new(),
            jobs: Queue::new(),
            cronjobs: Queue::new(),
            pods_by_owner: Arc::new(OwnerIndex::default()),
            rs_by_owner: Arc::new(OwnerIndex::default()),
            jobs_by_owner: Arc::new(OwnerIndex::default()),
            expectations: Arc::new(Expectations::default()),
            failed_jobs: Mutex::new(HashSet::new()),
            daemonset_keys: Arc::new(Mutex::new(BTreeSet::new())),
            name_rngs: Mutex::new(HashMap::new()),
        })
    }

    fn queue_for(&self, kind: &str) -> Option<&Arc<Queue<Key>>> {
        match kind {
            "ReplicaSet" => Some(&self.replicasets),
            "StatefulSet" => Some(&self.statefulsets),
            "DaemonSet" => Some(&self.daemonsets),
            "Job" => Some(&self.jobs),
            "Deployment" => Some(&self.deployments),
            _ => None,
        }
    }

    pub fn watch(
        self: &Arc<Self>,
        informers: &mut Informers,
        nodes: &mut Informer<Node>,
        pods: &mut Informer<Pod>,
    ) {
        let this = self.clone();
        pods.on(move |change| {
            let (pod, deleted) = match change {
                Change::Applied(p) => (p, false),
                Change::Deleted(p) => (p, true),
                Change::Synced => {
                    this.expectations.clear();
                    return;
                }
            };
            let Some(owner) = controller_of(&pod.metadata) else {
                return;
            };
            let name = pod.metadata.name.as_deref().unwrap_or("");
            this.expectations.observe(&owner.uid, name, deleted);
            this.pods_by_owner
                .update(Some(&owner.uid), key_of(pod), deleted);
            if let Some(queue) = this.queue_for(&owner.kind) {
                queue.add((
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    owner.name.clone(),
                ));
            }
        });
        let this = self.clone();
        informers.replicasets.on(move |change| {
            let (rs, deleted) = match change {
                Change::Applied(r) => (r, false),
                Change::Deleted(r) => (r, true),
                Change::Synced => return,
            };
            let key = key_of_meta(&rs.metadata);
            this.replicasets.add(key.clone());
            if let Some(owner) = controller_of(&rs.metadata) {
                let name = rs.metadata.name.as_deref().unwrap_or("");
                this.expectations.observe(&owner.uid, name, deleted);
                this.rs_by_owner
                    .update(Some(&owner.uid), key.clone(), deleted);
                if owner.kind == "Deployment" {
                    this.deployments.add((key.0, owner.name.clone()));
                }
            }
        });
        let enqueue =
            |queue: Arc<Queue<Key>>| move |meta: &ObjectMeta| queue.add(key_of_meta(meta));
        let add = enqueue(self.deployments.clone());
        informers.deployments.on(move |c| match c {
            Change::Applied(o) | Change::Deleted(o) => add(&o.metadata),
            Change::Synced => {}
        });
        let add = enqueue(self.statefulsets.clone());
        informers.statefulsets.on(move |c| match c {
            Change::Applied(o) | Change::Deleted(o) => add(&o.metadata),
            Change::Synced => {}
        });
        let add = enqueue(self.jobs.clone());
        let (owners, index) = (self.cronjobs.clone(), self.jobs_by_owner.clone());
        informers.jobs.on(move |c| match c {
            Change::Applied(o) | Change::Deleted(o) => {
                add(&o.metadata);
                // A CronJob's Job changed: its CronJob counts its active Jobs again.
                if let Some(owner) = controller_of(&o.metadata).filter(|o| o.kind == "CronJob") {
                    let deleted = matches!(c, Change::Deleted(_));
                    index.update(Some(&owner.uid), key_of_meta(&o.metadata), deleted);
                    owners.add((
                        o.metadata.namespace.clone().unwrap_or_default(),
                        owner.name.clone(),
                    ));
                }
            }
            Change::Synced => {}
        });
        let add = enqueue(self.cronjobs.clone());
        informers.cronjobs.on(move |c| match c {
            Change::Applied(o) | Change::Deleted(o) => add(&o.metadata),
            Change::Synced => {}
        });
        let this = self.clone();
        informers.daemonsets.on(move |c| match c {
            Change::Applied(o) => {
                let key = key_of_meta(&o.metadata);
                this.daemonset_keys.lock().insert(key.clone());
                this.daemonsets.add(key);
            }
            Change::Deleted(o) => {
                this.daemonset_keys.lock().remove(&key_of_meta(&o.metadata));
            }
            Change::Synced => {}
        });
        let this = self.clone();
        nodes.on(move |c| {
            if matches!(c, Change::Applied(_) | Change::Deleted(_)) {
                for key in this.daemonset_keys.lock().iter() {
                    this.daemonsets.add(key.clone());
                }
            }
        });
    }

    /// Starts one worker per controller.
    pub fn run(self: &Arc<Self>, ctx: Arc<Ctx>, stores: Stores) -> Vec<AbortOnDrop> {
        let mut tasks = Vec::new();
        let spawn = |f: futures::future::BoxFuture<'static, ()>| AbortOnDrop(tokio::spawn(f));
        tasks.push(spawn(Box::pin(replicaset::run(
            self.clone(),
            ctx.clone(),
            stores.clone(),
        ))));
        tasks.push(spawn(Box::pin(deployment::run(
            self.clone(),
            ctx.clone(),
            stores.clone(),
        ))));
        tasks.push(spawn(Box::pin(statefulset::run(
            self.clone(),
            ctx.clone(),
            stores.clone(),
        ))));
        tasks.push(spawn(Box::pin(daemonset::run(
            self.clone(),
            ctx.clone(),
            stores.clone(),
        ))));
        tasks.push(spawn(Box::pin(job::run(
            self.clone(),
            ctx.clone(),
            stores.clone(),
        ))));
        tasks.push(spawn(Box::pin(cronjob::run(self.clone(), ctx, stores))));
        tasks
    }

    /// Pods controlled by `owner_uid`, from the cache.
    pub fn owned_pods(&self, stores: &Stores, owner_uid: &str) -> Vec<Arc<Pod>> {
        self.pods_by_owner
            .of(owner_uid)
            .into_iter()
            .filter_map(|(ns, name)| stores.pods.get(&ns, &name))
            .filter(|p| controller_of(&p.metadata).is_some_and(|o| o.uid == owner_uid))
            .collect()
    }

    /// A generated child name `<prefix>-<5 chars>`, reproducible from the seed: each owner
    /// (by kind, namespace and name) draws from its own seeded stream.
    pub fn child_name(&self, seed: u64, scope: &str, prefix: &str) -> String {
        let mut rngs = self.name_rngs.lock();
        let rng = rngs
            .entry(scope.to_owned())
            .or_insert_with(|| crate::rng::Rng::derived(seed, scope));
        format!("{prefix}-{}", rng.name_suffix(5))
    }

    /// Requeues `key` on `queue` after `delay` (minReadySeconds, deadlines).
    pub fn requeue_after(queue: &Arc<Queue<Key>>, key: Key, delay: Duration) {
        let queue = queue.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            queue.add(key);
        });
    }
}
