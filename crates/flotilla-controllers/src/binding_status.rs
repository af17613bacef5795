//! The binding status controllers (Karmada's `bindingStatus`): once a binding is scheduled,
//! its `status.aggregatedStatus` (one item per Work: applied, message, the member's status and
//! health) and `FullyApplied` condition follow the Works, and the template's status is
//! aggregated from the items by the interpreter ([`crate::interpreter::aggregate_status`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::names::cluster_name;
use flotilla_api::karmada::{
    AggregatedStatusItem, ClusterResourceBinding, HEALTH_UNKNOWN, ObjectReference, ResourceBinding,
    WORK_CONDITION_APPLIED, Work,
};
use flotilla_api::validation::karmada::{CRB_PERMANENT_ID, RB_PERMANENT_ID};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Event, EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use serde_json::json;
use tracing::{debug, info};

use crate::binding::render::{CRB_NAME_ANNOTATION, RB_NAME_ANNOTATION, RB_NAMESPACE_ANNOTATION};
use crate::binding::works::WorkIndex;
use crate::binding::{BindingKey, BindingView, binding_reference, patch_binding_status};
use crate::manager::{Context, ControllerTask};
use crate::metrics::{BindingState, Metrics, TemplateId};
use crate::resources::{ResolveError, Resources};

/// Condition type: every Work of the binding is applied.
pub const CONDITION_FULLY_APPLIED: &str = "FullyApplied";
/// Write conflicts retried at once from a fresh read before backing off.
const CONFLICT_RETRIES: u32 = 3;
/// How long a binding whose Works have not all reported waits for them (see
/// [`BindingStatusController::queue_aggregation`]): idle, briefly; under load (at least
/// [`LOADED`] bindings waiting), long enough for the rest of the pipeline to catch up.
const WAIT_IDLE: std::time::Duration = std::time::Duration::from_secs(2);
const WAIT_LOADED: std::time::Duration = std::time::Duration::from_secs(30);
const LOADED: usize = 16;
const REASON_FULLY_APPLIED: &str = "FullyAppliedSuccess";
const MESSAGE_FULLY_APPLIED: &str = "All works have been successfully applied";
const REASON_NOT_FULLY_APPLIED: &str = "FullyAppliedFailed";
const MESSAGE_NOT_FULLY_APPLIED: &str =
    "Failed to apply all works, see status.aggregatedStatus for details";

/// Concurrent bindings aggregated. 8, as for Works (see `binding::WORKERS`).
const WORKERS: usize = 8;

/// Why a status could not be written.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    #[error("encoding: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Customized(#[from] crate::interpreter::CustomizedError),
}

/// What [`manifest_ordinal`] reads of a manifest.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestHead {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: ManifestHeadMeta,
}

