//! Assumed in-flight workloads (Karmada's gate `SchedulingOvercommitProtection`): what the
//! scheduler placed but members do not show in use yet. After a result is written, each of its
//! clusters gets the binding's footprint (its components, or one synthetic component of the
//! cluster's replicas × the per-replica request); the estimators deduct the footprints of a
//! cluster from what it can take, so a burst of bindings does not overcommit a cluster (or a
//! member's ResourceQuota) before any pod exists there.
//!
//! A footprint goes when the workload turns Healthy in that cluster (the binding's aggregated
//! status), when the cluster leaves the placement, when the binding is deleted, or after a TTL
//! (5 minutes) without any of these. Behaviour of Karmada's `pkg/scheduler/cache`
//! (`AssigningResourceBindingCache`'s assumptions) and `updateAssumptionsCache`; the clock is
//! passed in.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use flotilla_api::karmada::{Component, ReplicaRequirements, TargetCluster};
use serde_json::{Map, Value};
use tokio::time::{Duration, Instant};

/// Karmada's `DefaultAssumptionTTL`.
pub const DEFAULT_TTL: Duration = Duration::from_secs(5 * 60);

/// One binding's footprint in one cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct AssumedWorkload {
    /// The workload's namespace (quotas count only their own).
    pub namespace: String,
    pub components: Vec<Component>,
}

/// The footprints to deduct, by cluster.
pub type AssumedByCluster = BTreeMap<String, Vec<AssumedWorkload>>;

#[derive(Debug)]
struct Entry {
    expires_at: Instant,
    clusters: BTreeMap<String, AssumedWorkload>,
}

/// The assumptions of every binding (keyed `namespace/name`, or `name` for cluster-scoped ones).
#[derive(Debug)]
pub struct Assumptions {
    ttl: Duration,
    bindings: HashMap<String, Entry>,
    /// Each binding's clusters reported Healthy when last seen (to find transitions).
    healthy: HashMap<String, BTreeSet<String>>,
}

impl Default for Assumptions {
    fn default() -> Self {
        Self::new(DEFAULT_TTL)
    }
}

impl Assumptions {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            bindings: HashMap::new(),
            healthy: HashMap::new(),
        }
    }

    /// Records (or replaces) `binding`'s footprint in `cluster`; the binding's TTL restarts.
    pub fn assume(
        &mut self,
        binding: &str,
        cluster: &str,
        workload: AssumedWorkload,
        now: Instant,
    ) {
        let entry = self
            .bindings
            .entry(binding.to_owned())
            .or_insert_with(|| Entry {
                expires_at: now,
                clusters: BTreeMap::new(),
            });
        entry.clusters.insert(cluster.to_owned(), workload);
        entry.expires_at = now + self.ttl;
    }

    /// Forgets `binding`'s footprint in `cluster` (and the binding once it has none).
    pub fn release_cluster(&mut self, binding: &str, cluster: &str) {
        if let Some(entry) = self.bindings.get_mut(binding) {
            entry.clusters.remove(cluster);
            if entry.clusters.is_empty() {
                self.bindings.remove(binding);
            }
        }
    }

    /// Forgets everything about `binding` (deleted).
    pub fn release(&mut self, binding: &str) {
        self.bindings.remove(binding);
        self.healthy.remove(binding);
    }

    /// Whether `binding` has a footprint anywhere.
    pub fn exists(&self, binding: &str) -> bool {
        self.bindings.contains_key(binding)
    }

    /// The clusters where `binding` was just seen Healthy: releases those that were not
    /// Healthy when last seen (Karmada's `releaseHealthyClusterAssumptions`).
    pub fn observe_health(&mut self, binding: &str, healthy: BTreeSet<String>) {
        let before = self.healthy.insert(binding.to_owned(), healthy.clone());
        if !self.exists(binding) {
            return;
        }
        let before = before.unwrap_or_default();
        for cluster in healthy.difference(&before) {
            self.release_cluster(binding, cluster);
        }
    }

    /// After `binding` was (re)scheduled from `old` to `new` clusters: releases the clusters it
    /// left and records its footprint in every cluster of the result (Karmada's
    /// `updateAssumptionsCache`; non-workloads are not assumed).
    pub fn record_schedule(
        &mut self,
        binding: &str,
        workload: &WorkloadShape<'_>,
        old: &[TargetCluster],
        new: &[TargetCluster],
        now: Instant,
    ) {
        if !workload.is_workload() {
            return;
        }
        for gone in old.iter().filter(|o| !new.iter().any(|n| n.name == o.name)) {
            self.release_cluster(binding, &gone.name);
        }
        for target in new {
            let components = if workload.components.is_empty() {
                single_template_components(workload.name, target.replicas, workload.requirements)
            } else {
                workload.components.to_vec()
            };
            self.assume(
                binding,
                &target.name,
                AssumedWorkload {
                    namespace: workload.namespace.to_owned(),
                    components,
                },
                now,
            );
        }
        self.gc(now);
    }

    /// The live footprints in each of `clusters` (expired ones skipped).
    pub fn by_cluster<'a>(
        &self,
        clusters: impl IntoIterator<Item = &'a str>,
        now: Instant,
    ) -> AssumedByCluster {
        let mut result = AssumedByCluster::new();
        for cluster in clusters {
            let mut workloads: Vec<(&String, &AssumedWorkload)> = self
                .bindings
                .iter()
                .filter(|(_, e)| e.expires_at > now)
                .filter_map(|(key, e)| e.clusters.get(cluster).map(|w| (key, w)))
                .collect();
            if workloads.is_empty() {
                continue;
            }
            workloads.sort_by(|a, b| a.0.cmp(b.0));
            result.insert(
                cluster.to_owned(),
                workloads.into_iter().map(|(_, w)| w.clone()).collect(),
            );
        }
        result
    }

    /// Drops expired footprints; returns how many bindings went.
    pub fn gc(&mut self, now: Instant) -> usize {
        let before = self.bindings.len();
        self.bindings.retain(|_, e| e.expires_at > now);
        before - self.bindings.len()
    }
}

