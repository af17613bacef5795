//! The WorkloadRebalancer controller (`workloadRebalancer`, Karmada's `workload-rebalancer`):
//! when a WorkloadRebalancer is created or its spec changes, each workload it lists that has
//! no result yet gets its binding (`<name>-<kind>` ResourceBinding in the workload's namespace,
//! or ClusterResourceBinding when it has none) stamped with `spec.rescheduleTriggeredAt` = the
//! rebalancer's `creationTimestamp` (unless the binding already has that or a later one), which
//! makes the scheduler reschedule it afresh. `status.observedWorkloads` records `Successful`,
//! or `Failed` with `ReferencedBindingNotFound`; other errors leave the entry empty and retry
//! the rebalancer with backoff. `status.finishTime` is set when a status change leaves nothing
//! to retry; `spec.ttlSecondsAfterFinished` after it the rebalancer deletes itself.
//!
//! A spec change keeps the entries of workloads still listed, drops the ones no longer listed
//! unless they succeeded, and adds the new ones; entries are sorted by apiVersion, kind,
//! namespace and name. A `Failed` entry is never retried while its workload stays listed.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::names::binding_name;
use flotilla_api::karmada::{
    ClusterResourceBinding, ObservedWorkload, REBALANCE_BINDING_NOT_FOUND, REBALANCE_FAILED,
    REBALANCE_SUCCESSFUL, ResourceBinding, ResourceBindingSpec, WorkloadRebalancer,
    WorkloadRebalancerSpec, WorkloadRebalancerStatus, WorkloadReference,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "workloadRebalancer";
/// Karmada's controller name.
pub const CONTROLLER_NAME: &str = "workload-rebalancer";

/// Why one reconcile failed (logged, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum RebalancerError {
    #[error("rebalancer {0:?} has no creationTimestamp")]
    NoCreationTimestamp(String),
    #[error("{step} of rebalancer {rebalancer:?}: {source}")]
    Api {
        step: &'static str,
        rebalancer: String,
        #[source]
        source: kube::Error,
    },
    #[error("{0} resource reschedule triggered failed and need retry")]
    Retry(usize),
    #[error("finish time should not be nil")]
    NoFinishTime,
}

/// Why one workload's binding could not be triggered.
#[derive(Debug, thiserror::Error)]
pub enum TriggerError {
    /// The binding does not exist (a final `Failed`).
    #[error("binding {0:?} not found")]
    NotFound(String),
    /// Anything else (retried).
    #[error("{step} binding {binding:?}: {source}")]
    Api {
        step: &'static str,
        binding: String,
        #[source]
        source: kube::Error,
    },
}

/// The order of `observedWorkloads`: the text `"<apiVersion> <kind> <namespace> <name>"`.
fn order_key(workload: &WorkloadReference) -> String {
    format!(
        "{} {} {} {}",
        workload.api_version, workload.kind, workload.namespace, workload.name
    )
}

/// `observedWorkloads` for `spec` starting from `observed`: entries of workloads still listed
/// are kept as they are, entries of workloads no longer listed only if they succeeded, listed
/// workloads without an entry get an empty one; sorted by [`order_key`].
pub fn sync_observed(
    spec: &[WorkloadReference],
    observed: &[ObservedWorkload],
) -> Vec<ObservedWorkload> {
    let mut unobserved: BTreeSet<&WorkloadReference> = spec.iter().collect();
    let mut result: Vec<ObservedWorkload> = observed
        .iter()
        .filter(|entry| unobserved.remove(&entry.workload) || entry.result == REBALANCE_SUCCESSFUL)
        .cloned()
        .collect();
    result.extend(unobserved.into_iter().map(|workload| ObservedWorkload {
        workload: workload.clone(),
        ..ObservedWorkload::default()
    }));
    result.sort_by_cached_key(|entry| order_key(&entry.workload));
    result
}

/// Whether a binding last triggered at `triggered` must be triggered for a rebalancer created
/// at `created`: never triggered, or triggered strictly earlier.
pub fn needs_trigger(created: &Time, triggered: Option<&Time>) -> bool {
    triggered.is_none_or(|at| created.0 > at.0)
}

/// Records the outcome of triggering one workload in its entry; `true` when it is to be
/// retried (the entry stays empty).
pub fn record(entry: &mut ObservedWorkload, outcome: &Result<(), TriggerError>) -> bool {
    match outcome {
        Ok(()) => {
            entry.result = REBALANCE_SUCCESSFUL.to_owned();
            false
        }
        Err(TriggerError::NotFound(_)) => {
            entry.result = REBALANCE_FAILED.to_owned();
            entry.reason = REBALANCE_BINDING_NOT_FOUND.to_owned();
            false
        }
        Err(TriggerError::Api { .. }) => true,
    }
}

