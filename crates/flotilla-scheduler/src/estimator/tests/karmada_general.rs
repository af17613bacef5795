//! The cases of Karmada's `pkg/estimator/client/general_test.go` for single-template
//! workloads: the summary path, the allowed pods, the resource-model path and the deduction of
//! assumed in-flight workloads.

use flotilla_api::karmada::Cluster;
use serde_json::{Value, json};

use super::{cluster, requirements};
use crate::assume::{AssumedByCluster, AssumedWorkload};
use crate::estimator::*;

/// Resource models from per-grade minimums (maximums do not matter to the estimator).
pub(super) fn grades(minimums: &[Value]) -> Value {
    let models: Vec<Value> = minimums
        .iter()
        .enumerate()
        .map(|(grade, mins)| {
            let ranges: Vec<Value> = mins
                .as_object()
                .expect("an object of minimums")
                .iter()
                .map(|(name, min)| json!({"name": name, "min": min, "max": min}))
                .collect();
            json!({"grade": grade, "ranges": ranges})
        })
        .collect();
    json!({ "resourceModels": models })
}

/// The virtual nodes of a cluster with `models` and `allocatableModelings` counts per grade.
pub(super) fn model_nodes(models: Value, counts: &[i64]) -> Option<ModelNodes> {
    let modelings: Vec<Value> = counts
        .iter()
        .enumerate()
        .map(|(grade, count)| json!({"grade": grade, "count": count}))
        .collect();
    let c = cluster(models, json!({ "allocatableModelings": modelings }));
    let summary = c.status.as_ref()?.resource_summary.as_ref()?;
    ModelNodes::new(&c, summary)
}

/// Assumed workloads, each a list of components.
pub(super) fn assumed(workloads: Value) -> Vec<AssumedWorkload> {
    workloads
        .as_array()
        .expect("an array of workloads")
        .iter()
        .map(|components| AssumedWorkload {
            namespace: "default".into(),
            components: serde_json::from_value(components.clone()).expect("components"),
        })
        .collect()
}

/// One component of `replicas` × `request`.
pub(super) fn comp(replicas: i32, request: Value) -> Value {
    json!({"name": "c", "replicas": replicas,
        "replicaRequirements": {"resourceRequest": request}})
}

fn named(name: &str, summary: Value) -> Cluster {
    let mut c = cluster(json!({}), summary);
    c.metadata.name = Some(name.into());
    c
}

fn four_cpu_one_used() -> Value {
    json!({
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "100"},
        "allocated": {"cpu": "1", "memory": "2Gi", "pods": "20"}
    })
}

#[test]
fn model_path_counts_replicas_on_grade_minimums() {
    let three = grades(&[
        json!({"cpu": "0", "memory": "0"}),
        json!({"cpu": "1", "memory": "1Gi"}),
        json!({"cpu": "2", "memory": "2Gi"}),
    ]);
    let cpu_only = grades(&[
        json!({"cpu": "0"}),
        json!({"cpu": "1"}),
        json!({"cpu": "2"}),
    ]);
    // (models, request, Karmada's replicas)
    let table = [
        // Only the grade-2 node (2 CPU) fits 1.5 CPU.
        (cpu_only.clone(), json!({"cpu": "1.5"}), 1),
        // No grade reaches 3 CPU.
        (cpu_only, json!({"cpu": "3"}), 0),
        // CPU fits grades 1 and 2, 1.5Gi only grade 2.
        (three.clone(), json!({"cpu": "1", "memory": "1.5Gi"}), 1),
        // 2.5Gi is above every grade's minimum.
        (three, json!({"cpu": "1", "memory": "2.5Gi"}), 0),
    ];
    for (models, request, want) in table {
        let nodes = model_nodes(models, &[1, 1, 1]).expect("model nodes");
        let r = requirements(request.clone());
        let compiled = CompiledRequest::new(r.resource_request.as_ref());
        assert_eq!(nodes.replicas(&compiled), want, "{request}");
    }
}

