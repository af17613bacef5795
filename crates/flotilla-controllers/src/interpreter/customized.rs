//! Karmada's declarative interpreter: the Lua rules of ResourceInterpreterCustomizations,
//! consulted before the native interpreter. For each kind (`apiVersion` + `kind`) the
//! customizations naming it are merged in name order: the first one with a script for an
//! operation supplies it, except `InterpretDependency`, whose scripts all run and whose results
//! are merged (Karmada's `configmanager`). An operation no customization scripts falls back to
//! the native interpreter; one that does replaces it, errors included.
//!
//! Karmada's chain (`pkg/resourceinterpreter/interpreter.go`), per operation: the
//! customizations first; then ResourceInterpreterWebhookConfigurations (`webhook.rs`), for an
//! operation no customization scripts; then the bundled third-party customizations
//! (`bundled.rs`, Flotilla's own scripts for the kinds Karmada bundles); `None` leaves the
//! operation to the native interpreter.
//!
//! One [`Customizations`] per [`crate::Context`]: an informer of the customizations (started by
//! the first controller that waits for it) keeps an index by kind, so a kind without rules costs
//! one read lock.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use flotilla_api::karmada::lua::{KubeLibrary, LuaInterpreter};
use flotilla_api::karmada::{
    AggregatedStatusItem, Operation, ReplicaRequirements, ResourceInterpreterCustomization,
    replicas::InterpretedReplicas,
};
use flotilla_runtime::informer::{Informers, Shared, Subscription};
use parking_lot::RwLock;
use serde_json::Value;

use super::dependencies::DependentObjectReference;
use super::webhook::{Answer, Call, WebhookError, Webhooks};

/// A failed customized operation: a script's error, a webhook's failure, or a result of the
/// wrong shape. Reads `InterpretHealth of Deployment default/web: <source>: <what>`.
#[derive(Debug, thiserror::Error)]
#[error("{operation} of {object}: {message}")]
pub struct CustomizedError {
    /// Karmada's name of the operation.
    pub operation: &'static str,
    /// The object: kind, then `namespace/name` (or `name`).
    pub object: String,
    /// What went wrong, starting with who said so (a customization's script, a webhook).
    pub message: String,
}

impl CustomizedError {
    fn new(operation: Operation, object: &Value, message: String) -> Self {
        let name = |pointer| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let (namespace, name) = (name("/metadata/namespace"), name("/metadata/name"));
        let kind = super::gvk_of(object).1;
        CustomizedError {
            operation: operation.name(),
            object: if namespace.is_empty() {
                format!("{kind} {name}")
            } else {
                format!("{kind} {namespace}/{name}")
            },
            message,
        }
    }
}

/// The merged rules of one kind.
#[derive(Debug, Default, Clone)]
pub(super) struct Rules {
    /// Operation → script (the first customization, by name, that has one).
    pub(super) single: BTreeMap<Operation, Arc<str>>,
    /// Every `InterpretDependency` script, in customization name order.
    pub(super) dependencies: Vec<Arc<str>>,
}

pub(super) type Index = HashMap<(String, String), Rules>;

/// How long [`Customizations::ready`] waits for the first list.
const LIST_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

struct Started {
    informer: Shared<ResourceInterpreterCustomization>,
    _subscription: Subscription,
}

/// The customizations of one control plane and the Lua runtime that runs them.
pub struct Customizations {
    informers: Option<Informers>,
    started: OnceLock<Started>,
    index: Arc<RwLock<Arc<Index>>>,
    lua: LuaInterpreter,
    /// ResourceInterpreterWebhookConfigurations, consulted after the customizations.
    webhooks: Webhooks,
}

impl std::fmt::Debug for Customizations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Customizations")
            .field("kinds", &self.index.read().len())
            .finish_non_exhaustive()
    }
}

impl Customizations {
    /// Customizations read from `informers` (the watch starts with [`Customizations::ready`]).
    pub fn new(informers: Informers) -> Self {
        Self::build(Some(informers))
    }

    /// No customizations ever: the bundled third-party rules and the native interpreter alone
    /// (tests of pure code).
    pub fn none() -> Self {
        Self::build(None)
    }

    /// Exactly `customizations`, no informer and no webhook (`flotilla interpret`).
    pub fn fixed(customizations: &[ResourceInterpreterCustomization]) -> Self {
        let this = Self::build(None);
        let owned: Vec<Arc<ResourceInterpreterCustomization>> =
            customizations.iter().cloned().map(Arc::new).collect();
        *this.index.write() = Arc::new(build_index(&owned));
        this
    }