/// Completes `next` (whose `finishTime` is unset) against the stored `previous`: it keeps the
/// previous `finishTime`, and gets `now` instead when it differs from `previous` and nothing is
/// left to retry. Returns whether the status is to be written.
pub fn finish(
    previous: &WorkloadRebalancerStatus,
    next: &mut WorkloadRebalancerStatus,
    retries: usize,
    now: Time,
) -> bool {
    next.finish_time = previous.finish_time.clone();
    if next == previous {
        return false;
    }
    if retries == 0 {
        next.finish_time = Some(now);
    }
    true
}

/// How long until a rebalancer that finished at `finished` expires after `ttl_seconds`, from
/// `now` (`None`: expired).
pub fn time_left(finished: &Time, ttl_seconds: i32, now: jiff::Timestamp) -> Option<Duration> {
    let expires = finished.0.as_millisecond() + i64::from(ttl_seconds) * 1000;
    let left = expires - now.as_millisecond();
    (left > 0).then(|| Duration::from_millis(left.unsigned_abs()))
}

/// Now in whole seconds (how `metav1.Time` is written).
fn now_seconds() -> Time {
    let now = jiff::Timestamp::now();
    Time(jiff::Timestamp::from_second(now.as_second()).unwrap_or(now))
}

struct Controller {
    client: kube::Client,
    rebalancers: Store<WorkloadRebalancer>,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    queue: WorkQueue<String>,
}

