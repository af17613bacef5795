//! The simulated kube-scheduler: watches nodes and pods, keeps a [`NodeIndex`], decides in
//! memory and binds concurrently (assume first, as kube-scheduler does, so the next decision
//! already sees the pod). Pods that fit nowhere get `PodScheduled=False` (reason
//! `Unschedulable`, kube's message) and a `FailedScheduling` event, and are retried when the
//! cluster changes (a node added or changed, a pod gone), at most once a second.

pub mod index;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::informer::Cache;
use crate::node::Node;
use crate::pod::{Pod, WirePod};
use kube::api::{Api, Patch, PatchParams};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::cluster::Ctx;
use crate::events;
use crate::informer::{Change, Informer};
use crate::lifted::fit_error::{self, REASON_UNSCHEDULABLE};
use crate::queue::Queue;
pub use index::NodeIndex;

/// The scheduler name pods must carry (or leave empty) to be scheduled here.
pub const SCHEDULER_NAME: &str = "default-scheduler";
/// Binds in flight at once.
const BIND_CONCURRENCY: usize = 64;

/// Pod key: namespace and name.
pub type PodKey = (String, String);

/// Shared state of one cluster's scheduler.
#[derive(Debug)]
pub struct Scheduler {
    index: Mutex<NodeIndex>,
    queue: Arc<Queue<PodKey>>,
    unschedulable: Mutex<HashSet<PodKey>>,
    changed: AtomicBool,
    /// Pods bound so far (for the bench).
    pub bound: AtomicU64,
}

pub fn key_of(pod: &Pod) -> PodKey {
    (
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone().unwrap_or_default(),
    )
}

/// Whether the pod is finished (its resources are free again).
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn wants_us(pod: &Pod) -> bool {
    let spec = pod.spec.as_ref();
    spec.and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
        .is_empty()
        && spec
            .and_then(|s| s.scheduler_name.as_deref())
            .is_none_or(|n| n.is_empty() || n == SCHEDULER_NAME)
        && pod.metadata.deletion_timestamp.is_none()
        && !is_terminal(pod)
}

impl Scheduler {
    pub fn new(seed: u64) -> Arc<Self> {
        Arc::new(Scheduler {
            index: Mutex::new(NodeIndex::new(seed)),
            queue: Queue::new(),
            unschedulable: Mutex::new(HashSet::new()),
            changed: AtomicBool::new(false),
            bound: AtomicU64::new(0),
        })
    }

    /// Registers the scheduler's handlers on the cluster's informers.
    pub fn watch(self: &Arc<Self>, nodes: &mut Informer<Node>, pods: &mut Informer<Pod>) {
        let this = self.clone();
        nodes.on(move |change| match change {
            Change::Applied(node) => {
                this.index.lock().upsert_node(node);
                this.changed.store(true, Ordering::Relaxed);
            }
            Change::Deleted(node) => {
                if let Some(name) = &node.metadata.name {
                    this.index.lock().remove_node(name);
                }
            }
            Change::Synced => this.changed.store(true, Ordering::Relaxed),
        });
        let this = self.clone();
        pods.on(move |change| match change {
            Change::Applied(pod) => {
                let uid = pod.metadata.uid.as_deref().unwrap_or("");
                let node = pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .unwrap_or("");
                if is_terminal(pod) {
                    if this.index.lock().release(uid) {
                        this.changed.store(true, Ordering::Relaxed);
                    }
                } else if !node.is_empty() {
                    let mut index = this.index.lock();
                    if !index.is_placed(uid) {
                        let request = index.request_of(pod);
                        index.place(uid, node, request);
                    }
                } else if wants_us(pod) && !this.index.lock().is_placed(uid) {
                    let key = key_of(pod);
                    if !this.unschedulable.lock().contains(&key) {
                        this.queue.add(key);
                    }
                }
            }
            Change::Deleted(pod) => {
                let uid = pod.metadata.uid.as_deref().unwrap_or("");
                this.unschedulable.lock().remove(&key_of(pod));
                if this.index.lock().release(uid) {
                    this.changed.store(true, Ordering::Relaxed);
                }
            }
            Change::Synced => {}
        });
    }