#[test]
fn model_path_without_models_falls_back_to_the_summary() {
    // Karmada: "no resource models defined" is an error, and the summary path answers.
    assert!(model_nodes(json!({}), &[1, 1, 1]).is_none());
    let c = cluster(
        json!({}),
        json!({"allocatable": {"cpu": "4", "pods": "10"},
            "allocatableModelings": [{"grade": 0, "count": 1}]}),
    );
    let r = requirements(json!({"cpu": "1"}));
    assert_eq!(general_max_available(&c, Some(&r)), 4);
}

#[test]
fn general_estimator_answers_per_cluster_with_assumed_workloads() {
    let request = requirements(json!({"cpu": "500m", "memory": "1Gi"}));
    let full = named("member1", four_cpu_one_used());
    let bare: Cluster = serde_json::from_value(
        json!({"metadata": {"name": "bare"}, "spec": {"syncMode": "Push"}, "status": {}}),
    )
    .expect("cluster");
    let none = AssumedByCluster::new();
    // 3 CPU and 6Gi left: 6 replicas; no summary: 0.
    assert_eq!(
        GeneralEstimator.max_available_replicas_assuming(&[&full, &bare], Some(&request), &none),
        vec![6, 0]
    );
    // Two assumed replicas of the same request take 1 CPU and 2Gi: 4.
    let mut by_cluster = AssumedByCluster::new();
    by_cluster.insert(
        "member1".into(),
        assumed(json!([[comp(2, json!({"cpu": "500m", "memory": "1Gi"}))]])),
    );
    assert_eq!(
        GeneralEstimator.max_available_replicas_assuming(
            &[&full, &bare],
            Some(&request),
            &by_cluster
        ),
        vec![4, 0]
    );
}

#[test]
fn assumed_workloads_are_added_to_allocating() {
    let start = json!({"cpu": "20", "memory": "20000Ti", "pods": "100000"});
    // (allocating already reported, assumed workloads, Karmada's allocating after: cpu in
    // millis, memory in bytes, pods)
    let table = [
        // Nothing assumed: unchanged.
        (json!({"cpu": "500m"}), json!([]), (500, 0, 0)),
        // No allocating yet.
        (
            json!(null),
            json!([[comp(1, json!({"cpu": "100m"}))]]),
            (100, 0, 1),
        ),
        // A component of zero replicas counts nothing.
        (
            json!(null),
            json!([[comp(0, json!({"cpu": "100m"}))]]),
            (0, 0, 0),
        ),
        // No requirements: only the pods.
        (
            json!(null),
            json!([[{"name": "c", "replicas": 3}]]),
            (0, 0, 3),
        ),
        // Requests times replicas.
        (
            json!(null),
            json!([[comp(3, json!({"cpu": "200m", "memory": "256Mi"}))]]),
            (600, 768 << 20, 3),
        ),
        // Several workloads add up.
        (
            json!(null),
            json!([
                [comp(1, json!({"cpu": "100m"}))],
                [comp(2, json!({"cpu": "100m"}))]
            ]),
            (300, 0, 3),
        ),
        // 10000 × 1Ti does not overflow.
        (
            json!(null),
            json!([[comp(10000, json!({"memory": "1Ti"}))]]),
            (0, 10000 << 40, 10000),
        ),
        // Added to what is already allocating.
        (
            json!({"cpu": "400m", "pods": "5"}),
            json!([[comp(2, json!({"cpu": "100m"}))]]),
            (600, 0, 7),
        ),
    ];
    for (allocating, workloads, (cpu, memory, pods)) in table {
        let c = cluster(
            json!({}),
            json!({"allocatable": start, "allocating": allocating}),
        );
        let figures = SummaryFigures::new(&c).deducted(&assumed(workloads.clone()));
        assert_eq!(figures.available["cpu"].1, 20_000 - cpu, "{workloads}");
        assert_eq!(
            figures.available["memory"].0,
            (20_000i64 << 40) - memory,
            "{workloads}"
        );
        assert_eq!(figures.allowed_pods, 100_000 - pods, "{workloads}");
    }
}

