//! The binding controllers (Karmada's `binding` controller runs both): for every
//! ResourceBinding and ClusterResourceBinding, one Work per target cluster
//! ([`render::render_work`]); Works of clusters no longer targeted are deleted; a deleting
//! binding deletes its Works and then drops its finalizer. Re-run when the binding's
//! generation changes (the detector bumps it on every template change) and when any
//! (Cluster)OverridePolicy changes.

mod references;
pub mod render;
pub mod works;

pub use references::{binding_reference, resource_reference, template_reference};
pub use render::expected_clusters;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use flotilla_api::karmada::names::cluster_name;
use flotilla_api::karmada::{
    Cluster, ClusterOverridePolicy, ClusterResourceBinding, OverridePolicy, ResourceBinding,
    ResourceBindingSpec, Work,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Event, EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue, write};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tracing::{debug, info, warn};

use crate::detector::build::{CRB_FINALIZER, RB_FINALIZER};
use crate::manager::{Context, ControllerTask};
use crate::metrics::Metrics;
use crate::overrides::PolicyRef;
use crate::resources::{ResolveError, Resources};
use flotilla_api::validation::karmada::{CRB_PERMANENT_ID, RB_PERMANENT_ID};
use references::{applied_override_notes, binding_of, override_failure_note};
use render::{BindingRef, RenderInput, render_targets};
use works::{WorkIndex, WorkWrite};

/// Concurrent bindings (Karmada's `--concurrent-resourcebinding-syncs`, 5 by default). 8, as
/// for Works: with 4, the propagation burst reached all applied 1–3 % later and wrote ~5 %
/// more per Deployment (docs/propagation.md, "The store's writer sleeps under load").
const WORKERS: usize = 8;

/// A binding in the queue (shared with the binding status controller).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BindingKey {
    Namespaced { namespace: String, name: String },
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

/// A binding of either kind.
#[derive(Debug, Clone)]
pub struct BindingView {
    pub key: BindingKey,
    pub metadata: ObjectMeta,
    pub spec: ResourceBindingSpec,
    pub status: flotilla_api::karmada::ResourceBindingStatus,
}

impl BindingKey {
    /// The key of a ResourceBinding (no copy of the binding).
    pub fn of_rb(b: &ResourceBinding) -> Self {
        Self::Namespaced {
            namespace: b.metadata.namespace.clone().unwrap_or_default(),
            name: b.metadata.name.clone().unwrap_or_default(),
        }
    }

    /// The key of a ClusterResourceBinding.
    pub fn of_crb(b: &ClusterResourceBinding) -> Self {
        Self::Cluster {
            name: b.metadata.name.clone().unwrap_or_default(),
        }
    }
}

/// The cached binding of `key`, from the two binding caches.
pub fn cached_view(
    bindings: &Store<ResourceBinding>,
    cluster_bindings: &Store<ClusterResourceBinding>,
    key: &BindingKey,
) -> Option<BindingView> {
    match key {
        BindingKey::Namespaced { namespace, name } => bindings
            .get(&ObjectRef::new(name).within(namespace))
            .map(|b| BindingView::from_rb(&b)),
        BindingKey::Cluster { name } => cluster_bindings
            .get(&ObjectRef::new(name))
            .map(|b| BindingView::from_crb(&b)),
    }
}

impl BindingView {
    pub fn from_rb(b: &ResourceBinding) -> Self {
        Self {
            key: BindingKey::Namespaced {
                namespace: b.metadata.namespace.clone().unwrap_or_default(),
                name: b.metadata.name.clone().unwrap_or_default(),
            },
            metadata: b.metadata.clone(),
            spec: b.spec.clone(),
            status: b.status.clone().unwrap_or_default(),
        }
    }

    pub fn from_crb(b: &ClusterResourceBinding) -> Self {
        Self {
            key: BindingKey::Cluster {
                name: b.metadata.name.clone().unwrap_or_default(),
            },
            metadata: b.metadata.clone(),
            spec: b.spec.clone(),
            status: b.status.clone().unwrap_or_default(),
        }
    }

