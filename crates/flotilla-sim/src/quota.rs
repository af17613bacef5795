//! The ResourceQuota controller of a simulated cluster: what kube-controller-manager's
//! `resourcequota` controller reports, for the pod resources. Each quota's `status.hard` is its
//! `spec.hard`, and `status.used` counts, over the namespace's pods that are not finished
//! (Succeeded/Failed) and that the quota's scopes select: `cpu`/`requests.cpu`,
//! `memory`/`requests.memory`, `ephemeral-storage`/`requests.ephemeral-storage` and extended
//! resources (`nvidia.com/gpu`, `requests.nvidia.com/gpu`) from the pods' effective requests,
//! `limits.cpu`/`limits.memory` from their containers' limits, and `pods`/`count/pods`. Other
//! names (object counts, storage) are left out of `used`.
//!
//! Quotas are recomputed when one changes and once a second while any exists (pods come and go
//! between). There is no admission: a pod over quota is still created (see docs/sim.md).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ResourceQuota;
use kube::runtime::reflector::Store;
use serde_json::{Map, Value};

use crate::cluster::Ctx;
use crate::informer::Cache;
use crate::lifted::requests::{Amounts, amount, pod_requests};
use crate::pod::Pod;

/// How often quotas are recomputed while any exists.
const RESYNC: Duration = Duration::from_secs(1);

/// Runs the controller until the task is aborted.
pub async fn run(ctx: Arc<Ctx>, pods: Cache<Pod>) {
    let client = ctx.client.clone();
    crate::resync::run::<ResourceQuota, _, _>(client, RESYNC, |quotas| {
        let (ctx, pods) = (ctx.clone(), pods.clone());
        async move { sync(&ctx, &quotas, &pods).await }
    })
    .await;
}

async fn sync(ctx: &Ctx, quotas: &Store<ResourceQuota>, pods: &Cache<Pod>) {
    let quotas = quotas.state();
    if quotas.is_empty() {
        return;
    }
    let mut by_namespace: BTreeMap<String, Vec<Arc<Pod>>> = BTreeMap::new();
    for pod in pods.state() {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        if quotas
            .iter()
            .any(|q| q.metadata.namespace.as_deref() == Some(namespace.as_str()))
        {
            by_namespace.entry(namespace).or_default().push(pod);
        }
    }
    for quota in quotas {
        let namespace = quota.metadata.namespace.clone().unwrap_or_default();
        let in_namespace = by_namespace.get(&namespace).map_or(&[][..], Vec::as_slice);
        let Some(patch) = status_patch(&quota, in_namespace) else {
            continue;
        };
        let name = quota.metadata.name.clone().unwrap_or_default();
        crate::writes::resync_status::<ResourceQuota>(ctx, Some(&namespace), &name, &patch).await;
    }
}

/// The status patch that brings `quota` up to date with `pods` (its namespace's), if any.
fn status_patch(quota: &ResourceQuota, pods: &[Arc<Pod>]) -> Option<Value> {
    let hard = quota
        .spec
        .as_ref()
        .and_then(|s| s.hard.clone())
        .unwrap_or_default();
    let counted: Vec<&Pod> = pods
        .iter()
        .map(|p| &**p)
        .filter(|p| {
            let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
            !matches!(phase, Some("Succeeded" | "Failed")) && selected(quota, p)
        })
        .collect();
    let mut used = Map::new();
    for name in hard.keys() {
        if let Some(value) = usage(name, &counted) {
            used.insert(name.clone(), Value::String(value));
        }
    }
    let want_hard: Map<String, Value> = hard
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.0.clone())))
        .collect();
    let status = quota.status.as_ref();
    let have = |list: Option<
        &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    >|
     -> Map<String, Value> {
        list.into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), Value::String(v.0.clone())))
            .collect()
    };
    let (have_hard, have_used) = (
        have(status.and_then(|s| s.hard.as_ref())),
        have(status.and_then(|s| s.used.as_ref())),
    );
    if have_hard == want_hard && have_used == used {
        return None;
    }
    // A merge patch: names no longer wanted are removed with null.
    let with_removals = |want: Map<String, Value>, have: &Map<String, Value>| {
        let mut out = want;
        for key in have.keys() {
            out.entry(key.clone()).or_insert(Value::Null);
        }
        Value::Object(out)
    };
    Some(serde_json::json!({"status": {
        "hard": with_removals(want_hard, &have_hard),
        "used": with_removals(used, &have_used),
    }}))
}