#[test]
fn general_estimate_table() {
    let r = requirements(json!({"cpu": "500m", "memory": "1Gi"}));
    let assumed_two = assumed(json!([[comp(2, json!({"cpu": "500m", "memory": "1Gi"}))]]));
    // (summary, requirements, assumed, Karmada's answer)
    let table = [
        (json!(null), None, vec![], 0),
        (
            json!({"allocatable": {"pods": "10"}, "allocated": {"pods": "10"}}),
            None,
            vec![],
            0,
        ),
        (json!({"allocatable": {"pods": "10"}}), None, vec![], 10),
        (four_cpu_one_used(), Some(&r), vec![], 6),
        (four_cpu_one_used(), Some(&r), assumed_two, 4),
    ];
    for (summary, requirements, workloads, want) in table {
        let c = cluster(json!({}), summary.clone());
        let figures = SummaryFigures::new(&c).deducted(&workloads);
        let request = GeneralRequest::new(requirements);
        assert_eq!(
            figures.estimate(&c, requirements, &request),
            want,
            "{summary}"
        );
    }
}

#[test]
fn assumed_workloads_take_model_nodes_first() {
    // Three grade-1 nodes of 1 CPU: two 500m replicas each. Four assumed replicas fill two of
    // them (Karmada pre-places them on the virtual nodes), leaving room for 2.
    let models = grades(&[json!({"cpu": "0"}), json!({"cpu": "1"})]);
    let c = cluster(
        models,
        json!({"allocatable": {"pods": "100", "cpu": "3"},
            "allocatableModelings": [{"grade": 0, "count": 0}, {"grade": 1, "count": 3}]}),
    );
    let r = requirements(json!({"cpu": "500m"}));
    let request = GeneralRequest::new(Some(&r));
    let figures = SummaryFigures::new(&c);
    assert_eq!(figures.estimate(&c, Some(&r), &request), 6);
    let four = assumed(json!([[comp(4, json!({"cpu": "500m"}))]]));
    assert_eq!(figures.deducted(&four).estimate(&c, Some(&r), &request), 2);
}

#[test]
fn allowed_pods_are_allocatable_minus_allocated_and_allocating() {
    // (summary, Karmada's allowed pods)
    let table = [
        (
            json!({"allocatable": {"pods": "100"}, "allocated": {"pods": "40"},
                "allocating": {"pods": "10"}}),
            50,
        ),
        (json!({"allocated": {"pods": "10"}}), 0),
        (
            json!({"allocatable": {"pods": "100"}, "allocated": {"pods": "90"},
                "allocating": {"pods": "20"}}),
            0,
        ),
    ];
    for (summary, want) in table {
        assert_eq!(
            general_max_available(&cluster(json!({}), summary.clone()), None),
            want,
            "{summary}"
        );
    }
}

#[test]
fn summary_path_divides_what_is_left_by_the_request() {
    let r = requirements(json!({"cpu": "500m", "memory": "1Gi"}));
    let request = GeneralRequest::new(Some(&r));
    // (summary, Karmada's replicas by the summary alone)
    let table = [
        (
            json!({"allocatable": {"cpu": "4", "memory": "8Gi"},
                "allocated": {"cpu": "1", "memory": "2Gi"}}),
            6,
        ),
        // 0.5Gi left is less than one replica's 1Gi.
        (
            json!({"allocatable": {"cpu": "4", "memory": "2Gi"},
                "allocated": {"cpu": "1", "memory": "1.5Gi"}}),
            0,
        ),
    ];
    for (summary, want) in table {
        let figures = SummaryFigures::new(&cluster(json!({}), summary.clone()));
        assert_eq!(figures.by_summary(&request), want, "{summary}");
    }
}
