//! The resource detector: watches every propagatable kind the control plane serves (found by
//! discovery, re-run when CRDs change) and the (Cluster)PropagationPolicies, gives each
//! template its policy (Karmada's precedence, [`matching`]), claims it ([`claim`]) and keeps its
//! ResourceBinding / ClusterResourceBinding in step ([`build`]: what it holds; `write`: creating
//! or replacing it). Policy deletion unclaims the templates and bindings and then drops the
//! policy's finalizer; bindings stay, so members keep their objects.
//!
//! Skipped: Karmada's own groups (`cluster`, `policy`, `work.karmada.io`), Events, reserved
//! namespaces (`karmada-system`, `karmada-cluster`, `karmada-es-*`), `kube-*` namespaces
//! (Karmada's default `--skipped-propagating-namespaces`), templates labelled
//! `resourcetemplate.karmada.io/claimed-by`.

pub mod build;
pub mod claim;
mod fingerprint;
mod interpret;
pub mod matching;
mod policies;
mod skipped;
mod watch;
mod write;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;
use std::sync::Arc;

use flotilla_api::karmada::{PropagationSpec, ResourceBindingSpec};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Event, EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use parking_lot::Mutex;
use serde_json::Value;
use tracing::{debug, info, warn};

use crate::interpreter;
use crate::manager::{Context, ControllerTask};
use crate::metrics::{Metrics, TemplateId};
use crate::resources::Resources;
use claim::PolicyClaim;
use fingerprint::Fingerprint;
use interpret::SuccessEvent;
use policies::PolicyIndex;
use watch::KindWatch;

/// Groups the detector never propagates: Karmada's own (its `NewSkippedResourceConfig`) and
/// `events.k8s.io`.
pub const SKIPPED_GROUPS: &[&str] = &[
    "cluster.karmada.io",
    "policy.karmada.io",
    "work.karmada.io",
    "config.karmada.io",
    "networking.karmada.io",
    "autoscaling.karmada.io",
    "remedy.karmada.io",
    "apps.karmada.io",
    "events.k8s.io",
];

/// Group versions the detector never propagates: Leases (`coordination.k8s.io/v1`), which
/// each cluster's components keep for themselves.
pub const SKIPPED_GROUP_VERSIONS: &[&str] = &["coordination.k8s.io/v1"];

/// Whether the detector leaves `kind` of `api_version` (group `group`) alone.
pub fn is_skipped_kind(group: &str, api_version: &str, kind: &str) -> bool {
    SKIPPED_GROUPS.contains(&group)
        || SKIPPED_GROUP_VERSIONS.contains(&api_version)
        || (group.is_empty() && kind == "Event")
}

/// Concurrent templates (Karmada's `--concurrent-resource-template-syncs`, 5 by default). 8,
/// as for Works (see `binding::WORKERS`).
const WORKERS: usize = 8;

/// Whether objects in `namespace` are never propagated.
pub fn is_reserved_namespace(namespace: &str) -> bool {
    namespace == "karmada-system"
        || namespace == "karmada-cluster"
        || namespace.starts_with(flotilla_api::karmada::names::EXECUTION_SPACE_PREFIX)
}

/// Whether the detector ignores objects of `namespace` (reserved, or `kube-*`).
pub fn is_skipped_namespace(namespace: &str) -> bool {
    is_reserved_namespace(namespace) || namespace.starts_with("kube-")
}

/// A template in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TemplateKey {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for TemplateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {}/{}",
            self.api_version, self.kind, self.namespace, self.name
        )
    }
}

/// A policy whose deletion is being handled.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PolicyKey {
    Namespaced { namespace: String, name: String },
    Cluster { name: String },
}

/// Why a template could not be handled (retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum DetectorError {
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error("interpreting replicas: {0}")]
    Interpret(#[from] flotilla_api::karmada::replicas::InterpretError),
    #[error("{0}")]
    Customized(#[from] interpreter::CustomizedError),
    #[error("waiting for dependent overrides: {0}")]
    DependentOverrides(String),
    #[error(
        "binding {binding} is owned by another object (uid {owner}); waiting for garbage collection"
    )]
    OwnerMismatch { binding: String, owner: String },
    #[error("priority class {0} not found")]
    PriorityClass(String),
    #[error("encoding: {0}")]
    Json(#[from] serde_json::Error),
}