    fn build(informers: Option<Informers>) -> Self {
        Customizations {
            webhooks: Webhooks::new(informers.clone()),
            informers,
            started: OnceLock::new(),
            index: Arc::default(),
            lua: LuaInterpreter::new(Arc::new(NativeKube)),
        }
    }

    /// Starts the watch of customizations (once) and resolves when its first list is indexed,
    /// as Karmada's interpreter waits for its informer to sync.
    pub async fn ready(&self) {
        let Some(informers) = &self.informers else {
            return;
        };
        if !self.webhooks.ready(LIST_PATIENCE).await {
            tracing::warn!(
                "ResourceInterpreterWebhookConfigurations not listed within {LIST_PATIENCE:?}; \
                 no interpreter webhook is called until they are"
            );
        }
        let started = self.started.get_or_init(|| {
            let informer = informers.all::<ResourceInterpreterCustomization>();
            let store = informer.store();
            let index = self.index.clone();
            let subscription = informer.subscribe(move |_event| {
                *index.write() = Arc::new(build_index(&store.state()));
            });
            Started {
                informer,
                _subscription: subscription,
            }
        });
        // A client not allowed to list customizations (an agent with narrow RBAC) must not
        // keep its controllers from starting: after a while they run with the native rules,
        // and the index fills in whenever the list succeeds.
        if tokio::time::timeout(LIST_PATIENCE, started.informer.wait_until_ready())
            .await
            .is_err()
        {
            tracing::warn!(
                "ResourceInterpreterCustomizations not listed within {LIST_PATIENCE:?}; \
                 using the native interpreter until they are"
            );
            return;
        }
        *self.index.write() = Arc::new(build_index(&started.informer.store().state()));
    }

    /// Replaces the index with `customizations` (tests without an API server).
    #[cfg(test)]
    pub fn set(&self, customizations: &[ResourceInterpreterCustomization]) {
        let owned: Vec<Arc<ResourceInterpreterCustomization>> =
            customizations.iter().cloned().map(Arc::new).collect();
        *self.index.write() = Arc::new(build_index(&owned));
    }

    /// The webhooks (tests set them directly).
    #[cfg(test)]
    pub(crate) fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// `pick` applied to the rules of `object`'s kind (`None` without rules).
    fn with_rules<T>(&self, object: &Value, pick: impl FnOnce(&Rules) -> Option<T>) -> Option<T> {
        let index = self.index.read();
        if index.is_empty() {
            return None;
        }
        let (api_version, kind) = super::gvk_of(object);
        index
            .get(&(api_version.to_owned(), kind.to_owned()))
            .and_then(pick)
    }

    fn script(&self, object: &Value, operation: Operation) -> Option<Arc<str>> {
        self.with_rules(object, |rules| rules.single.get(&operation).cloned())
    }

    /// Who interprets `operation` for `object`, in Karmada's order: a customization's script,
    /// else a matching webhook, else a bundled third-party script (`None`: the native rules).
    fn choose(&self, object: &Value, operation: Operation) -> Option<Choice> {
        if let Some(script) = self.script(object, operation) {
            return Some(Choice::Script(script));
        }
        if self.webhooks.enabled(object, operation) {
            return Some(Choice::Webhook);
        }
        super::bundled::script(object, operation).map(Choice::Script)
    }

    /// Whether any interpreter judges the health of `api_version`/`kind` (Karmada's
    /// `HookEnabled` for `InterpretHealth`): the native rules, a bundled rule, a customization's
    /// script or a matching webhook.
    pub fn health_hook(&self, api_version: &str, kind: &str) -> bool {
        if super::health::has_rule(api_version, kind) {
            return true;
        }
        let probe = serde_json::json!({"apiVersion": api_version, "kind": kind});
        self.script(&probe, Operation::InterpretHealth).is_some()
            || self.webhooks.enabled(&probe, Operation::InterpretHealth)
    }

