//! The `descheduler` (Karmada's `karmada-descheduler`, an addon that is off by default; `flotilla
//! up --enable-descheduler`): replicas a member cannot run go back to the scheduler.
//!
//! Every `--descheduling-interval` (2m) it looks at the ResourceBindings of Deployments whose
//! applied placement divides replicas dynamically (`Aggregated`, or `Weighted` with a
//! `dynamicWeight`). For a binding where some scheduled cluster reports fewer ready replicas than
//! it was given (the `readyReplicas` of its aggregated status; a cluster without one counts as
//! unknown), it asks each such member how many pods of the Deployment's current ReplicaSet have
//! been unschedulable (`PodScheduled=False`, reason `Unschedulable`) for longer than
//! `--unschedulable-threshold` (5m), the question Karmada's descheduler puts to each member's
//! scheduler estimator (`GetUnschedulableReplicas`). A cluster then keeps its replicas minus the
//! unschedulable ones, but never fewer than its ready replicas. The binding's `spec.clusters` is
//! updated (`DescheduleBindingSucceed` on the binding and the template, naming the replicas taken
//! per cluster), and as the clusters' sum is now below `spec.replicas` the scheduler places the
//! difference again, where the estimators find room.
//!
//! As in Karmada, a binding is left alone when any member cannot answer (unreachable, not a
//! `Push` cluster this control plane can reach, the Deployment not there yet): every answer is
//! needed before anything is taken away.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::work::ANNOTATION_APPLIED_PLACEMENT;
use flotilla_api::karmada::{
    Placement, REPLICA_SCHEDULING_DIVIDED, ResourceBinding, TargetCluster,
};
use flotilla_api::selector::label::LabelSelector;
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kube::Resource;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use serde_json::{Value, json};
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};

/// The `--controllers` name (`up --enable-descheduler` adds it).
pub const NAME: &str = "descheduler";
/// Karmada's component name: the Events' source.
pub const COMPONENT: &str = "karmada-descheduler";
/// Karmada's `--descheduling-interval` default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(120);
/// Karmada's `--unschedulable-threshold` default.
pub const DEFAULT_UNSCHEDULABLE_THRESHOLD: Duration = Duration::from_secs(300);
/// How long all members together may take to answer (Karmada's `--scheduler-estimator-timeout`).
pub const ESTIMATOR_TIMEOUT: Duration = Duration::from_secs(3);
/// The start of the Event's message.
pub const SUCCESS_MESSAGE: &str = "Binding has been descheduled";
/// Event reasons.
pub const REASON_SUCCEED: &str = "DescheduleBindingSucceed";
pub const REASON_FAILED: &str = "DescheduleBindingFailed";
/// Ready replicas of a cluster whose status says nothing (Karmada's `UnauthenticReplica`).
pub const UNKNOWN: i32 = -1;

/// The descheduler's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeschedulerOptions {
    /// `--descheduling-interval`: time between two passes over the bindings.
    pub interval: Duration,
    /// `--unschedulable-threshold`: how long a pod must have been unschedulable to count.
    pub unschedulable_threshold: Duration,
}

impl Default for DeschedulerOptions {
    fn default() -> Self {
        Self {
            interval: DEFAULT_INTERVAL,
            unschedulable_threshold: DEFAULT_UNSCHEDULABLE_THRESHOLD,
        }
    }
}

/// Whether the descheduler looks at `binding` at all: a Deployment (`apps/v1`, the only kind
/// Karmada's descheduler supports) whose applied placement divides replicas dynamically.
pub fn deschedulable(binding: &ResourceBinding) -> bool {
    let resource = &binding.spec.resource;
    if resource.api_version != "apps/v1" || resource.kind != "Deployment" {
        return false;
    }
    let Some(applied) = binding
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(ANNOTATION_APPLIED_PLACEMENT))
    else {
        return false;
    };
    serde_json::from_str::<Placement>(applied).is_ok_and(|placement| dynamic_divided(&placement))
}

/// Karmada's `IsReplicaDynamicDivided`.
pub fn dynamic_divided(placement: &Placement) -> bool {
    if placement.replica_scheduling_type() != REPLICA_SCHEDULING_DIVIDED {
        return false;
    }
    let Some(strategy) = placement.replica_scheduling.as_ref() else {
        return false;
    };
    match strategy.replica_division_preference.as_str() {
        "Weighted" => strategy
            .weight_preference
            .as_ref()
            .is_some_and(|preference| !preference.dynamic_weight.is_empty()),
        "Aggregated" => true,
        _ => false,
    }
}

