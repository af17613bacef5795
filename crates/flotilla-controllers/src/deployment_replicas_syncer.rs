//! The `deploymentReplicasSyncer` controller (Karmada's `deployment-replicas-syncer`, off by
//! default): when member HPAs own a Divided Deployment's replicas (the template is labelled
//! `resourcetemplate.karmada.io/retain-replicas=true`, see `hpaScaleTargetMarker`), the
//! template's `spec.replicas` follows the members: it becomes the template's
//! `status.replicas`, the members' sum that `bindingStatus` aggregated. A user's scale of the
//! template is therefore undone once the members report (they keep their replicas); scaling
//! happens in the members' HPAs.
//!
//! Looked at when a labelled Deployment changes: the label appeared, or `spec.replicas` or
//! `status.replicas` changed (Karmada's predicate; creations are not, but the first list after
//! a start is, so that a restart does not wait for the next change). Nothing is done unless
//! the binding `<name>-deployment` exists with `Divided` replica scheduling (Duplicated
//! members each run their own HPA and the template's count means nothing for them) and
//! `spec.replicas` differs from `status.replicas`. The status must be current: the binding
//! carries the template's replicas, the scheduler observed the binding's generation, every
//! scheduled cluster has an aggregated status with positive `replicas` (an HPA's
//! `minReplicas` is at least 1, so 0 means not reported yet) and their sum is the template's
//! `status.replicas`; otherwise the Deployment is looked at again a second later.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::names::binding_name;
use flotilla_api::karmada::{REPLICA_SCHEDULING_DIVIDED, RETAIN_REPLICAS_LABEL, ResourceBinding};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{debug, info, warn};

use crate::hpa_scale_target_marker::RETAIN_REPLICAS_VALUE;
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "deploymentReplicasSyncer";
/// Karmada's controller name.
pub const CONTROLLER_NAME: &str = "deployment-replicas-syncer";
/// How long to wait before looking again at a Deployment whose status is not current.
pub const WAIT_FOR_STATUS: Duration = Duration::from_secs(1);

/// What the predicate compares between two versions of a Deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observed {
    /// Labelled `retain-replicas=true`.
    pub retained: bool,
    pub spec_replicas: Option<i32>,
    pub status_replicas: i32,
}

impl Observed {
    pub fn of(deployment: &Deployment) -> Self {
        Self {
            retained: deployment
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(RETAIN_REPLICAS_LABEL))
                .is_some_and(|value| value == RETAIN_REPLICAS_VALUE),
            spec_replicas: deployment.spec.as_ref().and_then(|spec| spec.replicas),
            status_replicas: status_replicas(deployment),
        }
    }
}

fn status_replicas(deployment: &Deployment) -> i32 {
    deployment
        .status
        .as_ref()
        .and_then(|status| status.replicas)
        .unwrap_or_default()
}

/// Whether a Deployment that was `old` and is now `new` is worth a reconcile: it is labelled
/// now, and it was not before (its status may have changed before the label came) or either
/// replica count changed.
pub fn worth_a_look(old: &Observed, new: &Observed) -> bool {
    if !new.retained {
        return false;
    }
    if !old.retained {
        return true;
    }
    match (old.spec_replicas, new.spec_replicas) {
        (Some(old_spec), Some(new_spec)) => {
            old_spec != new_spec || old.status_replicas != new.status_replicas
        }
        _ => false,
    }
}

/// Why the template's status cannot be trusted yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// The binding does not carry the template's `spec.replicas` yet.
    BindingReplicas { binding: i32, template: i32 },
    /// The scheduler has not handled the binding's latest generation.
    SchedulerGeneration { observed: i64, generation: i64 },
    /// Not every scheduled cluster has an aggregated status.
    Clusters { reported: usize, scheduled: usize },
    /// A cluster's status is missing, unreadable or reports no replicas.
    Cluster(String),
    /// The template's `status.replicas` is not the members' sum yet.
    TemplateStatus { template: i32, members: i64 },
}

/// What to do with a Deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing (not Divided, no replicas, already in step).
    Nothing(&'static str),
    /// Look again after [`WAIT_FOR_STATUS`].
    Wait(Stale),
    /// Write `spec.replicas = to`.
    Sync { from: i32, to: i32 },
}

/// The decision for a labelled Deployment with `spec_replicas` and `status_replicas` whose
/// binding is `binding`.
pub fn decide(
    spec_replicas: Option<i32>,
    status_replicas: i32,
    binding: &ResourceBinding,
) -> Decision {
    let divided =
        binding.spec.placement.as_ref().is_some_and(|placement| {
            placement.replica_scheduling_type() == REPLICA_SCHEDULING_DIVIDED
        });
    if !divided {
        return Decision::Nothing("not divided");
    }
    // The API server defaults `spec.replicas`; a Deployment without it has nothing to sync.
    let Some(spec_replicas) = spec_replicas else {
        return Decision::Nothing("no spec.replicas");
    };
    if spec_replicas == status_replicas {
        return Decision::Nothing("spec.replicas already equals status.replicas");
    }
    match staleness(spec_replicas, status_replicas, binding) {
        Some(stale) => Decision::Wait(stale),
        None => Decision::Sync {
            from: spec_replicas,
            to: status_replicas,
        },
    }
}