/// The running detector.
pub struct Detector {
    client: kube::Client,
    resources: Resources,
    policies: Mutex<PolicyIndex>,
    kinds: Mutex<BTreeMap<(String, String), KindWatch>>,
    queue: WorkQueue<TemplateKey>,
    policy_queue: WorkQueue<PolicyKey>,
    /// Per template: the fingerprint of its specification and the resource version at which
    /// the specification last changed (what a binding's `spec.resource.resourceVersion` names:
    /// a later status-only write is not a new version of the specification).
    fingerprints: Mutex<HashMap<TemplateKey, (Fingerprint, String)>>,
    /// Templates a user changed since their last reconcile (for Lazy): a change of more than
    /// Karmada's own labels and annotations (see [`Fingerprint`]).
    changed: Mutex<HashSet<TemplateKey>>,
    /// Templates by the permanent id of the policy that claims them, and the reverse.
    claims: Mutex<ClaimIndex>,
    /// Policies warned about selecting skipped namespaces, with the generation warned about.
    skipped_warned: Mutex<HashMap<PolicyKey, i64>>,
    recorder: Recorder,
    metrics: Metrics,
    /// The ResourceInterpreterCustomizations consulted before the native interpreter.
    interpreter: Arc<interpreter::Customizations>,
    /// Gate `ResourceQuotaEstimate`: replica requirements name the template's namespace and
    /// its pods' priority class.
    quota_estimate: bool,
    /// Gate `WorkloadAffinity`: bindings carry their template's `workloadAffinityGroups`.
    workload_affinity: bool,
    /// Gate `MultiplePodTemplatesScheduling`: kinds with components get `spec.components`
    /// instead of replicas.
    multiple_templates: bool,
}

impl std::fmt::Debug for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Detector").finish_non_exhaustive()
    }
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move {
        let quota_estimate = context.options.gates.enabled("ResourceQuotaEstimate");
        let detector = Detector::new(context.client, context.metrics)
            .with_interpreter(context.interpreter.clone(), quota_estimate)
            .with_workload_affinity(context.options.gates.enabled("WorkloadAffinity"))
            .with_multiple_templates(
                context
                    .options
                    .gates
                    .enabled("MultiplePodTemplatesScheduling"),
            );
        detector.run(shutdown).await;
    })
}

