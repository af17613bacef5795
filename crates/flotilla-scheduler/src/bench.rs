//! The scheduling benchmark behind `flotilla bench schedule` (and `cargo run --release -p
//! flotilla-scheduler --example bench`): the pure scheduling core over 100 clusters and 10,000 bindings of
//! mixed strategies (bindings/s, P50/P99), against a baseline measured in the same run (an empty
//! filter pass: a plugin context per cluster through a framework without plugins), and the accurate
//! estimator on a 5,000-node member (index build, P50/P99 per estimate) against a plain pass
//! over the same nodes.

use std::time::{Duration, Instant};

use crate::estimator::NodeIndex;
use crate::framework::{PluginContext, Prepared};
use crate::{Framework, Registry, ScheduleOptions, Snapshot, schedule};
use flotilla_api::karmada::{
    Cluster, ReplicaRequirements, ResourceBindingSpec, ResourceBindingStatus,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

/// Measured figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Figures {
    /// Clusters in the snapshot.
    pub clusters: usize,
    /// Bindings scheduled.
    pub bindings: usize,
    /// Bindings that ended in an error (unschedulable etc.), still counted.
    pub errors: usize,
    /// Core bindings per second.
    pub bindings_per_s: f64,
    /// Core P50 in ms.
    pub p50_ms: f64,
    /// Core P99 in ms.
    pub p99_ms: f64,
    /// Baseline per binding: an empty filter pass over every cluster, P99 in ms.
    pub baseline_p99_ms: f64,
    /// Baseline per second.
    pub baseline_per_s: f64,
    /// Core time per binding / baseline time per binding.
    pub ratio_to_baseline: f64,
    /// Nodes in the accurate-estimator member.
    pub nodes: usize,
    /// Index build time in ms (5,000 nodes + pods).
    pub index_build_ms: f64,
    /// Accurate estimate P50 in ms.
    pub accurate_p50_ms: f64,
    /// Accurate estimate P99 in ms.
    pub accurate_p99_ms: f64,
    /// Plain pass over the nodes (sum of free CPU), P99 in ms.
    pub node_pass_p99_ms: f64,
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index].as_secs_f64() * 1000.0
}

/// The benchmark's clusters (also used by the end-to-end benchmark in `flotilla bench schedule`).
pub fn clusters(n: usize) -> Vec<Cluster> {
    (0..n)
        .map(|i| {
            let mut spec = json!({"syncMode": "Push", "provider": if i % 2 == 0 { "aws" } else { "gcp" },
                "region": format!("region-{}", i % 10), "zones": [format!("zone-{}", i % 20)]});
            if i % 17 == 0 {
                spec["taints"] = json!([{"key": "maintenance", "effect": "NoSchedule"}]);
            }
            let cpu = 64 + (i % 7) * 32;
            serde_json::from_value(json!({
                "metadata": {"name": format!("member-{i:03}"), "labels": {"tier": if i % 3 == 0 { "gold" } else { "silver" }}},
                "spec": spec,
                "status": {
                    "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
                    "resourceSummary": {
                        "allocatable": {"cpu": cpu.to_string(), "memory": format!("{}Gi", cpu * 4), "pods": "1100", "nvidia.com/gpu": (i % 5 * 8).to_string()},
                        "allocated": {"cpu": (cpu / 4).to_string(), "memory": format!("{}Gi", cpu / 2), "pods": "100"}
                    }
                }
            }))
            .expect("bench cluster")
        })
        .collect()
}

fn placement(i: usize) -> Value {
    match i % 6 {
        0 => json!({"clusterAffinity": {"labelSelector": {"matchLabels": {"tier": "gold"}}}}),
        1 => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
                {"targetCluster": {"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "In", "values": ["gcp"]}]}}, "weight": 1}]}}})
        }
        2 => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"}}})
        }
        3 => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}})
        }
        4 => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
            "spreadConstraints": [{"spreadByField": "region", "minGroups": 2, "maxGroups": 3},
                                  {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 6}]})
        }
        _ => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 4}],
            "clusterTolerations": [{"key": "maintenance", "operator": "Exists"}]})
        }
    }
}

/// The benchmark's bindings of mixed strategies.
pub fn bindings(n: usize) -> Vec<ResourceBindingSpec> {
    (0..n)
        .map(|i| {
            let request = if i % 4 == 0 {
                json!({"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"})
            } else {
                json!({"cpu": "500m", "memory": "1Gi"})
            };
            serde_json::from_value(json!({
                "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "bench",
                    "name": format!("app-{i}"), "uid": format!("uid-{i:08x}")},
                "replicas": 1 + (i * 7) % 40,
                "replicaRequirements": {"resourceRequest": request},
                "placement": placement(i),
            }))
            .expect("bench binding")
        })
        .collect()
}