    /// The binding's identity for its Works (`None` until admission gave it a permanent id).
    pub fn reference(&self) -> Option<BindingRef> {
        let labels = self.metadata.labels.as_ref()?;
        Some(match &self.key {
            BindingKey::Namespaced { namespace, name } => BindingRef::Namespaced {
                namespace: namespace.clone(),
                name: name.clone(),
                id: labels.get(RB_PERMANENT_ID)?.clone(),
            },
            BindingKey::Cluster { name } => BindingRef::Cluster {
                name: name.clone(),
                id: labels.get(CRB_PERMANENT_ID)?.clone(),
            },
        })
    }

    /// The clusters that must have a Work: `spec.clusters`, `requiredBy` clusters and
    /// clusters of eviction tasks not purged directly.
    pub fn expected_clusters(&self) -> BTreeSet<String> {
        expected_clusters(&self.spec)
    }
}

/// Why a binding could not be synced.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    #[error("cluster {cluster}: {source}")]
    Render {
        cluster: String,
        #[source]
        source: render::RenderError,
    },
    #[error("encoding: {0}")]
    Json(#[from] serde_json::Error),
}

/// The running controller.
pub struct BindingController {
    client: kube::Client,
    resources: Resources,
    queue: WorkQueue<BindingKey>,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    clusters: Store<Cluster>,
    overrides: Store<OverridePolicy>,
    cluster_overrides: Store<ClusterOverridePolicy>,
    works: Store<Work>,
    index: WorkIndex,
    generations: Mutex<HashMap<BindingKey, (i64, bool)>>,
    recorder: Recorder,
    metrics: Metrics,
    /// Gate `StatefulFailoverInjection`: carry an eviction's preserved label state.
    inject_state: bool,
    /// ResourceInterpreterCustomizations (`ReviseReplica`).
    interpreter: Arc<crate::interpreter::Customizations>,
}

impl std::fmt::Debug for BindingController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BindingController").finish_non_exhaustive()
    }
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move { BindingController::run(context, shutdown).await })
}

impl BindingController {
    pub async fn run(context: Context, shutdown: Shutdown) {
        let Context {
            client,
            metrics,
            informers,
            options,
            interpreter,
            ..
        } = context;
        let rbs = informers.all::<ResourceBinding>();
        let crbs = informers.all::<ClusterResourceBinding>();
        let clusters = informers.all::<Cluster>();
        let overrides = informers.all::<OverridePolicy>();
        let cluster_overrides = informers.all::<ClusterOverridePolicy>();
        let works = informers.all::<Work>();
        let this = Arc::new(Self {
            resources: Resources::new(client.clone()),
            queue: WorkQueue::named("binding-controller"),
            bindings: rbs.store(),
            cluster_bindings: crbs.store(),
            clusters: clusters.store(),
            overrides: overrides.store(),
            cluster_overrides: cluster_overrides.store(),
            works: works.store(),
            index: WorkIndex::default(),
            generations: Mutex::new(HashMap::new()),
            recorder: Recorder::new(
                client.clone(),
                Reporter {
                    controller: "binding-controller".into(),
                    instance: None,
                },
            ),
            client: client.clone(),
            metrics,
            inject_state: options.gates.stateful_failover_injection(),
            interpreter,
        });
        let mut tasks = Tasks::new();
        let me = this.clone();
        tasks.subscribe(&rbs, move |e| me.binding_event(e, BindingView::from_rb));
        let me = this.clone();
        tasks.subscribe(&crbs, move |e| me.binding_event(e, BindingView::from_crb));
        let me = this.clone();
        tasks.subscribe(&overrides, move |e| me.override_event(e));
        let me = this.clone();
        tasks.subscribe(&cluster_overrides, move |e| me.override_event(e));
        let me = this.clone();
        tasks.subscribe(&works, move |e: WatchEvent<&Work>| match e {
            WatchEvent::Apply(w) | WatchEvent::InitApply(w) => {
                me.index.upsert(w, &[RB_PERMANENT_ID, CRB_PERMANENT_ID])
            }
            WatchEvent::Delete(w) => {
                me.index.remove(w);
                // A Work deleted by anyone but its binding's own cleanup is written again (Karmada's
                // binding controller watches Work deletions for the same reason).
                if let Some(key) = binding_of(w) {
                    me.queue.add(key);
                }
            }
            _ => {}
        });
        let ready = async {
            clusters.wait_until_ready().await;
            overrides.wait_until_ready().await;
            cluster_overrides.wait_until_ready().await;
            works.wait_until_ready().await;
            this.interpreter.ready().await;
        };
        if !until_ready(&shutdown, ready).await {
            return;
        }
        let me = this.clone();
        tasks.workers(
            &this.queue,
            WORKERS,
            move |key| {
                let me = me.clone();
                async move { me.reconcile(&key).await }
            },
            |key, error| match error {
                // An optimistic write that lost a race (the binding or a Work changed since the
                // cached copy): retried from a fresher copy, nothing a user must act on.
                SyncError::Kube(kube::Error::Api(status))
                    if status.code == 409 && status.reason == "Conflict" =>
                {
                    debug!(binding = %key, %error, "a write raced another; retrying")
                }
                // The binding went while it was synced (its template deleted): the next
                // reconcile finds it gone.
                SyncError::Kube(kube::Error::Api(status))
                    if status.code == 404
                        && status.details.as_ref().is_some_and(|d| {
                            d.kind == "resourcebindings" || d.kind == "clusterresourcebindings"
                        }) =>
                {
                    debug!(binding = %key, %error, "the binding went while syncing")
                }
                _ => warn!(binding = %key, %error, "syncing Works failed; backing off"),
            },
        );
        info!("binding controller running");
        shutdown.cancelled().await;
        this.queue.shut_down();
        tasks.abort();
    }

