//! The execution controller (Karmada's `execution-controller`): applies each Work's manifests to
//! its member cluster and keeps them there.
//!
//! In the controller manager (`Context::cluster` is `None`) it handles the Works of `Push`
//! clusters; in the agent only those of `karmada-es-<its cluster>`. For each Work: deletion
//! (delete the member objects, or strip Flotilla's marks with `preserveResourcesOnDeletion`, then
//! drop the `karmada.io/execution-controller` finalizer); the `Dispatching` condition and
//! `suspendDispatching`; the cluster must be Ready; then every manifest is created or updated
//! (see [`apply`]) and the `Applied` condition records the outcome with Karmada's reasons and
//! messages. Failures are retried with per-Work exponential backoff.
//!
//! Member objects are watched through per-member informers ([`crate::member_cache`]): a change
//! Flotilla did not make (someone edited the object in the member) or a deletion re-queues the
//! Work, which writes the manifest back — drift is repaired.

pub mod apply;
mod conditions;
mod drift;
mod notes;

pub use conditions::{is_ready, set_status_condition};

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{
    Cluster, EXECUTION_CONTROLLER_FINALIZER, WORK_APPLIED, WORK_DISPATCHING, WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION, Work, names,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Event, EventType, Recorder, Reporter};
use flotilla_runtime::{Backoff, Priority, Shared, Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::manager::{Context, ControllerTask};
use crate::member_cache::{InformerKey, MemberCache, MemberEvent};
use apply::{Applier, ApplyError, Outcome, Versions, api_message};
use conditions::condition;
use drift::{Drift, observed, requeue_after_change, requeue_after_delete};
use notes::{aggregate, applied_note, apply_failed_note, synced_note};

/// The `--controllers` name.
pub const NAME: &str = "execution";
/// Name used for events (Karmada's).
const REPORTER: &str = "execution-controller";
/// Karmada's event reasons for a sync.
const SYNC_SUCCEED: &str = "SyncWorkloadSucceed";
const SYNC_FAILED: &str = "SyncWorkloadFailed";
/// Per-Work backoff after a failure (controller-runtime's default limiter).
const BACKOFF: Backoff = Backoff {
    base: Duration::from_millis(5),
    max: Duration::from_secs(1000),
};

/// A Work, by namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkKey {
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for WorkKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl WorkKey {
    pub fn of(work: &Work) -> Self {
        Self {
            namespace: work.metadata.namespace.clone().unwrap_or_default(),
            name: work.metadata.name.clone().unwrap_or_default(),
        }
    }

    /// The Work a member object was applied from (annotations), if any.
    pub fn from_member_object(object: &kube::api::DynamicObject) -> Option<Self> {
        let annotations = object.metadata.annotations.as_ref()?;
        let namespace = annotations.get(WORK_NAMESPACE_ANNOTATION)?;
        let name = annotations.get(WORK_NAME_ANNOTATION)?;
        (!namespace.is_empty() && !name.is_empty()).then(|| Self {
            namespace: namespace.clone(),
            name: name.clone(),
        })
    }

    /// A merge patch of this Work's status, its answer read for the version only (the
    /// controllers go on from their informers).
    pub async fn patch_status(
        &self,
        client: &kube::Client,
        patch: &serde_json::Value,
    ) -> Result<flotilla_runtime::write::Written, kube::Error> {
        flotilla_runtime::write::merge_patch_status::<Work>(
            client,
            Some(&self.namespace),
            &self.name,
            patch,
        )
        .await
    }
}

/// Starts the controller (the `CONTROLLERS` entry).
pub fn start(ctx: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move { Execution::new(ctx).run(shutdown).await })
}