/// One scheduled cluster of a binding as the descheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterReplicas {
    pub cluster: String,
    /// Replicas the scheduler gave it.
    pub spec: i32,
    /// Ready replicas it reports, or [`UNKNOWN`].
    pub ready: i32,
    /// Replicas unschedulable for longer than the threshold (filled in from the member).
    pub unschedulable: i32,
}

impl ClusterReplicas {
    /// Whether the cluster runs fewer ready replicas than it was given (worth asking).
    pub fn short(&self) -> bool {
        self.ready < self.spec
    }
}

/// The binding's scheduled clusters with the ready replicas their aggregated status reports.
pub fn cluster_replicas(binding: &ResourceBinding) -> Vec<ClusterReplicas> {
    let ready: BTreeMap<&str, i32> = binding
        .status
        .as_ref()
        .map(|status| status.aggregated_status.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|item| {
            let status = item.status.as_ref()?.parse::<Value>().ok()?;
            let ready = status.get("readyReplicas")?.as_f64()?;
            // Go's int32(float64) conversion of a JSON number.
            Some((item.cluster_name.as_str(), ready as i32))
        })
        .collect();
    binding
        .spec
        .clusters
        .iter()
        .map(|target| ClusterReplicas {
            cluster: target.name.clone(),
            spec: target.replicas,
            ready: ready.get(target.name.as_str()).copied().unwrap_or(UNKNOWN),
            unschedulable: 0,
        })
        .collect()
}

/// What descheduling a binding changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The new `spec.clusters`.
    pub clusters: Vec<TargetCluster>,
    /// Replicas taken, in total.
    pub taken: i32,
    /// The Event's message.
    pub message: String,
}

/// Karmada's rule: a cluster with unschedulable replicas that its replicas cover keeps
/// `spec − unschedulable`, raised to its ready replicas when those are fewer than `spec` (and
/// known). `None` when nothing would change.
pub fn plan(clusters: &[TargetCluster], replicas: &[ClusterReplicas]) -> Option<Plan> {
    let mut new = clusters.to_vec();
    let mut taken = 0;
    let mut message = String::from(SUCCESS_MESSAGE);
    for (target, status) in new.iter_mut().zip(replicas) {
        if status.unschedulable <= 0 || status.spec < status.unschedulable {
            continue;
        }
        let mut keep = status.spec - status.unschedulable;
        if keep < status.ready && status.ready <= status.spec {
            keep = status.ready;
        }
        let took = status.spec - keep;
        target.replicas = keep;
        taken += took;
        message.push_str(&format!(
            ", {took} replica(s) in cluster({})",
            status.cluster
        ));
    }
    if taken == 0 {
        return None;
    }
    message.push_str(&format!(", {taken} total descheduled replica(s)"));
    Some(Plan {
        clusters: new,
        taken,
        message,
    })
}

/// Why a member could not say how many replicas are unschedulable.
#[derive(Debug, thiserror::Error)]
pub enum EstimateError {
    #[error("cluster {cluster}: {source}")]
    Member {
        cluster: String,
        #[source]
        source: flotilla_member::MemberError,
    },
    #[error("cluster {cluster}: {source}")]
    Kube {
        cluster: String,
        #[source]
        source: kube::Error,
    },
    #[error("cluster {cluster}: deployment {namespace}/{name} has no valid selector: {message}")]
    Selector {
        cluster: String,
        namespace: String,
        name: String,
        message: String,
    },
    #[error("cluster {0}: no answer within {ESTIMATOR_TIMEOUT:?}")]
    Timeout(String),
}

/// Why a descheduling pass over one binding failed (retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum DescheduleError {
    #[error("failed to update ResourceBinding {namespace}/{name}: {source}")]
    Update {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// Whether `pod` has been unschedulable since before `now − threshold` (Karmada's estimator:
/// `PodScheduled` is `False` with reason `Unschedulable` and its last transition plus the
/// threshold is before now).
pub fn pod_unschedulable(pod: &Pod, threshold: Duration, now: jiff::Timestamp) -> bool {
    let Some(conditions) = pod.status.as_ref().and_then(|s| s.conditions.as_ref()) else {
        return false;
    };
    let Some(condition) = conditions.iter().find(|c| c.type_ == "PodScheduled") else {
        return false;
    };
    if condition.status != "False" || condition.reason.as_deref() != Some("Unschedulable") {
        return false;
    }
    let Some(since) = condition.last_transition_time.as_ref() else {
        return false;
    };
    let Ok(threshold) = jiff::SignedDuration::try_from(threshold) else {
        return false;
    };
    since
        .0
        .checked_add(threshold)
        .is_ok_and(|until| until < now)
}

/// kube's `EqualIgnoreHash`: two pod templates are the same but for the `pod-template-hash`
/// label the Deployment controller adds to its ReplicaSets.
pub fn equal_ignoring_hash(a: &Value, b: &Value) -> bool {
    fn without_hash(template: &Value) -> Value {
        let mut template = template.clone();
        if let Some(labels) = template
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove("pod-template-hash");
            if labels.is_empty()
                && let Some(metadata) = template
                    .pointer_mut("/metadata")
                    .and_then(Value::as_object_mut)
            {
                metadata.remove("labels");
            }
        }
        template
    }
    without_hash(a) == without_hash(b)
}

