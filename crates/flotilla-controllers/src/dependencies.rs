//! The dependencies distributor (Karmada's, gate `PropagateDeps`): for every ResourceBinding
//! with `propagateDeps`, the interpreter's dependencies of its template (ConfigMaps, Secrets,
//! ServiceAccounts, PVCs) get an "attached" ResourceBinding `<name>-<kind>` owned by the
//! dependency, labelled `resourcebinding.karmada.io/depended-by-<hash>` with the independent
//! binding's id and listing it in `requiredBy` with its clusters; the binding controller then
//! sends the dependency wherever the workload goes. The list is recorded on the independent
//! binding (`resourcebinding.karmada.io/dependencies`); its finalizer
//! `karmada.io/binding-dependencies-distributor` lets the distributor withdraw the
//! `requiredBy` entries when it is deleted. Only ResourceBindings, as in Karmada.
//!
//! An attached binding no policy claims (no `placement`) takes its `conflictResolution` and
//! `preserveResourcesOnDeletion` from all the bindings requiring it (`Overwrite` if any wants
//! it, preserved if any preserves) and reports a disagreement as a Warning
//! `DependencyPolicyConflict`; a claimed one keeps its policy's. Events as Karmada's:
//! `GetDependenciesSucceed` on the template, `SyncScheduleResultToDependencies{Succeed,Failed}`
//! on the independent binding.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::names::binding_name;
use flotilla_api::karmada::{BindingSnapshot, ResourceBinding};
use flotilla_api::selector::label::LabelSelector;
use flotilla_api::validation::karmada::RB_PERMANENT_ID;
use flotilla_runtime::controller::Tasks;
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource as _;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tracing::{info, warn};

use crate::detector::build::resource_reference;
use crate::interpreter::{DependentObjectReference, dependencies};
use crate::manager::{Context, ControllerTask};
use crate::resources::{ResolveError, Resources};

mod attached;
mod dependents;

use dependents::{BindingKey, Dependents};

pub use attached::{
    InheritedPolicy, controlled_by_other, depended_by_label, detach, inherit_policy, new_attached,
    refresh_attached, stale_attached, with_required_by,
};

/// Annotation on an independent binding: its dependencies (JSON).
pub const DEPENDENCIES_ANNOTATION: &str = "resourcebinding.karmada.io/dependencies";
/// Finalizer on independent bindings.
pub const DISTRIBUTOR_FINALIZER: &str = "karmada.io/binding-dependencies-distributor";
/// Prefix of the label on attached bindings naming an independent binding.
pub const DEPENDED_BY_PREFIX: &str = "resourcebinding.karmada.io/depended-by-";
/// Write conflicts on the independent binding retried at once from a fresh read.
const CONFLICT_RETRIES: usize = 3;
/// Reporting controller of the distributor's events.
const REPORTER: &str = "dependencies-distributor";
/// Normal event on the template once its dependencies are interpreted.
pub const GET_DEPENDENCIES_SUCCEED: &str = "GetDependenciesSucceed";
/// Normal event on the independent binding once its attached bindings follow it.
pub const SYNC_SUCCEED: &str = "SyncScheduleResultToDependenciesSucceed";
/// Warning event on the independent binding when its attached bindings could not follow it.
pub const SYNC_FAILED: &str = "SyncScheduleResultToDependenciesFailed";
/// Warning event on an attached binding whose requiring bindings disagree on policy.
pub const DEPENDENCY_POLICY_CONFLICT: &str = "DependencyPolicyConflict";

/// Why a distribution failed.
#[derive(Debug, thiserror::Error)]
pub enum DistributeError {
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    #[error("encoding: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "attached binding {namespace}/{name} is controlled by an older object; retrying once it is garbage collected"
    )]
    OwnerMismatch { namespace: String, name: String },
    #[error("{0}")]
    Customized(#[from] crate::interpreter::CustomizedError),
    #[error("invalid labelSelector of dependency {kind} in {namespace}: {message}")]
    Selector {
        kind: String,
        namespace: String,
        message: String,
    },
}

