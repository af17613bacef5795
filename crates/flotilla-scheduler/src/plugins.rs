//! The in-tree plugins, one file each. Evaluation order is the order of [`in_tree`] (Karmada
//! iterates a Go map, so its order is unspecified; ours is fixed so FitError reasons are
//! deterministic when a cluster fails several filters).

pub mod api_enablement;
pub mod cluster_affinity;
pub mod cluster_eviction;
pub mod cluster_locality;
pub mod spread_constraint;
pub mod taint_toleration;
pub mod workload_affinity;
pub mod workload_anti_affinity;

use std::sync::Arc;

use flotilla_api::karmada::WorkloadAffinityGroups;

use crate::framework::{PluginContext, PluginEntry, WorkloadPeers};

/// Every in-tree plugin, in evaluation order.
pub fn in_tree() -> Vec<PluginEntry> {
    let affinity = Arc::new(cluster_affinity::ClusterAffinity);
    vec![
        PluginEntry {
            name: api_enablement::NAME,
            filter: Some(Arc::new(api_enablement::ApiEnablement)),
            score: None,
        },
        PluginEntry {
            name: taint_toleration::NAME,
            filter: Some(Arc::new(taint_toleration::TaintToleration)),
            score: None,
        },
        PluginEntry {
            name: cluster_affinity::NAME,
            filter: Some(affinity.clone()),
            score: Some(affinity),
        },
        PluginEntry {
            name: spread_constraint::NAME,
            filter: Some(Arc::new(spread_constraint::SpreadConstraint)),
            score: None,
        },
        PluginEntry {
            name: cluster_locality::NAME,
            filter: None,
            score: Some(Arc::new(cluster_locality::ClusterLocality)),
        },
        PluginEntry {
            name: cluster_eviction::NAME,
            filter: Some(Arc::new(cluster_eviction::ClusterEviction)),
            score: None,
        },
    ]
}

/// The peers a workload-affinity filter judges `ctx`'s cluster against: `None` (the cluster
/// passes) when the binding already targets it, names no group of the kind `group` reads, or
/// no peers were gathered.
pub(crate) fn workload_peers<'a>(
    ctx: &PluginContext<'a>,
    group: impl Fn(&WorkloadAffinityGroups) -> &str,
) -> Option<&'a WorkloadPeers> {
    if ctx.spec.target_contains(ctx.cluster.name()) {
        return None;
    }
    let grouped = ctx
        .spec
        .workload_affinity_groups
        .as_ref()
        .is_some_and(|groups| !group(groups).is_empty());
    ctx.prepared.workload_peers.filter(|_| grouped)
}

/// The plugins Karmada registers only with gate `WorkloadAffinity`, in evaluation order (after
/// every other filter).
pub fn workload_affinity() -> Vec<PluginEntry> {
    vec![
        PluginEntry {
            name: workload_anti_affinity::NAME,
            filter: Some(Arc::new(workload_anti_affinity::WorkloadAntiAffinity)),
            score: None,
        },
        PluginEntry {
            name: workload_affinity::NAME,
            filter: Some(Arc::new(workload_affinity::WorkloadAffinity)),
            score: None,
        },
    ]
}

#[cfg(test)]
pub(crate) mod testing {
    //! Builders shared by the plugin tables.
    use flotilla_api::karmada::{Cluster, ResourceBindingSpec};
    use serde_json::{Value, json};

    /// A cluster from JSON fragments of `metadata`, `spec` and `status`.
    pub fn cluster(name: &str, spec: Value, status: Value) -> Cluster {
        let mut spec = spec;
        if spec.get("syncMode").is_none() {
            spec["syncMode"] = json!("Push");
        }
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec, "status": status}))
            .expect("test cluster")
    }

    /// A binding spec from JSON.
    pub fn spec(value: Value) -> ResourceBindingSpec {
        serde_json::from_value(value).expect("test binding spec")
    }
}
