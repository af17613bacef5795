//! The run loop (the only part of this crate that does I/O): watches ResourceBindings,
//! ClusterResourceBindings and Clusters through a `kube::Client`, queues bindings whose
//! generation changed (initial lists in the low lane), decides with [`crate::should_schedule`],
//! runs the pure [`crate::schedule`] on a cached cluster snapshot and writes the result the way
//! Karmada's scheduler does: a merge patch of `spec.clusters` + `policy.karmada.io/applied-placement`,
//! then the status (`Scheduled` condition, `schedulerObservedGeneration`, `lastScheduledTime`).
//!
//! Beyond Karmada: a binding that was unschedulable for lack of capacity is retried as soon as
//! any cluster's status changes (Karmada waits up to five minutes, karmada-io/karmada#4434).

mod assumed;
pub mod extensions;
pub mod members;
pub mod metrics;
mod peers;
pub mod status;
mod watch;
mod write;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use flotilla_api::karmada::{
    Cluster, ClusterResourceBinding, DEFAULT_SCHEDULER_NAME, MESSAGE_SCHEDULED, REASON_SUCCESS,
    ResourceBinding, ResourceBindingSpec, ResourceBindingStatus,
};
use flotilla_runtime::events::{Event, EventType, Recorder, Reporter};
use flotilla_runtime::{Backoff, Shutdown, WorkQueue};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use serde_json::Value;
use tracing::{debug, info, warn};

use crate::core::{ScheduleError, ScheduleOptions, Snapshot};
use crate::decide::ScheduleTrigger;
use crate::framework::Framework;
use extensions::Extensions;
pub use extensions::REPLICA_DIVISION_ANNOTATION;
pub use metrics::Metrics;
use status::Outcome;

/// Labels that mark a binding as created for a (Cluster)PropagationPolicy (Karmada schedules
/// only those, so attached dependency bindings are left alone).
const SCHEDULABLE_LABELS: &[&str] = &[
    "propagationpolicy.karmada.io/permanent-id",
    "clusterpropagationpolicy.karmada.io/permanent-id",
    "binding.karmada.io/managed-by",
];

/// How long an unschedulable binding waits before a retry when no cluster changes (Karmada's
/// unschedulable queue flushes entries older than five minutes).
const UNSCHEDULABLE_RETRY: Duration = Duration::from_secs(300);

/// A binding in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BindingKey {
    /// A ResourceBinding.
    Namespaced { namespace: String, name: String },
    /// A ClusterResourceBinding.
    Cluster { name: String },
}

impl std::fmt::Display for BindingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Namespaced { namespace, name } => write!(f, "{namespace}/{name}"),
            Self::Cluster { name } => f.write_str(name),
        }
    }
}

/// Settings of the run loop.
#[derive(Debug)]
pub struct SchedulerConfig {
    /// Bindings whose `spec.schedulerName` (empty: `default-scheduler`) is this are ours.
    pub scheduler_name: String,
    /// Concurrent workers.
    pub workers: usize,
    /// The enabled plugins.
    pub framework: Framework,
    /// Karmada's `--enable-empty-workload-propagation`.
    pub enable_empty_workload_propagation: bool,
    /// Backoff of bindings that failed with an error (Karmada: 1 s doubling to 10 s).
    pub backoff: Backoff,
    /// Karmada's `--enable-scheduler-estimator`: the accurate estimator over members' nodes
    /// and pods, watched in process ([`members`]). `None` = the general estimator only.
    pub members: Option<Arc<members::MemberNodes>>,
    /// Gate `WorkloadAffinity`: gather the peers of bindings in workload (anti-)affinity groups
    /// and schedule them one at a time. The framework needs the gate's plugins too
    /// ([`crate::framework::Registry::in_tree_gated`]).
    pub workload_affinity: bool,
    /// Gate `SchedulingOvercommitProtection`: keep the footprint of what was placed until it
    /// runs Healthy ([`crate::assume`]) and let every estimator deduct it.
    pub overcommit_protection: bool,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            scheduler_name: DEFAULT_SCHEDULER_NAME.to_owned(),
            // Writes wait for durability (group commit): many in flight keep the store's
            // batches full. One worker per binding at a time, as always.
            workers: 32,
            framework: Framework::default(),
            enable_empty_workload_propagation: false,
            backoff: Backoff {
                base: Duration::from_secs(1),
                max: Duration::from_secs(10),
            },
            members: None,
            workload_affinity: false,
            overcommit_protection: false,
        }
    }
}