/// Why one Work did not sync.
#[derive(Debug, thiserror::Error)]
enum SyncError {
    #[error("cluster({0}) not found")]
    ClusterNotFound(String),
    #[error("cluster({0}) not ready")]
    ClusterNotReady(String),
    #[error("{0}")]
    Member(#[from] flotilla_member::MemberError),
    #[error("{0}")]
    Apply(#[from] ApplyError),
    #[error("{}", api_message(.0))]
    ControlPlane(#[from] kube::Error),
    #[error("{0}")]
    Failed(String),
}

struct Execution {
    ctx: Context,
    queue: WorkQueue<WorkKey>,
    works: Store<Work>,
    clusters: Store<Cluster>,
    members: Arc<MemberCache>,
    versions: Arc<Versions>,
    /// Per Work: generation and whether it was deleting when last queued.
    seen: Mutex<HashMap<WorkKey, (i64, bool)>>,
    /// Per cluster: Ready when last seen.
    ready: Mutex<HashMap<String, bool>>,
    recorder: Recorder,
    /// The shared informers behind `works` and `clusters`.
    informers: (Shared<Work>, Shared<Cluster>),
}

/// The user of the shared member informers for `work` (named apart from the work-status
/// controller's).
fn member_user(work: &WorkKey) -> String {
    format!("{NAME}/{work}")
}

/// The `Dispatching` condition a Work needs (False with reason `SuspendDispatching` while
/// suspended, else True with reason `Dispatching`), or `None` when it has one of that status
/// already (Karmada's `updateWorkDispatchingConditionIfNeeded`). Its message is also the note of
/// the `WorkDispatching` event.
fn dispatching_condition(work: &Work) -> Option<Condition> {
    let wanted = if work.is_suspended() {
        condition(
            WORK_DISPATCHING,
            "False",
            "SuspendDispatching",
            "Work dispatching is in a suspended state.",
        )
    } else {
        condition(
            WORK_DISPATCHING,
            "True",
            "Dispatching",
            "Work is being dispatched to member clusters.",
        )
    };
    let present = work
        .condition(WORK_DISPATCHING)
        .is_some_and(|c| c.status == wanted.status);
    (!present).then_some(wanted)
}

/// What a deleting Work does to its member objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cleanup {
    /// `preserveResourcesOnDeletion`: keep them, without Flotilla's marks.
    Release,
    /// Delete them.
    Delete,
}

/// Karmada's `handleWorkDelete`: release the member objects with `preserveResourcesOnDeletion`,
/// else delete them from a Ready cluster; an unready cluster fails (and is retried) unless it is
/// being removed itself, when there is nothing to clean (`None`).
fn cleanup_for(work: &Work, cluster: &Cluster) -> Result<Option<Cleanup>, SyncError> {
    if work.spec.preserve_resources_on_deletion == Some(true) {
        return Ok(Some(Cleanup::Release));
    }
    if is_ready(cluster) {
        return Ok(Some(Cleanup::Delete));
    }
    if cluster.is_deleting() {
        return Ok(None);
    }
    Err(SyncError::ClusterNotReady(cluster.name().to_owned()))
}

impl Execution {
    fn new(ctx: Context) -> Arc<Self> {
        let informers = (ctx.member_works(), ctx.informers.all::<Cluster>());
        let recorder = Recorder::new(
            ctx.client.clone(),
            Reporter {
                controller: REPORTER.into(),
                instance: None,
            },
        );
        let versions = Arc::new(Versions::default());
        Arc::new_cyclic(|this: &std::sync::Weak<Execution>| {
            let handler_this = this.clone();
            let drift = Drift::default();
            let members = ctx.member_objects.clone();
            members.subscribe(Arc::new(move |event| {
                if let Some(execution) = handler_this.upgrade() {
                    execution.member_event(&drift, event);
                }
            }));
            Execution {
                queue: WorkQueue::named_with("execution-controller", BACKOFF),
                works: informers.0.store(),
                clusters: informers.1.store(),
                members,
                versions,
                seen: Mutex::new(HashMap::new()),
                ready: Mutex::new(HashMap::new()),
                recorder,
                informers,
                ctx,
            }
        })
    }

    async fn run(self: Arc<Self>, shutdown: Shutdown) {
        let mut tasks = Tasks::new();
        let me = self.clone();
        tasks.subscribe(&self.informers.1, move |event| me.cluster_event(event));
        let me = self.clone();
        tasks.subscribe(&self.informers.0, move |event| me.work_event(event));
        let ready = async {
            self.informers.1.wait_until_ready().await;
            self.informers.0.wait_until_ready().await;
            self.ctx.interpreter.ready().await;
        };
        until_ready(&shutdown, ready).await;
        let me = self.clone();
        tasks.workers(
            &self.queue,
            self.ctx.options.concurrent_work_syncs.max(1),
            move |key| {
                let me = me.clone();
                async move { me.reconcile(&key).await }
            },
            |key, error| match error {
                // Queued again when the cluster turns Ready (`cluster_event`); right after a
                // join every Work of the cluster meets this, so it is no warning.
                SyncError::ClusterNotReady(_) => {
                    tracing::debug!(work = %key, %error, "waiting for the cluster to be ready")
                }
                _ => tracing::warn!(work = %key, %error, "syncing work failed"),
            },
        );
        shutdown.cancelled().await;
        self.queue.shut_down();
        tasks.abort();
    }

    fn work_event(&self, event: watcher::Event<&Work>) {
        match event {
            watcher::Event::Apply(work) => self.work_seen(work, Priority::High),
            watcher::Event::InitApply(work) => self.work_seen(work, Priority::Low),
            watcher::Event::Delete(work) => {
                let key = WorkKey::of(work);
                self.seen.lock().remove(&key);
                self.queue.add(key);
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }

    /// Queues a Work when its spec changed or its deletion started (status updates are ours).
    fn work_seen(&self, work: &Work, priority: Priority) {
        let Some(namespace) = work.metadata.namespace.as_deref() else {
            return;
        };
        if names::cluster_name(namespace).is_err() {
            return;
        }
        let key = WorkKey::of(work);
        let shape = (work.metadata.generation.unwrap_or(0), work.is_deleting());
        if self.seen.lock().insert(key.clone(), shape) == Some(shape) {
            return;
        }
        self.queue.add_with(key, priority);
    }

    fn cluster_event(&self, event: watcher::Event<&Cluster>) {
        match event {
            watcher::Event::Apply(cluster) | watcher::Event::InitApply(cluster) => {
                let name = cluster.name().to_owned();
                let ready = is_ready(cluster);
                let before = self.ready.lock().insert(name.clone(), ready);
                // A cluster that became Ready gets its pending Works at once.
                if ready && before != Some(true) {
                    self.queue_cluster(&name);
                }
            }
            watcher::Event::Delete(cluster) => {
                self.ready.lock().remove(cluster.name());
                self.members.forget_cluster(cluster.name());
                self.ctx.members.invalidate(cluster.name());
                self.queue_cluster(cluster.name());
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }

    fn queue_cluster(&self, cluster: &str) {
        let namespace = names::execution_space_name(cluster);
        for work in self.works.state() {
            if work.metadata.namespace.as_deref() == Some(namespace.as_str()) {
                self.queue.add(WorkKey::of(&work));
            }
        }
    }

    /// A member object changed: re-apply its Work unless the change is Flotilla's own write or
    /// touches only status and bookkeeping (Karmada's `onAdd`/`onUpdate`/`onDelete`).
    fn member_event(&self, drift: &Drift, event: MemberEvent) {
        let (key, object, deleted) = match &event {
            MemberEvent::Applied { key, object, .. } => (key, object, false),
            MemberEvent::Deleted { key, object } => (key, object, true),
        };
        let id = (
            key.clone(),
            object.metadata.namespace.clone().unwrap_or_default(),
            object.metadata.name.clone().unwrap_or_default(),
        );
        let work = if deleted {
            let before = drift.forget(&id);
            requeue_after_delete(&key.cluster, object, before.as_ref())
        } else {
            let now = observed(&key.cluster, object);
            let before = drift.observe(id.clone(), now.clone());
            let recorded = self.versions.get(&id);
            requeue_after_change(
                &key.cluster,
                object,
                before.as_ref(),
                &now,
                recorded.as_deref(),
            )
        };
        if let Some(work) = work {
            tracing::debug!(cluster = %key.cluster, %work, deleted, "member object drifted; re-applying");
            self.queue.add(work);
        }
    }

    async fn reconcile(&self, key: &WorkKey) -> Result<(), SyncError> {
        let reference = ObjectRef::<Work>::new(&key.name).within(&key.namespace);
        let Some(work) = self.works.get(&reference) else {
            self.members.release(&member_user(key));
            return Ok(());
        };
        let Ok(cluster_name) = names::cluster_name(&key.namespace) else {
            return Ok(());
        };
        if let Some(own) = &self.ctx.cluster
            && own != cluster_name
        {
            return Ok(());
        }
        let cluster = self
            .clusters
            .get(&ObjectRef::new(cluster_name))
            .ok_or_else(|| SyncError::ClusterNotFound(cluster_name.to_owned()))?;
        if self.ctx.cluster.is_none() && cluster.spec.sync_mode != "Push" {
            return Ok(());
        }
        let mut work = (*work).clone();
        if work.is_deleting() {
            self.delete(&work, &cluster).await?;
            self.members.release(&member_user(key));
            return self.remove_finalizer(&work).await;
        }
        self.ensure_finalizer(&mut work).await?;
        // A newly dispatching Work's `Dispatching` condition is written together with the
        // `Applied` result (one status write instead of two); a suspension at once.
        let dispatching = self.update_dispatching(&mut work).await?;
        if work.is_suspended() {
            tracing::debug!(work = %key, "dispatching is suspended");
            return Ok(());
        }
        if !is_ready(&cluster) {
            self.write_dispatching(&mut work, dispatching).await?;
            return Err(SyncError::ClusterNotReady(cluster_name.to_owned()));
        }
        let started = std::time::Instant::now();
        let synced = self.sync(&mut work, cluster_name, dispatching).await;
        self.ctx
            .metrics
            .observe_sync_workload(synced.is_ok(), started.elapsed());
        synced
    }

    /// Applies every manifest and records the `Applied` condition.
    async fn sync(
        &self,
        work: &mut Work,
        cluster: &str,
        dispatching: Option<Condition>,
    ) -> Result<(), SyncError> {
        let started = std::time::Instant::now();
        let key = WorkKey::of(work);
        let client = match self.ctx.members.client(cluster).await {
            Ok(client) => client,
            Err(error) => {
                self.write_dispatching(work, dispatching).await?;
                return Err(error.into());
            }
        };
        let applier = Applier {
            cache: &self.members,
            versions: &self.versions,
            cluster,
            client,
            metrics: &self.ctx.metrics,
            interpreter: &self.ctx.interpreter,
        };
        let manifests = work.spec.workload.values();
        let mut informers = Vec::new();
        for manifest in &manifests {
            let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
            let kind = manifest["kind"].as_str().unwrap_or_default();
            if let Ok(resolved) = self.members.resolve(cluster, api_version, kind).await {
                informers.push((
                    InformerKey {
                        cluster: cluster.to_owned(),
                        api_version: api_version.to_owned(),
                        kind: kind.to_owned(),
                    },
                    resolved.resource,
                ));
            }
        }
        if let Err(error) = self
            .members
            .use_informers(&member_user(&key), informers)
            .await
        {
            self.write_dispatching(work, dispatching).await?;
            return Err(error.into());
        }
        let mut errors = Vec::new();
        let mut succeeded = 0;
        // Something was written, or the Work was not applied before: worth a Work event.
        let mut changed = !work.is_applied();
        for manifest in &manifests {
            match applier.apply(manifest).await {
                Ok(outcome) => {
                    succeeded += 1;
                    if outcome != Outcome::Unchanged {
                        changed = true;
                        let note = applied_note(manifest, cluster);
                        self.event_on_template(manifest, EventType::Normal, SYNC_SUCCEED, note)
                            .await;
                    }
                }
                Err(error) => {
                    let note = apply_failed_note(manifest, cluster, &error);
                    self.event_on_template(manifest, EventType::Warning, SYNC_FAILED, note)
                        .await;
                    errors.push(error.to_string());
                }
            }
        }
        tracing::debug!(work = %key, elapsed = ?started.elapsed(), "synced work");
        let mut conditions: Vec<Condition> = dispatching.iter().cloned().collect();
        if errors.is_empty() {
            conditions.push(condition(
                WORK_APPLIED,
                "True",
                "AppliedSuccessful",
                "Manifest has been successfully applied",
            ));
            self.set_conditions(work, conditions).await?;
            self.dispatching_event(work, dispatching).await;
            if changed {
                let note = synced_note(&key, cluster);
                self.event_on_work(work, EventType::Normal, SYNC_SUCCEED, note)
                    .await;
            }
            return Ok(());
        }
        let message = format!(
            "Failed to apply all manifests ({succeeded}/{}): {}",
            manifests.len(),
            aggregate(&errors)
        );
        let note = format!(
            "Failed to sync work({key}) to cluster({cluster}), err: {}",
            aggregate(&errors)
        );
        self.event_on_work(work, EventType::Warning, SYNC_FAILED, note)
            .await;
        conditions.push(condition(WORK_APPLIED, "False", "AppliedFailed", &message));
        self.set_conditions(work, conditions).await?;
        self.dispatching_event(work, dispatching).await;
        Err(SyncError::Failed(message))
    }

    /// Deletes (or releases) the member objects of a deleting Work.
    async fn delete(&self, work: &Work, cluster: &Cluster) -> Result<(), SyncError> {
        let name = cluster.name();
        let Some(cleanup) = cleanup_for(work, cluster)? else {
            return Ok(());
        };
        let preserve = cleanup == Cleanup::Release;
        let client = self.ctx.members.client(name).await?;
        let applier = Applier {
            cache: &self.members,
            versions: &self.versions,
            cluster: name,
            client,
            metrics: &self.ctx.metrics,
            interpreter: &self.ctx.interpreter,
        };
        for manifest in &work.spec.workload.manifests {
            let manifest = manifest.to_value();
            if preserve {
                applier.release(&manifest).await?;
            } else {
                applier.delete(&manifest).await?;
            }
        }
        Ok(())
    }

    async fn ensure_finalizer(&self, work: &mut Work) -> Result<(), SyncError> {
        let finalizers = work.metadata.finalizers.clone().unwrap_or_default();
        if finalizers
            .iter()
            .any(|f| f == EXECUTION_CONTROLLER_FINALIZER)
        {
            return Ok(());
        }
        let mut wanted = finalizers;
        wanted.push(EXECUTION_CONTROLLER_FINALIZER.to_owned());
        *work = self.patch_finalizers(work, wanted).await?;
        Ok(())
    }

    async fn remove_finalizer(&self, work: &Work) -> Result<(), SyncError> {
        let finalizers = work.metadata.finalizers.clone().unwrap_or_default();
        if !finalizers
            .iter()
            .any(|f| f == EXECUTION_CONTROLLER_FINALIZER)
        {
            return Ok(());
        }
        let wanted = finalizers
            .into_iter()
            .filter(|f| f != EXECUTION_CONTROLLER_FINALIZER)
            .collect();
        match self.patch_finalizers(work, wanted).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    async fn patch_finalizers(
        &self,
        work: &Work,
        finalizers: Vec<String>,
    ) -> Result<Work, kube::Error> {
        let key = WorkKey::of(work);
        let api: Api<Work> = Api::namespaced(self.ctx.client.clone(), &key.namespace);
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": work.metadata.resource_version,
        }});
        api.patch(&key.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
    }

    /// Karmada's `updateWorkDispatchingConditionIfNeeded`: a suspension is written at once;
    /// a newly wanted `Dispatching=True` is returned to be written with the apply result.
    async fn update_dispatching(&self, work: &mut Work) -> Result<Option<Condition>, SyncError> {
        let Some(wanted) = dispatching_condition(work) else {
            return Ok(None);
        };
        if work.is_suspended() {
            self.write_dispatching(work, Some(wanted)).await?;
            return Ok(None);
        }
        Ok(Some(wanted))
    }

    /// Writes a pending `Dispatching` condition on its own (when no `Applied` result follows).
    async fn write_dispatching(
        &self,
        work: &mut Work,
        dispatching: Option<Condition>,
    ) -> Result<(), SyncError> {
        if let Some(wanted) = dispatching.clone() {
            self.set_conditions(work, vec![wanted]).await?;
            self.dispatching_event(work, dispatching).await;
        }
        Ok(())
    }

    async fn dispatching_event(&self, work: &Work, dispatching: Option<Condition>) {
        if let Some(condition) = dispatching {
            self.event_on_work(
                work,
                EventType::Normal,
                "WorkDispatching",
                condition.message,
            )
            .await;
        }
    }

    /// Sets conditions as `meta.SetStatusCondition` does (the transition time moves only when
    /// the status changes) and writes the status if anything changed, retrying on conflicts.
    async fn set_conditions(
        &self,
        work: &mut Work,
        wanted: Vec<Condition>,
    ) -> Result<(), SyncError> {
        let key = WorkKey::of(work);
        let api: Api<Work> = Api::namespaced(self.ctx.client.clone(), &key.namespace);
        for _ in 0..5 {
            let mut conditions = work
                .status
                .as_ref()
                .map(|s| s.conditions.clone())
                .unwrap_or_default();
            let mut changed = false;
            for condition in &wanted {
                changed |= set_status_condition(&mut conditions, condition.clone());
            }
            if !changed {
                return Ok(());
            }
            let patch = json!({
                "metadata": {"resourceVersion": work.metadata.resource_version},
                "status": {"conditions": conditions},
            });
            // The answer is read for its version only; the Work is brought up to date here
            // with what was written (a later write in this reconcile is conditional on it).
            match key.patch_status(&self.ctx.client, &patch).await {
                Ok(written) => {
                    work.metadata.resource_version = written.metadata.resource_version;
                    work.status.get_or_insert_with(Default::default).conditions = conditions;
                    return Ok(());
                }
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    *work = api.get(&key.name).await?;
                }
                Err(error) => return Err(error.into()),
            }
        }
        Err(SyncError::Failed(format!(
            "conflicts writing the status of work {key}"
        )))
    }

    async fn event_on_work(&self, work: &Work, type_: EventType, reason: &str, note: String) {
        use kube::Resource;
        let reference = work.object_ref(&());
        self.publish(type_, reason, note, &reference).await;
    }

    /// Events about a workload go to its template in the control plane (Karmada's
    /// `GenEventRef`: the manifest's identity with the template UID annotation).
    async fn event_on_template(
        &self,
        manifest: &Value,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let meta = &manifest["metadata"];
        let string = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let reference = k8s_openapi::api::core::v1::ObjectReference {
            api_version: string(&manifest["apiVersion"]),
            kind: string(&manifest["kind"]),
            namespace: string(&meta["namespace"]),
            name: string(&meta["name"]),
            uid: string(
                &meta["annotations"][flotilla_api::karmada::RESOURCE_TEMPLATE_UID_ANNOTATION],
            ),
            ..Default::default()
        };
        if reference.uid.is_none() {
            return;
        }
        self.publish(type_, reason, note, &reference).await;
    }

    async fn publish(
        &self,
        type_: EventType,
        reason: &str,
        note: String,
        reference: &k8s_openapi::api::core::v1::ObjectReference,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: reason.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, reference).await {
            tracing::debug!(%error, "publishing an event");
        }
    }
}

#[cfg(test)]
mod tests;
