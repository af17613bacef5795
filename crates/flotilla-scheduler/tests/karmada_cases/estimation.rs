//! The general estimator (`TestMaxAvailableReplicasGeneral`, `TestGetAllowedPodNumber`,
//! `TestGetMaximumReplicasBasedOnClusterSummary`, `TestGetMaximumReplicasBasedOnResourceModels`),
//! observed through the core: one member, dynamic weights and more replicas than fit, so the
//! `Unschedulable` message names the member's estimate.

use serde_json::{Value, json};

use super::{Case, check, dynamic};

fn with_summary(summary: Value, spec: Value) -> Value {
    let mut spec = spec;
    spec["syncMode"] = json!("Push");
    json!({
        "metadata": {"name": "member1"},
        "spec": spec,
        "status": {
            "apiEnablements": [{"groupVersion": "apps/v1",
                "resources": [{"name": "deployments", "kind": "Deployment"}]}],
            "resourceSummary": summary
        }
    })
}

/// A case whose message reveals the estimate `estimate`.
fn estimate(name: &'static str, cluster: Value, request: Option<Value>, estimate: i64) -> Case {
    let case = Case::new(name, vec![cluster], dynamic(), 1_000_000);
    let case = match request {
        Some(r) => case.requirements(json!({"resourceRequest": r})),
        None => case,
    };
    case.fails(
        "Unschedulable",
        &format!(
            "failed to assign replicas: failed to scale up: Clusters available replicas {estimate} are not enough to schedule."
        ),
    )
}

fn grades(ranges: &[(&str, &[&str])]) -> Value {
    // ranges: per resource, the minimum of grades 0, 1, 2 (maximum = the next minimum).
    let mut models = Vec::new();
    for grade in 0..3 {
        let r: Vec<Value> = ranges
            .iter()
            .map(|(name, mins)| {
                let max = mins.get(grade + 1).copied().unwrap_or("1000");
                json!({"name": name, "min": mins[grade], "max": max})
            })
            .collect();
        models.push(json!({"grade": grade, "ranges": r}));
    }
    json!({"resourceModels": models})
}

fn one_node_per_grade() -> Value {
    json!([{"grade": 0, "count": 1}, {"grade": 1, "count": 1}, {"grade": 2, "count": 1}])
}

#[test]
fn general_estimator_from_the_resource_summary() {
    let basic = json!({
        "allocatable": {"pods": "100", "cpu": "4", "memory": "8Gi"},
        "allocated": {"pods": "20", "cpu": "1", "memory": "2Gi"}});
    check(vec![
        estimate(
            "3 CPUs and 6Gi free at 500m/1Gi a replica",
            with_summary(basic.clone(), json!({})),
            Some(json!({"cpu": "500m", "memory": "1Gi"})),
            6,
        ),
        estimate(
            "half a gigabyte of memory free fits no 1Gi replica",
            with_summary(
                json!({"allocatable": {"pods": "100", "cpu": "4", "memory": "2Gi"},
                    "allocated": {"cpu": "1", "memory": "1.5Gi"}}),
                json!({}),
            ),
            Some(json!({"cpu": "500m", "memory": "1Gi"})),
            0,
        ),
        estimate(
            "without requests: allocatable − allocated − allocating pods",
            with_summary(
                json!({"allocatable": {"pods": "100"}, "allocated": {"pods": "40"},
                    "allocating": {"pods": "10"}}),
                json!({}),
            ),
            None,
            50,
        ),
        estimate(
            "over-allocated pods",
            with_summary(
                json!({"allocatable": {"pods": "100"}, "allocated": {"pods": "90"},
                    "allocating": {"pods": "20"}}),
                json!({}),
            ),
            Some(json!({"cpu": "1m"})),
            0,
        ),
        estimate(
            "no resource summary",
            json!({"metadata": {"name": "member1"}, "spec": {"syncMode": "Push"},
                "status": {"apiEnablements": [{"groupVersion": "apps/v1",
                    "resources": [{"name": "deployments", "kind": "Deployment"}]}]}}),
            None,
            0,
        ),
        estimate(
            "a resource the cluster does not have",
            with_summary(basic.clone(), json!({})),
            Some(json!({"cpu": "100m", "nvidia.com/gpu": "1"})),
            0,
        ),
        estimate(
            "a zero request is ignored; pods cap the answer",
            with_summary(basic.clone(), json!({})),
            Some(json!({"cpu": "0", "memory": "1Mi"})),
            80,
        ),
        estimate(
            "CPU compares in millis, memory in whole bytes",
            with_summary(
                json!({"allocatable": {"pods": "100", "cpu": "1500m", "memory": "1000"}}),
                json!({}),
            ),
            Some(json!({"cpu": "100m", "memory": "70"})),
            14,
        ),
        estimate(
            "GPUs in whole units",
            with_summary(
                json!({"allocatable": {"pods": "100", "nvidia.com/gpu": "8"},
                    "allocated": {"nvidia.com/gpu": "3"}}),
                json!({}),
            ),
            Some(json!({"nvidia.com/gpu": "2"})),
            2,
        ),
    ]);
}