/// Whether every scope of `quota` selects `pod` (kube's pod evaluator `MatchingScopes`).
fn selected(quota: &ResourceQuota, pod: &Pod) -> bool {
    let Some(spec) = quota.spec.as_ref() else {
        return true;
    };
    let priority = pod
        .spec
        .as_ref()
        .and_then(|s| s.priority_class_name.clone())
        .unwrap_or_default();
    let terminating = pod
        .spec
        .as_ref()
        .and_then(|s| s.active_deadline_seconds)
        .is_some_and(|d| d >= 0);
    let best_effort = pod.spec.as_ref().is_none_or(|s| {
        s.containers
            .iter()
            .chain(s.init_containers.iter().flatten())
            .all(|c| {
                c.resources.as_ref().is_none_or(|r| {
                    r.requests.as_ref().is_none_or(BTreeMap::is_empty)
                        && r.limits.as_ref().is_none_or(BTreeMap::is_empty)
                })
            })
    });
    let scope = |name: &str, operator: &str, values: &[String]| match name {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "PriorityClass" => {
            let has = !priority.is_empty();
            match operator {
                "Exists" => has,
                "DoesNotExist" => !has,
                "In" => has && values.contains(&priority),
                "NotIn" => !has || !values.contains(&priority),
                _ => false,
            }
        }
        _ => false,
    };
    spec.scopes
        .iter()
        .flatten()
        .all(|s| scope(s, "Exists", &[]))
        && spec
            .scope_selector
            .as_ref()
            .and_then(|s| s.match_expressions.as_ref())
            .into_iter()
            .flatten()
            .all(|e| {
                scope(
                    &e.scope_name,
                    &e.operator,
                    e.values.as_deref().unwrap_or_default(),
                )
            })
}

/// The containers' summed limits (`limits.*`).
fn pod_limits(pod: &Pod) -> Amounts {
    let mut out = Amounts::new();
    for container in pod
        .spec
        .as_ref()
        .map_or(&[][..], |s| s.containers.as_slice())
    {
        for (name, q) in container
            .resources
            .as_ref()
            .and_then(|r| r.limits.as_ref())
            .into_iter()
            .flatten()
        {
            if let Some(v) = amount(name, &q.0) {
                *out.entry(name.clone()).or_default() += v;
            }
        }
    }
    out
}

/// `used` of the quota resource `name` over `pods`, formatted as kube does; `None` for names
/// this controller does not count.
fn usage(name: &str, pods: &[&Pod]) -> Option<String> {
    if matches!(name, "pods" | "count/pods") {
        return Some(pods.len().to_string());
    }
    let (resource, from_limits) = match name.strip_prefix("limits.") {
        Some(resource) => (resource, true),
        None => (name.strip_prefix("requests.").unwrap_or(name), false),
    };
    let native = matches!(resource, "cpu" | "memory" | "ephemeral-storage");
    let extended = resource.contains('/')
        && !resource.contains("kubernetes.io/")
        && !resource.starts_with("count/");
    if !(native || (extended && !from_limits)) || (from_limits && resource == "ephemeral-storage") {
        return None;
    }
    let total: i64 = pods
        .iter()
        .map(|pod| {
            let amounts = if from_limits {
                pod_limits(pod)
            } else {
                pod_requests(pod)
            };
            amounts.get(resource).copied().unwrap_or(0)
        })
        .sum();
    let quantity = if resource == "cpu" {
        flotilla_api::Quantity::from_milli(total, flotilla_api::QuantityFormat::DecimalSI)
    } else if resource == "memory" || resource == "ephemeral-storage" {
        flotilla_api::Quantity::from_i64(total, flotilla_api::QuantityFormat::BinarySI)
    } else {
        flotilla_api::Quantity::from_i64(total, flotilla_api::QuantityFormat::DecimalSI)
    };
    Some(quantity.to_string())
}

#[cfg(test)]
mod tests;