/// Why the template's `status.replicas` is not yet the members' answer to its current
/// `spec.replicas` (`None`: it is).
fn staleness(spec_replicas: i32, status_replicas: i32, binding: &ResourceBinding) -> Option<Stale> {
    if binding.spec.replicas != spec_replicas {
        return Some(Stale::BindingReplicas {
            binding: binding.spec.replicas,
            template: spec_replicas,
        });
    }
    let generation = binding.metadata.generation.unwrap_or_default();
    let observed = binding
        .status
        .as_ref()
        .map_or(0, |status| status.scheduler_observed_generation);
    if observed != generation {
        return Some(Stale::SchedulerGeneration {
            observed,
            generation,
        });
    }
    let aggregated = binding
        .status
        .as_ref()
        .map_or(&[][..], |status| &status.aggregated_status[..]);
    if aggregated.len() != binding.spec.clusters.len() {
        return Some(Stale::Clusters {
            reported: aggregated.len(),
            scheduled: binding.spec.clusters.len(),
        });
    }
    let mut members: i64 = 0;
    for item in aggregated {
        let replicas = item
            .status
            .as_ref()
            .and_then(|status| status.parse::<ReplicasOnly>().ok())
            .map_or(0, |status| status.replicas);
        if replicas <= 0 {
            return Some(Stale::Cluster(item.cluster_name.clone()));
        }
        members += i64::from(replicas);
    }
    if i64::from(status_replicas) != members {
        return Some(Stale::TemplateStatus {
            template: status_replicas,
            members,
        });
    }
    None
}

/// The one field of a member Deployment's status read here.
#[derive(Debug, serde::Deserialize)]
struct ReplicasOnly {
    #[serde(default)]
    replicas: i32,
}

/// Why one reconcile failed (logged, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("failed to update replicas of deployment {namespace}/{name}: {source}")]
    Update {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

struct Controller {
    client: kube::Client,
    deployments: Store<Deployment>,
    bindings: Store<ResourceBinding>,
    queue: WorkQueue<(String, String)>,
}

/// The `start` of the `deploymentReplicasSyncer` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let deployments = context.informers.all::<Deployment>();
    let bindings = context.informers.all::<ResourceBinding>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        deployments: deployments.store(),
        bindings: bindings.store(),
        queue: WorkQueue::named("deployment-replicas-syncer"),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    let mut seen: HashMap<(String, String), Observed> = HashMap::new();
    tasks.subscribe(&deployments, move |event: WatchEvent<&Deployment>| {
        match event {
            WatchEvent::Apply(deployment) | WatchEvent::InitApply(deployment) => {
                let key = key_of(deployment);
                let new = Observed::of(deployment);
                let look = match seen.get(&key) {
                    Some(old) => worth_a_look(old, &new).then_some(Priority::High),
                    // Karmada ignores creations; the first list after a start is looked at.
                    None => (matches!(event, WatchEvent::InitApply(_)) && new.retained)
                        .then_some(Priority::Low),
                };
                seen.insert(key.clone(), new);
                if let Some(priority) = look {
                    me.queue.add_with(key, priority);
                }
            }
            WatchEvent::Delete(deployment) => {
                seen.remove(&key_of(deployment));
            }
            WatchEvent::Init | WatchEvent::InitDone => {}
        }
    });
    let ready = async {
        deployments.wait_until_ready().await;
        bindings.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.spawn(async move { me.work().await });
    info!("deployment replicas syncer running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

fn key_of(deployment: &Deployment) -> (String, String) {
    (
        deployment.metadata.namespace.clone().unwrap_or_default(),
        deployment.metadata.name.clone().unwrap_or_default(),
    )
}

impl Controller {
    async fn work(&self) {
        while let Some(key) = self.queue.next().await {
            match self.reconcile(&key.0, &key.1).await {
                Ok(wait) => {
                    self.queue.forget(&key);
                    if wait {
                        self.queue.add_after(key.clone(), WAIT_FOR_STATUS);
                    }
                }
                Err(error) => {
                    warn!(%error, "syncing deployment replicas failed; will retry");
                    self.queue.add_rate_limited(key.clone());
                }
            }
            self.queue.done(&key);
        }
    }

    /// Handles one Deployment; `true`: look again after [`WAIT_FOR_STATUS`].
    async fn reconcile(&self, namespace: &str, name: &str) -> Result<bool, SyncError> {
        let binding_name = binding_name("deployment", name);
        let Some(binding) = self
            .bindings
            .get(&ObjectRef::new(&binding_name).within(namespace))
        else {
            debug!(namespace, name, "no binding: nothing to sync");
            return Ok(false);
        };
        let Some(deployment) = self
            .deployments
            .get(&ObjectRef::new(name).within(namespace))
        else {
            return Ok(false);
        };
        let observed = Observed::of(&deployment);
        match decide(observed.spec_replicas, observed.status_replicas, &binding) {
            Decision::Nothing(why) => {
                debug!(namespace, name, why, "deployment replicas left alone");
                Ok(false)
            }
            Decision::Wait(stale) => {
                debug!(namespace, name, ?stale, "waiting for the members' status");
                Ok(true)
            }
            Decision::Sync { from, to } => {
                let patch = json!({
                    "metadata": {"resourceVersion": deployment.metadata.resource_version},
                    "spec": {"replicas": to},
                });
                Api::<Deployment>::namespaced(self.client.clone(), namespace)
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(|source| SyncError::Update {
                        namespace: namespace.to_owned(),
                        name: name.to_owned(),
                        source,
                    })?;
                info!(
                    namespace,
                    name,
                    old_replicas = from,
                    new_replicas = to,
                    "deployment replicas synced from the members"
                );
                Ok(false)
            }
        }
    }
}

#[cfg(test)]
mod tests;