fn member(nodes: usize) -> (Vec<Node>, Vec<Pod>) {
    let mut out_nodes = Vec::with_capacity(nodes);
    let mut pods = Vec::with_capacity(nodes * 4);
    for i in 0..nodes {
        let gpu = i % 4 == 0;
        let mut node = json!({
            "metadata": {"name": format!("node-{i:05}"), "labels": {
                "topology.kubernetes.io/zone": format!("zone-{}", i % 3),
                "nvidia.com/gpu.memory": if gpu { "81920" } else { "0" },
                "node-pool": if gpu { "gpu" } else { "cpu" }}},
            "spec": {},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110",
                "nvidia.com/gpu": if gpu { "8" } else { "0" }}}
        });
        if i % 50 == 0 {
            node["spec"]["taints"] =
                json!([{"key": "dedicated", "value": "llm", "effect": "NoSchedule"}]);
        }
        out_nodes.push(serde_json::from_value(node).expect("bench node"));
        for j in 0..4 {
            pods.push(
                serde_json::from_value(json!({
                    "metadata": {"name": format!("pod-{i}-{j}"), "namespace": "bench"},
                    "spec": {"nodeName": format!("node-{i:05}"), "containers": [{"name": "c",
                        "resources": {"requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": if gpu && j == 0 { "2" } else { "0" }}}}]},
                    "status": {"phase": "Running"}
                }))
                .expect("bench pod"),
            );
        }
    }
    (out_nodes, pods)
}

/// Runs the benchmark.
pub fn run(
    cluster_count: usize,
    binding_count: usize,
    node_count: usize,
) -> Result<Figures, crate::estimator::accurate::IndexError> {
    let snapshot = Snapshot::new(clusters(cluster_count));
    let specs = bindings(binding_count);
    let framework = Framework::default();
    let options = ScheduleOptions {
        framework: &framework,
        estimators: &[],
        enable_empty_workload_propagation: false,
        divide_by_node_count: None,
        gpu_topology: None,
        workload_peers: None,
        assumed: None,
    };
    let status = ResourceBindingStatus::default();
    let empty = Registry::new(Vec::new())
        .framework(&["*"])
        .expect("an empty registry accepts `*`");
    let nothing = Prepared::default();

    // Warm up both loops once.
    for spec in specs.iter().take(200) {
        let _ = schedule(&snapshot, spec, &status, &options);
    }
    let mut baseline = Vec::with_capacity(specs.len());
    let started = Instant::now();
    for spec in &specs {
        let t = Instant::now();
        let placement = spec
            .placement
            .as_ref()
            .expect("bench bindings have a placement");
        for cluster in snapshot.clusters() {
            let ctx = PluginContext {
                spec,
                status: &status,
                placement,
                cluster,
                prepared: &nothing,
            };
            std::hint::black_box(empty.run_filters(&ctx));
        }
        baseline.push(t.elapsed());
    }
    let baseline_total = started.elapsed();

    let mut latencies = Vec::with_capacity(specs.len());
    let mut errors = 0;
    let started = Instant::now();
    for spec in &specs {
        let t = Instant::now();
        let result = schedule(&snapshot, spec, &status, &options);
        latencies.push(t.elapsed());
        if result.is_err() {
            errors += 1;
        }
        std::hint::black_box(result).ok();
    }
    let total = started.elapsed();
    latencies.sort();
    baseline.sort();

    let (nodes, pods) = member(node_count);
    let t = Instant::now();
    let index = NodeIndex::new(&nodes, &pods)?;
    let index_build = t.elapsed();
    let requests: Vec<ReplicaRequirements> = (0..200)
        .map(|i| {
            let value = if i % 2 == 0 {
                json!({"resourceRequest": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"},
                    "nodeClaim": {"hardNodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["70000"]}]}]},
                        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}]}})
            } else {
                json!({"resourceRequest": {"cpu": "1", "memory": "2Gi"},
                    "nodeClaim": {"nodeSelector": {"node-pool": "cpu"}}})
            };
            serde_json::from_value(value).expect("bench requirements")
        })
        .collect();
    let mut accurate = Vec::with_capacity(requests.len());
    for r in &requests {
        let t = Instant::now();
        std::hint::black_box(index.max_available_replicas(Some(r)));
        accurate.push(t.elapsed());
    }
    accurate.sort();
    let mut pass = Vec::with_capacity(requests.len());
    for _ in &requests {
        let t = Instant::now();
        let sum: i64 = index.nodes().iter().map(|n| n.free.milli_cpu).sum();
        std::hint::black_box(sum);
        pass.push(t.elapsed());
    }
    pass.sort();

    let per_s = specs.len() as f64 / total.as_secs_f64();
    let baseline_per_s = specs.len() as f64 / baseline_total.as_secs_f64();
    Ok(Figures {
        clusters: cluster_count,
        bindings: specs.len(),
        errors,
        bindings_per_s: per_s,
        p50_ms: percentile(&latencies, 0.50),
        p99_ms: percentile(&latencies, 0.99),
        baseline_p99_ms: percentile(&baseline, 0.99),
        baseline_per_s,
        ratio_to_baseline: baseline_per_s / per_s,
        nodes: node_count,
        index_build_ms: index_build.as_secs_f64() * 1000.0,
        accurate_p50_ms: percentile(&accurate, 0.50),
        accurate_p99_ms: percentile(&accurate, 0.99),
        node_pass_p99_ms: percentile(&pass, 0.99),
    })
}