/// The Deployment's current ReplicaSet (kube's `FindNewReplicaSet`): of the ReplicaSets it
/// controls, oldest first, the first whose template is the Deployment's.
pub fn new_replica_set<'a>(
    deployment: &Deployment,
    replica_sets: &'a [ReplicaSet],
) -> Option<&'a ReplicaSet> {
    let uid = deployment.metadata.uid.as_deref()?;
    let template = serde_json::to_value(&deployment.spec.as_ref()?.template).ok()?;
    let mut owned: Vec<&ReplicaSet> = replica_sets
        .iter()
        .filter(|rs| controlled_by(&rs.metadata, uid))
        .collect();
    owned.sort_by(|a, b| {
        let key = |rs: &ReplicaSet| {
            (
                rs.metadata.creation_timestamp.as_ref().map(|t| t.0),
                rs.metadata.name.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    owned.into_iter().find(|rs| {
        rs.spec
            .as_ref()
            .and_then(|spec| spec.template.as_ref())
            .and_then(|t| serde_json::to_value(t).ok())
            .is_some_and(|t| equal_ignoring_hash(&t, &template))
    })
}

fn controlled_by(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    uid: &str,
) -> bool {
    meta.owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|owner| owner.controller == Some(true) && owner.uid == uid)
}

/// The unschedulable pods of Deployment `namespace/name` in the member behind `client`: pods of
/// its current ReplicaSet that are not finished and have been unschedulable longer than
/// `threshold` (what Karmada's estimator answers to `GetUnschedulableReplicas`).
pub async fn unschedulable_replicas(
    cluster: &str,
    client: kube::Client,
    namespace: &str,
    name: &str,
    threshold: Duration,
) -> Result<i32, EstimateError> {
    let kube_error = |source| EstimateError::Kube {
        cluster: cluster.to_owned(),
        source,
    };
    let deployment = Api::<Deployment>::namespaced(client.clone(), namespace)
        .get(name)
        .await
        .map_err(kube_error)?;
    let selector = deployment
        .spec
        .as_ref()
        .map(|spec| LabelSelector::try_from(&spec.selector))
        .transpose()
        .map_err(|error| EstimateError::Selector {
            cluster: cluster.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            message: error.to_string(),
        })?
        .unwrap_or_default();
    // kube's ListReplicaSets and ListPodsByRS both list by the Deployment's selector.
    let params = ListParams::default().labels(&selector.to_string());
    let replica_sets = Api::<ReplicaSet>::namespaced(client.clone(), namespace)
        .list(&params)
        .await
        .map_err(kube_error)?;
    let Some(current) = new_replica_set(&deployment, &replica_sets.items) else {
        return Ok(0);
    };
    let Some(rs_uid) = current.metadata.uid.as_deref() else {
        return Ok(0);
    };
    // The estimator's pod informer leaves out finished pods.
    let params = params.fields("status.phase!=Succeeded,status.phase!=Failed");
    let pods = Api::<Pod>::namespaced(client, namespace)
        .list(&params)
        .await
        .map_err(kube_error)?;
    let now = jiff::Timestamp::now();
    let count = pods
        .items
        .iter()
        .filter(|pod| controlled_by(&pod.metadata, rs_uid))
        .filter(|pod| pod_unschedulable(pod, threshold, now))
        .count();
    Ok(i32::try_from(count).unwrap_or(i32::MAX))
}

struct Controller {
    context: Context,
    options: DeschedulerOptions,
    bindings: kube::runtime::reflector::Store<ResourceBinding>,
    queue: WorkQueue<(String, String)>,
    recorder: Recorder,
}

/// The `start` of the `descheduler` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let bindings = context.informers.all::<ResourceBinding>();
    let options = context.options.descheduler;
    let this = Arc::new(Controller {
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: COMPONENT.into(),
                instance: None,
            },
        ),
        bindings: bindings.store(),
        queue: WorkQueue::named(NAME),
        options,
        context,
    });
    if !until_ready(&shutdown, bindings.wait_until_ready()).await {
        return;
    }
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |key: (String, String)| {
            let me = me.clone();
            async move { me.reconcile(&key.0, &key.1).await }
        },
        |key, error: &DescheduleError| {
            warn!(namespace = %key.0, name = %key.1, %error, "descheduling failed; will retry");
        },
    );
    let me = this.clone();
    tasks.spawn(async move {
        // Karmada's wait.Until: a pass at once, then one every interval.
        let mut ticks = tokio::time::interval(me.options.interval.max(Duration::from_millis(10)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            me.deschedule_once();
        }
    });
    info!(
        interval = ?options.interval,
        unschedulable_threshold = ?options.unschedulable_threshold,
        "descheduler running"
    );
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    /// One pass: every binding the descheduler may act on is queued.
    fn deschedule_once(&self) {
        let mut keys: Vec<(String, String)> = self
            .bindings
            .state()
            .iter()
            .filter(|binding| deschedulable(binding))
            .map(|binding| {
                (
                    binding.metadata.namespace.clone().unwrap_or_default(),
                    binding.metadata.name.clone().unwrap_or_default(),
                )
            })
            .collect();
        keys.sort();
        for key in keys {
            self.queue.add(key);
        }
    }

    async fn reconcile(&self, namespace: &str, name: &str) -> Result<(), DescheduleError> {
        let Some(binding) = self.bindings.get(&ObjectRef::new(name).within(namespace)) else {
            debug!(namespace, name, "binding gone: nothing to deschedule");
            return Ok(());
        };
        if binding.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let mut replicas = cluster_replicas(&binding);
        if !replicas.iter().any(ClusterReplicas::short) {
            return Ok(());
        }
        let resource = &binding.spec.resource;
        let short: Vec<usize> = (0..replicas.len())
            .filter(|&i| replicas[i].short())
            .collect();
        let asks = short.iter().map(|&i| {
            let cluster = replicas[i].cluster.clone();
            let members = self.context.members.clone();
            let (namespace, name) = (resource.namespace.clone(), resource.name.clone());
            let threshold = self.options.unschedulable_threshold;
            let metrics = self.context.metrics.estimator.clone();
            async move {
                let client =
                    members
                        .client(&cluster)
                        .await
                        .map_err(|source| EstimateError::Member {
                            cluster: cluster.clone(),
                            source,
                        })?;
                // Counted once a member is asked, as Karmada's estimator server counts.
                let start = std::time::Instant::now();
                let answer =
                    unschedulable_replicas(&cluster, client, &namespace, &name, threshold).await;
                metrics.record(
                    flotilla_runtime::estimator_metrics::GET_UNSCHEDULABLE_REPLICAS,
                    answer.is_ok(),
                    start,
                );
                answer
            }
        });
        let answers =
            match tokio::time::timeout(ESTIMATOR_TIMEOUT, futures::future::join_all(asks)).await {
                Ok(answers) => answers,
                Err(_) => {
                    warn!(
                        namespace,
                        name, "members did not answer in time; binding left alone"
                    );
                    return Ok(());
                }
            };
        for (&i, answer) in short.iter().zip(answers) {
            match answer {
                Ok(unschedulable) => replicas[i].unschedulable = unschedulable,
                Err(error) => {
                    // Karmada drops the whole estimate when one member fails.
                    warn!(namespace, name, %error, "unschedulable replicas unknown; binding left alone");
                    return Ok(());
                }
            }
        }
        debug!(namespace, name, ?replicas, "unschedulable replicas");
        let Some(plan) = plan(&binding.spec.clusters, &replicas) else {
            return Ok(());
        };
        let patch = json!({
            "metadata": {"resourceVersion": binding.metadata.resource_version},
            "spec": {"clusters": plan.clusters},
        });
        let result = Api::<ResourceBinding>::namespaced(self.context.client.clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        let template = crate::binding::resource_reference(resource);
        let binding_ref = binding.object_ref(&());
        match result {
            Ok(_) => {
                info!(namespace, name, taken = plan.taken, message = %plan.message, "binding descheduled");
                for reference in [&binding_ref, &template] {
                    self.recorder
                        .note(
                            reference,
                            EventType::Normal,
                            REASON_SUCCEED,
                            REASON_SUCCEED,
                            plan.message.clone(),
                        )
                        .await;
                }
                Ok(())
            }
            Err(source) => {
                // Karmada's Event carries the API server's message.
                let note = match &source {
                    kube::Error::Api(status) => status.message.clone(),
                    other => other.to_string(),
                };
                let error = DescheduleError::Update {
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                    source,
                };
                for reference in [&binding_ref, &template] {
                    self.recorder
                        .note(
                            reference,
                            EventType::Warning,
                            REASON_FAILED,
                            REASON_FAILED,
                            note.clone(),
                        )
                        .await;
                }
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests;