    /// `InterpretReplica`: replicas and per-replica requirements.
    pub async fn interpret_replica(
        &self,
        object: &Value,
    ) -> Option<Result<InterpretedReplicas, CustomizedError>> {
        let script = match self.choose(object, Operation::InterpretReplica)? {
            Choice::Script(script) => script,
            Choice::Webhook => {
                let call = Call {
                    object,
                    ..Call::default()
                };
                let answer = self
                    .webhooks
                    .interpret(Operation::InterpretReplica, call)
                    .await?;
                return Some(
                    answer
                        .map(|a| InterpretedReplicas {
                            replicas: a.0.replicas.unwrap_or_default(),
                            requirements: a.0.replica_requirements,
                        })
                        .map_err(by_webhook(Operation::InterpretReplica, object)),
                );
            }
        };
        let fail = failure(Operation::InterpretReplica, object);
        Some(
            self.lua
                .get_replicas(&script, object)
                .map_err(|e| fail(e.to_string()))
                .and_then(|(replicas, requirements)| {
                    let requirements = requirements
                        .map(serde_json::from_value::<ReplicaRequirements>)
                        .transpose()
                        .map_err(|e| fail(format!("decoding the replica requirements: {e}")))?;
                    Ok(InterpretedReplicas {
                        replicas,
                        requirements,
                    })
                }),
        )
    }

    /// `InterpretComponent`: the components of a multi-template workload, from a
    /// customization's `componentResource` script, else a webhook's `components`, else a
    /// bundled script (`None` without any).
    pub async fn interpret_components(
        &self,
        object: &Value,
    ) -> Option<Result<Vec<flotilla_api::karmada::Component>, CustomizedError>> {
        let script = match self.choose(object, Operation::InterpretComponent)? {
            Choice::Script(script) => script,
            Choice::Webhook => {
                let call = Call {
                    object,
                    ..Call::default()
                };
                let answer = self
                    .webhooks
                    .interpret(Operation::InterpretComponent, call)
                    .await?;
                return Some(
                    answer
                        .map(|a| a.0.components)
                        .map_err(by_webhook(Operation::InterpretComponent, object)),
                );
            }
        };
        let fail = failure(Operation::InterpretComponent, object);
        Some(
            self.lua
                .get_components(&script, object)
                .map_err(|e| fail(e.to_string()))
                .and_then(|items| {
                    items
                        .into_iter()
                        .map(|item| {
                            serde_json::from_value(item)
                                .map_err(|e| fail(format!("decoding a component: {e}")))
                        })
                        .collect()
                }),
        )
    }

    /// Whether a webhook answers `ReviseReplica` for `object`: one matches and no customization
    /// scripts it (then [`Customizations::revise_replica_by_webhook`] revises it, not
    /// [`Customizations::revise_replica`]).
    pub fn webhook_revises(&self, object: &Value) -> bool {
        matches!(
            self.choose(object, Operation::ReviseReplica),
            Some(Choice::Webhook)
        )
    }

    /// `ReviseReplica` by the webhook that answers it, if any.
    pub async fn revise_replica_by_webhook(
        &self,
        object: &Value,
        replicas: i32,
    ) -> Option<Result<Value, CustomizedError>> {
        if !self.webhook_revises(object) {
            return None;
        }
        let call = Call {
            object,
            replicas: Some(replicas),
            ..Call::default()
        };
        let answer = self
            .webhooks
            .interpret(Operation::ReviseReplica, call)
            .await?;
        Some(patched(answer, object, Operation::ReviseReplica))
    }

    /// `ReviseReplica` by a script (a customization's, else, when no webhook answers, a bundled
    /// one): `object` with `replicas` for one cluster.
    pub fn revise_replica(
        &self,
        object: &Value,
        replicas: i32,
    ) -> Option<Result<Value, CustomizedError>> {
        let Choice::Script(script) = self.choose(object, Operation::ReviseReplica)? else {
            return None;
        };
        let fail = failure(Operation::ReviseReplica, object);
        Some(
            self.lua
                .revise_replica(&script, object, i64::from(replicas))
                .map_err(|e| fail(e.to_string())),
        )
    }

    /// `Retain`: the object to write over `observed` in the member.
    pub async fn retain(
        &self,
        desired: &Value,
        observed: &Value,
    ) -> Option<Result<Value, CustomizedError>> {
        let Choice::Script(script) = self.choose(desired, Operation::Retain)? else {
            let call = Call {
                object: desired,
                observed: Some(observed),
                ..Call::default()
            };
            let answer = self.webhooks.interpret(Operation::Retain, call).await?;
            return Some(patched(answer, desired, Operation::Retain));
        };
        let fail = failure(Operation::Retain, desired);
        Some(
            self.lua
                .retain(&script, desired, observed)
                .map_err(|e| fail(e.to_string())),
        )
    }

