//! The cases of Karmada's `pkg/estimator/client/general_test.go` for multi-template workloads:
//! whole component sets by the cluster summary, by the resource models, and with assumed
//! in-flight workloads.

use flotilla_api::karmada::Component;
use serde_json::{Value, json};

use super::cluster;
use super::karmada_general::{assumed, comp, grades, model_nodes};
use crate::estimator::*;

fn components(list: Value) -> Vec<Component> {
    serde_json::from_value(list).expect("components")
}

fn named(name: &str, replicas: i32, request: Value) -> Value {
    json!({"name": name, "replicas": replicas,
        "replicaRequirements": {"resourceRequest": request}})
}

/// A Flink-like set: a 1-CPU job manager and two 1.5-CPU task managers (4 CPU, 3 pods).
fn flink() -> Value {
    json!([
        named("jobmanager", 1, json!({"cpu": "1"})),
        named("taskmanager", 2, json!({"cpu": "1500m"})),
    ])
}

#[test]
fn model_sets_pack_whole_sets_first_fit_on_grade_minimums() {
    let cpu_grades = grades(&[
        json!({"cpu": "500m"}),
        json!({"cpu": "1000m"}),
        json!({"cpu": "2000m"}),
    ]);
    let gpu_grades = grades(&[
        json!({"cpu": "1000m", "memory": "2Gi", "nvidia.com/gpu": "0"}),
        json!({"cpu": "2000m", "memory": "4Gi", "nvidia.com/gpu": "1"}),
        json!({"cpu": "4000m", "memory": "8Gi", "nvidia.com/gpu": "2"}),
    ]);
    let flink_grades = grades(&[
        json!({"cpu": "1000m", "memory": "2Gi"}),
        json!({"cpu": "3000m", "memory": "10Gi"}),
        json!({"cpu": "4000m", "memory": "12Gi"}),
    ]);
    let four_grades = grades(&[
        json!({"cpu": "1000m", "memory": "2Gi"}),
        json!({"cpu": "2000m", "memory": "4Gi"}),
        json!({"cpu": "3000m", "memory": "6Gi"}),
        json!({"cpu": "8000m", "memory": "12Gi"}),
    ]);
    let jm_tm = json!([
        named("jobmanager", 1, json!({"cpu": "1", "memory": "2Gi"})),
        named("taskmanager", 3, json!({"cpu": "3", "memory": "10Gi"})),
    ]);
    let mut jm_tm_cache = jm_tm.clone();
    jm_tm_cache.as_array_mut().expect("array").push(named(
        "cache",
        1,
        json!({"cpu": "500m", "memory": "1Gi"}),
    ));
    // (models, counts per grade, one set, upper bound, Karmada's sets)
    let table = [
        // Nothing requested: the upper bound.
        (
            cpu_grades.clone(),
            vec![5, 0, 10],
            json!([comp(1, json!({}))]),
            100,
            100,
        ),
        // 1.5 CPU fits only the ten grade-2 nodes, one each.
        (
            cpu_grades,
            vec![5, 0, 10],
            json!([comp(1, json!({"cpu": "1500m"}))]),
            100,
            10,
        ),
        // Two GPU replicas per set: one per grade-1 node, two per grade-2 node: 7 replicas.
        (
            gpu_grades,
            vec![4, 3, 2],
            json!([comp(
                2,
                json!({"cpu": "2000m", "memory": "4Gi", "nvidia.com/gpu": "1"})
            )]),
            100,
            3,
        ),
        // No grade reaches 3 CPU.
        (
            grades(&[json!({"cpu": "1000m"}), json!({"cpu": "2000m"})]),
            vec![10, 10],
            json!([comp(1, json!({"cpu": "3000m"}))]),
            100,
            0,
        ),
        // Task managers fit the six grade-1 and three grade-2 nodes: three sets.
        (flink_grades, vec![2, 6, 3], jm_tm, 100, 3),
        // Task managers fit only the six grade-3 nodes: two sets.
        (four_grades, vec![2, 3, 2, 6], jm_tm_cache, 100, 2),
    ];
    for (models, counts, set, upper, want) in table {
        let nodes = model_nodes(models, &counts).expect("model nodes");
        assert_eq!(nodes.sets(&components(set.clone()), upper), want, "{set}");
    }
    // No models: Karmada's error, so no model bound.
    assert!(model_nodes(json!({}), &[1]).is_none());
}