/// A binding as the worker sees it, whichever kind: the cached object itself, not a copy.
#[derive(Debug)]
enum Cached {
    Namespaced(Arc<ResourceBinding>),
    Cluster(Arc<ClusterResourceBinding>),
}

/// The parts of a [`Cached`] binding the worker reads.
#[derive(Debug)]
struct BindingView<'a> {
    metadata: &'a ObjectMeta,
    spec: &'a ResourceBindingSpec,
    status: &'a ResourceBindingStatus,
}

/// What the scheduler's cache leaves out of a binding's status: the members' aggregated
/// status (the binding-status controller's, never read here; a merge patch of the scheduler's
/// leaves it as stored).
fn drop_aggregated_status(status: Option<&mut ResourceBindingStatus>) {
    if let Some(status) = status {
        status.aggregated_status = Vec::new();
    }
}

/// The status of a binding that has none yet.
static NO_STATUS: std::sync::LazyLock<ResourceBindingStatus> =
    std::sync::LazyLock::new(ResourceBindingStatus::default);

impl Cached {
    fn view(&self) -> BindingView<'_> {
        match self {
            Self::Namespaced(object) => BindingView {
                metadata: &object.metadata,
                spec: &object.spec,
                status: object.status.as_ref().unwrap_or(&NO_STATUS),
            },
            Self::Cluster(object) => BindingView {
                metadata: &object.metadata,
                spec: &object.spec,
                status: object.status.as_ref().unwrap_or(&NO_STATUS),
            },
        }
    }
}

/// What a cluster looked like when last seen, to tell spec changes from status changes.
#[derive(Debug, Clone, PartialEq)]
struct ClusterShape {
    generation: Option<i64>,
    labels: Option<std::collections::BTreeMap<String, String>>,
    deleting: bool,
}

/// The scheduler's run loop.
pub struct Scheduler {
    client: kube::Client,
    config: SchedulerConfig,
    queue: WorkQueue<BindingKey>,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    clusters: Store<Cluster>,
    writers: Mutex<Option<Writers>>,
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    generations: Mutex<HashMap<BindingKey, i64>>,
    /// Each cluster's shape and the object last seen (to match the old labels and fields against
    /// bindings' affinities after a change).
    cluster_shapes: Mutex<HashMap<String, (ClusterShape, Arc<Cluster>)>>,
    unschedulable: Mutex<BTreeSet<BindingKey>>,
    /// Gate `WorkloadAffinity`: results written and not yet seen by the binding watch.
    assigning: Mutex<peers::Assigning>,
    /// Held while a binding in a workload (anti-)affinity group is scheduled.
    grouped: tokio::sync::Mutex<()>,
    /// Gate `SchedulingOvercommitProtection`: assumed in-flight workloads.
    assumptions: Mutex<crate::assume::Assumptions>,
    metrics: Metrics,
    recorder: Recorder,
    events: tokio::sync::mpsc::Sender<(Event, ObjectReference)>,
    events_rx: Mutex<Option<tokio::sync::mpsc::Receiver<(Event, ObjectReference)>>>,
}

/// Events waiting to be written. Like client-go's broadcaster, a full buffer drops events
/// instead of slowing scheduling down.
const EVENT_BUFFER: usize = 4096;
/// Events written concurrently by the publisher task: as many as the default workers. Each
/// result queues two Events and each write waits for a group commit, so with fewer writers
/// (it was 8) the buffer filled during a burst and about 40 % of the Events were dropped.
const EVENT_WRITERS: usize = 32;

