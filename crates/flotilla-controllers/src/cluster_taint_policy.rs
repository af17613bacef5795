//! The ClusterTaintPolicy controller (`clustertaintpolicy`, Karmada's
//! `cluster-taint-policy-controller`; runs only with the `Failover` feature gate): when a
//! Cluster's status conditions change, or a ClusterTaintPolicy is created or its spec changes,
//! the Cluster's taints are worked out again from every policy targeting it, oldest policy first
//! (creationTimestamp, then name): a policy whose `addOnConditions` all match adds its taints
//! (those missing by key and effect, stamped with `timeAdded`), one whose `removeOnConditions`
//! all match then removes them (the first of each key and effect). `spec.taints` is patched,
//! under the Cluster's `resourceVersion`, only when that changed anything; the outcome is a
//! `TaintClusterSucceed` or `TaintClusterFailed` event on the Cluster. Deleting a policy leaves
//! the taints it added where they are, and a taint removed by hand while the conditions still
//! match comes back only at the next condition change.

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_api::karmada::affinity::CompiledAffinity;
use flotilla_api::karmada::{
    Cluster, ClusterTaintPolicy, ClusterTaintPolicySpec, MATCH_OPERATOR_IN, MATCH_OPERATOR_NOT_IN,
    MatchCondition, PolicyTaint,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::Resource as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "clustertaintpolicy";
/// Karmada's controller name, the reporting component of its events.
pub const CONTROLLER_NAME: &str = "cluster-taint-policy-controller";
/// Event reason after the Cluster's taints were patched.
pub const EVENT_TAINT_CLUSTER_SUCCEED: &str = "TaintClusterSucceed";
/// Event reason when patching the Cluster's taints failed.
pub const EVENT_TAINT_CLUSTER_FAILED: &str = "TaintClusterFailed";

/// Why one reconcile failed (logged, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum TaintPolicyError {
    #[error("patching the taints of cluster {cluster:?}: {source}")]
    Patch {
        cluster: String,
        #[source]
        source: kube::Error,
    },
}

/// Whether every test of `tests` holds for `conditions`. No test at all never matches; an
/// operator other than `In`/`NotIn` makes the whole list fail. A condition type the cluster
/// does not report fails its test whatever the operator (`NotIn` too); when a type is reported
/// twice, `In` holds if any of them is listed and `NotIn` follows the last one, as in Karmada.
pub fn conditions_match(conditions: &[Condition], tests: &[MatchCondition]) -> bool {
    !tests.is_empty() && tests.iter().all(|test| test_holds(conditions, test))
}

fn test_holds(conditions: &[Condition], test: &MatchCondition) -> bool {
    let mut statuses = conditions
        .iter()
        .filter(|c| c.type_ == test.condition_type)
        .map(|c| c.status.as_str());
    let listed = |status: &str| test.status_values.iter().any(|v| v == status);
    match test.operator.as_str() {
        MATCH_OPERATOR_IN => statuses.any(listed),
        MATCH_OPERATOR_NOT_IN => statuses.next_back().is_some_and(|s| !listed(s)),
        other => {
            warn!(operator = other, "unsupported ClusterTaintPolicy operator");
            false
        }
    }
}

/// Taints are the same taint when key and effect are (the value is not compared).
fn same_taint(taint: &Taint, wanted: &PolicyTaint) -> bool {
    taint.key == wanted.key && taint.effect == wanted.effect
}

/// `current` plus each of `taints` it lacks (by key and effect), stamped `now`: Karmada stamps
/// `timeAdded` on every taint the policy adds, whatever its effect.
pub fn add_taints(current: &[Taint], taints: &[PolicyTaint], now: &Time) -> Vec<Taint> {
    let mut result = current.to_vec();
    for wanted in taints {
        if result.iter().any(|t| same_taint(t, wanted)) {
            continue;
        }
        result.push(Taint {
            key: wanted.key.clone(),
            value: (!wanted.value.is_empty()).then(|| wanted.value.clone()),
            effect: wanted.effect.clone(),
            time_added: Some(now.clone()),
        });
    }
    result
}