    /// `InterpretStatus`: the status a Work records for the member object.
    pub async fn reflect_status(&self, observed: &Value) -> Option<Result<Value, CustomizedError>> {
        let Choice::Script(script) = self.choose(observed, Operation::InterpretStatus)? else {
            let call = Call {
                object: observed,
                ..Call::default()
            };
            let answer = self
                .webhooks
                .interpret(Operation::InterpretStatus, call)
                .await?;
            return Some(
                answer
                    .map(|a| a.0.raw_status.unwrap_or_default())
                    .map_err(by_webhook(Operation::InterpretStatus, observed)),
            );
        };
        let fail = failure(Operation::InterpretStatus, observed);
        Some(
            self.lua
                .reflect_status(&script, observed)
                .map_err(|e| fail(e.to_string())),
        )
    }

    /// `InterpretHealth`: whether the member object is healthy.
    pub async fn interpret_health(
        &self,
        observed: &Value,
    ) -> Option<Result<bool, CustomizedError>> {
        let Choice::Script(script) = self.choose(observed, Operation::InterpretHealth)? else {
            let call = Call {
                object: observed,
                ..Call::default()
            };
            let answer = self
                .webhooks
                .interpret(Operation::InterpretHealth, call)
                .await?;
            return Some(
                answer
                    .map(|a| a.0.healthy.unwrap_or_default())
                    .map_err(by_webhook(Operation::InterpretHealth, observed)),
            );
        };
        let fail = failure(Operation::InterpretHealth, observed);
        Some(
            self.lua
                .interpret_health(&script, observed)
                .map_err(|e| fail(e.to_string())),
        )
    }

    /// `AggregateStatus`: the template's new `status` from the members' (an object without
    /// one returned by the script clears it).
    pub async fn aggregate_status(
        &self,
        template: &Value,
        items: &[AggregatedStatusItem],
    ) -> Option<Result<Value, CustomizedError>> {
        let status_of = |mut object: Value| match object.get_mut("status") {
            Some(status) if !status.is_null() => status.take(),
            _ => Value::Object(Default::default()),
        };
        // The items are converted only for a webhook or a script: this runs for every binding.
        let Choice::Script(script) = self.choose(template, Operation::AggregateStatus)? else {
            let call = Call {
                object: template,
                aggregated_status: items.iter().map(status_item).collect(),
                ..Call::default()
            };
            let answer = self
                .webhooks
                .interpret(Operation::AggregateStatus, call)
                .await?;
            return Some(patched(answer, template, Operation::AggregateStatus).map(status_of));
        };
        let fail = failure(Operation::AggregateStatus, template);
        let items: Vec<Value> = items.iter().map(status_item).collect();
        Some(
            self.lua
                .aggregate_status(&script, template, &items)
                .map(status_of)
                .map_err(|e| fail(e.to_string())),
        )
    }

    /// `InterpretDependency`: every script's references, checked, merged and sorted by
    /// (apiVersion, kind, namespace, name).
    pub async fn dependencies(
        &self,
        object: &Value,
    ) -> Option<Result<Vec<DependentObjectReference>, CustomizedError>> {
        let customized = self.with_rules(object, |rules| {
            (!rules.dependencies.is_empty()).then(|| rules.dependencies.clone())
        });
        if customized.is_none()
            && self
                .webhooks
                .enabled(object, Operation::InterpretDependency)
        {
            let call = Call {
                object,
                ..Call::default()
            };
            let answer = self
                .webhooks
                .interpret(Operation::InterpretDependency, call)
                .await?;
            let fail = by_webhook(Operation::InterpretDependency, object);
            return Some(answer.map_err(&fail).and_then(|a| {
                let mut merged = BTreeSet::new();
                for reference in a.0.dependencies {
                    merged.insert(dependency(reference).map_err(|message| {
                        CustomizedError::new(Operation::InterpretDependency, object, message)
                    })?);
                }
                Ok(merged.into_iter().collect())
            }));
        }
        let scripts = customized.or_else(|| super::bundled::dependency_scripts(object))?;
        let fail = failure(Operation::InterpretDependency, object);
        let mut merged = BTreeSet::new();
        for script in &scripts {
            let references = match self.lua.get_dependencies(script, object) {
                Ok(references) => references,
                Err(error) => return Some(Err(fail(error.to_string()))),
            };
            for reference in references {
                match dependency(reference) {
                    Ok(reference) => {
                        merged.insert(reference);
                    }
                    Err(message) => return Some(Err(fail(message))),
                }
            }
        }
        Some(Ok(merged.into_iter().collect()))
    }
}

/// Who interprets one operation (see [`Customizations::choose`]).
enum Choice {
    /// A Lua script: a customization's, or a bundled one.
    Script(Arc<str>),
    /// The matching interpreter webhook.
    Webhook,
}