#[test]
fn summary_sets_table() {
    let mixed = json!([
        named("jobmanager", 1, json!({"cpu": "1", "memory": "2Gi"})),
        named("taskmanager", 2, json!({"cpu": "2000m", "memory": "2Gi"})),
    ]);
    let ten_cpu = json!({
        "allocatable": {"pods": "100", "cpu": "10", "memory": "8Gi"},
        "allocated": {"pods": "20", "cpu": "0", "memory": "2Gi"}
    });
    // (summary, one set, Karmada's sets)
    let table = [
        (json!(null), json!([]), 0),
        (
            json!({"allocatable": {"pods": "10"}, "allocated": {"pods": "10"}}),
            json!([]),
            0,
        ),
        // No components: the pods left.
        (json!({"allocatable": {"pods": "10"}}), json!([]), 10),
        // 10 CPU ÷ 4 per set.
        (ten_cpu.clone(), flink(), 2),
        // 5 CPU and 6Gi per set: 6Gi left is one set.
        (ten_cpu, mixed, 1),
        // Three pods per set, three pods.
        (
            json!({"allocatable": {"pods": "3", "cpu": "100", "memory": "1Ti"}}),
            json!([comp(3, json!({"cpu": "10m", "memory": "1Mi"}))]),
            1,
        ),
        // 8 CPU, 16Gi, 2 GPUs per set: memory and GPUs allow 4.
        (
            json!({
                "allocatable": {"pods": "20", "cpu": "40", "memory": "64Gi", "nvidia.com/gpu": "8"},
                "allocated": {"pods": "0", "cpu": "0", "memory": "0Gi", "nvidia.com/gpu": "0"}
            }),
            json!([comp(
                2,
                json!({"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"})
            )]),
            4,
        ),
    ];
    for (summary, set, want) in table {
        let figures = SummaryFigures::new(&cluster(json!({}), summary.clone()));
        assert_eq!(
            general_max_sets(&figures, &components(set)),
            want,
            "{summary}"
        );
    }
}

#[test]
fn summary_sets_deduct_assumed_workloads() {
    let base = |cpu: &str| json!({"allocatable": {"pods": "100", "cpu": cpu, "memory": "8Gi"}});
    // (summary, assumed workloads, Karmada's sets of `flink`)
    let table = [
        (base("10"), json!([]), 2),
        // One Flink set assumed: 6 CPU left.
        (base("10"), json!([flink()]), 1),
        // 8 CPU assumed of 8.
        (base("8"), json!([[comp(4, json!({"cpu": "2"}))]]), 0),
        // The three pods are assumed.
        (
            json!({"allocatable": {"pods": "3", "cpu": "100"}}),
            json!([[{"name": "worker", "replicas": 3}]]),
            0,
        ),
        // Two workloads: 1 + 3 CPU of 12.
        (
            base("12"),
            json!([
                [named("jobmanager", 1, json!({"cpu": "1"}))],
                [named("taskmanager", 2, json!({"cpu": "1500m"}))]
            ]),
            2,
        ),
        // No requests: only pods (97 ÷ 3), CPU still allows 2.
        (base("10"), json!([[{"name": "w", "replicas": 3}]]), 2),
    ];
    for (summary, workloads, want) in table {
        let figures = SummaryFigures::new(&cluster(json!({}), summary.clone()))
            .deducted(&assumed(workloads.clone()));
        assert_eq!(
            general_max_sets(&figures, &components(flink())),
            want,
            "{workloads}"
        );
    }
}

#[test]
fn summary_sets_bounded_by_the_resource_models() {
    // Two grade-1 nodes of 2 CPU; a set is one 1-CPU replica.
    let c = cluster(
        grades(&[json!({"cpu": "0"}), json!({"cpu": "2"})]),
        json!({"allocatable": {"pods": "220", "cpu": "4"},
            "allocatableModelings": [{"grade": 0, "count": 0}, {"grade": 1, "count": 2}]}),
    );
    let set = components(json!([comp(1, json!({"cpu": "1"}))]));
    let figures = SummaryFigures::new(&c);
    assert_eq!(general_max_sets(&figures, &set), 4);
    // Two assumed replicas of 1 CPU fill the first node.
    let two = assumed(json!([[comp(2, json!({"cpu": "1"}))]]));
    assert_eq!(general_max_sets(&figures.deducted(&two), &set), 2);
    // The models bound the summary: 1.2 CPU fits once per node although 4 CPU hold three.
    let big = components(json!([comp(1, json!({"cpu": "1200m"}))]));
    assert_eq!(general_max_sets(&figures, &big), 2);
}

#[test]
fn summary_sets_deduct_only_the_clusters_own_assumed_workloads() {
    let summary = json!({"allocatable": {"pods": "100", "cpu": "8"}});
    let set = components(json!([comp(2, json!({"cpu": "2"}))]));
    let figures = SummaryFigures::new(&cluster(json!({}), summary));
    let four_cpu = assumed(json!([[comp(2, json!({"cpu": "2"}))]]));
    // cluster-a carries 4 assumed CPU, cluster-b none.
    assert_eq!(general_max_sets(&figures.deducted(&four_cpu), &set), 1);
    assert_eq!(general_max_sets(&figures, &set), 2);
}