#[derive(Default, serde::Deserialize)]
struct ManifestHeadMeta {
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

/// The index of `resource` among the Work's manifests (Karmada's `GetManifestIndex`): the
/// ordinal its manifest status is reported under. `None` when the Work does not carry it.
pub fn manifest_ordinal(work: &Work, resource: &ObjectReference) -> Option<i32> {
    let index = work.spec.workload.manifests.iter().position(|manifest| {
        manifest.parse::<ManifestHead>().is_ok_and(|head| {
            head.api_version == resource.api_version
                && head.kind == resource.kind
                && head.metadata.namespace.unwrap_or_default() == resource.namespace
                && head.metadata.name.unwrap_or_default() == resource.name
        })
    })?;
    i32::try_from(index).ok()
}

/// One aggregated item per non-deleting Work, sorted by cluster. An applied Work's item takes
/// the status and health of the manifest status whose identifier is the resource at its
/// manifest's ordinal (Karmada's `equalIdentifier`); a Work not carrying the resource (which
/// fails Karmada's whole aggregation) gets an item without member status.
pub fn aggregated_items(works: &[&Work], resource: &ObjectReference) -> Vec<AggregatedStatusItem> {
    let (group, version) = match resource.api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", resource.api_version.as_str()),
    };
    let mut items: Vec<AggregatedStatusItem> = works
        .iter()
        .filter(|w| w.metadata.deletion_timestamp.is_none())
        .filter_map(|work| {
            let cluster = cluster_name(work.metadata.namespace.as_deref()?).ok()?;
            let status = work.status.as_ref();
            let applied = status.and_then(|s| {
                s.conditions
                    .iter()
                    .find(|c| c.type_ == WORK_CONDITION_APPLIED)
            });
            let mut item = AggregatedStatusItem {
                cluster_name: cluster.to_owned(),
                applied: applied.is_some_and(|c| c.status == "True"),
                health: HEALTH_UNKNOWN.to_owned(),
                ..AggregatedStatusItem::default()
            };
            if !item.applied {
                item.applied_message = applied.map(|c| c.message.clone()).unwrap_or_default();
                return Some(item);
            }
            let ordinal = manifest_ordinal(work, resource);
            if let Some(manifest) =
                status
                    .into_iter()
                    .flat_map(|s| &s.manifest_statuses)
                    .find(|m| {
                        let id = &m.identifier;
                        Some(id.ordinal) == ordinal
                            && id.kind == resource.kind
                            && id.name == resource.name
                            && id.namespace == resource.namespace
                            && id.group == group
                            && (id.version.is_empty() || id.version == version)
                    })
            {
                item.status = manifest.status.clone();
                if !manifest.health.is_empty() {
                    item.health = manifest.health.clone();
                }
            }
            Some(item)
        })
        .collect();
    items.sort_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
    items
}

/// Karmada's `FullyApplied`: the expected clusters are non-empty, every one has an item and
/// every item is applied and expected.
pub fn fully_applied(expected: &BTreeSet<String>, items: &[AggregatedStatusItem]) -> bool {
    !expected.is_empty()
        && items.len() == expected.len()
        && items
            .iter()
            .all(|i| i.applied && expected.contains(&i.cluster_name))
}

/// `conditions` with `FullyApplied` set (its transition time kept when the status is unchanged).
pub fn with_fully_applied(conditions: &[Condition], applied: bool, now: Time) -> Vec<Condition> {
    let (status, reason, message) = if applied {
        ("True", REASON_FULLY_APPLIED, MESSAGE_FULLY_APPLIED)
    } else {
        ("False", REASON_NOT_FULLY_APPLIED, MESSAGE_NOT_FULLY_APPLIED)
    };
    let mut out: Vec<Condition> = conditions.to_vec();
    match out.iter_mut().find(|c| c.type_ == CONDITION_FULLY_APPLIED) {
        Some(existing) => {
            if existing.status != status {
                existing.last_transition_time = now;
            }
            existing.status = status.to_owned();
            existing.reason = reason.to_owned();
            existing.message = message.to_owned();
        }
        None => out.push(Condition {
            type_: CONDITION_FULLY_APPLIED.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            last_transition_time: now,
            observed_generation: None,
        }),
    }
    out
}

/// The one field of a reflected status [`members_template_generation`] reads.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TemplateGeneration {
    resource_template_generation: Option<i64>,
}

/// The oldest template generation the members run (`resourceTemplateGeneration` of every
/// item's reflected status); `None` when any item does not report one.
pub fn members_template_generation(items: &[AggregatedStatusItem]) -> Option<i64> {
    items
        .iter()
        .map(|item| {
            item.status
                .as_ref()
                .and_then(|s| s.parse::<TemplateGeneration>().ok())
                .and_then(|s| s.resource_template_generation)
        })
        .try_fold(i64::MAX, |min, g| Some(min.min(g?)))
        .filter(|_| !items.is_empty())
}

