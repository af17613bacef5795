//! The simulated kubelets of a cluster (one component for all nodes): a bound pod reports
//! `ContainerCreating`, becomes Running and Ready after the start latency with the conditions,
//! IPs, start time and container statuses a kubelet reports, and — for Job pods or pods
//! annotated `flotilla.io/sim-run-duration` — succeeds after its run time (a Job pod whose
//! programs the sim models and which all end within the run time follows them instead: `exit 1`
//! fails it). A pod with an image
//! the sim cannot pull ([`crate::image`]) stays Pending: its container waits in `ErrImagePull`,
//! then (after another start latency) in `ImagePullBackOff` for good, two writes in all; once
//! its images can be pulled it starts after a start latency. Other pods whose containers run a
//! command follow their programs ([`crash`]): a program that ends restarts per the restart
//! policy, at once and then after kubelet's back-off (`CrashLoopBackOff`), or ends the pod
//! (Succeeded or Failed). Pods on NotReady nodes make no progress. Timers live in one wheel, not
//! one task per pod.

pub mod config;
mod crash;
mod status;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::informer::Cache;
use crate::pod::{Pod, WirePod};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::cluster::Ctx;
use crate::informer::{Change, Informer};
use crate::nodes::NodeTable;
use crate::queue::{Queue, Timers};
use crate::rng::mix;
use crate::scheduler::{PodKey, is_terminal, key_of};
use status::{
    config_error_status, containers, creating_status, lives_status, pull_failed_status,
    running_status, succeeded_status,
};

/// Annotation that makes any pod succeed after the given duration (`30s`, `2m`).
pub const RUN_DURATION_ANNOTATION: &str = "flotilla.io/sim-run-duration";

#[derive(Debug, Default)]
struct PodState {
    /// When the containers start (Running).
    start_at: Option<Instant>,
    /// When the pod succeeds.
    finish_at: Option<Instant>,
    ip_slot: Option<u8>,
    node: String,
    /// The pull that failed, while the pod's images are the ones that failed.
    pull: Option<FailedPull>,
    /// Its containers' lives once running, for a pod some of whose containers run a command
    /// ([`crash`]): restarts and `CrashLoopBackOff`.
    lives: Option<Box<[crash::Life]>>,
    /// For a Job pod: whether its programs end within the run time (then they are followed).
    follows_programs: Option<bool>,
}

#[derive(Debug)]
struct FailedPull {
    /// A hash of the pod's containers' names and images when the pull failed (a new image is
    /// a new attempt).
    images: u64,
    /// When `ErrImagePull` turns into `ImagePullBackOff`.
    back_off_at: Instant,
    /// The waiting reason last written for this attempt.
    written: Option<PullState>,
}

/// The waiting state of a container whose image cannot be pulled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PullState {
    ErrImagePull,
    ImagePullBackOff,
}

/// The kubelets of one cluster.
#[derive(Debug)]
pub struct Kubelet {
    queue: Arc<Queue<PodKey>>,
    timers: Arc<Timers<PodKey>>,
    pods: Mutex<HashMap<String, PodState>>,
    slots: Mutex<HashMap<String, HashSet<u8>>>,
    table: Arc<NodeTable>,
    /// Pods with a status write in flight, and whether each was queued again meanwhile.
    writing: Mutex<HashMap<PodKey, bool>>,
    /// The cluster's ConfigMaps and Secrets, which pods' volumes and environments need
    /// ([`config`]); without them nothing is checked.
    sources: OnceLock<config::Sources>,
    /// Pods waiting for a ConfigMap or Secret, by namespace: looked at again when one there
    /// changes.
    waiting_config: Mutex<HashMap<String, HashSet<PodKey>>>,
}

/// Status writes in flight at once (per cluster).
const WRITE_CONCURRENCY: usize = 64;

impl Kubelet {
    pub fn new(table: Arc<NodeTable>) -> Arc<Self> {
        Arc::new(Kubelet {
            queue: Queue::new(),
            timers: Timers::new(),
            pods: Mutex::new(HashMap::new()),
            slots: Mutex::new(HashMap::new()),
            table,
            writing: Mutex::new(HashMap::new()),
            sources: OnceLock::new(),
            waiting_config: Mutex::new(HashMap::new()),
        })
    }