/// The kinds the interpreter names as dependencies `(group, kind, plural)` (all version
/// `v1`), watched so that a dependency created or changed after its workload reaches the
/// members; Services and EndpointSlices are a ServiceImport's (the slices picked by label).
const DEPENDENCY_KINDS: [(&str, &str, &str); 6] = [
    ("", "ConfigMap", "configmaps"),
    ("", "Secret", "secrets"),
    ("", "ServiceAccount", "serviceaccounts"),
    ("", "PersistentVolumeClaim", "persistentvolumeclaims"),
    ("", "Service", "services"),
    ("discovery.k8s.io", "EndpointSlice", "endpointslices"),
];

struct Distributor {
    client: kube::Client,
    resources: Resources,
    queue: WorkQueue<(String, String)>,
    bindings: Store<ResourceBinding>,
    generations: Mutex<HashMap<(String, String), (i64, bool)>>,
    dependents: Mutex<Dependents>,
    recorder: Recorder,
    /// ResourceInterpreterCustomizations (`InterpretDependency`).
    interpreter: Arc<crate::interpreter::Customizations>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move { run(context, shutdown).await })
}

async fn run(context: Context, shutdown: Shutdown) {
    let client = context.client;
    let bindings = context.informers.all::<ResourceBinding>();
    let this = Arc::new(Distributor {
        resources: Resources::new(client.clone()),
        client: client.clone(),
        queue: WorkQueue::named("dependencies-distributor"),
        bindings: bindings.store(),
        generations: Mutex::new(HashMap::new()),
        dependents: Mutex::new(Dependents::default()),
        recorder: Recorder::new(
            client.clone(),
            Reporter {
                controller: REPORTER.into(),
                instance: None,
            },
        ),
        interpreter: context.interpreter.clone(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&bindings, move |e: WatchEvent<&ResourceBinding>| me.seen(e));
    for (group, kind, plural) in DEPENDENCY_KINDS {
        tasks.spawn(this.clone().watch_dependencies(group, kind, plural));
    }
    if !flotilla_runtime::controller::until_ready(&shutdown, this.interpreter.ready()).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        2,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(&key).await }
        },
        |key, error| {
            warn!(binding = %format!("{}/{}", key.0, key.1), %error, "distributing dependencies failed")
        },
    );
    info!("dependencies distributor running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Distributor {
    fn seen(&self, event: WatchEvent<&ResourceBinding>) {
        let (binding, initial) = match event {
            WatchEvent::Apply(b) => (b, false),
            WatchEvent::InitApply(b) => (b, true),
            WatchEvent::Delete(b) => {
                let key = key_of(&b.metadata);
                self.generations.lock().remove(&key);
                let mut dependents = self.dependents.lock();
                dependents.set(&key, Vec::new());
                dependents.set_selectors(&key, Vec::new());
                return;
            }
            _ => return,
        };
        let key = key_of(&binding.metadata);
        let interested = binding.spec.propagate_deps
            || binding
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == DISTRIBUTOR_FINALIZER);
        if !interested {
            return;
        }
        let shape = (
            binding.metadata.generation.unwrap_or(0),
            binding.metadata.deletion_timestamp.is_some(),
        );
        if self.generations.lock().insert(key.clone(), shape) == Some(shape) {
            return;
        }
        let priority = if initial {
            Priority::Low
        } else {
            Priority::High
        };
        self.queue.add_with(key, priority);
    }

    /// Watches one dependency kind (no cache: only names and labels matter) and distributes
    /// again the bindings that want an object of it when it is created or changed: by name, by
    /// a matching selector, or because the object was theirs (its labels may have changed).
    async fn watch_dependencies(
        self: Arc<Self>,
        group: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) {
        let api_version = if group.is_empty() {
            "v1".to_owned()
        } else {
            format!("{group}/v1")
        };
        let resource = ApiResource {
            group: group.to_owned(),
            version: "v1".to_owned(),
            api_version: api_version.clone(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
        };
        let api = Api::<DynamicObject>::all_with(self.client.clone(), &resource);
        let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let (meta, priority) = match event {
                Ok(WatchEvent::Apply(o)) => (o.metadata, Priority::High),
                Ok(WatchEvent::InitApply(o)) => (o.metadata, Priority::Low),
                Ok(_) => continue,
                Err(error) => {
                    warn!(%error, kind, "watching dependencies failed");
                    continue;
                }
            };
            let (namespace, name) = key_of(&meta);
            let labels = meta.labels.unwrap_or_default();
            let object = (
                api_version.clone(),
                kind.to_owned(),
                namespace.clone(),
                name.clone(),
            );
            let mut wanting: BTreeSet<BindingKey> =
                self.dependents.lock().wanting(&object, &labels);
            // Bindings this object was attached for (it may no longer match their selector).
            if let Some(attached) = self
                .bindings
                .get(&ObjectRef::new(&binding_name(kind, &name)).within(&namespace))
            {
                let dependents = self.dependents.lock();
                for binding in dependents.with_selectors() {
                    let label = depended_by_label(&binding.0, &binding.1);
                    if attached
                        .metadata
                        .labels
                        .as_ref()
                        .is_some_and(|l| l.contains_key(&label))
                    {
                        wanting.insert(binding.clone());
                    }
                }
            }
            for binding in wanting {
                self.queue.add_with(binding, priority);
            }
        }
    }

    /// The objects `dependency`'s label selector picks, as named references (Karmada lists
    /// them from its cache of the kind).
    async fn select(
        &self,
        dependency: &DependentObjectReference,
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Result<Vec<DependentObjectReference>, DistributeError> {
        let selector =
            LabelSelector::try_from(selector).map_err(|e| DistributeError::Selector {
                kind: dependency.kind.clone(),
                namespace: dependency.namespace.clone(),
                message: e.to_string(),
            })?;
        let served = self
            .resources
            .resolve(&dependency.api_version, &dependency.kind)
            .await?;
        let listed = self
            .resources
            .api(&served, &dependency.namespace)
            .list(&ListParams::default().labels(&selector.to_string()))
            .await?;
        let mut names: Vec<String> = listed
            .items
            .into_iter()
            .filter(|o| o.metadata.deletion_timestamp.is_none())
            .filter_map(|o| o.metadata.name)
            .collect();
        names.sort();
        Ok(names
            .into_iter()
            .map(|name| DependentObjectReference {
                api_version: dependency.api_version.clone(),
                kind: dependency.kind.clone(),
                namespace: dependency.namespace.clone(),
                name,
                label_selector: None,
            })
            .collect())
    }

    async fn reconcile(&self, key: &(String, String)) -> Result<(), DistributeError> {
        let Some(binding) = self.bindings.get(&ObjectRef::new(&key.1).within(&key.0)) else {
            self.dependents.lock().set(key, Vec::new());
            return Ok(());
        };
        let (namespace, name) = key;
        let Some(id) = binding
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(RB_PERMANENT_ID))
            .cloned()
        else {
            return Ok(());
        };
        let label = depended_by_label(namespace, name);
        let deleting = binding.metadata.deletion_timestamp.is_some();
        let wanted: Vec<DependentObjectReference> = if deleting || !binding.spec.propagate_deps {
            Vec::new()
        } else {
            let (wanted, template) = self.template_dependencies(&binding).await?;
            if let Some(template) = template {
                let names: Vec<String> = wanted
                    .iter()
                    .map(|d| format!("{}/{}/{}", d.kind, d.namespace, d.name))
                    .collect();
                self.event(
                    &template,
                    EventType::Normal,
                    GET_DEPENDENCIES_SUCCEED,
                    format!("Get dependencies([{}]) succeed.", names.join(" ")),
                )
                .await;
            }
            wanted
        };
        let synced = self
            .sync(&binding, key, &id, &label, &wanted, deleting)
            .await;
        if binding.spec.propagate_deps && !deleting {
            let reference = binding.object_ref(&());
            match &synced {
                Ok(()) => {
                    self.event(
                        &reference,
                        EventType::Normal,
                        SYNC_SUCCEED,
                        "Sync schedule results to dependencies succeed.".to_owned(),
                    )
                    .await
                }
                Err(error) => {
                    self.event(
                        &reference,
                        EventType::Warning,
                        SYNC_FAILED,
                        flotilla_runtime::errors::describe(error),
                    )
                    .await
                }
            }
        }
        synced
    }

    /// Attaches `wanted`, detaches the rest and records the outcome on `binding`. As in
    /// Karmada, a dependency that fails (its kind not served, its selector not listable, an
    /// attached binding awaiting garbage collection) does not hold up the others: they are
    /// attached, the dependencies recorded, and the first error returned for a retry. Its
    /// existing attached binding is kept; when a selector could not be listed nothing is
    /// detached (what it picks is unknown).
    async fn sync(
        &self,
        binding: &Arc<ResourceBinding>,
        key: &(String, String),
        id: &str,
        label: &str,
        wanted: &[DependentObjectReference],
        deleting: bool,
    ) -> Result<(), DistributeError> {
        let (namespace, name) = key;
        let mut first_error: Option<DistributeError> = None;
        let mut all_listed = true;
        // Label-selected dependencies stand for the objects they pick now.
        let mut named: Vec<DependentObjectReference> = Vec::new();
        let (_, selectors) = dependents::index_of(wanted);
        for dependency in wanted {
            match &dependency.label_selector {
                Some(selector) if dependency.name.is_empty() => {
                    match self.select(dependency, selector).await {
                        Ok(picked) => {
                            for picked in picked {
                                if !named.contains(&picked) {
                                    named.push(picked);
                                }
                            }
                        }
                        Err(error) => {
                            all_listed = false;
                            first_error.get_or_insert(error);
                        }
                    }
                }
                _ => {
                    if !named.contains(dependency) {
                        named.push(dependency.clone());
                    }
                }
            }
        }
        {
            let mut dependents = self.dependents.lock();
            dependents.set(key, named.iter().map(dependents::key_of).collect());
            dependents.set_selectors(key, selectors);
        }
        let mut attached = BTreeSet::new();
        for dependency in &named {
            match self.attach(binding, dependency, label, id).await {
                Ok(Some(attached_name)) => {
                    attached.insert(attached_name);
                }
                Ok(None) => {}
                Err(error) => {
                    attached.insert(binding_name(&dependency.kind, &dependency.name));
                    first_error.get_or_insert(error);
                }
            }
        }
        if all_listed
            && let Err(error) = self.detach_others(namespace, name, label, &attached).await
        {
            first_error.get_or_insert(error);
        }
        let recorded = self.record_fresh(binding, key, wanted, deleting).await;
        match first_error {
            Some(error) => Err(error),
            None => recorded,
        }
    }

    /// Records the outcome on `binding`. The cached binding's resourceVersion is often behind
    /// (its status is written by the scheduler and the binding status controller meanwhile):
    /// a conflicting write is retried at once from a fresh read instead of backing off, which
    /// would delay the next distribution by ever longer waits.
    async fn record_fresh(
        &self,
        binding: &Arc<ResourceBinding>,
        (namespace, name): &(String, String),
        wanted: &[DependentObjectReference],
        deleting: bool,
    ) -> Result<(), DistributeError> {
        let mut binding = binding.clone();
        for _ in 0..CONFLICT_RETRIES {
            match self.record(&binding, wanted, deleting).await {
                Err(DistributeError::Kube(kube::Error::Api(status))) if status.code == 409 => {
                    match Api::<ResourceBinding>::namespaced(self.client.clone(), namespace)
                        .get_opt(name)
                        .await?
                    {
                        Some(fresh) => binding = Arc::new(fresh),
                        None => return Ok(()),
                    }
                }
                other => return other,
            }
        }
        self.record(&binding, wanted, deleting).await
    }

    async fn event(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        self.recorder
            .note(reference, type_, reason, reason, note)
            .await;
    }

    /// The specs of the bindings listed in `required_by`, `independent` read fresh and the
    /// others from the cache (bindings already gone are left out).
    fn requiring_specs(
        &self,
        required_by: &[BindingSnapshot],
        independent: &ResourceBinding,
    ) -> Vec<Arc<ResourceBinding>> {
        required_by
            .iter()
            .filter_map(|entry| {
                if Some(entry.namespace.as_str()) == independent.metadata.namespace.as_deref()
                    && Some(entry.name.as_str()) == independent.metadata.name.as_deref()
                {
                    return Some(Arc::new(independent.clone()));
                }
                self.bindings
                    .get(&ObjectRef::new(&entry.name).within(&entry.namespace))
            })
            .collect()
    }

    /// The dependencies of `binding`'s template, and a reference to the template (`None` when
    /// it is gone).
    async fn template_dependencies(
        &self,
        binding: &ResourceBinding,
    ) -> Result<(Vec<DependentObjectReference>, Option<ObjectReference>), DistributeError> {
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
            return Ok((Vec::new(), None));
        };
        let reference = ObjectReference {
            api_version: Some(resource.api_version.clone()),
            kind: Some(resource.kind.clone()),
            namespace: Some(resource.namespace.clone()).filter(|n| !n.is_empty()),
            name: Some(resource.name.clone()),
            uid: template.metadata.uid.clone(),
            ..ObjectReference::default()
        };
        let template = serde_json::to_value(&template)?;
        let wanted = match self.interpreter.dependencies(&template).await {
            Some(customized) => customized?,
            None => dependencies(&template),
        };
        Ok((wanted, Some(reference)))
    }

    /// Creates or updates the attached binding of `dependency` (when the object exists).
    async fn attach(
        &self,
        independent: &ResourceBinding,
        dependency: &DependentObjectReference,
        label: &str,
        id: &str,
    ) -> Result<Option<String>, DistributeError> {
        let served = self
            .resources
            .resolve(&dependency.api_version, &dependency.kind)
            .await?;
        let Some(object) = self
            .resources
            .api(&served, &dependency.namespace)
            .get_opt(&dependency.name)
            .await?
        else {
            return Ok(None);
        };
        let object = serde_json::to_value(&object)?;
        let name = binding_name(&dependency.kind, &dependency.name);
        let api = Api::<ResourceBinding>::namespaced(self.client.clone(), &dependency.namespace);
        match api.get_opt(&name).await? {
            None => {
                let mut binding = new_attached(independent, &object, label, id);
                let requiring = self.requiring_specs(&binding.spec.required_by, independent);
                let policy = inherit_policy(&mut binding.spec, requiring.iter().map(|b| &b.spec));
                let created = api.create(&PostParams::default(), &binding).await?;
                info!(binding = %name, dependency = %dependency.name, "created attached binding");
                self.report_conflict(&created, policy.as_ref()).await;
            }
            Some(existing) => {
                let uid = resource_reference(&object).uid;
                if controlled_by_other(&existing, &uid) {
                    return Err(DistributeError::OwnerMismatch {
                        namespace: dependency.namespace.clone(),
                        name,
                    });
                }
                let mut updated = refresh_attached(&existing, independent, &object, label, id);
                let requiring = self.requiring_specs(&updated.spec.required_by, independent);
                let policy = inherit_policy(&mut updated.spec, requiring.iter().map(|b| &b.spec));
                if updated != existing {
                    api.replace(&name, &PostParams::default(), &updated).await?;
                }
                self.report_conflict(&existing, policy.as_ref()).await;
            }
        }
        Ok(Some(name))
    }

    /// A Warning `DependencyPolicyConflict` on `attached` when its requiring bindings disagree.
    async fn report_conflict(&self, attached: &ResourceBinding, policy: Option<&InheritedPolicy>) {
        if let Some(note) = policy.and_then(InheritedPolicy::conflict_note) {
            self.event(
                &attached.object_ref(&()),
                EventType::Warning,
                DEPENDENCY_POLICY_CONFLICT,
                note,
            )
            .await;
        }
    }

    /// Withdraws the independent binding from attached bindings it no longer needs; an attached
    /// binding nobody requires any more (and no policy claims) is deleted.
    async fn detach_others(
        &self,
        namespace: &str,
        name: &str,
        label: &str,
        keep: &BTreeSet<String>,
    ) -> Result<(), DistributeError> {
        let stale = stale_attached(self.bindings.state(), namespace, label, keep);
        let api = Api::<ResourceBinding>::namespaced(self.client.clone(), namespace);
        for attached in stale {
            let attached_name = attached.metadata.name.clone().unwrap_or_default();
            let detached = detach(&attached, namespace, name, label, |e| {
                self.bindings
                    .get(&ObjectRef::new(&e.name).within(&e.namespace))
            });
            let Some(spec) = detached.map(|b| b.spec) else {
                match api.delete(&attached_name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    Err(e) => return Err(e.into()),
                }
                continue;
            };
            let mut spec_patch = json!({"requiredBy": spec.required_by});
            if spec.placement.is_none() {
                spec_patch["conflictResolution"] = json!(spec.conflict_resolution);
                spec_patch["preserveResourcesOnDeletion"] =
                    json!(spec.preserve_resources_on_deletion);
            }
            let patch = json!({
                "metadata": {"labels": {label: Value::Null},
                    "resourceVersion": attached.metadata.resource_version},
                "spec": spec_patch,
            });
            api.patch(
                &attached_name,
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await?;
        }
        Ok(())
    }

    /// Records the dependencies and manages the finalizer on the independent binding.
    async fn record(
        &self,
        binding: &ResourceBinding,
        wanted: &[DependentObjectReference],
        deleting: bool,
    ) -> Result<(), DistributeError> {
        let Some((finalizers, desired)) = recorded_metadata(binding, wanted, deleting)? else {
            return Ok(());
        };
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "annotations": {DEPENDENCIES_ANNOTATION: desired},
            "resourceVersion": binding.metadata.resource_version,
        }});
        Api::<ResourceBinding>::namespaced(
            self.client.clone(),
            binding.metadata.namespace.as_deref().unwrap_or(""),
        )
        .patch(
            binding.metadata.name.as_deref().unwrap_or(""),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
        Ok(())
    }
}