impl Detector {
    pub fn new(client: kube::Client, metrics: Metrics) -> Arc<Self> {
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: "resource-detector".into(),
                instance: None,
            },
        );
        Arc::new(Self {
            resources: Resources::new(client.clone()),
            client,
            policies: Mutex::new(PolicyIndex::default()),
            kinds: Mutex::new(BTreeMap::new()),
            queue: WorkQueue::named("resource-detector"),
            policy_queue: WorkQueue::named("propagation-policy-reconciler"),
            fingerprints: Mutex::new(HashMap::new()),
            changed: Mutex::new(HashSet::new()),
            claims: Mutex::new(ClaimIndex::default()),
            skipped_warned: Mutex::new(HashMap::new()),
            recorder,
            metrics,
            interpreter: Arc::new(interpreter::Customizations::none()),
            quota_estimate: false,
            workload_affinity: false,
            multiple_templates: false,
        })
    }

    /// The same detector consulting `interpreter`'s customizations first, with gate
    /// `ResourceQuotaEstimate` as given. Only before [`Detector::run`].
    pub fn with_interpreter(
        mut self: Arc<Self>,
        interpreter: Arc<interpreter::Customizations>,
        quota_estimate: bool,
    ) -> Arc<Self> {
        if let Some(me) = Arc::get_mut(&mut self) {
            me.interpreter = interpreter;
            me.quota_estimate = quota_estimate;
        }
        self
    }

    /// The same detector with gate `WorkloadAffinity` as given. Only before [`Detector::run`].
    pub fn with_workload_affinity(mut self: Arc<Self>, on: bool) -> Arc<Self> {
        if let Some(me) = Arc::get_mut(&mut self) {
            me.workload_affinity = on;
        }
        self
    }

    /// The same detector with gate `MultiplePodTemplatesScheduling` as given. Only before
    /// [`Detector::run`].
    pub fn with_multiple_templates(mut self: Arc<Self>, on: bool) -> Arc<Self> {
        if let Some(me) = Arc::get_mut(&mut self) {
            me.multiple_templates = on;
        }
        self
    }

    /// Runs until `shutdown`.
    pub async fn run(self: Arc<Self>, shutdown: Shutdown) {
        let mut tasks = Tasks::new();
        let (pp_ready, cpp_ready) = (
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(tokio::sync::Notify::new()),
        );
        tasks.spawn(self.clone().watch_propagation_policies(pp_ready.clone()));
        tasks.spawn(
            self.clone()
                .watch_cluster_propagation_policies(cpp_ready.clone()),
        );
        let ready = async {
            pp_ready.notified().await;
            cpp_ready.notified().await;
            self.interpreter.ready().await;
        };
        if !until_ready(&shutdown, ready).await {
            return;
        }
        self.rediscover().await;
        tasks.spawn(self.clone().watch_crds());
        let me = self.clone();
        tasks.workers(
            &self.queue,
            WORKERS,
            move |key| {
                let me = me.clone();
                async move { me.reconcile(&key).await }
            },
            |key, error| warn!(template = %key, %error, "applying policy failed; backing off"),
        );
        self.work_policies(&mut tasks);
        info!("resource detector running");
        shutdown.cancelled().await;
        self.queue.shut_down();
        self.policy_queue.shut_down();
        tasks.abort();
        for (_, watch) in std::mem::take(&mut *self.kinds.lock()) {
            watch.task.abort();
        }
    }

    /// Starts watchers for newly served propagatable kinds and stops those of kinds gone.
    async fn rediscover(self: &Arc<Self>) {
        let served = match self.resources.refresh().await {
            Ok(served) => served,
            Err(error) => {
                warn!(%error, "discovery failed; keeping the current watches");
                return;
            }
        };
        let wanted: BTreeMap<(String, String), _> = served
            .into_iter()
            .filter(|s| s.propagatable)
            .filter(|s| {
                !is_skipped_kind(&s.resource.group, &s.resource.api_version, &s.resource.kind)
            })
            .map(|s| ((s.resource.api_version.clone(), s.resource.kind.clone()), s))
            .collect();
        let mut kinds = self.kinds.lock();
        kinds.retain(|key, watch| {
            let keep = wanted.contains_key(key);
            if !keep {
                watch.task.abort();
            }
            keep
        });
        for (key, served) in wanted {
            if kinds.contains_key(&key) {
                continue;
            }
            debug!(api_version = %key.0, kind = %key.1, "watching templates");
            kinds.insert(key, KindWatch::start(self.clone(), served));
        }
    }

    /// A template event from a kind watcher.
    fn template_seen(&self, object: &DynamicObject, api_version: &str, kind: &str, initial: bool) {
        let key = TemplateKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: object.metadata.namespace.clone().unwrap_or_default(),
            name: object.metadata.name.clone().unwrap_or_default(),
        };
        if is_skipped_namespace(&key.namespace) {
            return;
        }
        let claim = object
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| {
                labels
                    .get(flotilla_api::validation::karmada::PP_PERMANENT_ID)
                    .or_else(|| labels.get(flotilla_api::validation::karmada::CPP_PERMANENT_ID))
            })
            .cloned();
        self.claims.lock().set(&key, claim);
        let fingerprint = Fingerprint::of(object);
        {
            let mut fingerprints = self.fingerprints.lock();
            let seen = fingerprints.get(&key).map(|(seen, _)| *seen);
            if seen.is_some_and(|seen| seen.whole == fingerprint.whole) {
                // Status or bookkeeping only: the specification's version stays the earlier one.
                return;
            }
            if seen.is_none_or(|seen| seen.users != fingerprint.users) {
                self.changed.lock().insert(key.clone());
            }
            let version = object.metadata.resource_version.clone().unwrap_or_default();
            fingerprints.insert(key.clone(), (fingerprint, version));
        }
        if let Some(generation) = object.metadata.generation
            && interpreter::reflect::reports_template_generation(api_version, kind)
        {
            self.metrics.template_seen(
                template_id(&key),
                generation,
                initial,
                tokio::time::Instant::now(),
            );
        }
        let priority = if initial {
            Priority::Low
        } else {
            Priority::High
        };
        self.queue.add_with(key, priority);
    }

    fn template_gone(&self, object: &DynamicObject, api_version: &str, kind: &str) {
        let key = TemplateKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: object.metadata.namespace.clone().unwrap_or_default(),
            name: object.metadata.name.clone().unwrap_or_default(),
        };
        self.fingerprints.lock().remove(&key);
        self.changed.lock().remove(&key);
        self.claims.lock().set(&key, None);
        self.metrics.template_deleted(&template_id(&key));
    }

    /// Queues every template `spec` may select (low priority) plus those claimed by `id`.
    fn enqueue_selected(&self, policy_namespace: Option<&str>, spec: &PropagationSpec, id: &str) {
        let kinds = self.kinds.lock();
        for selector in &spec.resource_selectors {
            let Some(watch) = kinds.get(&(selector.api_version.clone(), selector.kind.clone()))
            else {
                continue;
            };
            let namespace = if selector.namespace.is_empty() {
                policy_namespace.unwrap_or("")
            } else {
                &selector.namespace
            };
            for (object_namespace, name) in watch.store.keys() {
                if !namespace.is_empty() && object_namespace != namespace {
                    continue;
                }
                if !selector.name.is_empty() && name != selector.name {
                    continue;
                }
                if is_skipped_namespace(&object_namespace) {
                    continue;
                }
                self.queue.add_with(
                    TemplateKey {
                        api_version: selector.api_version.clone(),
                        kind: selector.kind.clone(),
                        namespace: object_namespace,
                        name,
                    },
                    Priority::Low,
                );
            }
        }
        drop(kinds);
        self.enqueue_claimed(id);
    }

    fn enqueue_claimed(&self, id: &str) {
        let claimed = self.claims.lock().claimed_by(id);
        for key in claimed {
            self.queue.add_with(key, Priority::Low);
        }
    }

    fn template(&self, key: &TemplateKey) -> Option<Arc<DynamicObject>> {
        let kinds = self.kinds.lock();
        let watch = kinds.get(&(key.api_version.clone(), key.kind.clone()))?;
        watch.get(&key.namespace, &key.name)
    }

    /// Gives `template` (built from the cached `object`) the resource version at which its
    /// specification last changed, when the cache has moved on only by status writes since:
    /// the binding then keeps naming that version (as Karmada's, whose detector ignores
    /// status-only updates) instead of being rewritten — and rescheduled, as its generation
    /// moves — because the template's status was aggregated before this reconcile ran.
    ///
    /// The record is updated right after the cache by the same watch, so at worst a reconcile
    /// between the two names an older version, and the event queues the next one.
    fn pin_specification_version(&self, key: &TemplateKey, template: &mut Value) {
        let Some(version) = self
            .fingerprints
            .lock()
            .get(key)
            .map(|(_, version)| version.clone())
        else {
            return;
        };
        if version.is_empty() {
            return;
        }
        if let Some(meta) = template.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(version));
        }
    }

    async fn reconcile(&self, key: &TemplateKey) -> Result<(), DetectorError> {
        let template_changed = self.changed.lock().remove(key);
        let Some(object) = self.template(key) else {
            return Ok(());
        };
        if object.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        if object
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(claim::CLAIMED_BY_LABEL))
        {
            return Ok(());
        }
        let mut template = serde_json::to_value(&*object)?;
        self.pin_specification_version(key, &mut template);
        let cluster_scoped = key.namespace.is_empty();
        let current = PolicyClaim::of(&template);
        let matching = std::time::Instant::now();
        let decision = self
            .policies
            .lock()
            .decide(&template, current.as_ref(), cluster_scoped);
        let Some((claim, spec, lazy, preempted)) = decision else {
            if let Some(stale) = current {
                info!(template = %key, policy = ?stale, "claiming policy is gone or no longer selects the template; unclaiming");
                // The binding first, as Karmada cleans up: a failure leaves the template
                // claimed, so the next attempt finds the stale claim again.
                let patch = claim::unclaim_patch(&stale);
                self.unclaim_binding(key, &stale, &patch).await?;
                self.patch_template(key, &patch).await?;
            }
            return Ok(());
        };
        if preempted {
            // A preemption only moves the claim; the binding follows as for any claim change.
            let result = self.patch_template(key, &claim.claim_patch()).await;
            self.metrics.count_preemption(result.is_ok());
            if let Some(previous) = &current {
                let (type_, reason, note) =
                    claim::preemption_event(&claim, previous, result.as_ref().err());
                self.publish(key, &object, type_, reason, note).await;
            }
            let patched = result?;
            if !patched.is_null() {
                template = patched;
            }
        }
        if lazy && !template_changed {
            // Karmada's detector claims the template for a Lazy policy but leaves its binding
            // alone unless a user changed the template: a policy created, changed or preempting
            // after the template applies with the template's next change.
            if !claim.is_on(&template) {
                self.patch_template(key, &claim.claim_patch()).await?;
            }
            debug!(template = %key, "Lazy policy: the template did not change; binding left as is");
            // Karmada counts a lazy no-op as a successful application.
            self.metrics.observe_match_policy(matching.elapsed());
            self.metrics
                .observe_apply_policy(true, std::time::Duration::ZERO);
            return Ok(());
        }
        self.check_dependent_overrides(&claim, &spec).await?;
        self.metrics.observe_match_policy(matching.elapsed());
        let applying = std::time::Instant::now();
        let mut interpreted = None;
        let result = match self
            .desired_spec(key, &object, template, &claim, &spec)
            .await
        {
            Ok((template, desired, reported)) => {
                interpreted = reported;
                let extensions = self.policies.lock().extension_annotations(&claim);
                self.ensure_binding(&template, &claim, desired, &extensions, cluster_scoped)
                    .await
            }
            Err(error) => Err(error),
        };
        self.metrics
            .observe_apply_policy(result.is_ok(), applying.elapsed());
        // Karmada's `ApplyPolicy` reports a failure, or a binding it created or updated.
        match &result {
            Ok(false) => {}
            Ok(true) => {
                // Karmada records the interpretation at every build of the binding; Flotilla
                // when the build changed the binding (the failures always), so a template's
                // events do not grow with every reconcile.
                if let Some((reason, note)) = interpreted {
                    self.publish(key, &object, EventType::Normal, reason, note.to_owned())
                        .await;
                }
                let note = format!("Apply {} succeed", claim.describe_for_apply());
                self.publish(key, &object, EventType::Normal, "ApplyPolicySucceed", note)
                    .await;
            }
            Err(error) => {
                let note = format!("Apply {} failed: {error}", claim.describe_for_apply());
                self.publish(key, &object, EventType::Warning, "ApplyPolicyFailed", note)
                    .await;
            }
        }
        result.map(drop)
    }

    /// Claims the template for the policy and builds the binding's spec; returns the (claimed)
    /// template, the spec and the interpretation's success event (reason, note) when a hook
    /// interpreted replicas or components (failures are recorded here).
    async fn desired_spec(
        &self,
        key: &TemplateKey,
        object: &DynamicObject,
        mut template: Value,
        claim: &PolicyClaim,
        spec: &PropagationSpec,
    ) -> Result<(Value, ResourceBindingSpec, Option<SuccessEvent>), DetectorError> {
        if !claim.is_on(&template) {
            template = self.patch_template(key, &claim.claim_patch()).await?;
        }
        let schedule_priority = self.schedule_priority(spec).await?;
        let (interpreted, components, reported) =
            self.interpret_replicas(key, object, &template).await?;
        let mut desired = build::binding_spec(&template, spec, interpreted, schedule_priority);
        if let Some(components) = components {
            desired.components = components;
        }
        if self.workload_affinity {
            desired.workload_affinity_groups = build::workload_affinity_groups(&template, spec);
        }
        Ok((template, desired, reported))
    }

    async fn patch_template(
        &self,
        key: &TemplateKey,
        patch: &Value,
    ) -> Result<Value, DetectorError> {
        let served = {
            let kinds = self.kinds.lock();
            kinds
                .get(&(key.api_version.clone(), key.kind.clone()))
                .map(|w| w.served.clone())
        };
        let Some(served) = served else {
            return Ok(Value::Null);
        };
        let api = self.resources.api(&served, &key.namespace);
        let patched = api
            .patch(&key.name, &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(serde_json::to_value(&patched)?)
    }

    async fn check_dependent_overrides(
        &self,
        claim: &PolicyClaim,
        spec: &PropagationSpec,
    ) -> Result<(), DetectorError> {
        for name in &spec.dependent_overrides {
            let found = match claim {
                PolicyClaim::Namespaced { namespace, .. } => Api::<
                    flotilla_api::karmada::OverridePolicy,
                >::namespaced(
                    self.client.clone(), namespace
                )
                .get_opt(name)
                .await?
                .is_some(),
                PolicyClaim::Cluster { .. } => {
                    Api::<flotilla_api::karmada::ClusterOverridePolicy>::all(self.client.clone())
                        .get_opt(name)
                        .await?
                        .is_some()
                }
            };
            if !found {
                return Err(DetectorError::DependentOverrides(name.clone()));
            }
        }
        Ok(())
    }

    async fn schedule_priority(
        &self,
        spec: &PropagationSpec,
    ) -> Result<Option<i32>, DetectorError> {
        let Some(priority) = &spec.schedule_priority else {
            return Ok(None);
        };
        if priority.priority_class_source != "KubePriorityClass" {
            return Ok(None);
        }
        let api = Api::<k8s_openapi::api::scheduling::v1::PriorityClass>::all(self.client.clone());
        match api.get_opt(&priority.priority_class_name).await? {
            Some(class) => Ok(Some(class.value)),
            None => Err(DetectorError::PriorityClass(
                priority.priority_class_name.clone(),
            )),
        }
    }

    async fn publish(
        &self,
        key: &TemplateKey,
        object: &DynamicObject,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let reference = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some(key.api_version.clone()),
            kind: Some(key.kind.clone()),
            namespace: (!key.namespace.is_empty()).then(|| key.namespace.clone()),
            name: Some(key.name.clone()),
            uid: object.metadata.uid.clone(),
            ..Default::default()
        };
        let action = reason
            .strip_suffix("Succeed")
            .or_else(|| reason.strip_suffix("Failed"))
            .unwrap_or(reason);
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: action.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, &reference).await {
            debug!(%error, "publishing an event failed");
        }
    }
}

fn template_id(key: &TemplateKey) -> TemplateId {
    TemplateId {
        api_version: key.api_version.clone(),
        kind: key.kind.clone(),
        namespace: key.namespace.clone(),
        name: key.name.clone(),
    }
}

/// Which policy (permanent id) claims which templates, both ways.
#[derive(Debug, Default)]
struct ClaimIndex {
    by_policy: HashMap<String, BTreeSet<TemplateKey>>,
    of_template: HashMap<TemplateKey, String>,
}

impl ClaimIndex {
    fn set(&mut self, key: &TemplateKey, id: Option<String>) {
        if let Some(old) = self.of_template.remove(key)
            && let Some(set) = self.by_policy.get_mut(&old)
        {
            set.remove(key);
            if set.is_empty() {
                self.by_policy.remove(&old);
            }
        }
        if let Some(id) = id {
            self.by_policy
                .entry(id.clone())
                .or_default()
                .insert(key.clone());
            self.of_template.insert(key.clone(), id);
        }
    }

    fn claimed_by(&self, id: &str) -> Vec<TemplateKey> {
        self.by_policy
            .get(id)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}