    fn binding_event<K>(&self, event: WatchEvent<&K>, view: fn(&K) -> BindingView) {
        let (object, initial) = match event {
            WatchEvent::Apply(o) => (o, false),
            WatchEvent::InitApply(o) => (o, true),
            WatchEvent::Delete(o) => {
                let key = view(o).key;
                self.generations.lock().remove(&key);
                self.queue.forget(&key);
                return;
            }
            _ => return,
        };
        let binding = view(object);
        let shape = (
            binding.metadata.generation.unwrap_or(0),
            binding.metadata.deletion_timestamp.is_some(),
        );
        let previous = self.generations.lock().insert(binding.key.clone(), shape);
        if previous == Some(shape) {
            return;
        }
        let priority = if initial {
            Priority::Low
        } else {
            Priority::High
        };
        self.queue.add_with(binding.key, priority);
    }

    fn override_event<K>(&self, event: WatchEvent<&K>) {
        if matches!(event, WatchEvent::Apply(_) | WatchEvent::Delete(_)) {
            let keys: Vec<BindingKey> = self.generations.lock().keys().cloned().collect();
            for key in keys {
                self.queue.add(key);
            }
        }
    }

    fn view(&self, key: &BindingKey) -> Option<BindingView> {
        cached_view(&self.bindings, &self.cluster_bindings, key)
    }