#[test]
fn general_estimator_from_resource_models() {
    let cpu_grades = || grades(&[("cpu", &["0", "1", "2"])]);
    let cpu_mem_grades = || grades(&[("cpu", &["0", "1", "2"]), ("memory", &["0", "1Gi", "2Gi"])]);
    // Plenty in the summary, so a model answer is visibly the models'.
    let summary = |modelings: Value| {
        json!({"allocatable": {"pods": "100", "cpu": "100", "memory": "100Gi", "nvidia.com/gpu": "8"},
            "allocatableModelings": modelings})
    };
    check(vec![
        estimate(
            "1.5 CPUs fit only the grade-2 node",
            with_summary(summary(one_node_per_grade()), cpu_grades()),
            Some(json!({"cpu": "1.5"})),
            1,
        ),
        estimate(
            "3 CPUs fit no grade's minimum",
            with_summary(summary(one_node_per_grade()), cpu_grades()),
            Some(json!({"cpu": "3"})),
            0,
        ),
        estimate(
            "CPU and memory together",
            with_summary(summary(one_node_per_grade()), cpu_mem_grades()),
            Some(json!({"cpu": "1", "memory": "1.5Gi"})),
            1,
        ),
        estimate(
            "memory beyond the highest grade's minimum",
            with_summary(summary(one_node_per_grade()), cpu_mem_grades()),
            Some(json!({"cpu": "1", "memory": "2.5Gi"})),
            0,
        ),
        estimate(
            "several nodes per grade: 3 × 1 + 2 × 2 replicas of 1 CPU",
            with_summary(
                summary(json!([{"grade": 1, "count": 3}, {"grade": 2, "count": 2}])),
                cpu_grades(),
            ),
            Some(json!({"cpu": "1"})),
            7,
        ),
        estimate(
            "model nodes hold no extended resources",
            with_summary(summary(one_node_per_grade()), cpu_grades()),
            Some(json!({"nvidia.com/gpu": "1"})),
            0,
        ),
        estimate(
            "model nodes hold 110 pods each, capped by the cluster's pods",
            with_summary(
                json!({"allocatable": {"pods": "1000", "cpu": "100"},
                    "allocatableModelings": [{"grade": 2, "count": 3}]}),
                cpu_grades(),
            ),
            Some(json!({"cpu": "1m"})),
            330,
        ),
        estimate(
            "a negative count falls back to the summary",
            with_summary(summary(json!([{"grade": 1, "count": -1}])), cpu_grades()),
            Some(json!({"cpu": "1"})),
            100,
        ),
        estimate(
            "without modelings the summary answers",
            with_summary(summary(json!([])), cpu_grades()),
            Some(json!({"cpu": "1"})),
            100,
        ),
    ]);
}
