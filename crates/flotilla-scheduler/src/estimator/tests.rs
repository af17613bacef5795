use flotilla_api::karmada::{Cluster, Component, ReplicaRequirements};
use serde_json::{Value, json};

use super::*;

fn cluster(spec: Value, summary: Value) -> Cluster {
    let mut spec = spec;
    spec["syncMode"] = json!("Push");
    serde_json::from_value(json!({"metadata": {"name": "m"}, "spec": spec,
        "status": {"resourceSummary": summary}}))
    .expect("cluster")
}

fn requirements(request: Value) -> ReplicaRequirements {
    serde_json::from_value(json!({"resourceRequest": request})).expect("requirements")
}

#[test]
fn summary_path_table() {
    let summary = json!({
        "allocatable": {"cpu": "10", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"},
        "allocated": {"cpu": "2500m", "memory": "16Gi", "pods": "10", "nvidia.com/gpu": "2"},
        "allocating": {"cpu": "500m", "pods": "5"}
    });
    let table = [
        (json!({"cpu": "1"}), 7),
        (json!({"cpu": "300m"}), 23),
        (json!({"memory": "10Gi"}), 4),
        (json!({"nvidia.com/gpu": "4"}), 1),
        (json!({"cpu": "1", "nvidia.com/gpu": "1"}), 6),
        (json!({"ephemeral-storage": "1Gi"}), 0),
        (json!({"cpu": "0"}), 95),
    ];
    let c = cluster(json!({}), summary);
    for (request, want) in table {
        let r = requirements(request.clone());
        assert_eq!(general_max_available(&c, Some(&r)), want, "{request}");
    }
    assert_eq!(general_max_available(&c, None), 95);
}

#[test]
fn no_summary_or_no_pods_is_zero() {
    let bare: Cluster =
        serde_json::from_value(json!({"metadata": {"name": "m"}, "spec": {"syncMode": "Push"}}))
            .expect("cluster");
    assert_eq!(general_max_available(&bare, None), 0);
    let full = cluster(
        json!({}),
        json!({"allocatable": {"pods": "10"}, "allocated": {"pods": "10"}}),
    );
    assert_eq!(general_max_available(&full, None), 0);
}

#[test]
fn resource_models_path() {
    let spec = json!({"resourceModels": [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}, {"name": "memory", "min": "0", "max": "4Gi"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "2"}, {"name": "memory", "min": "4Gi", "max": "16Gi"}]},
        {"grade": 2, "ranges": [{"name": "cpu", "min": "2", "max": "4"}, {"name": "memory", "min": "16Gi", "max": "32Gi"}]}]});
    let summary = json!({
        "allocatable": {"cpu": "100", "memory": "1000Gi", "pods": "1000"},
        "allocatableModelings": [{"grade": 0, "count": 5}, {"grade": 1, "count": 3}, {"grade": 2, "count": 2}]
    });
    let c = cluster(spec, summary);
    // Grade 1 nodes (1 cpu) fit one; grade 2 nodes (2 cpu) fit two: 3×1 + 2×2.
    assert_eq!(
        general_max_available(&c, Some(&requirements(json!({"cpu": "1"})))),
        7
    );
    // Extended resources are absent from model nodes.
    assert_eq!(
        general_max_available(&c, Some(&requirements(json!({"nvidia.com/gpu": "1"})))),
        0
    );
    // Pods cap: 110 per model node, and allowed pods overall.
    assert_eq!(
        general_max_available(&c, Some(&requirements(json!({})))),
        1000
    );
}

#[test]
fn max_divided_truncates_like_go() {
    let request = CompiledRequest::new(Some(
        &[(
            "cpu".to_owned(),
            flotilla_api::Quantity::parse("2").expect("q"),
        )]
        .into_iter()
        .collect(),
    ));
    let free = Resources {
        milli_cpu: -3000,
        pods: 10,
        ..Resources::default()
    };
    assert_eq!(request.max_divided(&free), -1);
    let free = Resources {
        milli_cpu: 9000,
        pods: 3,
        ..Resources::default()
    };
    assert_eq!(request.max_divided(&free), 3);
}