/// The binding's `karmada_binding_status` state, from its `FullyApplied` condition.
pub fn binding_state(binding: &BindingView) -> BindingState {
    match binding
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == CONDITION_FULLY_APPLIED)
    {
        Some(c) if c.status == "True" => BindingState::Applied,
        Some(_) => BindingState::NotApplied,
        None => BindingState::Pending,
    }
}

/// Whether a Work reported how it was applied: `Applied` false, or true with the member
/// object's status.
fn work_reported(work: &Work) -> bool {
    let Some(status) = &work.status else {
        return false;
    };
    match status.conditions.iter().find(|c| c.type_ == "Applied") {
        Some(applied) if applied.status == "True" => !status.manifest_statuses.is_empty(),
        Some(_) => true,
        None => false,
    }
}

/// The running controller.
pub struct BindingStatusController {
    client: kube::Client,
    resources: Resources,
    queue: WorkQueue<BindingKey>,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    works: Store<Work>,
    index: WorkIndex,
    shapes: Mutex<HashMap<BindingKey, u64>>,
    work_statuses: Mutex<HashMap<(String, String), u64>>,
    metrics: Metrics,
    recorder: Recorder,
    /// ResourceInterpreterCustomizations (`AggregateStatus`).
    interpreter: Arc<crate::interpreter::Customizations>,
}

impl std::fmt::Debug for BindingStatusController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BindingStatusController")
            .finish_non_exhaustive()
    }
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move { BindingStatusController::run(context, shutdown).await })
}

impl BindingStatusController {
    pub async fn run(context: Context, shutdown: Shutdown) {
        let Context {
            client,
            metrics,
            informers,
            interpreter,
            ..
        } = context;
        // The bindings are replayed below; a previous leader term's view is stale.
        metrics.reset_bindings();
        let rbs = informers.all::<ResourceBinding>();
        let crbs = informers.all::<ClusterResourceBinding>();
        let works = informers.all::<Work>();
        let this = Arc::new(Self {
            resources: Resources::new(client.clone()),
            client: client.clone(),
            queue: WorkQueue::named("resource-binding-status-controller"),
            bindings: rbs.store(),
            cluster_bindings: crbs.store(),
            works: works.store(),
            index: WorkIndex::default(),
            shapes: Mutex::new(HashMap::new()),
            work_statuses: Mutex::new(HashMap::new()),
            metrics,
            recorder: Recorder::new(
                client.clone(),
                Reporter {
                    controller: "binding-status-controller".into(),
                    instance: None,
                },
            ),
            interpreter,
        });
        let mut tasks = Tasks::new();
        let me = this.clone();
        tasks.subscribe(&rbs, move |e| me.binding_event(e, BindingView::from_rb));
        let me = this.clone();
        tasks.subscribe(&crbs, move |e| me.binding_event(e, BindingView::from_crb));
        let me = this.clone();
        tasks.subscribe(&works, move |e| me.work_event(e));
        let ready = async {
            works.wait_until_ready().await;
            this.interpreter.ready().await;
        };
        until_ready(&shutdown, ready).await;
        let me = this.clone();
        tasks.workers(
            &this.queue,
            WORKERS,
            move |key| {
                let me = me.clone();
                async move { me.reconcile(&key).await }
            },
            |key, error| debug!(binding = %key, %error, "aggregating status failed; backing off"),
        );
        info!("binding status controller running");
        shutdown.cancelled().await;
        this.queue.shut_down();
        this.metrics.reset_bindings();
        tasks.abort();
    }

    fn binding_event<K>(&self, event: WatchEvent<&K>, view: fn(&K) -> BindingView) {
        let (object, initial) = match event {
            WatchEvent::Apply(o) => (o, false),
            WatchEvent::InitApply(o) => (o, true),
            WatchEvent::Delete(o) => {
                let key = view(o).key;
                self.metrics.binding_deleted(&key.to_string());
                self.shapes.lock().remove(&key);
                return;
            }
            _ => return,
        };
        let binding = view(object);
        self.metrics
            .binding_state(binding.key.to_string(), binding_state(&binding));
        let shape = crate::fingerprint::hash_of(&(
            binding.metadata.generation,
            &binding.status.last_scheduled_time,
            &binding.spec.resource.resource_version,
        ));
        if self.shapes.lock().insert(binding.key.clone(), shape) == Some(shape) {
            return;
        }
        if initial {
            self.queue.add_with(binding.key, Priority::Low);
        } else {
            self.queue_aggregation(binding.key);
        }
    }