struct Writers {
    bindings: reflector::store::Writer<ResourceBinding>,
    cluster_bindings: reflector::store::Writer<ClusterResourceBinding>,
    clusters: reflector::store::Writer<Cluster>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why the run loop stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the scheduler was started twice")]
    AlreadyStarted,
    #[error("waiting for the initial list of {0}")]
    InitialListFailed(&'static str),
}

impl Scheduler {
    pub fn new(client: kube::Client, config: SchedulerConfig, metrics: Metrics) -> Arc<Self> {
        let (bindings, bindings_writer) = reflector::store();
        let (cluster_bindings, cluster_bindings_writer) = reflector::store();
        let (clusters, clusters_writer) = reflector::store();
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: "karmada-scheduler".into(),
                instance: None,
            },
        );
        let (events, events_rx) = tokio::sync::mpsc::channel(EVENT_BUFFER);
        Arc::new(Self {
            client,
            events,
            events_rx: Mutex::new(Some(events_rx)),
            queue: WorkQueue::named_with("scheduler-queue", config.backoff),
            config,
            bindings,
            cluster_bindings,
            clusters,
            writers: Mutex::new(Some(Writers {
                bindings: bindings_writer,
                cluster_bindings: cluster_bindings_writer,
                clusters: clusters_writer,
            })),
            snapshot: RwLock::new(None),
            generations: Mutex::new(HashMap::new()),
            cluster_shapes: Mutex::new(HashMap::new()),
            unschedulable: Mutex::new(BTreeSet::new()),
            assigning: Mutex::new(peers::Assigning::default()),
            grouped: tokio::sync::Mutex::new(()),
            assumptions: Mutex::new(crate::assume::Assumptions::default()),
            metrics,
            recorder,
        })
    }

    /// The metrics this loop updates.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Runs until `shutdown` is cancelled.
    pub async fn run(self: Arc<Self>, shutdown: Shutdown) -> Result<(), RunError> {
        let writers = lock(&self.writers).take().ok_or(RunError::AlreadyStarted)?;
        let events = lock(&self.events_rx)
            .take()
            .ok_or(RunError::AlreadyStarted)?;
        let mut tasks = vec![tokio::spawn(self.clone().publish_events(events))];
        tasks.push(tokio::spawn(self.clone().watch_bindings(
            Api::<ResourceBinding>::all(self.client.clone()),
            writers.bindings,
            |b: &ResourceBinding| BindingKey::Namespaced {
                namespace: b.metadata.namespace.clone().unwrap_or_default(),
                name: b.metadata.name.clone().unwrap_or_default(),
            },
            |b: &mut ResourceBinding| drop_aggregated_status(b.status.as_mut()),
            |b: &ResourceBinding| assumed::healthy_clusters(b.status.as_ref()),
        )));
        tasks.push(tokio::spawn(self.clone().watch_bindings(
            Api::<ClusterResourceBinding>::all(self.client.clone()),
            writers.cluster_bindings,
            |b: &ClusterResourceBinding| BindingKey::Cluster {
                name: b.metadata.name.clone().unwrap_or_default(),
            },
            |b: &mut ClusterResourceBinding| drop_aggregated_status(b.status.as_mut()),
            |b: &ClusterResourceBinding| assumed::healthy_clusters(b.status.as_ref()),
        )));
        tasks.push(tokio::spawn(
            self.clone()
                .watch_clusters(writers.clusters, shutdown.clone()),
        ));
        let ready = async {
            self.clusters
                .wait_until_ready()
                .await
                .map_err(|_| RunError::InitialListFailed("clusters"))?;
            self.bindings
                .wait_until_ready()
                .await
                .map_err(|_| RunError::InitialListFailed("resourcebindings"))?;
            self.cluster_bindings
                .wait_until_ready()
                .await
                .map_err(|_| RunError::InitialListFailed("clusterresourcebindings"))
        };
        let ready = tokio::select! {
            result = ready => result,
            _ = shutdown.cancelled() => Ok(()),
        };
        if let Err(error) = ready {
            for task in &tasks {
                task.abort();
            }
            return Err(error);
        }
        info!(scheduler = %self.config.scheduler_name, "scheduler running");
        for _ in 0..self.config.workers.max(1) {
            tasks.push(tokio::spawn(self.clone().work()));
        }
        shutdown.cancelled().await;
        self.queue.shut_down();
        for task in tasks {
            task.abort();
        }
        Ok(())
    }

    fn invalidate_snapshot(&self) {
        *self
            .snapshot
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        if let Some(snapshot) = self
            .snapshot
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
        {
            return snapshot.clone();
        }
        let mut clusters = self.clusters.state();
        clusters.sort_by(|a, b| a.name().cmp(b.name()));
        let snapshot = Arc::new(Snapshot::shared(clusters));
        *self
            .snapshot
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(snapshot.clone());
        snapshot
    }

    fn update_pending(&self) {
        let active = self.queue.len() as i64;
        let delayed = self.queue.delayed() as i64;
        let unschedulable = lock(&self.unschedulable).len() as i64;
        let pending = &self.metrics.pending;
        for (queue, value) in [
            ("active", active),
            ("backoff", delayed),
            ("unschedulable", unschedulable),
        ] {
            pending
                .get_or_create(&metrics::QueueLabels {
                    queue: queue.to_owned(),
                })
                .set(value);
        }
        self.metrics.pending_workloads.set(active + delayed);
    }

    async fn work(self: Arc<Self>) {
        while let Some(key) = self.queue.next().await {
            let outcome = self.reconcile(&key).await;
            if !matches!(outcome, Ok(Retry::Done)) {
                self.metrics.incoming(metrics::SCHEDULE_ATTEMPT_FAILURE);
            }
            match outcome {
                Ok(Retry::Done) => self.queue.forget(&key),
                Ok(Retry::After(delay)) => self.queue.add_after(key.clone(), delay),
                Ok(Retry::RateLimited) => self.queue.add_rate_limited(key.clone()),
                Err(error) => {
                    warn!(binding = %key, %error, "scheduling failed; backing off");
                    self.queue.add_rate_limited(key.clone());
                }
            }
            self.queue.done(&key);
            self.update_pending();
        }
    }

    fn cached(&self, key: &BindingKey) -> Option<Cached> {
        match key {
            BindingKey::Namespaced { namespace, name } => self
                .bindings
                .get(&reflector::ObjectRef::new(name).within(namespace))
                .map(Cached::Namespaced),
            BindingKey::Cluster { name } => self
                .cluster_bindings
                .get(&reflector::ObjectRef::new(name))
                .map(Cached::Cluster),
        }
    }

    fn is_ours(&self, binding: &BindingView<'_>) -> bool {
        let scheduler = if binding.spec.scheduler_name.is_empty() {
            DEFAULT_SCHEDULER_NAME
        } else {
            binding.spec.scheduler_name.as_str()
        };
        let suspended = binding
            .spec
            .suspension
            .as_ref()
            .and_then(|s| s.scheduling)
            .unwrap_or(false);
        let labelled = binding
            .metadata
            .labels
            .as_ref()
            .is_some_and(|labels| SCHEDULABLE_LABELS.iter().any(|l| labels.contains_key(*l)));
        scheduler == self.config.scheduler_name && !suspended && labelled
    }

    async fn reconcile(&self, key: &BindingKey) -> Result<Retry, kube::Error> {
        let Some(cached) = self.cached(key) else {
            return Ok(Retry::Done);
        };
        let binding = cached.view();
        if !self.is_ours(&binding) {
            return Ok(Retry::Done);
        }
        let (namespace, name) = match key {
            BindingKey::Namespaced { namespace, name } => (Some(namespace.as_str()), name),
            BindingKey::Cluster { name } => (None, name),
        };
        if binding.metadata.deletion_timestamp.is_some() {
            let message = status::deleting_binding_message(namespace, name);
            self.publish(
                &binding,
                key,
                EventType::Warning,
                "ScheduleBindingFailed",
                message,
            );
            return Ok(Retry::Done);
        }
        let generation = binding.metadata.generation.unwrap_or(0);
        let snapshot = self.snapshot();
        let trigger = crate::should_schedule(
            binding.metadata.annotations.as_ref(),
            binding.spec,
            binding.status,
            &snapshot,
        );
        let Some(trigger) = trigger else {
            if binding.status.scheduler_observed_generation != generation {
                self.patch_status(
                    key,
                    &crate::run::status::observed_generation_patch(generation),
                )
                .await?;
            }
            return Ok(Retry::Done);
        };
        let schedule_type = match trigger {
            ScheduleTrigger::ReplicasChanged => "ScaleSchedule",
            _ => "ReconcileSchedule",
        };
        // Gate WorkloadAffinity: one grouped binding at a time, against its peers' newest
        // schedules (ResourceBindings only: groups are namespaced).
        let groups = binding
            .spec
            .workload_affinity_groups
            .as_ref()
            .filter(|_| self.config.workload_affinity)
            .zip(namespace);
        let _one_at_a_time = match groups {
            Some(_) => Some(self.grouped.lock().await),
            None => None,
        };
        let peers = groups.map(|(groups, namespace)| {
            lock(&self.assigning).peers(&self.bindings, namespace, name, groups)
        });
        let started = Instant::now();
        let assumed = self.assumed_by_cluster(&snapshot);
        let result = {
            // Estimator trait objects are not Sync: the options never live across an await.
            let accurate = self.config.members.as_ref().map(|m| m.estimator());
            let estimators: Vec<&dyn crate::ReplicaEstimator> = accurate
                .iter()
                .map(|e| e as &dyn crate::ReplicaEstimator)
                .collect();
            let extensions = Extensions::of(binding.metadata.annotations.as_ref());
            let options = ScheduleOptions {
                framework: &self.config.framework,
                estimators: &estimators,
                enable_empty_workload_propagation: self.config.enable_empty_workload_propagation,
                divide_by_node_count: accurate.as_ref().filter(|_| extensions.node_count),
                gpu_topology: accurate.as_ref().zip(extensions.gpu_topology),
                workload_peers: peers.as_ref(),
                assumed: assumed.as_ref(),
            };
            crate::schedule_traced(&snapshot, binding.spec, binding.status, &options)
        };
        let uses_terms = !result.failed_terms.is_empty();
        for failure in &result.failed_terms {
            let message =
                status::term_failure_message(namespace, name, failure.index, &failure.error);
            self.publish(
                &binding,
                key,
                EventType::Warning,
                "ScheduleBindingFailed",
                message,
            );
        }
        let result = result.result;
        self.metrics
            .algorithm_duration
            .get_or_create(&metrics::StepLabels {
                schedule_step: "Total".to_owned(),
            })
            .observe(started.elapsed().as_secs_f64());
        let Some(placement) = binding.spec.placement.as_ref() else {
            return Ok(Retry::Done);
        };
        let now = Time(jiff::Timestamp::now());
        let outcome = match result {
            Ok(result) => {
                let new_generation = match self
                    .record_result(key, &binding, placement, &result.clusters)
                    .await
                {
                    Ok(written) => written.and_then(|w| w.generation).unwrap_or(generation),
                    // Karmada: the ResourceBinding webhook refused the result for a
                    // FederatedResourceQuota; the binding keeps its previous result.
                    Err(kube::Error::Api(refused))
                        if refused.code == 403 && refused.reason == "QuotaExceeded" =>
                    {
                        let condition = Outcome {
                            status: false,
                            reason: refused.reason.clone(),
                            message: refused.message.clone(),
                        };
                        if let Some(patch) =
                            status::status_patch(binding.status, &condition, now, None)
                        {
                            self.patch_status(key, &patch).await?;
                        }
                        self.publish(
                            &binding,
                            key,
                            EventType::Warning,
                            "ScheduleBindingFailed",
                            refused.message.clone(),
                        );
                        return Ok(Retry::RateLimited);
                    }
                    Err(error) => return Err(error),
                };
                self.assume_placed(key, binding.spec, &result.clusters);
                let outcome = Outcome {
                    status: true,
                    reason: REASON_SUCCESS.to_owned(),
                    message: MESSAGE_SCHEDULED.to_owned(),
                };
                if let Some(patch) = status::status_patch(
                    binding.status,
                    &outcome,
                    now,
                    Some((new_generation, result.affinity_name.as_deref())),
                ) {
                    self.patch_status(key, &patch).await?;
                }
                lock(&self.unschedulable).remove(key);
                self.metrics.attempt(
                    metrics::attempt_result(None),
                    schedule_type,
                    started.elapsed().as_secs_f64(),
                );
                let message = status::success_event_message(
                    matches!(key, BindingKey::Cluster { .. }),
                    &result.clusters,
                );
                info!(binding = %key, %message, "scheduled");
                self.publish(
                    &binding,
                    key,
                    EventType::Normal,
                    "ScheduleBindingSucceed",
                    message,
                );
                return Ok(Retry::Done);
            }
            Err(error) => error,
        };
        self.metrics.attempt(
            metrics::attempt_result(Some(&outcome)),
            schedule_type,
            started.elapsed().as_secs_f64(),
        );
        let message = outcome.to_string();
        let condition = Outcome {
            status: false,
            reason: outcome.reason().to_owned(),
            message: message.clone(),
        };
        let retry = match &outcome {
            ScheduleError::NoClusterFit(_) => {
                // Karmada clears the result and does not retry until something changes.
                self.record_result(key, &binding, placement, &[]).await?;
                lock(&self.unschedulable).insert(key.clone());
                Retry::Done
            }
            ScheduleError::Unschedulable(_) => {
                lock(&self.unschedulable).insert(key.clone());
                Retry::After(UNSCHEDULABLE_RETRY)
            }
            ScheduleError::Scheduler(_) => Retry::RateLimited,
        };
        if let Some(patch) = status::status_patch(binding.status, &condition, now, None) {
            self.patch_status(key, &patch).await?;
        }
        debug!(binding = %key, %message, "not scheduled");
        // With clusterAffinities each failed term already has its event; Karmada adds one for
        // the first error only when the empty result is written (NoClusterFit).
        if !uses_terms || matches!(outcome, ScheduleError::NoClusterFit(_)) {
            self.publish(
                &binding,
                key,
                EventType::Warning,
                "ScheduleBindingFailed",
                message,
            );
        }
        Ok(retry)
    }

    /// Writes `clusters` and the placement they were computed for unless the binding already
    /// carries them; returns the binding's versions after a write. A grouped binding's result
    /// is remembered for its peers until the watch brings it back (gate WorkloadAffinity).
    async fn record_result(
        &self,
        key: &BindingKey,
        binding: &BindingView<'_>,
        placement: &flotilla_api::karmada::Placement,
        clusters: &[flotilla_api::karmada::TargetCluster],
    ) -> Result<Option<flotilla_runtime::write::WrittenMeta>, kube::Error> {
        let applied = binding
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(flotilla_api::karmada::ANNOTATION_APPLIED_PLACEMENT))
            .map(String::as_str);
        if status::result_unchanged(applied, &binding.spec.clusters, placement, clusters) {
            return Ok(None);
        }
        let written = write::patch(
            &self.client,
            key,
            &status::result_patch(placement, clusters),
            false,
        )
        .await?;
        if self.config.workload_affinity
            && binding.spec.workload_affinity_groups.is_some()
            && let BindingKey::Namespaced { namespace, name } = key
        {
            lock(&self.assigning).record(
                namespace,
                name,
                written.resource_version.as_deref(),
                clusters.iter().map(|c| c.name.clone()).collect(),
            );
        }
        Ok(Some(written))
    }

    async fn patch_status(&self, key: &BindingKey, patch: &Value) -> Result<(), kube::Error> {
        write::patch(&self.client, key, patch, true).await.map(drop)
    }

    /// Records the decision on the binding and on its template, as Karmada does.
    fn publish(
        &self,
        binding: &BindingView<'_>,
        key: &BindingKey,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let (api_version, kind, namespace) = match key {
            BindingKey::Namespaced { namespace, .. } => (
                "work.karmada.io/v1alpha2",
                "ResourceBinding",
                Some(namespace.clone()),
            ),
            BindingKey::Cluster { .. } => {
                ("work.karmada.io/v1alpha2", "ClusterResourceBinding", None)
            }
        };
        let binding_ref = ObjectReference {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
            namespace,
            name: binding.metadata.name.clone(),
            uid: binding.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        let resource = &binding.spec.resource;
        let template_ref = ObjectReference {
            api_version: Some(resource.api_version.clone()),
            kind: Some(resource.kind.clone()),
            namespace: (!resource.namespace.is_empty()).then(|| resource.namespace.clone()),
            name: Some(resource.name.clone()),
            uid: (!resource.uid.is_empty()).then(|| resource.uid.clone()),
            ..ObjectReference::default()
        };
        let event = || Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note.clone()),
            action: "Schedule".to_owned(),
            secondary: None,
        };
        for reference in [binding_ref, template_ref] {
            if self.events.try_send((event(), reference)).is_err() {
                debug!(binding = %key, "dropping an event: the event buffer is full");
            }
        }
    }

    /// Writes queued events off the scheduling path, a few at a time.
    async fn publish_events(
        self: Arc<Self>,
        events: tokio::sync::mpsc::Receiver<(Event, ObjectReference)>,
    ) {
        tokio_stream::wrappers::ReceiverStream::new(events)
            .for_each_concurrent(EVENT_WRITERS, |(event, reference)| {
                let recorder = self.recorder.clone();
                async move {
                    if let Err(error) = recorder.publish(&event, &reference).await {
                        debug!(%error, "publishing an event failed");
                    }
                }
            })
            .await;
    }
}

/// What to do with a key after a reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    Done,
    After(Duration),
    /// Again after the key's backoff (errors of the scheduling algorithm).
    RateLimited,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
