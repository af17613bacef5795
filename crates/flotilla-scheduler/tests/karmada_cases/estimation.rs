//! The general estimator (`TestMaxAvailableReplicasGeneral`, `TestGetAllowedPodNumber`,
//! `TestGetMaximumReplicasBasedOnClusterSummary`, `TestGetMaximumReplicasBasedOnResourceModels`),
//! observed through the core: one member, dynamic weights and more replicas than fit, so the
//! `Unschedulable` message names the member's estimate; and the accurate estimator on the
//! fixture of karmada-scheduler-estimator's `TestAccurateSchedulerEstimatorServer_MaxAvailableReplicas`
//! (`pkg/estimator/server/server_test.go`).

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

/// A node of Karmada's estimator fixture: `cpu` cores, `mem` GiB, `pods`, 16 GiB of ephemeral
/// storage.
fn node(
    name: &str,
    cpu: i64,
    mem: i64,
    pods: i64,
    extra: Value,
) -> k8s_openapi::api::core::v1::Node {
    let base = json!({
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu.to_string(), "memory": format!("{mem}Gi"),
            "pods": pods.to_string(), "ephemeral-storage": "16Gi"}}
    });
    serde_json::from_value(super::merge(base, extra)).expect("node")
}

/// A running pod on `node` requesting `cpu` cores, `mem` GiB and `storage` GiB.
fn pod(
    name: &str,
    node: &str,
    cpu: i64,
    mem: i64,
    storage: i64,
) -> k8s_openapi::api::core::v1::Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {
            "cpu": cpu.to_string(), "memory": format!("{mem}Gi"),
            "ephemeral-storage": format!("{storage}Gi")}}}]},
        "status": {"phase": "Running"}
    }))
    .expect("pod")
}

/// The five pods of Karmada's fixture: machine1 keeps 2 CPUs and 6 GiB free, machine2 3 CPUs
/// and 5 GiB, machine3 everything.
fn fixture_pods() -> Vec<k8s_openapi::api::core::v1::Pod> {
    vec![
        pod("pod1", "machine1", 1, 3, 0),
        pod("pod2", "machine1", 3, 3, 0),
        pod("pod3", "machine1", 2, 4, 2),
        pod("pod4", "machine2", 4, 8, 2),
        pod("pod5", "machine2", 1, 3, 2),
    ]
}

#[test]
fn accurate_estimator_counts_per_node() {
    use flotilla_api::karmada::{Cluster, ReplicaRequirements};
    use flotilla_scheduler::estimator::NodeIndex;
    use flotilla_scheduler::{AccurateEstimator, ReplicaEstimator};

    let plain = || json!({});
    let labels = |l: Value| json!({"metadata": {"labels": l}});
    let taints = |t: Value| json!({"spec": {"taints": t}});
    let request = |claim: Value| -> ReplicaRequirements {
        let mut r = json!({"resourceRequest": {"cpu": "1", "memory": "2Gi"}});
        if !claim.is_null() {
            r["nodeClaim"] = claim;
        }
        serde_json::from_value(r).expect("requirements")
    };
    type Row = (&'static str, [Value; 3], [i64; 3], Value, i32);
    let table: Vec<Row> = vec![
        (
            "free room per node, summed (2 + 2 + 8)",
            [plain(), plain(), plain()],
            [11, 11, 11],
            Value::Null,
            12,
        ),
        (
            "the pod count caps a node (1 + 1 + 8)",
            [plain(), plain(), plain()],
            [4, 3, 11],
            Value::Null,
            10,
        ),
        (
            "a node selector",
            [
                labels(json!({"a": "1"})),
                labels(json!({"a": "3", "b": "2"})),
                plain(),
            ],
            [11, 11, 11],
            json!({"nodeSelector": {"a": "3"}}),
            2,
        ),
        (
            "a required node affinity with Gt",
            [
                labels(json!({"a": "1"})),
                labels(json!({"a": "3", "b": "2"})),
                plain(),
            ],
            [11, 11, 11],
            json!({"hardNodeAffinity": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "a", "operator": "Gt", "values": ["0"]}]}]}}),
            4,
        ),
        (
            "tolerations: a tolerated taint and an untolerated one",
            [
                taints(json!([{"key": "key1", "value": "value1", "effect": "NoSchedule"}])),
                taints(json!([{"key": "key2", "value": "value2", "effect": "NoSchedule"}])),
                plain(),
            ],
            [11, 11, 11],
            json!({"tolerations": [{"key": "key1", "operator": "Equal", "value": "value1"}]}),
            10,
        ),
    ];
    let cluster: Cluster = serde_json::from_value(json!({"metadata": {"name": "fake"},
        "spec": {"syncMode": "Push"}}))
    .expect("cluster");
    for (name, extras, pods, claim, want) in table {
        let nodes: Vec<_> = extras
            .into_iter()
            .zip(pods)
            .enumerate()
            .map(|(i, (extra, p))| node(&format!("machine{}", i + 1), 8, 16, p, extra))
            .collect();
        let mut estimator = AccurateEstimator::default();
        estimator.insert(
            "fake",
            NodeIndex::new(&nodes, &fixture_pods()).expect("index"),
        );
        let requirements = request(claim);
        let got = estimator.max_available_replicas(&[&cluster], Some(&requirements));
        assert_eq!(got, vec![want], "{name}");
    }
}
