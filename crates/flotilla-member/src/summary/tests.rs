use flotilla_api::karmada::{ResourceModelRange, default_resource_models};
use k8s_openapi::api::core::v1::PodSpec;
use serde_json::json;

use super::*;
use crate::lifted::requests::pod_requests;

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("a quantity")
}

fn node(ready: bool, cpu: &str, memory: &str, pods: &str, gpus: Option<&str>) -> NodeFacts {
    let mut allocatable = BTreeMap::from([
        ("cpu".to_owned(), q(cpu)),
        ("memory".to_owned(), q(memory)),
        ("pods".to_owned(), q(pods)),
    ]);
    if let Some(gpus) = gpus {
        allocatable.insert("nvidia.com/gpu".into(), q(gpus));
    }
    NodeFacts { ready, allocatable }
}

fn pod(node_name: &str, terminal: bool, spec: serde_json::Value) -> PodFacts {
    let spec: PodSpec = serde_json::from_value(spec).expect("a pod spec");
    PodFacts {
        node_name: node_name.into(),
        terminal,
        requests: pod_requests(&spec),
    }
}

fn containers(requests: &[serde_json::Value]) -> serde_json::Value {
    let containers: Vec<_> = requests
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"name": format!("c{i}"), "resources": {"requests": r}}))
        .collect();
    json!({"containers": containers})
}

fn list(pairs: &[(&str, &str)]) -> flotilla_api::karmada::ResourceList {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), q(v))).collect()
}

#[test]
fn allocatable_sums_every_node_resource_including_gpus() {
    let mut t = Tracker::new();
    t.upsert_node("a", node(true, "32", "256Gi", "110", Some("8")));
    t.upsert_node("b", node(false, "16", "64Gi", "110", None));
    let summary = t.resource_summary(&[]);
    assert_eq!(
        summary.allocatable,
        Some(list(&[
            ("cpu", "48"),
            ("memory", "320Gi"),
            ("pods", "220"),
            ("nvidia.com/gpu", "8")
        ]))
    );
    assert_eq!(
        t.node_summary(),
        NodeSummary {
            total_num: 2,
            ready_num: 1
        }
    );
    // Removing the only GPU node drops the resource, not just its amount.
    t.remove_node("a");
    let summary = t.resource_summary(&[]);
    assert_eq!(
        summary.allocatable,
        Some(list(&[("cpu", "16"), ("memory", "64Gi"), ("pods", "110")]))
    );
    assert_eq!(t.node_summary().ready_num, 0);
}

#[test]
fn allocating_and_allocated_follow_binding_and_terminal_phases() {
    let mut t = Tracker::new();
    t.upsert_node("a", node(true, "32", "256Gi", "110", Some("8")));
    let gpu = containers(&[json!({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "2"})]);
    t.upsert_pod("ns/p1", pod("", false, gpu.clone()));
    t.upsert_pod("ns/p2", pod("a", false, gpu.clone()));
    t.upsert_pod("ns/done", pod("a", true, gpu.clone()));
    let s = t.resource_summary(&[]);
    assert_eq!(
        s.allocating,
        Some(list(&[
            ("cpu", "500m"),
            ("memory", "1Gi"),
            ("nvidia.com/gpu", "2"),
            ("pods", "1")
        ]))
    );
    assert_eq!(s.allocated, s.allocating);
    // p1 gets bound: it moves from allocating to allocated.
    t.upsert_pod("ns/p1", pod("a", false, gpu.clone()));
    let s = t.resource_summary(&[]);
    assert_eq!(s.allocating, None);
    assert_eq!(
        s.allocated,
        Some(list(&[
            ("cpu", "1"),
            ("memory", "2Gi"),
            ("nvidia.com/gpu", "4"),
            ("pods", "2")
        ]))
    );
    // Deleting pods takes their requests away again.
    t.remove_pod("ns/p1");
    t.remove_pod("ns/p2");
    t.remove_pod("ns/done");
    assert_eq!(t.resource_summary(&[]).allocated, None);
}

#[test]
fn effective_requests_take_init_containers_and_overhead_into_account() {
    let spec: PodSpec = serde_json::from_value(json!({
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}},
            {"name": "b", "resources": {"requests": {"cpu": "200m", "example.com/foo": "1", "storage": "1Gi"}}}
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1", "memory": "10Mi"}}}],
        "overhead": {"cpu": "10m"}
    }))
    .expect("spec");
    let r = pod_requests(&spec);
    assert_eq!(r.get("cpu"), 1010);
    assert_eq!(r.get("memory"), 100 * 1024 * 1024);
    assert_eq!(r.get("example.com/foo"), 1);
    // Unprefixed names other than the native four are not counted (Karmada's Resource).
    assert_eq!(r.get("storage"), 0);
}