    /// Lets the kubelets check pods' ConfigMaps and Secrets, and look again at the pods waiting
    /// for one when it is created or changed.
    pub fn watch_sources(
        self: &Arc<Self>,
        config_maps: &mut Informer<k8s_openapi::api::core::v1::ConfigMap>,
        secrets: &mut Informer<k8s_openapi::api::core::v1::Secret>,
    ) {
        let this = self.clone();
        config_maps.on(move |change| match change {
            Change::Applied(object) => this.sources_changed(object.metadata.namespace.as_deref()),
            Change::Synced => this.sources_changed(None),
            Change::Deleted(_) => {}
        });
        let this = self.clone();
        secrets.on(move |change| match change {
            Change::Applied(object) => this.sources_changed(object.metadata.namespace.as_deref()),
            Change::Synced => this.sources_changed(None),
            Change::Deleted(_) => {}
        });
    }

    /// The caches behind [`Kubelet::watch_sources`], before the kubelets run.
    pub fn attach_sources(&self, sources: config::Sources) {
        let _ = self.sources.set(sources);
    }

    /// Queues the pods waiting for a ConfigMap or Secret in `namespace` (all when `None`).
    fn sources_changed(&self, namespace: Option<&str>) {
        let waiting = self.waiting_config.lock();
        let keys: Vec<PodKey> = match namespace {
            Some(ns) => waiting.get(ns).into_iter().flatten().cloned().collect(),
            None => waiting.values().flatten().cloned().collect(),
        };
        drop(waiting);
        for key in keys {
            self.queue.add(key);
        }
    }

    /// What keeps `pod`'s containers from starting, remembering the pod as waiting if so.
    fn config_blocked(&self, pod: &Pod, key: &PodKey) -> Option<config::Blocked> {
        let blocked = self.sources.get()?.blocked(pod);
        let mut waiting = self.waiting_config.lock();
        if blocked.is_some() {
            waiting
                .entry(key.0.clone())
                .or_default()
                .insert(key.clone());
        } else if let Some(pods) = waiting.get_mut(&key.0) {
            pods.remove(key);
            if pods.is_empty() {
                waiting.remove(&key.0);
            }
        }
        blocked
    }

    pub fn watch(self: &Arc<Self>, pods: &mut Informer<Pod>) {
        let this = self.clone();
        pods.on(move |change| match change {
            Change::Applied(pod) => {
                let node = pod
                    .spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .unwrap_or("");
                if !node.is_empty() && this.table.get(node).is_some() && !is_terminal(pod) {
                    this.queue.add(key_of(pod));
                }
            }
            Change::Deleted(pod) => {
                let key = key_of(pod);
                if let Some(pods) = this.waiting_config.lock().get_mut(&key.0) {
                    pods.remove(&key);
                }
                this.forget(pod.metadata.uid.as_deref().unwrap_or(""));
            }
            Change::Synced => {}
        });
    }

    fn forget(&self, uid: &str) {
        if let Some(state) = self.pods.lock().remove(uid)
            && let Some(slot) = state.ip_slot
            && let Some(used) = self.slots.lock().get_mut(&state.node)
        {
            used.remove(&slot);
        }
    }

    /// Nodes that came back: let their pods make progress again.
    pub fn resume(&self, store: &Cache<Pod>) {
        for pod in store.state() {
            let node = pod
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .unwrap_or("");
            if !node.is_empty() && self.table.get(node).is_some() && !is_terminal(&pod) {
                self.queue.add(key_of(&pod));
            }
        }
    }

    /// Works the queue until the task is dropped. What each pod needs is decided in queue
    /// order (so IP slots and timers do not depend on timing); the status writes go out
    /// concurrently, at most one per pod at a time.
    pub async fn run(self: Arc<Self>, ctx: Arc<Ctx>, store: Cache<Pod>) {
        let timers = tokio::spawn(self.timers.clone().run(self.queue.clone()));
        let _timers = crate::cluster::AbortOnDrop(timers);
        let permits = Arc::new(Semaphore::new(WRITE_CONCURRENCY));
        loop {
            let key = self.queue.pop().await;
            if let Some(again) = self.writing.lock().get_mut(&key) {
                // Looked at again once its write is done.
                *again = true;
                continue;
            }
            let Some(pod) = store.get(&key.0, &key.1) else {
                continue;
            };
            let Some(status) = self.step(&ctx, &pod, &key) else {
                continue;
            };
            self.writing.lock().insert(key.clone(), false);
            let permit = permits
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let this = self.clone();
            let ctx = ctx.clone();
            tokio::spawn(async move {
                write_status(&ctx, &key, &status).await;
                let again = this.writing.lock().remove(&key);
                if again == Some(true) {
                    this.queue.add(key);
                }
                drop(permit);
            });
        }
    }