/// A failed webhook call as the operation's error.
fn by_webhook(operation: Operation, object: &Value) -> impl Fn(WebhookError) -> CustomizedError {
    move |error| CustomizedError::new(operation, object, error.to_string())
}

/// `object` with a webhook answer's patch applied.
fn patched(
    answer: Result<Answer, WebhookError>,
    object: &Value,
    operation: Operation,
) -> Result<Value, CustomizedError> {
    let answer = answer.map_err(by_webhook(operation, object))?;
    answer
        .patched(object)
        .map_err(|message| CustomizedError::new(operation, object, message))
}

/// A script's failure as the operation's error.
fn failure(operation: Operation, object: &Value) -> impl Fn(String) -> CustomizedError + '_ {
    move |message| {
        CustomizedError::new(
            operation,
            object,
            format!("ResourceInterpreterCustomization script: {message}"),
        )
    }
}

/// An `AggregatedStatusItem` as the script sees it (Karmada passes the Go struct as JSON).
fn status_item(item: &AggregatedStatusItem) -> Value {
    let mut out = serde_json::Map::new();
    out.insert(
        "clusterName".into(),
        Value::String(item.cluster_name.clone()),
    );
    if let Some(status) = &item.status {
        out.insert("status".into(), status.to_value());
    }
    out.insert("applied".into(), Value::Bool(item.applied));
    if !item.applied_message.is_empty() {
        out.insert(
            "appliedMessage".into(),
            Value::String(item.applied_message.clone()),
        );
    }
    if !item.health.is_empty() {
        out.insert("health".into(), Value::String(item.health.clone()));
    }
    Value::Object(out)
}

/// One returned reference, checked as Karmada's `VerifyDependencies` checks it.
fn dependency(reference: Value) -> Result<DependentObjectReference, String> {
    let text = |field: &str| {
        reference
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let label_selector = match reference.get("labelSelector") {
        None | Some(Value::Null) => None,
        Some(selector) => Some(
            serde_json::from_value(selector.clone())
                .map_err(|e| format!("dependency {reference} has an invalid labelSelector: {e}"))?,
        ),
    };
    let out = DependentObjectReference {
        api_version: text("apiVersion"),
        kind: text("kind"),
        namespace: text("namespace"),
        name: text("name"),
        label_selector,
    };
    if out.api_version.is_empty() || out.kind.is_empty() {
        return Err(format!(
            "dependency {reference} needs both apiVersion and kind"
        ));
    }
    if out.name.is_empty() && out.label_selector.is_none() {
        return Err(format!(
            "dependency {reference}: dependency can not leave name and labelSelector all empty"
        ));
    }
    Ok(out)
}

pub(super) fn build_index(customizations: &[Arc<ResourceInterpreterCustomization>]) -> Index {
    let mut sorted: Vec<&ResourceInterpreterCustomization> =
        customizations.iter().map(Arc::as_ref).collect();
    sorted.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut index = Index::new();
    for customization in sorted {
        let target = &customization.spec.target;
        let rules = index
            .entry((target.api_version.clone(), target.kind.clone()))
            .or_default();
        let scripts = &customization.spec.customizations;
        for operation in Operation::ALL {
            let Some(script) = scripts.script(operation) else {
                continue;
            };
            if operation == Operation::InterpretDependency {
                rules.dependencies.push(Arc::from(script));
            } else {
                rules
                    .single
                    .entry(operation)
                    .or_insert_with(|| Arc::from(script));
            }
        }
    }
    index
}

/// The `kube` Lua library's native half: the native interpreter's requirements and
/// dependencies of a pod template.
struct NativeKube;

impl KubeLibrary for NativeKube {
    fn pod_requirements(&self, pod_template: &Value) -> Value {
        let spec = pod_template.get("spec").cloned().unwrap_or(Value::Null);
        let requirements = serde_json::from_value(spec)
            .ok()
            .and_then(|spec| flotilla_api::karmada::replicas::replica_requirements(&spec).ok())
            .flatten();
        requirements
            .and_then(|r| serde_json::to_value(r).ok())
            .unwrap_or(Value::Null)
    }

    fn pod_dependencies(&self, pod_template: &Value, namespace: &str) -> Vec<Value> {
        let pod = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"namespace": namespace},
            "spec": pod_template.get("spec").cloned().unwrap_or(Value::Null),
        });
        super::dependencies::dependencies(&pod)
            .into_iter()
            .filter_map(|d| serde_json::to_value(d).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests;