#[test]
fn component_sets_by_summary() {
    let c = cluster(
        json!({}),
        json!({
            "allocatable": {"cpu": "10", "memory": "64Gi", "pods": "110"},
            "allocated": {"cpu": "2500m", "memory": "16Gi", "pods": "10"},
            "allocating": {"cpu": "500m", "pods": "5"}
        }),
    );
    let figures = SummaryFigures::new(&c);
    let component = |name: &str, replicas: i32, request: Value| Component {
        name: name.into(),
        replicas,
        replica_requirements: Some(json!({"resourceRequest": request})),
    };
    // A Flink-like set: 1 × (1 CPU, 2Gi) + 4 × (500m, 4Gi) = 3 CPU, 18Gi, 5 pods per set.
    let flink = [
        component("jobmanager", 1, json!({"cpu": "1", "memory": "2Gi"})),
        component("taskmanager", 4, json!({"cpu": "500m", "memory": "4Gi"})),
    ];
    // 7 CPU left ⇒ 2 sets; 48Gi ⇒ 2; 95 pods ⇒ 19.
    assert_eq!(general_max_sets(&figures, &flink), 2);
    // Pods bound: 95 pods ÷ 50 per set.
    let many = [component("worker", 50, json!({"cpu": "1m"}))];
    assert_eq!(general_max_sets(&figures, &many), 1);
    // A resource the cluster lacks, or no summary at all.
    let gpus = [component("trainer", 1, json!({"nvidia.com/gpu": "1"}))];
    assert_eq!(general_max_sets(&figures, &gpus), 0);
    assert_eq!(general_max_sets(&SummaryFigures::default(), &flink), 0);
}

#[test]
fn assumed_workloads_count_as_allocating_in_the_summary() {
    let c = cluster(
        json!({}),
        json!({"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "10"}}),
    );
    let figures = SummaryFigures::new(&c);
    let assumed = vec![AssumedWorkload {
        namespace: "ns".into(),
        components: serde_json::from_value(json!([
            {"name": "a", "replicas": 3,
                "replicaRequirements": {"resourceRequest": {"cpu": "500m", "memory": "1Gi"}}}
        ]))
        .unwrap(),
    }];
    let r = requirements(json!({"cpu": "100m"}));
    let request = GeneralRequest::new(Some(&r));
    assert_eq!(figures.estimate(&c, Some(&r), &request), 10);
    let deducted = figures.deducted(&assumed);
    // 500m CPU left (5 replicas of 100m), 7 pods left.
    assert_eq!(deducted.estimate(&c, Some(&r), &request), 5);
    let m = requirements(json!({"memory": "1Gi"}));
    assert_eq!(
        deducted.estimate(&c, Some(&m), &GeneralRequest::new(Some(&m))),
        5
    );
    let set: Vec<Component> = serde_json::from_value(json!([
        {"name": "x", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "250m"}}}
    ]))
    .unwrap();
    assert_eq!(general_max_sets(&figures, &set), 8);
    assert_eq!(general_max_sets(&deducted, &set), 2);
}

mod karmada_component_sets;
mod karmada_general;

#[test]
fn model_runs_place_like_one_node_at_a_time() {
    let spec = json!({"resourceModels": [
        {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}, {"name": "memory", "min": "0", "max": "4Gi"}]},
        {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "3"}, {"name": "memory", "min": "4Gi", "max": "16Gi"}]},
        {"grade": 2, "ranges": [{"name": "cpu", "min": "3", "max": "8"}, {"name": "memory", "min": "16Gi", "max": "32Gi"}]}]});
    let c = cluster(
        spec,
        json!({"allocatableModelings": [{"grade": 0, "count": 4}, {"grade": 1, "count": 5}, {"grade": 2, "count": 3}]}),
    );
    let summary = c
        .status
        .as_ref()
        .unwrap()
        .resource_summary
        .as_ref()
        .unwrap();
    let runs = ModelNodes::new(&c, summary).expect("models");
    // The same nodes one by one, placed as Karmada's simulator does.
    let naive_sets = |set: &[(CompiledRequest, i64)]| {
        let mut nodes: Vec<Resources> = runs
            .runs
            .iter()
            .flat_map(|(node, count)| std::iter::repeat_n(node.clone(), *count as usize))
            .collect();
        let mut sets = 0;
        'sets: loop {
            for (request, replicas) in set {
                let mut remaining = *replicas;
                for node in nodes.iter_mut() {
                    let fits = request.max_divided(node).min(remaining);
                    if fits > 0 {
                        request.subtract(node, fits);
                        remaining -= fits;
                    }
                }
                if remaining > 0 {
                    break 'sets;
                }
            }
            sets += 1;
        }
        sets
    };
    let mixes = [
        json!([{"name": "a", "replicas": 3, "replicaRequirements": {"resourceRequest": {"cpu": "700m", "memory": "1Gi"}}}]),
        json!([
            {"name": "a", "replicas": 1, "replicaRequirements": {"resourceRequest": {"cpu": "2", "memory": "3Gi"}}},
            {"name": "b", "replicas": 4, "replicaRequirements": {"resourceRequest": {"cpu": "300m", "memory": "5Gi"}}}
        ]),
        json!([{"name": "a", "replicas": 7}]),
    ];
    for mix in mixes {
        let components: Vec<Component> = serde_json::from_value(mix.clone()).unwrap();
        let compiled = compile_components(&components);
        assert_eq!(
            runs.sets(&components, 10_000),
            naive_sets(&compiled),
            "{mix}"
        );
    }
}