    fn jittered(ctx: &Ctx, base: Duration, scope: &str) -> Duration {
        if base.is_zero() {
            return base;
        }
        // Up to +20%, reproducible from the seed and the pod.
        let fraction = (mix(ctx.settings.seed, scope) % 1000) as f64 / 5000.0;
        base.mul_f64(1.0 + fraction)
    }

    /// The status the pod needs written now, if any (timers for later steps are set here).
    fn step(&self, ctx: &Ctx, pod: &Pod, key: &PodKey) -> Option<Value> {
        let node_name = pod.spec.as_ref().and_then(|s| s.node_name.clone())?;
        if is_terminal(pod)
            || pod.metadata.deletion_timestamp.is_some()
            || self.table.is_down(&node_name)
        {
            return None;
        }
        let node = self.table.get(&node_name)?;
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        let running = phase == "Running";
        let scope = format!("{}/{}/{}", key.0, key.1, uid);
        let now_instant = Instant::now();
        let (start_at, finish_at, slot, first, pull_failed) = {
            let mut pods = self.pods.lock();
            let first = !pods.contains_key(&uid);
            let state = pods.entry(uid.clone()).or_default();
            state.node = node_name.clone();
            if state.ip_slot.is_none() {
                let mut slots = self.slots.lock();
                let used = slots.entry(node_name.clone()).or_default();
                let slot = (0..=252u8).find(|s| !used.contains(s)).unwrap_or(252);
                used.insert(slot);
                state.ip_slot = Some(slot);
            }
            if state.start_at.is_none() && !running {
                state.start_at =
                    Some(now_instant + Self::jittered(ctx, ctx.settings.start_latency, &scope));
            }
            (
                state.start_at,
                state.finish_at,
                state.ip_slot.unwrap_or(0),
                first,
                state.pull.is_some(),
            )
        };
        if !running {
            let start_at = start_at.unwrap_or(now_instant);
            if start_at > now_instant {
                self.timers.schedule(start_at, key.clone());
                if first && phase_reason(pod) != Some("ContainerCreating") {
                    return Some(creating_status(pod, &node.internal_ip));
                }
                return None;
            }
            let pod_ip = pod_ip_on(pod, node, slot);
            match self.config_blocked(pod, key) {
                Some(config::Blocked::Volume(_)) => {
                    return (phase_reason(pod) != Some("ContainerCreating"))
                        .then(|| creating_status(pod, &node.internal_ip));
                }
                Some(config::Blocked::Containers(errors)) => {
                    return (!waits_for_config(pod, &errors))
                        .then(|| config_error_status(pod, &errors, &node.internal_ip, &pod_ip));
                }
                None => {}
            }
            if refuses_any(ctx, pod) {
                return self.pull_failed(ctx, pod, key, &uid, &scope, &node.internal_ip, &pod_ip);
            }
            if pull_failed && let Some(at) = self.pulled(ctx, &uid, &scope, now_instant) {
                self.timers.schedule(at, key.clone());
                return None;
            }
            return Some(running_status(pod, &node.internal_ip, &pod_ip));
        }
        // Running: does it ever finish? Job pods and annotated ones after their run time; the
        // others when their containers' programs end.
        let pod_ip = pod_ip_on(pod, node, slot);
        let Some(run_for) = run_duration(ctx, pod) else {
            return self.lives_step(pod, key, &uid, &node.internal_ip, &pod_ip);
        };
        if !annotated(pod) && self.follows_programs(pod, &uid, run_for) {
            return self.lives_step(pod, key, &uid, &node.internal_ip, &pod_ip);
        }
        let finish_at = match finish_at {
            Some(at) => at,
            None => {
                let at = now_instant + Self::jittered(ctx, run_for, &format!("{scope}/run"));
                if let Some(state) = self.pods.lock().get_mut(&uid) {
                    state.finish_at = Some(at);
                }
                at
            }
        };
        if finish_at > now_instant {
            self.timers.schedule(finish_at, key.clone());
            return None;
        }
        Some(succeeded_status(pod))
    }
}