    fn work_event(&self, event: WatchEvent<&Work>) {
        let (work, gone) = match event {
            WatchEvent::Apply(w) | WatchEvent::InitApply(w) => (w, false),
            WatchEvent::Delete(w) => (w, true),
            _ => return,
        };
        let key = (
            work.metadata.namespace.clone().unwrap_or_default(),
            work.metadata.name.clone().unwrap_or_default(),
        );
        if gone {
            self.index.remove(work);
            self.work_statuses.lock().remove(&key);
        } else {
            self.index
                .upsert(work, &[RB_PERMANENT_ID, CRB_PERMANENT_ID]);
            let shape = crate::fingerprint::hash_of(&(
                &work.status,
                work.metadata.deletion_timestamp.is_some(),
            ));
            if self.work_statuses.lock().insert(key, shape) == Some(shape) {
                return;
            }
        }
        let annotations = work.metadata.annotations.clone().unwrap_or_default();
        let binding = match (
            annotations.get(RB_NAMESPACE_ANNOTATION),
            annotations.get(RB_NAME_ANNOTATION),
            annotations.get(CRB_NAME_ANNOTATION),
        ) {
            (Some(namespace), Some(name), _) => BindingKey::Namespaced {
                namespace: namespace.clone(),
                name: name.clone(),
            },
            (_, _, Some(name)) => BindingKey::Cluster { name: name.clone() },
            _ => return,
        };
        if gone {
            self.queue.add(binding);
        } else {
            self.queue_aggregation(binding);
        }
    }

    /// Queues the aggregation of `binding`. While its Works have not all reported, it waits for
    /// them (the last report queues it at once), at most [`WAIT_IDLE`] or, under load,
    /// [`WAIT_LOADED`]: one aggregation (one binding status write, one template status write,
    /// their Events) instead of one per Work's report. Once all have reported, every change is
    /// aggregated at once.
    fn queue_aggregation(&self, binding: BindingKey) {
        if self.all_reported(&binding) {
            self.queue.add_instead_of_delayed(binding);
        } else if self.queue.len() + self.queue.delayed() >= LOADED {
            self.queue.add_after(binding, WAIT_LOADED);
        } else {
            self.queue.add_after(binding, WAIT_IDLE);
        }
    }

    /// Whether every cluster `binding` targets has a Work that reported how it was applied
    /// (and, once applied, the member object's status).
    fn all_reported(&self, binding: &BindingKey) -> bool {
        // From the cached binding as it is (no `BindingView` copy: this runs on every report).
        let found = match binding {
            BindingKey::Namespaced { namespace, name } => self
                .bindings
                .get(&ObjectRef::new(name).within(namespace))
                .and_then(|b| {
                    let id = b.metadata.labels.as_ref()?.get(RB_PERMANENT_ID)?.clone();
                    Some((
                        RB_PERMANENT_ID,
                        id,
                        crate::binding::expected_clusters(&b.spec).len(),
                    ))
                }),
            BindingKey::Cluster { name } => self
                .cluster_bindings
                .get(&ObjectRef::new(name))
                .and_then(|b| {
                    let id = b.metadata.labels.as_ref()?.get(CRB_PERMANENT_ID)?.clone();
                    Some((
                        CRB_PERMANENT_ID,
                        id,
                        crate::binding::expected_clusters(&b.spec).len(),
                    ))
                }),
        };
        let Some((label, id, expected)) = found else {
            return true;
        };
        let reported = self
            .index
            .works_of(label, &id)
            .into_iter()
            .filter_map(|(ns, name)| self.works.get(&ObjectRef::new(&name).within(&ns)))
            .filter(|work| work_reported(work))
            .count();
        reported >= expected
    }

