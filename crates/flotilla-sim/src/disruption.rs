//! The disruption controller of a simulated cluster: the status kube-controller-manager's
//! `disruption` controller gives each PodDisruptionBudget (`kubectl get pdb`'s ALLOWED
//! DISRUPTIONS, and what Karmada aggregates back onto the template).
//!
//! For every budget, over the pods of its namespace its selector matches: `currentHealthy`
//! counts the Ready ones not being deleted; `expectedPods` and `desiredHealthy` follow
//! `minAvailable`/`maxUnavailable` ([`crate::lifted::disruption`]): an integer `minAvailable`
//! expects the selected pods, a percentage or `maxUnavailable` the summed scale of their
//! controllers (a Deployment's replicas for its ReplicaSets' pods, a ReplicaSet's or a
//! StatefulSet's own; pods without a controller are left out, as kube leaves them out); then
//! `disruptionsAllowed`, `observedGeneration` and the `DisruptionAllowed` condition. A selected
//! pod whose controller has no scale (a Job's, a DaemonSet's) makes the budget's status fail
//! safe: no disruption allowed, `DisruptionAllowed=False, SyncFailed` with the reason.
//!
//! Budgets are recomputed when one changes and once a second while any exists, as the quota
//! controller is. Not modelled: the eviction API (so no `disruptedPods`), and the controller's
//! `NoPods`/`UnmanagedPods` Events.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::runtime::reflector::Store;
use serde_json::{Value, json};

use crate::cluster::{Ctx, Stores, now};
use crate::lifted::disruption::{self as lifted, Budget};
use crate::pod::Pod;
use crate::workloads::is_ready;

/// How often budgets are recomputed while any exists.
const RESYNC: Duration = Duration::from_secs(1);

/// Runs the controller until the task is aborted.
pub async fn run(ctx: Arc<Ctx>, stores: Stores) {
    let client = ctx.client.clone();
    crate::resync::run::<PodDisruptionBudget, _, _>(client, RESYNC, |budgets| {
        let (ctx, stores) = (ctx.clone(), stores.clone());
        async move { sync(&ctx, &budgets, &stores).await }
    })
    .await;
}

async fn sync(ctx: &Ctx, budgets: &Store<PodDisruptionBudget>, stores: &Stores) {
    let budgets = budgets.state();
    if budgets.is_empty() {
        return;
    }
    let pods = by_namespace(&budgets, &stores.pods.state());
    for budget in budgets {
        if budget.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let namespace = budget.metadata.namespace.clone().unwrap_or_default();
        let in_namespace = pods.get(&namespace).map_or(&[][..], Vec::as_slice);
        let outcome = match selected(&budget, in_namespace) {
            Ok(selected) => compute(&budget, &selected, &|owner| {
                scale_of(owner, &namespace, stores)
            }),
            Err(error) => Outcome::Failed(error),
        };
        let Some(patch) = status_patch(&budget, &outcome, &now()) else {
            continue;
        };
        let name = budget.metadata.name.clone().unwrap_or_default();
        crate::writes::resync_status::<PodDisruptionBudget>(ctx, Some(&namespace), &name, &patch)
            .await;
    }
}

/// The pods of the namespaces that have budgets, by namespace (each pod looked at once per
/// sync, whatever the number of budgets).
fn by_namespace(
    budgets: &[Arc<PodDisruptionBudget>],
    pods: &[Arc<Pod>],
) -> HashMap<String, Vec<Arc<Pod>>> {
    let wanted: HashSet<&str> = budgets
        .iter()
        .filter_map(|b| b.metadata.namespace.as_deref())
        .collect();
    let mut grouped: HashMap<String, Vec<Arc<Pod>>> = HashMap::new();
    for pod in pods {
        if let Some(ns) = pod.metadata.namespace.as_deref()
            && wanted.contains(ns)
        {
            grouped.entry(ns.to_owned()).or_default().push(pod.clone());
        }
    }
    grouped
}

/// The pods of the budget's namespace (`pods`) its selector matches (none for a missing
/// selector, all for an empty one: policy/v1's rule).
fn selected<'a>(
    budget: &PodDisruptionBudget,
    pods: &'a [Arc<Pod>],
) -> Result<Vec<&'a Pod>, String> {
    let selector = budget.spec.as_ref().and_then(|s| s.selector.as_ref());
    let Some(selector) = selector else {
        return Ok(Vec::new());
    };
    let selector = flotilla_api::selector::label::LabelSelector::try_from(selector)
        .map_err(|e| e.to_string())?;
    let empty = std::collections::BTreeMap::new();
    Ok(pods
        .iter()
        .map(|p| &**p)
        .filter(|p| selector.matches(p.metadata.labels().unwrap_or(&empty)))
        .collect())
}

/// A budget's computed status, or why it could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Computed {
        current_healthy: i32,
        desired_healthy: i32,
        expected: i32,
    },
    Failed(String),
}

/// The controller (uid) that gives the scale of pods owned by `owner`, and that scale.
type ScaleOf<'a> = dyn Fn(&OwnerReference) -> Option<(String, i32)> + 'a;