impl Kubelet {
    /// Whether a running Job pod follows its programs: all its containers run programs the
    /// shell models, and each ends within `run_for` of its start (decided once per pod).
    fn follows_programs(&self, pod: &Pod, uid: &str, run_for: Duration) -> bool {
        if let Some(known) = self.pods.lock().get(uid).and_then(|s| s.follows_programs) {
            return known;
        }
        let statuses = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_deref())
            .unwrap_or_default();
        let now = jiff::Timestamp::now();
        let follows = pod.spec.as_ref().is_some_and(|spec| {
            !spec.containers.is_empty()
                && spec.containers.iter().all(|c| {
                    if !crate::runtime::is_modelled(pod, c) {
                        return false;
                    }
                    let started = statuses
                        .iter()
                        .find(|s| s.name == c.name)
                        .and_then(|s| s.state.as_ref()?.running.as_ref()?.started_at.as_ref())
                        .map_or(now, |t| t.0);
                    let horizon = jiff::SignedDuration::try_from(run_for)
                        .ok()
                        .and_then(|d| started.checked_add(d).ok())
                        .unwrap_or(jiff::Timestamp::MAX);
                    crate::runtime::exit_of(pod, c, started, horizon).is_some()
                })
        });
        if let Some(state) = self.pods.lock().get_mut(uid) {
            state.follows_programs = Some(follows);
        }
        follows
    }

    /// A running pod whose containers run commands: their programs' ends, restarts and
    /// back-offs ([`crash`]) moved on to now; the status to write when something changed, and a
    /// timer for the next change.
    fn lives_step(
        &self,
        pod: &Pod,
        key: &PodKey,
        uid: &str,
        host_ip: &str,
        pod_ip: &str,
    ) -> Option<Value> {
        let spec = pod.spec.as_ref()?;
        if !spec
            .containers
            .iter()
            .any(|c| c.command.is_some() || c.args.is_some())
        {
            return None;
        }
        let policy = spec.restart_policy.as_deref().unwrap_or("Always");
        let now = jiff::Timestamp::now();
        let program = |c: &k8s_openapi::api::core::v1::Container, start: jiff::Timestamp| {
            let horizon = jiff::SignedDuration::try_from(crash::HORIZON)
                .ok()
                .and_then(|h| start.checked_add(h).ok())
                .unwrap_or(jiff::Timestamp::MAX);
            crate::runtime::exit_of(pod, c, start, horizon)
        };
        // Computed outside the lock: a program may take a while to run to its end.
        let taken = self.pods.lock().get_mut(uid)?.lives.take();
        let mut lives = match taken {
            Some(lives) => lives,
            None => {
                let statuses = pod
                    .status
                    .as_ref()
                    .and_then(|s| s.container_statuses.as_deref())
                    .unwrap_or_default();
                let lives = spec
                    .containers
                    .iter()
                    .map(|c| {
                        let started = statuses
                            .iter()
                            .find(|s| s.name == c.name)
                            .and_then(|s| s.state.as_ref()?.running.as_ref()?.started_at.as_ref())
                            .map_or(now, |t| t.0);
                        crash::Life::start(started, program(c, started))
                    })
                    .collect::<Vec<_>>();
                lives.into_boxed_slice()
            }
        };
        let mut changed = false;
        for (life, container) in lives.iter_mut().zip(&spec.containers) {
            changed |= life.advance(now, policy, |start| program(container, start));
        }
        if let Some(next) = lives.iter().filter_map(crash::Life::next_change).min() {
            let wait = Duration::try_from(next.duration_since(now)).unwrap_or_default();
            self.timers.schedule(Instant::now() + wait, key.clone());
        }
        let status = changed.then(|| lives_status(pod, host_ip, pod_ip, &lives));
        if let Some(state) = self.pods.lock().get_mut(uid) {
            state.lives = Some(lives);
        }
        status
    }

    /// The status of a pod some of whose images cannot be pulled: `ErrImagePull` for a new
    /// attempt (new images), `ImagePullBackOff` once its time has come; nothing when that is
    /// what was last written. No retries: the back-off is written once and stays.
    #[allow(clippy::too_many_arguments)]
    fn pull_failed(
        &self,
        ctx: &Ctx,
        pod: &Pod,
        key: &PodKey,
        uid: &str,
        scope: &str,
        host_ip: &str,
        pod_ip: &str,
    ) -> Option<Value> {
        let images = images_hash(pod);
        let now_instant = Instant::now();
        let state = {
            let mut pods = self.pods.lock();
            let entry = pods.get_mut(uid)?;
            let fresh = entry.pull.as_ref().is_none_or(|p| p.images != images);
            if fresh {
                let back_off_at = now_instant
                    + Self::jittered(ctx, ctx.settings.start_latency, &format!("{scope}/pull"));
                entry.pull = Some(FailedPull {
                    images,
                    back_off_at,
                    written: None,
                });
                self.timers.schedule(back_off_at, key.clone());
            }
            let pull = entry.pull.as_mut().expect("set above");
            let state = if fresh || pull.back_off_at > now_instant {
                PullState::ErrImagePull
            } else {
                PullState::ImagePullBackOff
            };
            if pull.written == Some(state) {
                return None;
            }
            pull.written = Some(state);
            state
        };
        Some(pull_failed_status(
            pod,
            &ctx.settings.unpullable_images,
            state,
            host_ip,
            pod_ip,
        ))
    }

    /// After a failed pull, the pod's images can be pulled now (its image was changed): when
    /// its containers start, a start latency from now. `None` when no pull had failed.
    fn pulled(&self, ctx: &Ctx, uid: &str, scope: &str, now: Instant) -> Option<Instant> {
        let mut pods = self.pods.lock();
        let entry = pods.get_mut(uid)?;
        entry.pull.take()?;
        let at = now + Self::jittered(ctx, ctx.settings.start_latency, &format!("{scope}/pulled"));
        entry.start_at = Some(at);
        (at > now).then_some(at)
    }
}

