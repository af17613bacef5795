use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

use super::*;

fn node(name: &str, labels: Value, allocatable: Value, spec: Value) -> Node {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels},
        "spec": spec, "status": {"allocatable": allocatable}}))
    .expect("node")
}

fn pod(node: &str, requests: Value, phase: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": format!("p-{node}"), "namespace": "d"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": requests}}]},
        "status": {"phase": phase}}))
    .expect("pod")
}

fn requirements(value: Value) -> ReplicaRequirements {
    serde_json::from_value(value).expect("requirements")
}

fn gpu_cluster() -> NodeIndex {
    let gpu = json!({"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"});
    let nodes = vec![
        node(
            "a100-1",
            json!({"nvidia.com/gpu.memory": "81920", "pool": "gpu"}),
            gpu.clone(),
            json!({}),
        ),
        node(
            "a100-2",
            json!({"nvidia.com/gpu.memory": "81920", "pool": "gpu"}),
            gpu.clone(),
            json!({"taints": [{"key": "dedicated", "value": "llm", "effect": "NoSchedule"}]}),
        ),
        node(
            "t4-1",
            json!({"nvidia.com/gpu.memory": "15360", "pool": "gpu"}),
            gpu,
            json!({}),
        ),
        node(
            "cpu-1",
            json!({"pool": "cpu"}),
            json!({"cpu": "16", "memory": "64Gi", "pods": "3"}),
            json!({"unschedulable": true}),
        ),
    ];
    let pods = vec![
        pod(
            "a100-1",
            json!({"cpu": "8", "nvidia.com/gpu": "2"}),
            "Running",
        ),
        pod("a100-1", json!({"nvidia.com/gpu": "2"}), "Succeeded"),
        pod("nowhere", json!({"nvidia.com/gpu": "8"}), "Running"),
    ];
    NodeIndex::new(&nodes, &pods).expect("index")
}

#[test]
fn gpu_requests_with_affinity_and_taints() {
    let index = gpu_cluster();
    let vllm = json!({"resourceRequest": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "2"},
        "nodeClaim": {"hardNodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["70000"]}]}]}}});
    // a100-1: 6 free GPUs ⇒ 3; a100-2 is tainted; t4-1 fails Gt.
    assert_eq!(
        index.max_available_replicas(Some(&requirements(vllm.clone()))),
        3
    );
    let mut tolerating = vllm;
    tolerating["nodeClaim"]["tolerations"] =
        json!([{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}]);
    assert_eq!(
        index.max_available_replicas(Some(&requirements(tolerating))),
        7
    );
}

#[test]
fn cordoned_nodes_and_selectors() {
    let index = gpu_cluster();
    let cpu_only =
        json!({"resourceRequest": {"cpu": "1"}, "nodeClaim": {"nodeSelector": {"pool": "cpu"}}});
    assert_eq!(
        index.max_available_replicas(Some(&requirements(cpu_only.clone()))),
        0
    );
    let mut tolerating = cpu_only;
    tolerating["nodeClaim"]["tolerations"] =
        json!([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]);
    // Pods cap the 16 CPUs at 3.
    assert_eq!(
        index.max_available_replicas(Some(&requirements(tolerating))),
        3
    );
}

#[test]
fn no_requirements_count_pods() {
    let index = gpu_cluster();
    // a100-1: 110 − 1 running pod; t4-1: 110; a100-2 tainted; cpu-1 cordoned.
    assert_eq!(index.max_available_replicas(None), 219);
    assert_eq!(NodeIndex::default().max_available_replicas(None), 0);
}

#[test]
fn estimator_answers_unknown_for_clusters_without_nodes() {
    let mut estimator = AccurateEstimator::default();
    estimator.insert("known", gpu_cluster());
    let known: Cluster = serde_json::from_value(
        json!({"metadata": {"name": "known"}, "spec": {"syncMode": "Push"}}),
    )
    .expect("c");
    let other: Cluster = serde_json::from_value(
        json!({"metadata": {"name": "other"}, "spec": {"syncMode": "Push"}}),
    )
    .expect("c");
    assert_eq!(
        estimator.max_available_replicas(&[&known, &other], None),
        [219, UNAUTHENTIC_REPLICA]
    );
}

#[test]
fn fitting_nodes_count_nodes_with_room_for_one_replica() {
    let index = gpu_cluster();
    let gpu2 = requirements(json!({"resourceRequest": {"nvidia.com/gpu": "2"}}));
    // a100-1 (6 free) and t4-1 (8 free); a100-2 tainted, cpu-1 cordoned.
    assert_eq!(index.fitting_nodes(Some(&gpu2)), 2);
    let gpu7 = requirements(json!({"resourceRequest": {"nvidia.com/gpu": "7"}}));
    assert_eq!(index.fitting_nodes(Some(&gpu7)), 1);
}

fn components(value: Value) -> Vec<Component> {
    serde_json::from_value(value).expect("components")
}

#[test]
fn component_sets_are_packed_first_fit_after_the_assumed_workloads() {
    // Two nodes of 1 CPU: a set (job manager 300m + task manager 2 × 200m = 700m) fits once per
    // node, as whole replicas go where they fit.
    let small = json!({"cpu": "1", "memory": "4Gi", "pods": "110"});
    let nodes = vec![
        node("n1", json!({}), small.clone(), json!({})),
        node("n2", json!({}), small, json!({})),
    ];
    let index = NodeIndex::new(&nodes, &[]).expect("index");
    let set = components(json!([
        {"name": "jm", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "300m"}}},
        {"name": "tm", "replicas": 2, "replicaRequirements": {"resourceRequest": {"cpu": "200m"}}}
    ]));
    assert_eq!(index.max_available_sets("ns", &set, &[]), 2);
    let assumed = vec![AssumedWorkload {
        namespace: "ns".into(),
        components: set.clone(),
    }];
    assert_eq!(index.max_available_sets("ns", &set, &assumed), 1);
    // Single replicas of 200m: 3 + 3 from free nodes, 1 + 3 once the assumed set took 700m.
    let r = requirements(json!({"resourceRequest": {"cpu": "200m"}}));
    assert_eq!(index.max_available_replicas_assuming(Some(&r), &[]), 10);
    assert_eq!(index.max_available_replicas_assuming(Some(&r), &assumed), 6);
}

#[test]
fn component_sets_respect_the_namespace_quotas_and_their_assumptions() {
    let nodes = vec![node(
        "big",
        json!({}),
        json!({"cpu": "64", "memory": "256Gi", "pods": "110"}),
        json!({}),
    )];
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": {"name": "q", "namespace": "ns"},
        "status": {"hard": {"cpu": "1"}, "used": {"cpu": "0"}}}))
    .expect("quota");
    let index = NodeIndex::new(&nodes, &[])
        .expect("index")
        .with_quotas(&[quota]);
    let flink = components(json!([
        {"name": "jm", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "50m"}}},
        {"name": "tm", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "100m"}}}
    ]));
    assert_eq!(index.max_available_sets("ns", &flink, &[]), 6);
    let six: Vec<AssumedWorkload> = (0..6)
        .map(|_| AssumedWorkload {
            namespace: "ns".into(),
            components: flink.clone(),
        })
        .collect();
    assert_eq!(index.max_available_sets("ns", &flink, &six), 0);
    // The node alone holds 49 more sets (110 pods, 12 taken by the six assumed sets): in
    // another namespace the quota does not apply.
    assert_eq!(index.max_available_sets("other", &flink, &six), 49);
}
