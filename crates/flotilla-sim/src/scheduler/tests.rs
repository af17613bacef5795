//! Each scheduler predicate, the message shape, and seeded determinism, on the pure index.

use crate::node::Node;
use crate::pod::Pod;
use serde_json::{Value, json};
use std::sync::Arc;

use super::index::NodeIndex;
use crate::lifted::fit_error;

/// Adds `node` to the index as the informer hands it over.
fn upsert(index: &mut NodeIndex, node: Node) {
    index.upsert_node(&Arc::new(node));
}

fn node(name: &str, cpu: &str, gpus: Option<&str>, labels: Value, taints: Value) -> Node {
    let mut allocatable = json!({"cpu": cpu, "memory": "64Gi", "pods": "110"});
    if let Some(g) = gpus {
        allocatable["nvidia.com/gpu"] = g.into();
    }
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints},
        "status": {"allocatable": allocatable},
    }))
    .expect("a node")
}

fn pod(name: &str, spec: Value) -> Pod {
    serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": "default", "uid": name}, "spec": spec}),
    )
    .expect("a pod")
}

fn requesting(name: &str, requests: Value) -> Pod {
    pod(
        name,
        json!({"containers": [{"name": "c", "resources": {"requests": requests}}]}),
    )
}

fn three_nodes() -> NodeIndex {
    let mut index = NodeIndex::new(1);
    for n in ["a", "b", "c"] {
        upsert(
            &mut index,
            node(n, "4", None, json!({"zone": n}), json!([])),
        );
    }
    index
}

/// The scheduling message for `pod` on `index`, or the node it lands on.
fn decide(index: &mut NodeIndex, pod: &Pod) -> Result<String, String> {
    let req = index.request_of(pod);
    index
        .schedule(pod, &req)
        .map_err(|f| fit_error::message(index.node_count(), &f, false))
}

#[test]
fn insufficient_extended_resource_has_kube_message() {
    let mut index = three_nodes();
    let p = requesting("p", json!({"nvidia.com/gpu": "1"}));
    assert_eq!(
        decide(&mut index, &p),
        Err("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.".into())
    );
    let unknown = requesting("q", json!({"example.com/fpga": "1"}));
    assert!(
        decide(&mut index, &unknown)
            .unwrap_err()
            .contains("3 Insufficient example.com/fpga")
    );
}

#[test]
fn cpu_memory_and_pod_count_are_accounted() {
    let mut index = NodeIndex::new(1);
    upsert(&mut index, node("only", "2", None, json!({}), json!([])));
    let big = requesting("big", json!({"cpu": "1500m"}));
    let node = decide(&mut index, &big).expect("fits");
    let req = index.request_of(&big);
    index.place("big", &node, req);
    let second = requesting("second", json!({"cpu": "1"}));
    assert!(
        decide(&mut index, &second)
            .unwrap_err()
            .contains("1 Insufficient cpu")
    );
    let memory = requesting("mem", json!({"memory": "65Gi"}));
    assert!(
        decide(&mut index, &memory)
            .unwrap_err()
            .contains("1 Insufficient memory")
    );
    assert!(index.release("big"));
    assert_eq!(decide(&mut index, &second), Ok("only".into()));
    let mut full = NodeIndex::new(1);
    let tiny: Node = serde_json::from_value(json!({"metadata": {"name": "t"},
        "status": {"allocatable": {"cpu": "4", "memory": "1Gi", "pods": "1"}}}))
    .expect("a node");
    upsert(&mut full, tiny);
    let first = pod("first", json!({"containers": [{"name": "c"}]}));
    let req = full.request_of(&first);
    full.place("first", "t", req);
    assert!(
        decide(&mut full, &pod("x", json!({"containers": [{"name": "c"}]})))
            .unwrap_err()
            .contains("1 Too many pods")
    );
}