    async fn reconcile(&self, key: &BindingKey) -> Result<(), SyncError> {
        let Some(binding) = self.view(key) else {
            return Ok(());
        };
        let Some(reference) = binding.reference() else {
            return Ok(());
        };
        let (label, id) = reference.id_label();
        let existing = self.index.works_of(label, id);
        if binding.metadata.deletion_timestamp.is_some() {
            for (namespace, name) in &existing {
                delete_work(&self.client, namespace, name).await?;
            }
            return self.remove_finalizer(&binding).await;
        }
        let expected = binding.expected_clusters();
        for (namespace, name) in &existing {
            let cluster = cluster_name(namespace).unwrap_or_default();
            if !expected.contains(cluster) {
                info!(binding = %key, %cluster, "cluster no longer targeted; deleting its Work");
                if let Err(error) = delete_work(&self.client, namespace, name).await {
                    // Karmada's `removeOrphanWorks` reports the failure on the binding.
                    self.recorder
                        .note(
                            &binding_reference(&binding),
                            EventType::Warning,
                            "CleanupWorkFailed",
                            "CleanupWork",
                            flotilla_runtime::errors::message(&error),
                        )
                        .await;
                    return Err(error.into());
                }
            }
        }
        // An eviction purged `Directly` deletes the old copy before the new one is written
        // (Karmada's `checkDirectPurgeOrphanWorks`); the Work's deletion requeues the binding.
        let directly = render::directly_purged_clusters(&binding.spec);
        if existing.iter().any(|(namespace, _)| {
            cluster_name(namespace).is_ok_and(|c| directly.contains(c) && !expected.contains(c))
        }) {
            info!(binding = %key, "waiting until the Works of clusters evicted Directly are gone");
            return Ok(());
        }
        let resource = &binding.spec.resource;
        let served = self
            .resources
            .resolve(&resource.api_version, &resource.kind)
            .await?;
        let Some(template) = self
            .resources
            .api(&served, &resource.namespace)
            .get_opt(&resource.name)
            .await?
        else {
            return Ok(());
        };
        let template = serde_json::to_value(&template)?;
        let started = Instant::now();
        let targets = render_targets(&binding.spec);
        let overrides: Vec<Arc<OverridePolicy>> = self
            .overrides
            .state()
            .into_iter()
            .filter(|p| p.metadata.namespace.as_deref() == Some(resource.namespace.as_str()))
            .collect();
        let cluster_overrides = self.cluster_overrides.state();
        let mut failures = Vec::new();
        let mut written = Vec::new();
        let mut overridden = Vec::new();
        for (cluster_name, replicas) in &targets {
            // The cached Cluster is borrowed, not copied (its API enablements are large).
            let cluster = self
                .clusters
                .get(&ObjectRef::new(cluster_name))
                .unwrap_or_else(|| {
                    Arc::new(Cluster {
                        metadata: ObjectMeta {
                            name: Some(cluster_name.clone()),
                            ..ObjectMeta::default()
                        },
                        ..Cluster::default()
                    })
                });
            let input = RenderInput {
                binding: &reference,
                spec: &binding.spec,
                cluster: &cluster,
                replicas: *replicas,
                cluster_overrides: cluster_overrides
                    .iter()
                    .map(|p| PolicyRef::from(&**p))
                    .collect(),
                overrides: overrides.iter().map(|p| PolicyRef::from(&**p)).collect(),
                injected_labels: if self.inject_state {
                    render::injected_labels(&binding.spec, cluster_name, targets.len())
                } else {
                    None
                },
            };
            // A webhook answering ReviseReplica is called here (rendering itself is not async);
            // the revised workload is then rendered without revising it again.
            let mut revised = None;
            if binding.spec.is_workload()
                && let Some(replicas) = input.replicas
                && self.interpreter.webhook_revises(&template)
            {
                match self
                    .interpreter
                    .revise_replica_by_webhook(&template, replicas)
                    .await
                {
                    Some(Ok(workload)) => revised = Some(workload),
                    Some(Err(error)) => {
                        failures.push(SyncError::Render {
                            cluster: cluster_name.clone(),
                            source: render::RenderError::Customized(error.to_string()),
                        });
                        continue;
                    }
                    None => {}
                }
            }
            let input = RenderInput {
                replicas: if revised.is_some() {
                    None
                } else {
                    input.replicas
                },
                ..input
            };
            let work = match render::render_work_with(
                revised.as_ref().unwrap_or(&template),
                &input,
                Some(&self.interpreter),
            ) {
                Ok(work) => work,
                Err(source) => {
                    if let Some(note) =
                        override_failure_note(&source, &resource.namespace, cluster_name)
                    {
                        self.template_event(
                            &template,
                            EventType::Warning,
                            "ApplyOverridePolicyFailed",
                            note,
                        )
                        .await;
                    }
                    failures.push(SyncError::Render {
                        cluster: cluster_name.clone(),
                        source,
                    });
                    continue;
                }
            };
            let stored = self.works.get(
                &ObjectRef::new(work.metadata.name.as_deref().unwrap_or(""))
                    .within(work.metadata.namespace.as_deref().unwrap_or("")),
            );
            let applied = applied_override_notes(&work, &resource.namespace, cluster_name);
            match works::ensure_work(&self.client, work, stored.as_deref()).await {
                Ok(WorkWrite::Unchanged) => {}
                Ok(_) => {
                    written.push(cluster_name.clone());
                    overridden.extend(applied);
                }
                Err(error) => failures.push(SyncError::Kube(error)),
            }
        }
        debug!(binding = %key, elapsed = ?started.elapsed(), "synced Works");
        self.metrics
            .observe_sync_work(failures.is_empty(), started.elapsed());
        if let Some(error) = failures.into_iter().next() {
            let message = format!("Failed to sync work: {error}");
            self.publish(
                &binding,
                &template,
                EventType::Warning,
                "SyncWorkFailed",
                message,
            )
            .await;
            return Err(error);
        }
        // Karmada's override manager reports each policy it applied, on the template.
        for note in overridden {
            self.template_event(
                &template,
                EventType::Normal,
                "ApplyOverridePolicySucceed",
                note,
            )
            .await;
        }
        if !written.is_empty() {
            self.publish(
                &binding,
                &template,
                EventType::Normal,
                "SyncWorkSucceed",
                // Karmada's wording (`syncBinding`); it records this after every sync, Flotilla
                // after the syncs that wrote a Work.
                match &binding.key {
                    BindingKey::Namespaced { namespace, name } => {
                        format!("Sync work of ResourceBinding({namespace}/{name}) successful.")
                    }
                    BindingKey::Cluster { name } => {
                        format!("Sync work of ClusterResourceBinding({name}) successful.")
                    }
                },
            )
            .await;
        }
        Ok(())
    }

