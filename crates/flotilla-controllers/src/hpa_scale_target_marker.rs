//! The `hpaScaleTargetMarker` controller (Karmada's `hpa-scale-target-marker`, off by default):
//! the template an `autoscaling/v2` HorizontalPodAutoscaler scales gets the label
//! `resourcetemplate.karmada.io/retain-replicas=true`, so that members keep the replicas their
//! own copy of the HPA sets (`interpreter/retain.rs`) and `deploymentReplicasSyncer` may copy
//! their sum back into the template.
//!
//! Event-driven, as Karmada's predicate is:
//! - an HPA seen (created, listed or updated) while it carries a (Cluster)PropagationPolicy
//!   claim label (it is propagated itself) marks its target;
//! - an HPA whose `scaleTargetRef` changed unmarks the old target (propagated or not);
//! - a deleted HPA unmarks its target, whether another HPA still targets it or not.
//!
//! The target is looked up in the HPA's namespace by its `apiVersion` and `kind` (any served
//! kind, not only Deployments); a missing target is skipped, an unknown kind retried with
//! backoff. The label is written with a merge patch, and only when it changes something. Only
//! the latest request per target is kept: the requests are idempotent, so it is the one that
//! decides the label.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::{CPP_CLAIM_LABELS, PP_CLAIM_LABELS, RETAIN_REPLICAS_LABEL};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Patch, PatchParams};
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};
use crate::resources::{ResolveError, Resources};

/// The `--controllers` name.
pub const NAME: &str = "hpaScaleTargetMarker";
/// Karmada's controller name.
pub const CONTROLLER_NAME: &str = "hpa-scale-target-marker";
/// The value of [`RETAIN_REPLICAS_LABEL`] that retains replicas.
pub const RETAIN_REPLICAS_VALUE: &str = "true";

/// The object an HPA scales: its `scaleTargetRef` in the HPA's namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScaleTarget {
    pub namespace: String,
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

impl std::fmt::Display for ScaleTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {}/{}",
            self.api_version, self.kind, self.namespace, self.name
        )
    }
}

/// What to do to a target's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Set `retain-replicas=true`.
    Add,
    /// Remove `retain-replicas` (whatever its value).
    Remove,
}

/// Why marking a target failed (logged, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    #[error("unable to recognize scale ref resource {target}: {source}")]
    Resolve {
        target: ScaleTarget,
        #[source]
        source: ResolveError,
    },
    #[error("{step} scale ref resource {target}: {source}")]
    Api {
        step: &'static str,
        target: ScaleTarget,
        #[source]
        source: kube::Error,
    },
}

/// The target of `hpa` (`None` without a spec).
pub fn target_of(hpa: &HorizontalPodAutoscaler) -> Option<ScaleTarget> {
    let reference = &hpa.spec.as_ref()?.scale_target_ref;
    Some(ScaleTarget {
        namespace: hpa.metadata.namespace.clone().unwrap_or_default(),
        api_version: reference.api_version.clone().unwrap_or_default(),
        kind: reference.kind.clone(),
        name: reference.name.clone(),
    })
}

/// Whether a (Cluster)PropagationPolicy claims `hpa` (its permanent-id label is there).
pub fn has_been_propagated(hpa: &HorizontalPodAutoscaler) -> bool {
    hpa.metadata.labels.as_ref().is_some_and(|labels| {
        PP_CLAIM_LABELS
            .iter()
            .chain(CPP_CLAIM_LABELS)
            .any(|key| labels.contains_key(*key))
    })
}

/// The requests of one HPA seen (created, listed or updated), in order: the previous target
/// (`old`, when known) unmarked when the HPA now targets something else, then the current
/// target marked when the HPA is propagated.
pub fn on_seen(
    old: Option<&ScaleTarget>,
    hpa: &HorizontalPodAutoscaler,
) -> Vec<(ScaleTarget, Mark)> {
    let new = target_of(hpa);
    let mut requests = Vec::new();
    if let Some(old) = old
        && new.as_ref() != Some(old)
    {
        requests.push((old.clone(), Mark::Remove));
    }
    if let Some(new) = new
        && has_been_propagated(hpa)
    {
        requests.push((new, Mark::Add));
    }
    requests
}

/// The merge patch that applies `mark` to an object with `labels`; `None` when it already
/// holds.
pub fn label_patch(labels: Option<&BTreeMap<String, String>>, mark: Mark) -> Option<Value> {
    let current = labels.and_then(|labels| labels.get(RETAIN_REPLICAS_LABEL));
    let value = match mark {
        Mark::Add if current.map(String::as_str) != Some(RETAIN_REPLICAS_VALUE) => {
            Value::String(RETAIN_REPLICAS_VALUE.to_owned())
        }
        Mark::Remove if current.is_some() => Value::Null,
        Mark::Add | Mark::Remove => return None,
    };
    Some(json!({"metadata": {"labels": {RETAIN_REPLICAS_LABEL: value}}}))
}