/// `current` without the first taint of each key and effect of `taints`.
pub fn remove_taints(current: &[Taint], taints: &[PolicyTaint]) -> Vec<Taint> {
    let mut result = current.to_vec();
    for wanted in taints {
        if let Some(index) = result.iter().position(|t| same_taint(t, wanted)) {
            result.remove(index);
        }
    }
    result
}

/// The policies in the order they are applied: oldest first, then by name.
pub fn ordered(mut policies: Vec<Arc<ClusterTaintPolicy>>) -> Vec<Arc<ClusterTaintPolicy>> {
    policies.sort_by(|a, b| {
        let created = |p: &ClusterTaintPolicy| p.metadata.creation_timestamp.clone().map(|t| t.0);
        created(a)
            .cmp(&created(b))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    policies
}

/// Whether `policy` looks after `cluster` (no `targetClusters`: every cluster).
pub fn targets(spec: &ClusterTaintPolicySpec, cluster: &Cluster) -> bool {
    spec.target_clusters
        .as_ref()
        .is_none_or(|affinity| CompiledAffinity::new(affinity).matches(cluster))
}

/// The taints `cluster` should have after applying `policies` in their order.
pub fn desired_taints(
    cluster: &Cluster,
    policies: &[Arc<ClusterTaintPolicy>],
    now: &Time,
) -> Vec<Taint> {
    let conditions = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let mut taints = cluster.spec.taints.clone();
    for policy in policies {
        let spec = &policy.spec;
        if !targets(spec, cluster) {
            continue;
        }
        if conditions_match(conditions, &spec.add_on_conditions) {
            taints = add_taints(&taints, &spec.taints, now);
        }
        if conditions_match(conditions, &spec.remove_on_conditions) {
            taints = remove_taints(&taints, &spec.taints);
        }
    }
    taints
}

/// The note of `TaintClusterSucceed`: Karmada's wording, the cluster's taints after the patch.
pub fn succeed_message(cluster: &str, taints: &[Taint]) -> String {
    let listed = if taints.is_empty() {
        "cluster now does not have taints".to_owned()
    } else {
        let each: Vec<String> = taints
            .iter()
            .map(|t| match t.value.as_deref().filter(|v| !v.is_empty()) {
                Some(value) => format!("{{Key:{},Value:{value},Effect:{}}}", t.key, t.effect),
                None => format!("{{Key:{},Effect:{}}}", t.key, t.effect),
            })
            .collect();
        format!("cluster now has taints([{}])", each.join(","))
    };
    format!("Update Cluster({cluster}) with taints({listed}) succeed")
}

/// Now in whole seconds (how `metav1.Time` is written).
fn now_seconds() -> Time {
    let now = jiff::Timestamp::now();
    Time(jiff::Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// The text of a failed write, as Go's `err.Error()` reads: the API's message when it sent one.
fn error_text(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// Objects of a (re)list wait behind the changes users make.
fn priority<K>(event: &WatchEvent<&K>) -> Priority {
    match event {
        WatchEvent::InitApply(_) => Priority::Low,
        _ => Priority::High,
    }
}

struct Controller {
    client: kube::Client,
    recorder: Recorder,
    clusters: Store<Cluster>,
    policies: Store<ClusterTaintPolicy>,
    queue: WorkQueue<String>,
}

/// The `start` of the `clustertaintpolicy` entry in [`crate::CONTROLLERS`]: with the `Failover`
/// gate off it only waits for shutdown.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move {
        if !context.options.gates.failover() {
            info!("cluster taint policy controller idle: feature gate Failover is off");
            shutdown.cancelled().await;
            return;
        }
        run(context, shutdown).await
    })
}

async fn run(context: Context, shutdown: Shutdown) {
    let clusters = context.informers.all::<Cluster>();
    let policies = context.informers.all::<ClusterTaintPolicy>();
    let this = Arc::new(Controller {
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: CONTROLLER_NAME.into(),
                instance: None,
            },
        ),
        client: context.client.clone(),
        clusters: clusters.store(),
        policies: policies.store(),
        queue: WorkQueue::named("cluster-taint-policy-controller"),
    });
    let mut tasks = Tasks::new();
    // A cluster is looked at when it appears and when its conditions change, not for other
    // writes (its own taint patches among them).
    let me = this.clone();
    let mut seen: HashMap<String, Vec<Condition>> = HashMap::new();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| match event {
        WatchEvent::Apply(cluster) | WatchEvent::InitApply(cluster) => {
            let conditions = cluster
                .status
                .as_ref()
                .map(|s| s.conditions.clone())
                .unwrap_or_default();
            let name = cluster.name().to_owned();
            if seen.get(&name) == Some(&conditions) {
                return;
            }
            seen.insert(name.clone(), conditions);
            me.queue.add_with(name, priority(&event));
        }
        WatchEvent::Delete(cluster) => {
            seen.remove(cluster.name());
        }
        WatchEvent::Init | WatchEvent::InitDone => {}
    });
    // A policy created or with a changed spec requeues the clusters it targets.
    let me = this.clone();
    let mut specs: HashMap<String, ClusterTaintPolicySpec> = HashMap::new();
    tasks.subscribe(
        &policies,
        move |event: WatchEvent<&ClusterTaintPolicy>| match event {
            WatchEvent::Apply(policy) | WatchEvent::InitApply(policy) => {
                let name = policy.metadata.name.clone().unwrap_or_default();
                if specs.get(&name) == Some(&policy.spec) {
                    return;
                }
                specs.insert(name, policy.spec.clone());
                for cluster in me.clusters.state() {
                    if targets(&policy.spec, &cluster) {
                        me.queue
                            .add_with(cluster.name().to_owned(), priority(&event));
                    }
                }
            }
            WatchEvent::Delete(policy) => {
                specs.remove(policy.metadata.name.as_deref().unwrap_or_default());
            }
            WatchEvent::Init | WatchEvent::InitDone => {}
        },
    );
    let ready = async {
        clusters.wait_until_ready().await;
        policies.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |name| {
            let me = me.clone();
            async move { me.reconcile(&name).await }
        },
        |name, error: &TaintPolicyError| warn!(cluster = %name, %error, "tainting the cluster failed"),
    );
    info!("cluster taint policy controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    async fn reconcile(&self, name: &str) -> Result<(), TaintPolicyError> {
        let Some(cluster) = self.clusters.get(&ObjectRef::new(name)) else {
            return Ok(());
        };
        let policies = ordered(self.policies.state());
        let taints = desired_taints(&cluster, &policies, &now_seconds());
        if taints == cluster.spec.taints {
            debug!(cluster = name, "cluster taints are up to date");
            return Ok(());
        }
        let patch = json!({
            "metadata": {"resourceVersion": cluster.metadata.resource_version},
            "spec": {"taints": if taints.is_empty() { None } else { Some(&taints) }},
        });
        let reference = cluster.object_ref(&());
        let written = Api::<Cluster>::all(self.client.clone())
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match written {
            Ok(_) => {
                info!(cluster = name, taints = ?taints.iter().map(|t| (&t.key, &t.effect)).collect::<Vec<_>>(), "updated cluster taints");
                let note = succeed_message(name, &taints);
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        EVENT_TAINT_CLUSTER_SUCCEED,
                        EVENT_TAINT_CLUSTER_SUCCEED,
                        note,
                    )
                    .await;
                Ok(())
            }
            Err(source) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        EVENT_TAINT_CLUSTER_FAILED,
                        EVENT_TAINT_CLUSTER_FAILED,
                        error_text(&source),
                    )
                    .await;
                Err(TaintPolicyError::Patch {
                    cluster: name.to_owned(),
                    source,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