    /// An override manager's event on the template (`ApplyOverridePolicy…`).
    async fn template_event(&self, template: &Value, type_: EventType, reason: &str, note: String) {
        self.recorder
            .note(
                &template_reference(template),
                type_,
                reason,
                "ApplyOverridePolicy",
                note,
            )
            .await;
    }

    async fn remove_finalizer(&self, binding: &BindingView) -> Result<(), SyncError> {
        let finalizer = match binding.key {
            BindingKey::Namespaced { .. } => RB_FINALIZER,
            BindingKey::Cluster { .. } => CRB_FINALIZER,
        };
        let finalizers: Vec<&String> = binding.metadata.finalizers.iter().flatten().collect();
        if !finalizers.iter().any(|f| *f == finalizer) {
            return Ok(());
        }
        let kept: Vec<&String> = finalizers.into_iter().filter(|f| *f != finalizer).collect();
        let patch = json!({"metadata": {"finalizers": kept,
            "resourceVersion": binding.metadata.resource_version}});
        patch_binding(&self.client, &binding.key, &patch).await?;
        Ok(())
    }

    async fn publish(
        &self,
        binding: &BindingView,
        template: &Value,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: "SyncWork".to_owned(),
            secondary: None,
        };
        for reference in [binding_reference(binding), template_reference(template)] {
            if let Err(error) = self.recorder.publish(&event, &reference).await {
                debug!(%error, "publishing an event failed");
            }
        }
    }
}

/// Deletes a Work (absent is fine).
pub async fn delete_work(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<(), kube::Error> {
    match Api::<Work>::namespaced(client.clone(), namespace)
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

/// A merge patch of a binding.
pub async fn patch_binding(
    client: &kube::Client,
    key: &BindingKey,
    patch: &Value,
) -> Result<(), kube::Error> {
    let params = PatchParams::default();
    match key {
        BindingKey::Namespaced { namespace, name } => {
            Api::<ResourceBinding>::namespaced(client.clone(), namespace)
                .patch(name, &params, &Patch::Merge(patch))
                .await?;
        }
        BindingKey::Cluster { name } => {
            Api::<ClusterResourceBinding>::all(client.clone())
                .patch(name, &params, &Patch::Merge(patch))
                .await?;
        }
    }
    Ok(())
}

/// A merge patch of a binding's status.
pub async fn patch_binding_status(
    client: &kube::Client,
    key: &BindingKey,
    patch: &Value,
) -> Result<(), kube::Error> {
    // The answer (the whole binding, aggregated statuses included) is not decoded: callers
    // go on from their informers.
    match key {
        BindingKey::Namespaced { namespace, name } => {
            write::merge_patch_status::<ResourceBinding>(client, Some(namespace), name, patch)
                .await?;
        }
        BindingKey::Cluster { name } => {
            write::merge_patch_status::<ClusterResourceBinding>(client, None, name, patch).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