    fn view(&self, key: &BindingKey) -> Option<BindingView> {
        crate::binding::cached_view(&self.bindings, &self.cluster_bindings, key)
    }

    /// Reads the binding from the API server (after a conflict: the cache may lag behind
    /// this controller's own last write).
    async fn fetch(&self, key: &BindingKey) -> Result<Option<BindingView>, kube::Error> {
        Ok(match key {
            BindingKey::Namespaced { namespace, name } => {
                Api::<ResourceBinding>::namespaced(self.client.clone(), namespace)
                    .get_opt(name)
                    .await?
                    .map(|b| BindingView::from_rb(&b))
            }
            BindingKey::Cluster { name } => Api::<ClusterResourceBinding>::all(self.client.clone())
                .get_opt(name)
                .await?
                .map(|b| BindingView::from_crb(&b)),
        })
    }

    /// Aggregates from the cached binding; on a write conflict, again from a fresh read (a few
    /// times) instead of backing off: the conflict is usually with this controller's own
    /// previous write, which the cache has not seen yet.
    async fn reconcile(&self, key: &BindingKey) -> Result<(), StatusError> {
        let Some(mut binding) = self.view(key) else {
            return Ok(());
        };
        let mut attempts = 0;
        loop {
            match self.reconcile_view(key, &binding).await {
                Err(StatusError::Kube(kube::Error::Api(status)))
                    if status.code == 409 && attempts < CONFLICT_RETRIES =>
                {
                    attempts += 1;
                    match self.fetch(key).await? {
                        Some(fresh) => binding = fresh,
                        None => return Ok(()),
                    }
                }
                other => return other,
            }
        }
    }

    async fn reconcile_view(
        &self,
        key: &BindingKey,
        binding: &BindingView,
    ) -> Result<(), StatusError> {
        if binding.metadata.deletion_timestamp.is_some()
            || binding.status.last_scheduled_time.is_none()
        {
            return Ok(());
        }
        let Some(reference) = binding.reference() else {
            return Ok(());
        };
        let (label, id) = reference.id_label();
        let works: Vec<Arc<Work>> = self
            .index
            .works_of(label, id)
            .into_iter()
            .filter_map(|(ns, name)| self.works.get(&ObjectRef::new(&name).within(&ns)))
            .collect();
        let works: Vec<&Work> = works.iter().map(|w| &**w).collect();
        let items = aggregated_items(&works, &binding.spec.resource);
        let applied = fully_applied(&binding.expected_clusters(), &items);
        if applied && let Some(generation) = members_template_generation(&items) {
            let resource = &binding.spec.resource;
            self.metrics.template_applied(
                &TemplateId {
                    api_version: resource.api_version.clone(),
                    kind: resource.kind.clone(),
                    namespace: resource.namespace.clone(),
                    name: resource.name.clone(),
                },
                generation,
                tokio::time::Instant::now(),
            );
        }
        let now = Time(jiff::Timestamp::now());
        let conditions = with_fully_applied(&binding.status.conditions, applied, now);
        let unchanged = binding.status.aggregated_status == items
            && conditions
                .iter()
                .zip(&binding.status.conditions)
                .all(|(a, b)| a == b)
            && conditions.len() == binding.status.conditions.len();
        if !unchanged {
            let patch = json!({
                "metadata": {"resourceVersion": binding.metadata.resource_version},
                "status": {"aggregatedStatus": items, "conditions": conditions},
            });
            let reference = binding_reference(binding);
            if let Err(error) = patch_binding_status(&self.client, key, &patch).await {
                // A conflict is retried from the newer binding, not reported.
                if !is_conflict(&error) {
                    self.publish(
                        reference,
                        EventType::Warning,
                        "AggregateStatusFailed",
                        flotilla_runtime::errors::describe(&error),
                    );
                }
                return Err(error.into());
            }
            let what = match key {
                BindingKey::Namespaced { namespace, name } => {
                    format!("ResourceBinding({namespace}/{name})")
                }
                BindingKey::Cluster { name } => format!("ClusterResourceBinding({name})"),
            };
            self.publish(
                reference,
                EventType::Normal,
                "AggregateStatusSucceed",
                format!("Update {what} with AggregatedStatus successfully."),
            );
        }
        self.aggregate_template(binding, &items).await
    }