/// The `start` of the `workloadRebalancer` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let rebalancers = context.informers.all::<WorkloadRebalancer>();
    let bindings = context.informers.all::<ResourceBinding>();
    let cluster_bindings = context.informers.all::<ClusterResourceBinding>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        rebalancers: rebalancers.store(),
        bindings: bindings.store(),
        cluster_bindings: cluster_bindings.store(),
        queue: WorkQueue::named("workload-rebalancer"),
    });
    let mut tasks = Tasks::new();
    // Created or spec changed; the controller's own status writes do not count.
    let me = this.clone();
    let mut specs: HashMap<String, WorkloadRebalancerSpec> = HashMap::new();
    tasks.subscribe(
        &rebalancers,
        move |event: WatchEvent<&WorkloadRebalancer>| match event {
            WatchEvent::Apply(rebalancer) | WatchEvent::InitApply(rebalancer) => {
                let name = rebalancer.metadata.name.clone().unwrap_or_default();
                if specs.get(&name) == Some(&rebalancer.spec) {
                    return;
                }
                specs.insert(name.clone(), rebalancer.spec.clone());
                let priority = match event {
                    WatchEvent::InitApply(_) => Priority::Low,
                    _ => Priority::High,
                };
                me.queue.add_with(name, priority);
            }
            WatchEvent::Delete(rebalancer) => {
                specs.remove(rebalancer.metadata.name.as_deref().unwrap_or_default());
            }
            WatchEvent::Init | WatchEvent::InitDone => {}
        },
    );
    let ready = async {
        rebalancers.wait_until_ready().await;
        bindings.wait_until_ready().await;
        cluster_bindings.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.spawn(async move { me.work().await });
    info!("workload rebalancer controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    async fn work(&self) {
        while let Some(name) = self.queue.next().await {
            match self.reconcile(&name).await {
                Ok(after) => {
                    self.queue.forget(&name);
                    if let Some(after) = after {
                        self.queue.add_after(name.clone(), after);
                    }
                }
                Err(error) => {
                    warn!(rebalancer = %name, %error, "rebalancing failed; will retry");
                    self.queue.add_rate_limited(name.clone());
                }
            }
            self.queue.done(&name);
        }
    }

    fn api_error(
        step: &'static str,
        rebalancer: &str,
    ) -> impl FnOnce(kube::Error) -> RebalancerError {
        let rebalancer = rebalancer.to_owned();
        move |source| RebalancerError::Api {
            step,
            rebalancer,
            source,
        }
    }

    /// Handles one rebalancer; `Some(d)`: look again after `d` (its TTL runs).
    async fn reconcile(&self, name: &str) -> Result<Option<Duration>, RebalancerError> {
        let Some(rebalancer) = self.rebalancers.get(&ObjectRef::new(name)) else {
            return Ok(None);
        };
        let created = rebalancer
            .metadata
            .creation_timestamp
            .clone()
            .ok_or_else(|| RebalancerError::NoCreationTimestamp(name.to_owned()))?;
        let previous = &rebalancer.status;
        let mut status = WorkloadRebalancerStatus {
            observed_workloads: sync_observed(
                &rebalancer.spec.workloads,
                &previous.observed_workloads,
            ),
            observed_generation: rebalancer.metadata.generation.unwrap_or_default(),
            finish_time: None,
        };
        let mut retries = 0;
        for entry in &mut status.observed_workloads {
            if !entry.result.is_empty() {
                continue;
            }
            let outcome = self.trigger(&entry.workload, &created).await;
            if let Err(error) = &outcome {
                warn!(rebalancer = name, workload = ?entry.workload, %error, "triggering a reschedule failed");
            }
            if record(entry, &outcome) {
                retries += 1;
            }
        }
        debug!(
            rebalancer = name,
            total = status.observed_workloads.len(),
            retries,
            "rebalancer handled"
        );
        let mut version = rebalancer.metadata.resource_version.clone();
        if finish(previous, &mut status, retries, now_seconds()) {
            let written = flotilla_runtime::write::merge_patch_status::<WorkloadRebalancer>(
                &self.client,
                None,
                name,
                &json!({ "status": status }),
            )
            .await
            .map_err(Self::api_error("patch the status", name))?;
            version = written.metadata.resource_version.or(version);
        }
        if retries > 0 {
            return Err(RebalancerError::Retry(retries));
        }
        let Some(ttl) = rebalancer.spec.ttl_seconds_after_finished else {
            return Ok(None);
        };
        let finished = status
            .finish_time
            .as_ref()
            .ok_or(RebalancerError::NoFinishTime)?;
        if let Some(left) = time_left(finished, ttl, jiff::Timestamp::now()) {
            return Ok(Some(left));
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: version,
                uid: None,
            }),
            ..DeleteParams::default()
        };
        match Api::<WorkloadRebalancer>::all(self.client.clone())
            .delete(name, &params)
            .await
        {
            Ok(_) => {
                info!(
                    rebalancer = name,
                    "finished rebalancer deleted after its TTL"
                );
                Ok(None)
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(error) => Err(Self::api_error("delete", name)(error)),
        }
    }

    /// Stamps the binding of `workload` with `created` unless it already is (or later).
    async fn trigger(
        &self,
        workload: &WorkloadReference,
        created: &Time,
    ) -> Result<(), TriggerError> {
        let binding = binding_name(&workload.kind, &workload.name);
        if workload.namespace.is_empty() {
            let cached = self.cluster_bindings.get(&ObjectRef::new(&binding));
            let api = Api::<ClusterResourceBinding>::all(self.client.clone());
            stamp(api, &binding, cached, |b| &b.spec, created).await
        } else {
            let cached = self
                .bindings
                .get(&ObjectRef::new(&binding).within(&workload.namespace));
            let api = Api::<ResourceBinding>::namespaced(self.client.clone(), &workload.namespace);
            stamp(api, &binding, cached, |b| &b.spec, created).await
        }
    }
}

/// The stamping of one binding of kind `K`: the cached copy, or the API's when the cache has
/// none (a binding created a moment ago); then a patch under its `resourceVersion`.
async fn stamp<K>(
    api: Api<K>,
    name: &str,
    cached: Option<Arc<K>>,
    spec: fn(&K) -> &ResourceBindingSpec,
    created: &Time,
) -> Result<(), TriggerError>
where
    K: kube::Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned,
{
    let api_error = |step: &'static str| {
        move |source: kube::Error| match &source {
            kube::Error::Api(status) if status.code == 404 => {
                TriggerError::NotFound(name.to_owned())
            }
            _ => TriggerError::Api {
                step,
                binding: name.to_owned(),
                source,
            },
        }
    };
    let binding = match cached {
        Some(binding) => binding,
        None => Arc::new(
            api.get_opt(name)
                .await
                .map_err(api_error("read"))?
                .ok_or_else(|| TriggerError::NotFound(name.to_owned()))?,
        ),
    };
    if !needs_trigger(created, spec(&binding).reschedule_triggered_at.as_ref()) {
        return Ok(());
    }
    let patch = json!({
        "metadata": {"resourceVersion": binding.meta().resource_version},
        "spec": {"rescheduleTriggeredAt": created},
    });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(api_error("update"))?;
    info!(binding = name, at = %created.0, "reschedule triggered");
    Ok(())
}

#[cfg(test)]
mod tests;
