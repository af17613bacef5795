//! The remedy controller (`remedy`, Karmada's `remedy-controller`): a Cluster's
//! `status.remedyActions` is the sorted, de-duplicated union of the `actions` of every Remedy
//! that looks at the cluster (`spec.clusterAffinity.clusterNames` names it, or there is no
//! affinity) and whose `decisionMatches` hold for the cluster's status conditions (no list at
//! all: always; otherwise any one entry). The field is merge-patched through the status
//! subresource, alone, only when it differs, so the cluster status controller's fields and the
//! conditions other systems report are never rewritten here.
//!
//! A cluster is looked at when it appears, when its conditions change and when its
//! `remedyActions` change as a set (someone else's write, or ours reflected after a Remedy
//! event that was handled against an older copy); a Remedy created, changed or deleted
//! requeues the clusters it names (all of them without an affinity; old and new ones on a
//! change). Nothing in the control plane acts on the actions: they are for the systems outside
//! it (ingress and DNS providers) that read Cluster status.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::{
    Cluster, DecisionMatch, REMEDY_OPERATOR_EQUAL, REMEDY_OPERATOR_NOT_EQUAL, Remedy, RemedySpec,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "remedy";

/// Why one reconcile failed (logged, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum RemedyError {
    #[error("patching the remedy actions of cluster {cluster:?}: {source}")]
    Patch {
        cluster: String,
        #[source]
        source: kube::Error,
    },
}

/// Whether the Remedy looks at the cluster `name`: every cluster without an affinity, else only
/// the clusters it names (an affinity naming none looks at none).
pub fn applies_to(spec: &RemedySpec, name: &str) -> bool {
    spec.cluster_affinity
        .as_ref()
        .is_none_or(|affinity| affinity.cluster_names.iter().any(|n| n == name))
}

/// Whether the decision tests hold for `conditions`. No list at all holds at once; otherwise one
/// holding entry is enough. An entry without `clusterConditionMatch`, with an unknown operator,
/// or testing a condition type the cluster does not report never holds (`NotEqual` included),
/// so a present but empty list never holds either. When a type is reported twice, the first
/// is the one tested.
pub fn decision_holds(matches: Option<&[DecisionMatch]>, conditions: &[Condition]) -> bool {
    let Some(matches) = matches else {
        return true;
    };
    matches.iter().any(|entry| {
        let Some(test) = &entry.cluster_condition_match else {
            return false;
        };
        let Some(condition) = conditions.iter().find(|c| c.type_ == test.condition_type) else {
            return false;
        };
        match test.operator.as_str() {
            REMEDY_OPERATOR_EQUAL => condition.status == test.condition_status,
            REMEDY_OPERATOR_NOT_EQUAL => condition.status != test.condition_status,
            _ => false,
        }
    })
}

/// The remedy actions `cluster` should carry under `remedies`: sorted, each once.
pub fn desired_actions<'a>(
    cluster: &Cluster,
    remedies: impl IntoIterator<Item = &'a Remedy>,
) -> Vec<String> {
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    let conditions = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let actions: BTreeSet<&str> = remedies
        .into_iter()
        .filter(|remedy| applies_to(&remedy.spec, name))
        .filter(|remedy| decision_holds(remedy.spec.decision_matches.as_deref(), conditions))
        .flat_map(|remedy| remedy.spec.actions.iter().map(String::as_str))
        .collect();
    actions.into_iter().map(str::to_owned).collect()
}

/// What of a Cluster makes the controller look at it again.
#[derive(Debug, PartialEq)]
struct Observed {
    conditions: Vec<Condition>,
    actions: BTreeSet<String>,
}

impl Observed {
    fn of(cluster: &Cluster) -> Self {
        let status = cluster.status.as_ref();
        Self {
            conditions: status.map(|s| s.conditions.clone()).unwrap_or_default(),
            actions: status
                .map(|s| s.remedy_actions.iter().cloned().collect())
                .unwrap_or_default(),
        }
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
    clusters: Store<Cluster>,
    remedies: Store<Remedy>,
    queue: WorkQueue<String>,
}

/// The `start` of the `remedy` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let clusters = context.informers.all::<Cluster>();
    let remedies = context.informers.all::<Remedy>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        clusters: clusters.store(),
        remedies: remedies.store(),
        queue: WorkQueue::named("remedy-controller"),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    let mut seen: HashMap<String, Observed> = HashMap::new();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| match event {
        WatchEvent::Apply(cluster) | WatchEvent::InitApply(cluster) => {
            let Some(name) = cluster.metadata.name.clone() else {
                return;
            };
            let observed = Observed::of(cluster);
            if seen.get(&name) == Some(&observed) {
                return;
            }
            seen.insert(name.clone(), observed);
            me.queue.add_with(name, priority(&event));
        }
        WatchEvent::Delete(cluster) => {
            seen.remove(cluster.metadata.name.as_deref().unwrap_or_default());
        }
        WatchEvent::Init | WatchEvent::InitDone => {}
    });
    let me = this.clone();
    let mut specs: HashMap<String, RemedySpec> = HashMap::new();
    tasks.subscribe(&remedies, move |event: WatchEvent<&Remedy>| match event {
        WatchEvent::Apply(remedy) | WatchEvent::InitApply(remedy) => {
            let name = remedy.metadata.name.clone().unwrap_or_default();
            let old = specs.insert(name, remedy.spec.clone());
            if old.as_ref() == Some(&remedy.spec) {
                return;
            }
            me.requeue(old.iter().chain([&remedy.spec]), priority(&event));
        }
        WatchEvent::Delete(remedy) => {
            specs.remove(remedy.metadata.name.as_deref().unwrap_or_default());
            me.requeue([&remedy.spec], Priority::High);
        }
        WatchEvent::Init | WatchEvent::InitDone => {}
    });
    let ready = async {
        clusters.wait_until_ready().await;
        remedies.wait_until_ready().await;
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
        |name, error: &RemedyError| warn!(cluster = %name, %error, "syncing remedy actions failed"),
    );
    info!("remedy controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    /// Queues the clusters any of `specs` names, or every cluster when one has no affinity.
    fn requeue<'a>(&self, specs: impl IntoIterator<Item = &'a RemedySpec>, priority: Priority) {
        let mut names = BTreeSet::new();
        for spec in specs {
            match &spec.cluster_affinity {
                Some(affinity) => names.extend(affinity.cluster_names.iter().cloned()),
                None => names.extend(
                    self.clusters
                        .state()
                        .iter()
                        .filter_map(|c| c.metadata.name.clone()),
                ),
            }
        }
        for name in names {
            self.queue.add_with(name, priority);
        }
    }

    async fn reconcile(&self, name: &str) -> Result<(), RemedyError> {
        let Some(cluster) = self.clusters.get(&ObjectRef::new(name)) else {
            return Ok(());
        };
        if cluster.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let remedies = self.remedies.state();
        let actions = desired_actions(&cluster, remedies.iter().map(|r| r.as_ref()));
        let current = cluster
            .status
            .as_ref()
            .map(|s| s.remedy_actions.as_slice())
            .unwrap_or_default();
        if actions == current {
            debug!(cluster = name, "remedy actions are up to date");
            return Ok(());
        }
        let patch = json!({"status": {
            "remedyActions": if actions.is_empty() { None } else { Some(&actions) },
        }});
        match Api::<Cluster>::all(self.client.clone())
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                info!(cluster = name, ?actions, "updated cluster remedy actions");
                Ok(())
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(source) => Err(RemedyError::Patch {
                cluster: name.to_owned(),
                source,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