#[test]
fn relists_replace_everything() {
    let mut t = Tracker::new();
    t.upsert_node("old", node(true, "4", "8Gi", "10", None));
    t.upsert_pod(
        "ns/old",
        pod("old", false, containers(&[json!({"cpu": "1"})])),
    );
    t.replace_nodes(vec![("new".into(), node(true, "2", "4Gi", "10", None))]);
    t.replace_pods(vec![]);
    let s = t.resource_summary(&[]);
    assert_eq!(
        s.allocatable,
        Some(list(&[("cpu", "2"), ("memory", "4Gi"), ("pods", "10")]))
    );
    assert_eq!(s.allocated, None);
    assert_eq!(t.node_count(), 1);
    assert_eq!(t.pod_count(), 0);
}

#[test]
fn modelings_count_nodes_by_free_resources_in_the_default_grades() {
    let models = default_resource_models();
    let mut t = Tracker::new();
    // 8 cpu / 32Gi free: cpu grade 4 ([8,16)), memory grade 3 ([32Gi,64Gi)): min is 3.
    t.upsert_node("a", node(true, "8", "32Gi", "110", None));
    // 200 cpu / 2Ti: the last grade.
    t.upsert_node("b", node(true, "200", "2Ti", "110", None));
    // 0.5 cpu: grade 0.
    t.upsert_node("c", node(true, "500m", "64Gi", "110", None));
    let counts: Vec<i64> = t.modelings(&models).iter().map(|m| m.count).collect();
    assert_eq!(counts, vec![1, 0, 0, 1, 0, 0, 0, 0, 1]);
    // A pod takes 4 cpu from `a`: 4 cpu free is grade 3 ([4,8)), memory still 3.
    t.upsert_pod(
        "ns/p",
        pod(
            "a",
            false,
            containers(&[json!({"cpu": "4", "memory": "1Gi"})]),
        ),
    );
    let counts: Vec<i64> = t.modelings(&models).iter().map(|m| m.count).collect();
    assert_eq!(
        counts,
        vec![1, 0, 1, 0, 0, 0, 0, 0, 1],
        "31Gi free is grade 2"
    );
}

#[test]
fn modelings_skip_full_and_overcommitted_nodes_and_follow_custom_grades() {
    let models = vec![
        ResourceModel {
            grade: 0,
            ranges: vec![ResourceModelRange {
                name: "cpu".into(),
                min: q("0"),
                max: q("4"),
            }],
        },
        ResourceModel {
            grade: 1,
            ranges: vec![ResourceModelRange {
                name: "cpu".into(),
                min: q("4"),
                max: q("9223372036854775807"),
            }],
        },
    ];
    let mut t = Tracker::new();
    t.upsert_node("full", node(true, "8", "8Gi", "1", None));
    t.upsert_pod(
        "ns/a",
        pod("full", false, containers(&[json!({"cpu": "1"})])),
    );
    t.upsert_node("over", node(true, "1", "8Gi", "10", None));
    t.upsert_pod(
        "ns/b",
        pod("over", false, containers(&[json!({"cpu": "2"})])),
    );
    t.upsert_node("big", node(true, "8", "8Gi", "10", None));
    let m = t.modelings(&models);
    assert_eq!(
        m,
        vec![
            AllocatableModeling { grade: 0, count: 0 },
            AllocatableModeling { grade: 1, count: 1 }
        ]
    );
    assert!(t.modelings(&[]).is_empty(), "no models, no modelings");
}

#[test]
fn nodes_sharing_an_allocatable_are_counted_one_by_one() {
    let models = default_resource_models();
    let mut t = Tracker::new();
    for i in 0..4 {
        t.upsert_node(&format!("n{i}"), node(true, "8", "32Gi", "110", Some("8")));
    }
    // A pod on one of them moves only that node to a lower grade.
    t.upsert_pod("ns/p", pod("n1", false, containers(&[json!({"cpu": "4"})])));
    let counts: Vec<i64> = t.modelings(&models).iter().map(|m| m.count).collect();
    assert_eq!(counts, vec![0, 0, 0, 4, 0, 0, 0, 0, 0]);
    t.upsert_pod("ns/q", pod("n2", false, containers(&[json!({"cpu": "5"})])));
    let counts: Vec<i64> = t.modelings(&models).iter().map(|m| m.count).collect();
    assert_eq!(
        counts,
        vec![0, 0, 1, 3, 0, 0, 0, 0, 0],
        "3 cpu free is grade 2"
    );
    // Changing one node's allocatable leaves the others' alone.
    t.upsert_node("n0", node(true, "16", "32Gi", "110", Some("4")));
    t.remove_node("n3");
    let s = t.resource_summary(&[]);
    assert_eq!(
        s.allocatable,
        Some(list(&[
            ("cpu", "32"),
            ("memory", "96Gi"),
            ("pods", "330"),
            ("nvidia.com/gpu", "20")
        ]))
    );
    t.remove_pod("ns/p");
    t.remove_pod("ns/q");
    for name in ["n0", "n1", "n2"] {
        t.remove_node(name);
    }
    assert_eq!(t.resource_summary(&[]).allocatable, None);
    assert_eq!(t.node_summary().total_num, 0);
}

mod karmada_cluster_status;
mod karmada_modeling;