fn compute(budget: &PodDisruptionBudget, pods: &[&Pod], scale_of: &ScaleOf<'_>) -> Outcome {
    let spec = budget.spec.as_ref();
    let wanted = Budget {
        min_available: spec.and_then(|s| s.min_available.as_ref()),
        max_unavailable: spec.and_then(|s| s.max_unavailable.as_ref()),
    };
    let count = i32::try_from(pods.len()).unwrap_or(i32::MAX);
    match lifted::expected_and_desired(wanted, count, || expected_scale(pods, scale_of)) {
        Ok((expected, desired_healthy)) => Outcome::Computed {
            current_healthy: pods
                .iter()
                .filter(|p| p.metadata.deletion_timestamp.is_none() && is_ready(p))
                .count()
                .try_into()
                .unwrap_or(i32::MAX),
            desired_healthy,
            expected,
        },
        Err(error) => Outcome::Failed(error),
    }
}

/// `getExpectedScale`: the scales of the selected pods' controllers, each counted once.
fn expected_scale(pods: &[&Pod], scale_of: &ScaleOf<'_>) -> Result<i32, String> {
    let mut seen_owners: HashMap<&str, ()> = HashMap::new();
    let mut scales: HashMap<String, i32> = HashMap::new();
    for pod in pods {
        let owner = pod
            .metadata
            .owner_references()
            .and_then(|refs| refs.iter().find(|r| r.controller == Some(true)));
        let Some(owner) = owner else {
            continue;
        };
        if seen_owners.insert(owner.uid.as_str(), ()).is_some() {
            continue;
        }
        let Some((uid, scale)) = scale_of(owner) else {
            return Err(lifted::no_controller_error(
                pod.metadata.name.as_deref().unwrap_or_default(),
            ));
        };
        scales.insert(uid, scale);
    }
    Ok(scales.values().sum())
}

/// kube's controller finders over the cluster's caches: a ReplicaSet's Deployment (or the
/// ReplicaSet itself), a StatefulSet; `None` for other owners.
fn scale_of(owner: &OwnerReference, namespace: &str, stores: &Stores) -> Option<(String, i32)> {
    let same = |uid: Option<&String>| uid.is_some_and(|u| *u == owner.uid);
    match (owner.api_version.as_str(), owner.kind.as_str()) {
        ("apps/v1", "ReplicaSet") => {
            let rs = stores.replicasets.get(namespace, &owner.name)?;
            if !same(rs.metadata.uid.as_ref()) {
                return None;
            }
            let deployment = rs
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|r| r.controller == Some(true) && r.kind == "Deployment")
                .and_then(|r| {
                    let d = stores.deployments.get(namespace, &r.name)?;
                    (d.metadata.uid.as_deref() == Some(r.uid.as_str())).then_some(d)
                });
            match deployment {
                Some(d) => Some((
                    d.metadata.uid.clone().unwrap_or_default(),
                    d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
                )),
                None => Some((
                    owner.uid.clone(),
                    rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
                )),
            }
        }
        ("apps/v1", "StatefulSet") => {
            let sts = stores.statefulsets.get(namespace, &owner.name)?;
            same(sts.metadata.uid.as_ref()).then(|| {
                (
                    owner.uid.clone(),
                    sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
                )
            })
        }
        _ => None,
    }
}

/// The status merge patch that brings `budget` up to date with `outcome`, if any.
fn status_patch(budget: &PodDisruptionBudget, outcome: &Outcome, now: &str) -> Option<Value> {
    let status = budget.status.clone().unwrap_or_default();
    let existing = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == lifted::DISRUPTION_ALLOWED);
    let since = |wanted: &str| match existing {
        Some(c) if c.status == wanted => Value::String(c.last_transition_time.0.to_string()),
        _ => Value::String(now.to_owned()),
    };
    match outcome {
        Outcome::Computed {
            current_healthy,
            desired_healthy,
            expected,
        } => {
            let allowed =
                lifted::disruptions_allowed(*current_healthy, *desired_healthy, *expected);
            let generation = budget.metadata.generation.unwrap_or_default();
            let (condition_status, reason) = lifted::allowed_condition(allowed);
            let up_to_date = status.current_healthy == *current_healthy
                && status.desired_healthy == *desired_healthy
                && status.expected_pods == *expected
                && status.disruptions_allowed == allowed
                && status.observed_generation == Some(generation)
                && existing.is_some_and(|c| {
                    c.status == condition_status
                        && c.reason == reason
                        && c.observed_generation == Some(generation)
                });
            (!up_to_date).then(|| {
                json!({"status": {
                    "currentHealthy": current_healthy,
                    "desiredHealthy": desired_healthy,
                    "expectedPods": expected,
                    "disruptionsAllowed": allowed,
                    "observedGeneration": generation,
                    "conditions": [{
                        "type": lifted::DISRUPTION_ALLOWED,
                        "status": condition_status,
                        "reason": reason,
                        "message": "",
                        "observedGeneration": generation,
                        "lastTransitionTime": since(condition_status),
                    }],
                }})
            })
        }
        Outcome::Failed(error) => {
            let observed = status.observed_generation.unwrap_or_default();
            let up_to_date = status.disruptions_allowed == 0
                && existing.is_some_and(|c| {
                    c.status == "False" && c.reason == lifted::SYNC_FAILED && c.message == *error
                });
            (!up_to_date).then(|| {
                json!({"status": {
                    "disruptionsAllowed": 0,
                    "conditions": [{
                        "type": lifted::DISRUPTION_ALLOWED,
                        "status": "False",
                        "reason": lifted::SYNC_FAILED,
                        "message": error,
                        "observedGeneration": observed,
                        "lastTransitionTime": since("False"),
                    }],
                }})
            })
        }
    }
}

#[cfg(test)]
mod tests;