/// The latest request per target, with a sequence number so that a request made while the
/// previous one was being applied is not dropped with it.
#[derive(Debug, Default)]
struct Pending {
    requests: HashMap<ScaleTarget, (Mark, u64)>,
    next: u64,
}

struct Controller {
    resources: Resources,
    pending: Mutex<Pending>,
    queue: WorkQueue<ScaleTarget>,
}

/// The `start` of the `hpaScaleTargetMarker` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let hpas = context.informers.all::<HorizontalPodAutoscaler>();
    let this = Arc::new(Controller {
        resources: Resources::new(context.client.clone()),
        pending: Mutex::new(Pending::default()),
        queue: WorkQueue::named("hpa-scale-target-marker"),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    // The target each HPA had when last seen: what an update or delete unmarks.
    let mut targets: HashMap<(String, String), ScaleTarget> = HashMap::new();
    tasks.subscribe(
        &hpas,
        move |event: WatchEvent<&HorizontalPodAutoscaler>| match event {
            WatchEvent::Apply(hpa) | WatchEvent::InitApply(hpa) => {
                let key = hpa_key(hpa);
                let priority = match (&event, targets.contains_key(&key)) {
                    (WatchEvent::InitApply(_), false) => Priority::Low,
                    _ => Priority::High,
                };
                for (target, mark) in on_seen(targets.get(&key), hpa) {
                    me.request(target, mark, priority);
                }
                match target_of(hpa) {
                    Some(target) => targets.insert(key, target),
                    None => targets.remove(&key),
                };
            }
            WatchEvent::Delete(hpa) => {
                let key = hpa_key(hpa);
                targets.remove(&key);
                if let Some(target) = target_of(hpa) {
                    me.request(target, Mark::Remove, Priority::High);
                }
            }
            WatchEvent::Init | WatchEvent::InitDone => {}
        },
    );
    if !until_ready(&shutdown, hpas.wait_until_ready()).await {
        return;
    }
    let me = this.clone();
    // One worker, as Karmada's: requests for different targets never race.
    tasks.spawn(async move { me.work().await });
    info!("hpa scale target marker running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

fn hpa_key(hpa: &HorizontalPodAutoscaler) -> (String, String) {
    (
        hpa.metadata.namespace.clone().unwrap_or_default(),
        hpa.metadata.name.clone().unwrap_or_default(),
    )
}

impl Controller {
    fn request(&self, target: ScaleTarget, mark: Mark, priority: Priority) {
        {
            let mut pending = self.pending.lock();
            pending.next += 1;
            let sequence = pending.next;
            pending.requests.insert(target.clone(), (mark, sequence));
        }
        self.queue.add_with(target, priority);
    }

    async fn work(&self) {
        while let Some(target) = self.queue.next().await {
            let request = self.pending.lock().requests.get(&target).copied();
            if let Some((mark, sequence)) = request {
                match self.mark(&target, mark).await {
                    Ok(()) => {
                        self.queue.forget(&target);
                        let mut pending = self.pending.lock();
                        if pending.requests.get(&target).map(|(_, s)| *s) == Some(sequence) {
                            pending.requests.remove(&target);
                        }
                    }
                    Err(error) => {
                        warn!(%error, "reconcile hpa scale ref failed; will retry");
                        self.queue.add_rate_limited(target.clone());
                    }
                }
            }
            self.queue.done(&target);
        }
    }

    /// Applies `mark` to `target` if it exists.
    async fn mark(&self, target: &ScaleTarget, mark: Mark) -> Result<(), MarkError> {
        let served = self
            .resources
            .resolve(&target.api_version, &target.kind)
            .await
            .map_err(|source| MarkError::Resolve {
                target: target.clone(),
                source,
            })?;
        let api = self.resources.api(&served, &target.namespace);
        let api_error = |step: &'static str| {
            move |source| MarkError::Api {
                step,
                target: target.clone(),
                source,
            }
        };
        let Some(object) = api.get_opt(&target.name).await.map_err(api_error("get"))? else {
            info!(%target, "scale ref resource is not found, skip processing");
            return Ok(());
        };
        let Some(patch) = label_patch(object.metadata.labels.as_ref(), mark) else {
            debug!(%target, ?mark, "scale ref resource already as wanted");
            return Ok(());
        };
        match api
            .patch(&target.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                info!(%target, ?mark, "retain-replicas label of scale ref resource updated");
                Ok(())
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                info!(%target, "scale ref resource is not found, skip processing");
                Ok(())
            }
            Err(error) => Err(api_error("patch")(error)),
        }
    }
}

#[cfg(test)]
mod tests;