/// The finalizers and dependencies annotation to write on an independent binding.
type RecordedMetadata = (Vec<String>, Option<String>);

/// What the distributor records on the independent `binding`: its finalizers (the
/// distributor's added while it propagates dependencies and is not being deleted, removed
/// otherwise) and its dependencies annotation (`wanted` as JSON; none when there are none or
/// it is being deleted). `None` when both are already as recorded.
fn recorded_metadata(
    binding: &ResourceBinding,
    wanted: &[DependentObjectReference],
    deleting: bool,
) -> Result<Option<RecordedMetadata>, serde_json::Error> {
    let mut finalizers: Vec<String> = binding.metadata.finalizers.clone().unwrap_or_default();
    let has = finalizers.iter().any(|f| f == DISTRIBUTOR_FINALIZER);
    let keep_finalizer = !deleting && binding.spec.propagate_deps;
    if keep_finalizer && !has {
        finalizers.push(DISTRIBUTOR_FINALIZER.to_owned());
    } else if !keep_finalizer {
        finalizers.retain(|f| f != DISTRIBUTOR_FINALIZER);
    }
    let recorded = binding
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DEPENDENCIES_ANNOTATION))
        .cloned();
    let desired = (!wanted.is_empty() && !deleting)
        .then(|| serde_json::to_string(wanted))
        .transpose()?;
    if recorded == desired && (keep_finalizer == has) {
        return Ok(None);
    }
    Ok(Some((finalizers, desired)))
}

fn key_of(meta: &ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}