/// What the footprint of a binding is made of.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadShape<'a> {
    /// The template's name (the synthetic component's name).
    pub name: &'a str,
    pub namespace: &'a str,
    pub replicas: i32,
    pub requirements: Option<&'a ReplicaRequirements>,
    pub components: &'a [Component],
}

impl WorkloadShape<'_> {
    /// Karmada's `IsWorkload`: replicas or components.
    pub fn is_workload(&self) -> bool {
        self.replicas > 0 || !self.components.is_empty()
    }
}

/// A single-template assignment as one component: `replicas` × the per-replica request, with
/// its node claim and priority class (Karmada's `singleTemplateAsComponents`).
pub fn single_template_components(
    name: &str,
    replicas: i32,
    requirements: Option<&ReplicaRequirements>,
) -> Vec<Component> {
    let replica_requirements = requirements.map(|r| {
        let mut fields = Map::new();
        if let Some(claim) = &r.node_claim
            && let Ok(claim) = serde_json::to_value(claim)
        {
            fields.insert("nodeClaim".into(), claim);
        }
        if let Some(request) = &r.resource_request {
            let request: Map<String, Value> = request
                .iter()
                .map(|(name, q)| (name.clone(), Value::String(q.to_string())))
                .collect();
            fields.insert("resourceRequest".into(), Value::Object(request));
        }
        if !r.priority_class_name.is_empty() {
            fields.insert(
                "priorityClassName".into(),
                Value::String(r.priority_class_name.clone()),
            );
        }
        Value::Object(fields)
    });
    vec![Component {
        name: name.to_owned(),
        replicas,
        replica_requirements,
    }]
}

/// Per resource (`cpu` in millis, the rest in units), what `components` request in all
/// (replicas × per-replica request), and how many pods.
pub fn demands(components: &[Component]) -> (i64, BTreeMap<String, i64>) {
    let mut pods = 0i64;
    let mut resources: BTreeMap<String, i64> = BTreeMap::new();
    for component in components {
        let replicas = i64::from(component.replicas.max(0));
        pods += replicas;
        let request = component
            .replica_requirements
            .as_ref()
            .and_then(|r| r.get("resourceRequest"))
            .and_then(Value::as_object);
        for (name, quantity) in request.into_iter().flatten() {
            let Some(quantity) = quantity
                .as_str()
                .and_then(|q| flotilla_api::Quantity::parse(q).ok())
            else {
                continue;
            };
            let amount = if name == "cpu" {
                quantity.as_milli().unwrap_or(i64::MAX)
            } else {
                quantity.as_i64().unwrap_or(i64::MAX)
            };
            let entry = resources.entry(name.clone()).or_default();
            *entry = entry.saturating_add(amount.saturating_mul(replicas));
        }
    }
    (pods, resources)
}

/// The priority class a component's pods run with (quota scopes), `""` when none.
pub fn priority_class(component: &Component) -> &str {
    component
        .replica_requirements
        .as_ref()
        .and_then(|r| r.get("priorityClassName"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

#[cfg(test)]
mod tests;