#[test]
fn node_selector_and_affinity_filter() {
    let mut index = three_nodes();
    let p = pod(
        "p",
        json!({"containers": [], "nodeSelector": {"zone": "b"}}),
    );
    assert_eq!(decide(&mut index, &p), Ok("b".into()));
    let none = pod(
        "n",
        json!({"containers": [], "nodeSelector": {"zone": "z"}}),
    );
    assert_eq!(
        decide(&mut index, &none),
        Err("0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.".into())
    );
    let gt = pod(
        "g",
        json!({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a", "b"]}]}]}}}}),
    );
    assert_eq!(decide(&mut index, &gt), Ok("c".into()));
}

#[test]
fn taints_need_tolerations_and_unschedulable_nodes_are_skipped() {
    let mut index = NodeIndex::new(1);
    upsert(
        &mut index,
        node(
            "gpu",
            "8",
            Some("8"),
            json!({}),
            json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]),
        ),
    );
    let plain = pod("p", json!({"containers": []}));
    assert_eq!(
        decide(&mut index, &plain),
        Err("0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.".into())
    );
    let tolerant = pod(
        "t",
        json!({"containers": [], "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}),
    );
    assert_eq!(decide(&mut index, &tolerant), Ok("gpu".into()));
    let cordoned: Node = serde_json::from_value(
        json!({"metadata": {"name": "gpu"}, "spec": {"unschedulable": true},
        "status": {"allocatable": {"cpu": "8", "memory": "1Gi", "pods": "10"}}}),
    )
    .expect("a node");
    upsert(&mut index, cordoned);
    assert!(
        decide(&mut index, &tolerant)
            .unwrap_err()
            .contains("1 node(s) were unschedulable")
    );
}

#[test]
fn a_seed_gives_one_placement() {
    let place_all = |seed: u64| -> Vec<String> {
        let mut index = NodeIndex::new(seed);
        for i in 0..20 {
            upsert(
                &mut index,
                node(&format!("n{i:02}"), "4", None, json!({}), json!([])),
            );
        }
        (0..30)
            .map(|i| {
                let p = requesting(&format!("p{i}"), json!({"cpu": "100m"}));
                let req = index.request_of(&p);
                let n = index.schedule(&p, &req).expect("fits");
                index.place(&format!("p{i}"), &n, req);
                n
            })
            .collect()
    };
    assert_eq!(place_all(7), place_all(7));
    assert_ne!(
        place_all(7),
        place_all(8),
        "another seed breaks ties differently"
    );
}

#[test]
fn least_allocated_spreads_pods() {
    let mut index = NodeIndex::new(3);
    upsert(&mut index, node("busy", "4", None, json!({}), json!([])));
    upsert(&mut index, node("idle", "4", None, json!({}), json!([])));
    let hog = requesting("hog", json!({"cpu": "3", "memory": "32Gi"}));
    let req = index.request_of(&hog);
    index.place("hog", "busy", req);
    let p = requesting("p", json!({"cpu": "100m", "memory": "1Gi"}));
    assert_eq!(decide(&mut index, &p), Ok("idle".into()));
}

#[test]
fn pods_of_one_shape_see_node_changes() {
    // The second pod has the first one's shape (same selector): what was decided for the
    // shape must not outlive a relabelled node, a new node or a removed one.
    let mut index = three_nodes();
    let gpu_zone = |name: &str| {
        pod(
            name,
            json!({"containers": [], "nodeSelector": {"zone": "d"}}),
        )
    };
    assert!(
        decide(&mut index, &gpu_zone("p1"))
            .unwrap_err()
            .starts_with(
                "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
            )
    );
    upsert(
        &mut index,
        node("b", "4", None, json!({"zone": "d"}), json!([])),
    );
    assert_eq!(decide(&mut index, &gpu_zone("p2")), Ok("b".into()));
    upsert(
        &mut index,
        node("d", "4", None, json!({"zone": "d"}), json!([])),
    );
    index.remove_node("b");
    assert_eq!(decide(&mut index, &gpu_zone("p3")), Ok("d".into()));
    index.remove_node("d");
    assert!(decide(&mut index, &gpu_zone("p4")).is_err());
}
