//! The resource-summary cases of Karmada's
//! `pkg/controllers/status/cluster_status_controller_test.go`: node summary, allocatable,
//! allocating, allocated, each node's free resources and the allocatable modelings, fed from
//! Node and Pod objects as the watches read them.

use flotilla_api::karmada::{AllocatableModeling, ResourceModel, ResourceModelRange};
use flotilla_api::{Quantity, QuantityFormat};
use serde_json::{Value, json};

use crate::summary::Tracker;
use crate::watch::{NodeView, PodView};

fn tracker(nodes: &[Value], pods: &[Value]) -> Tracker {
    let mut t = Tracker::new();
    for (i, node) in nodes.iter().enumerate() {
        let view: NodeView = serde_json::from_value(node.clone()).expect("a node");
        let name = view
            .metadata
            .name
            .clone()
            .unwrap_or_else(|| format!("node-{i}"));
        t.upsert_node(&name, view.facts());
    }
    for (i, pod) in pods.iter().enumerate() {
        let view: PodView = serde_json::from_value(pod.clone()).expect("a pod");
        t.upsert_pod(&format!("ns/pod-{i}"), view.facts());
    }
    t
}

fn with_allocatable(allocatable: Value) -> Value {
    json!({"status": {"allocatable": allocatable}})
}

/// A pod with one container requesting the unprefixed resource `test`.
fn test_pod(node_name: Option<&str>, phase: &str) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "resources": {"requests": {"test": "0"}}}]});
    if let Some(node) = node_name {
        spec["nodeName"] = json!(node);
    }
    json!({"spec": spec, "status": {"phase": phase}})
}

fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("a quantity")
}

/// Karmada's two-grade test models (CPU and memory; grade 1 from 1m and 1.024).
fn two_grades() -> Vec<ResourceModel> {
    let range = |name: &str, min: Quantity| ResourceModelRange {
        name: name.into(),
        min,
        max: q("9223372036854775807"),
    };
    let milli = |v| Quantity::from_milli(v, QuantityFormat::DecimalSI);
    vec![
        ResourceModel {
            grade: 0,
            ranges: vec![range("cpu", milli(0)), range("memory", milli(0))],
        },
        ResourceModel {
            grade: 1,
            ranges: vec![range("cpu", milli(1)), range("memory", milli(1024))],
        },
    ]
}

#[test]
fn node_summary_counts_ready_nodes() {
    let ready = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let pressured = json!({"status": {"conditions": [{"type": "MemoryPressure"}]}});
    let s = tracker(&[ready, pressured], &[]).node_summary();
    assert_eq!((s.total_num, s.ready_num), (2, 1));
}

#[test]
fn resource_summary_lists_node_resources_and_counts_pending_pods() {
    let node = with_allocatable(json!({"test": "0"}));
    let t = tracker(&[node.clone(), node], &[test_pod(None, "Pending")]);
    let s = t.resource_summary(&[]);
    // Every resource the nodes list is summed, a zero one too.
    assert_eq!(
        s.allocatable,
        Some([("test".to_owned(), q("0"))].into_iter().collect())
    );
    // The unbound pod is allocating; `test` is not a resource the requests count.
    let allocating = s.allocating.expect("allocating");
    assert_eq!(allocating.get("pods"), Some(&q("1")));
    assert!(!allocating.contains_key("test"));
    assert!(s.allocated.is_none());
    assert!(s.allocatable_modelings.is_empty());
}

#[test]
fn bound_pending_pods_are_allocated() {
    let t = tracker(&[], &[test_pod(Some("node1"), "Pending")]);
    let s = t.resource_summary(&[]);
    assert_eq!(s.allocated.expect("allocated").get("pods"), Some(&q("1")));
    assert!(s.allocating.is_none());
}

#[test]
fn node_free_resources_subtract_its_pods() {
    // Karmada's `getNodeAvailable` cases on a node of 10 pod slots, seen through a model over
    // `pods`: grade 0 from 0 slots, grade 1 from 2, grade 2 from 10.
    let range = |min: &str| ResourceModelRange {
        name: "pods".into(),
        min: q(min),
        max: q("9223372036854775807"),
    };
    let models: Vec<ResourceModel> = ["0", "2", "10"]
        .iter()
        .zip(0u32..)
        .map(|(min, grade)| ResourceModel {
            grade,
            ranges: vec![range(min)],
        })
        .collect();
    let node = json!({"metadata": {"name": "n"}, "status": {"allocatable": {"pods": "10"}}});
    let on_node = |count: usize| -> Vec<Value> {
        (0..count)
            .map(|_| json!({"spec": {"nodeName": "n", "containers": []}, "status": {"phase": "Running"}}))
            .collect()
    };
    // (pods on the node, Karmada's counts per grade)
    let table = [
        // 11 pods on 10 slots: no free node, not counted.
        (11, vec![0, 0, 0]),
        // 9 pods: 1 slot left, grade 0.
        (9, vec![1, 0, 0]),
        // No pods: all 10 slots.
        (0, vec![0, 0, 1]),
    ];
    for (pods, want) in table {
        let t = tracker(std::slice::from_ref(&node), &on_node(pods));
        let got: Vec<i64> = t.modelings(&models).iter().map(|m| m.count).collect();
        assert_eq!(got, want, "{pods} pods");
    }
}

#[test]
fn allocatable_modelings_table() {
    let node = with_allocatable(json!({"test": "0"}));
    let nodes = [node.clone(), node];
    let uneven = {
        let mut m = two_grades();
        m[1].ranges.truncate(1);
        m
    };
    let counted = vec![
        AllocatableModeling { grade: 0, count: 2 },
        AllocatableModeling { grade: 1, count: 0 },
    ];
    // (pod, models, Karmada's modelings)
    let table = [
        // Nodes without CPU or memory are grade 0.
        (test_pod(None, "Pending"), two_grades(), counted.clone()),
        // No models: none.
        (test_pod(None, "Pending"), vec![], vec![]),
        // Grades listing different resources: none.
        (test_pod(None, "Pending"), uneven, vec![]),
        // A running pod on a node not listed changes nothing.
        (
            test_pod(Some("node1"), "Running"),
            two_grades(),
            counted.clone(),
        ),
    ];
    for (pod, models, want) in table {
        let t = tracker(&nodes, std::slice::from_ref(&pod));
        assert_eq!(t.modelings(&models), want, "{pod}");
        assert_eq!(t.resource_summary(&models).allocatable_modelings, want);
    }
}