    /// Schedules until the task is dropped.
    pub async fn run(self: Arc<Self>, ctx: Arc<Ctx>, pods: Cache<Pod>) {
        let retry = tokio::spawn(self.clone().retry_loop());
        let _retry = AbortOnDrop(retry);
        let binds = Arc::new(Semaphore::new(BIND_CONCURRENCY));
        loop {
            let key = self.queue.pop().await;
            let Some(pod) = pods.get(&key.0, &key.1) else {
                continue;
            };
            if !wants_us(&pod) {
                continue;
            }
            let uid = pod.metadata.uid.clone().unwrap_or_default();
            let decision = {
                let mut index = self.index.lock();
                if index.is_placed(&uid) {
                    continue;
                }
                let request = index.request_of(&pod);
                let decision = index.schedule(&pod, &request);
                if let Ok(node) = &decision {
                    index.place(&uid, node, request);
                }
                decision.map_err(|failures| (failures, index.node_count()))
            };
            match decision {
                Ok(node) => {
                    self.unschedulable.lock().remove(&key);
                    let permit = binds
                        .clone()
                        .acquire_owned()
                        .await
                        .expect("the semaphore is never closed");
                    let this = self.clone();
                    let ctx = ctx.clone();
                    tokio::spawn(async move {
                        this.bind(&ctx, &pod, &uid, &node).await;
                        drop(permit);
                    });
                }
                Err((failures, total)) => {
                    self.unschedulable.lock().insert(key.clone());
                    let never = pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.preemption_policy.as_deref())
                        == Some("Never");
                    let message = fit_error::message(total, &failures, never);
                    report_unschedulable(&ctx, &pod, &message).await;
                }
            }
        }
    }

    async fn bind(&self, ctx: &Ctx, pod: &Pod, uid: &str, node: &str) {
        let (ns, name) = key_of(pod);
        // No pods/binding subresource is served: set spec.nodeName with the resourceVersion we
        // decided on, so a pod that changed meanwhile (or was replaced) is not bound blindly.
        let patch = json!({
            "metadata": {"resourceVersion": pod.metadata.resource_version},
            "spec": {"nodeName": node},
        });
        match crate::writes::merge_patch::<WirePod>(ctx, Some(&ns), &name, None, &patch).await {
            Ok(_) => {
                self.bound.fetch_add(1, Ordering::Relaxed);
                tracing::trace!(cluster = %ctx.name, pod = %name, %node, "bound");
            }
            Err(error) => {
                tracing::debug!(cluster = %ctx.name, pod = %name, %error, "bind failed; retrying");
                self.index.lock().release(uid);
                self.queue.add((ns, name));
            }
        }
    }

    /// Moves unschedulable pods back to the queue after the cluster changed.
    async fn retry_loop(self: Arc<Self>) {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if self.changed.swap(false, Ordering::Relaxed) {
                let waiting: Vec<PodKey> = self.unschedulable.lock().drain().collect();
                let mut waiting = waiting;
                waiting.sort();
                for key in waiting {
                    self.queue.add(key);
                }
            }
        }
    }
}

async fn report_unschedulable(ctx: &Ctx, pod: &Pod, message: &str) {
    let current = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"));
    if current.is_some_and(|c| c.status == "False" && c.message.as_deref() == Some(message)) {
        return;
    }
    let (ns, name) = key_of(pod);
    let api: Api<WirePod> = Api::namespaced(ctx.client.clone(), &ns);
    let patch = json!({"status": {"phase": "Pending", "conditions": [{
        "type": "PodScheduled",
        "status": "False",
        "reason": REASON_UNSCHEDULABLE,
        "message": message,
        "lastProbeTime": null,
        "lastTransitionTime": crate::cluster::now(),
    }]}});
    if let Err(error) = api
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        tracing::debug!(cluster = %ctx.name, pod = %name, %error, "cannot record PodScheduled=False");
    }
    events::warn(ctx, pod, "FailedScheduling", message, SCHEDULER_NAME).await;
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