/// Whether some container's image cannot be pulled (the check of every pod that starts:
/// string slicing only).
fn refuses_any(ctx: &Ctx, pod: &Pod) -> bool {
    let rules = &ctx.settings.unpullable_images;
    !rules.is_empty()
        && pod.spec.as_ref().is_some_and(|s| {
            s.containers
                .iter()
                .any(|c| rules.refusal(c.image.as_deref().unwrap_or("")).is_some())
        })
}

fn images_hash(pod: &Pod) -> u64 {
    let mut text = String::new();
    for (name, image) in containers(pod) {
        text.push_str(&name);
        text.push('=');
        text.push_str(&image);
        text.push('\n');
    }
    mix(0, &text)
}

/// Whether the pod carries [`RUN_DURATION_ANNOTATION`].
fn annotated(pod: &Pod) -> bool {
    pod.metadata
        .annotations()
        .is_some_and(|a| a.contains_key(RUN_DURATION_ANNOTATION))
}

fn run_duration(ctx: &Ctx, pod: &Pod) -> Option<Duration> {
    if let Some(text) = pod
        .metadata
        .annotations()
        .and_then(|a| a.get(RUN_DURATION_ANNOTATION))
    {
        return crate::config::parse_duration(text).ok();
    }
    let owned_by_job = pod
        .metadata
        .owner_references()
        .unwrap_or_default()
        .iter()
        .any(|o| o.kind == "Job" && o.controller == Some(true));
    owned_by_job.then_some(ctx.settings.job_duration)
}

/// Whether `pod`'s status already shows exactly `errors`' containers waiting in
/// `CreateContainerConfigError` with those messages.
fn waits_for_config(pod: &Pod, errors: &std::collections::BTreeMap<String, String>) -> bool {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or_default();
    let waiting: std::collections::BTreeMap<&str, &str> = statuses
        .iter()
        .filter_map(|c| {
            let waiting = c.state.as_ref()?.waiting.as_ref()?;
            (waiting.reason.as_deref() == Some("CreateContainerConfigError"))
                .then(|| (c.name.as_str(), waiting.message.as_deref().unwrap_or("")))
        })
        .collect();
    waiting.len() == errors.len()
        && errors
            .iter()
            .all(|(name, message)| waiting.get(name.as_str()) == Some(&message.as_str()))
}

fn phase_reason(pod: &Pod) -> Option<&str> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_deref()?
        .first()?
        .state
        .as_ref()?
        .waiting
        .as_ref()?
        .reason
        .as_deref()
}

async fn write_status(ctx: &Ctx, key: &PodKey, status: &Value) {
    let patch = json!({"status": status});
    if let Err(error) =
        crate::writes::merge_patch::<WirePod>(ctx, Some(&key.0), &key.1, Some("status"), &patch)
            .await
    {
        tracing::debug!(pod = %key.1, %error, "pod status write failed");
    }
}

/// The pod's IP on `node`: a `hostNetwork` pod has the node's, the others one of its pod range.
fn pod_ip_on(pod: &Pod, node: &crate::nodes::PlannedNode, slot: u8) -> String {
    if pod.spec.as_ref().and_then(|s| s.host_network) == Some(true) {
        node.internal_ip.clone()
    } else {
        node.pod_ip(slot)
    }
}