    /// Karmada's `AggregateStatusSucceed/Failed` events, sent without holding up the queue.
    fn publish(
        &self,
        reference: k8s_openapi::api::core::v1::ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: "AggregateStatus".to_owned(),
            secondary: None,
        };
        let recorder = self.recorder.clone();
        tokio::spawn(async move {
            if let Err(error) = recorder.publish(&event, &reference).await {
                debug!(%error, "publishing an event failed");
            }
        });
    }

    async fn aggregate_template(
        &self,
        binding: &BindingView,
        items: &[AggregatedStatusItem],
    ) -> Result<(), StatusError> {
        let resource = &binding.spec.resource;
        let served = self
            .resources
            .resolve(&resource.api_version, &resource.kind)
            .await?;
        let api = self.resources.api(&served, &resource.namespace);
        // The template is read as JSON once (not as a `DynamicObject` converted to a `Value`)
        // and written back without its managed fields, which the API server then keeps as
        // stored; the answer of the write is not decoded (nothing here reads it).
        let url = api.resource_url();
        let get = kube::core::Request::new(url)
            .get(&resource.name, &kube::api::GetParams::default())
            .map_err(kube::Error::BuildRequest)?;
        let mut template: serde_json::Value = match self.client.request(get).await {
            Ok(template) => template,
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(error) => return Err(error.into()),
        };
        let status = match self.interpreter.aggregate_status(&template, items).await {
            Some(customized) => customized?,
            None => match crate::interpreter::aggregate_status(&template, items) {
                Some(status) => status,
                None => return Ok(()),
            },
        };
        if !status_changes(template.get("status"), &status) {
            return Ok(());
        }
        if let Some(metadata) = template
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut)
        {
            metadata.remove("managedFields");
        }
        if let Some(map) = template.as_object_mut() {
            map.insert("status".into(), status);
        }
        let reference = crate::binding::resource_reference(resource);
        let put = kube::core::Request::new(url)
            .replace_subresource(
                "status",
                &resource.name,
                &PostParams::default(),
                serde_json::to_vec(&template)?,
            )
            .map_err(kube::Error::BuildRequest)?;
        if let Err(error) = flotilla_runtime::write::send(&self.client, put, "replace_status").await
        {
            if !is_conflict(&error) {
                self.publish(
                    reference,
                    EventType::Warning,
                    "AggregateStatusFailed",
                    flotilla_runtime::errors::describe(&error),
                );
            }
            return Err(error.into());
        }
        self.publish(
            reference,
            EventType::Normal,
            "AggregateStatusSucceed",
            "Update Resource with AggregatedStatus successfully.".to_owned(),
        );
        debug!(template = %resource.name, "template status aggregated");
        Ok(())
    }
}

/// Whether writing the aggregated `status` changes the template's `current` one. A template
/// stored without a status has kube-apiserver's `status: {}`: an empty aggregate (no member
/// has reported yet) changes nothing.
pub fn status_changes(current: Option<&serde_json::Value>, status: &serde_json::Value) -> bool {
    match current.filter(|c| !c.is_null()) {
        Some(current) => current != status,
        None => !status.as_object().is_some_and(serde_json::Map::is_empty),
    }
}

fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}

#[cfg(test)]
mod tests;
