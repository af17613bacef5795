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
use flotilla_api::karmada::{BindingSnapshot, ResourceBinding, ResourceBindingSpec};
use flotilla_api::validation::karmada::RB_PERMANENT_ID;
use flotilla_runtime::controller::Tasks;
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource as _;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tracing::{info, warn};

use crate::detector::build::{RB_FINALIZER, owner_reference, resource_reference};
use crate::interpreter::{DependentObjectReference, dependencies};
use crate::manager::{Context, ControllerTask};
use crate::resources::{ResolveError, Resources};

mod attached;

pub use attached::{
    InheritedPolicy, controlled_by_other, depended_by_label, inherit_policy, with_required_by,
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
    #[error("{0}")]
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
}

/// The kinds the interpreter names as dependencies (all `v1`), watched so that a dependency
/// created or changed after its workload reaches the members.
const DEPENDENCY_KINDS: [&str; 4] = [
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "PersistentVolumeClaim",
];

/// `(kind, namespace, name)` of a dependency.
type DependencyKey = (String, String, String);
/// `(namespace, name)` of an independent binding.
type BindingKey = (String, String);

/// Which independent bindings want which dependencies, both ways: when a dependency appears or
/// changes, its bindings are distributed again (Karmada's distributor does the same from its
/// resource event handler).
#[derive(Default)]
struct Dependents {
    by_dependency: HashMap<DependencyKey, BTreeSet<BindingKey>>,
    by_binding: HashMap<BindingKey, Vec<DependencyKey>>,
}

impl Dependents {
    /// Records that `binding` wants exactly `wanted` (none: forgets it).
    fn set(&mut self, binding: &BindingKey, wanted: Vec<DependencyKey>) {
        for old in self.by_binding.remove(binding).unwrap_or_default() {
            if let Some(set) = self.by_dependency.get_mut(&old) {
                set.remove(binding);
                if set.is_empty() {
                    self.by_dependency.remove(&old);
                }
            }
        }
        for dependency in &wanted {
            self.by_dependency
                .entry(dependency.clone())
                .or_default()
                .insert(binding.clone());
        }
        if !wanted.is_empty() {
            self.by_binding.insert(binding.clone(), wanted);
        }
    }

    /// The bindings that want `dependency`.
    fn of(&self, dependency: &DependencyKey) -> Vec<BindingKey> {
        self.by_dependency
            .get(dependency)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }
}

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
    for kind in DEPENDENCY_KINDS {
        tasks.spawn(this.clone().watch_dependencies(kind));
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
                self.dependents.lock().set(&key, Vec::new());
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

    /// Watches one dependency kind (no cache: only the names matter) and distributes again
    /// the bindings that want an object of it when it is created or changed.
    async fn watch_dependencies(self: Arc<Self>, kind: &'static str) {
        let resource = ApiResource {
            group: String::new(),
            version: "v1".to_owned(),
            api_version: "v1".to_owned(),
            kind: kind.to_owned(),
            plural: format!("{}s", kind.to_ascii_lowercase()),
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
            let wanting = self
                .dependents
                .lock()
                .of(&(kind.to_owned(), namespace, name));
            for binding in wanting {
                self.queue.add_with(binding, priority);
            }
        }
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
                        error.to_string(),
                    )
                    .await
                }
            }
        }
        synced
    }

    /// Attaches `wanted`, detaches the rest and records the outcome on `binding`.
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
        self.dependents.lock().set(
            key,
            wanted
                .iter()
                .map(|d| (d.kind.clone(), d.namespace.clone(), d.name.clone()))
                .collect(),
        );
        let mut attached = BTreeSet::new();
        for dependency in wanted {
            if let Some(attached_name) = self.attach(binding, dependency, label, id).await? {
                attached.insert(attached_name);
            }
        }
        self.detach_others(namespace, name, label, &attached)
            .await?;
        // The cached binding's resourceVersion is often behind (its status is written by the
        // scheduler and the binding status controller meanwhile): a conflicting write is
        // retried at once from a fresh read instead of backing off, which would delay the
        // next distribution by ever longer waits.
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
        let independent_name = independent.metadata.name.clone().unwrap_or_default();
        let independent_namespace = independent.metadata.namespace.clone().unwrap_or_default();
        match api.get_opt(&name).await? {
            None => {
                let mut spec = ResourceBindingSpec {
                    resource: resource_reference(&object),
                    ..ResourceBindingSpec::default()
                };
                spec.required_by = with_required_by(
                    &spec,
                    &independent_namespace,
                    &independent_name,
                    Some(&independent.spec.clusters),
                );
                let requiring = self.requiring_specs(&spec.required_by, independent);
                let policy = inherit_policy(&mut spec, requiring.iter().map(|b| &b.spec));
                let binding = ResourceBinding {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        namespace: Some(dependency.namespace.clone()),
                        labels: Some([(label.to_owned(), id.to_owned())].into()),
                        owner_references: Some(vec![owner_reference(&object)]),
                        finalizers: Some(vec![RB_FINALIZER.to_owned()]),
                        ..ObjectMeta::default()
                    },
                    spec,
                    ..ResourceBinding::default()
                };
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
                let mut updated = existing.clone();
                updated
                    .metadata
                    .labels
                    .get_or_insert_with(Default::default)
                    .insert(label.to_owned(), id.to_owned());
                updated.spec.required_by = with_required_by(
                    &existing.spec,
                    &independent_namespace,
                    &independent_name,
                    Some(&independent.spec.clusters),
                );
                updated.spec.resource = resource_reference(&object);
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
        let stale: Vec<Arc<ResourceBinding>> = self
            .bindings
            .state()
            .into_iter()
            .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
            .filter(|b| {
                b.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key(label))
            })
            .filter(|b| !keep.contains(b.metadata.name.as_deref().unwrap_or("")))
            .collect();
        let api = Api::<ResourceBinding>::namespaced(self.client.clone(), namespace);
        for attached in stale {
            let attached_name = attached.metadata.name.clone().unwrap_or_default();
            let required_by = with_required_by(&attached.spec, namespace, name, None);
            let claimed = attached.spec.placement.is_some()
                || attached.metadata.labels.as_ref().is_some_and(|l| {
                    l.contains_key(flotilla_api::validation::karmada::PP_PERMANENT_ID)
                        || l.contains_key(flotilla_api::validation::karmada::CPP_PERMANENT_ID)
                });
            if required_by.is_empty() && !claimed {
                match api.delete(&attached_name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    Err(e) => return Err(e.into()),
                }
                continue;
            }
            let mut spec = attached.spec.clone();
            let requiring: Vec<Arc<ResourceBinding>> = required_by
                .iter()
                .filter_map(|e| {
                    self.bindings
                        .get(&ObjectRef::new(&e.name).within(&e.namespace))
                })
                .collect();
            inherit_policy(&mut spec, requiring.iter().map(|b| &b.spec));
            let mut spec_patch = json!({"requiredBy": required_by});
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
            return Ok(());
        }
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

fn key_of(meta: &ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}
