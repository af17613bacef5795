use flotilla_api::karmada::ResourceBindingSpec;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::estimator::NodeIndex;

/// A cluster serving Deployments whose general estimate is `pods` replicas (no requirements).
fn cluster(name: &str, pods: i64, spec: Value) -> Cluster {
    let mut spec = spec;
    spec["syncMode"] = json!("Push");
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"name": name}},
        "spec": spec,
        "status": {
            "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
            "resourceSummary": {"allocatable": {"pods": pods.to_string()}}
        }
    }))
    .expect("cluster")
}

fn binding(replicas: i32, placement: Value, previous: Value) -> ResourceBindingSpec {
    serde_json::from_value(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
        "replicas": replicas,
        "placement": placement,
        "clusters": previous,
    }))
    .expect("binding")
}

fn run(
    clusters: Vec<Cluster>,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
) -> Result<ScheduleResult, ScheduleError> {
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
    schedule(&Snapshot::new(clusters), spec, status, &options)
}

fn result(r: &ScheduleResult) -> Vec<(&str, i32)> {
    r.clusters
        .iter()
        .map(|c| (c.name.as_str(), c.replicas))
        .collect()
}

#[test]
fn fit_error_histogram_is_sorted_with_counts() {
    let clusters = vec![
        cluster("m1", 10, json!({})),
        cluster(
            "m2",
            10,
            json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}),
        ),
        cluster(
            "m3",
            10,
            json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}),
        ),
    ];
    let spec = binding(
        1,
        json!({"clusterAffinity": {"clusterNames": ["m2", "m3"]}}),
        json!([]),
    );
    let err = run(clusters, &spec, &ResourceBindingStatus::default()).expect_err("no fit");
    assert_eq!(
        err.to_string(),
        "0/3 clusters are available: 1 cluster(s) did not match the placement cluster affinity \
         constraint, 2 cluster(s) had untolerated taint {k=v:NoSchedule}."
    );
    assert_eq!(err.reason(), "NoClusterFit");
}

#[test]
fn fit_error_without_clusters() {
    let spec = binding(1, json!({}), json!([]));
    let err = run(vec![], &spec, &ResourceBindingStatus::default()).expect_err("none");
    assert_eq!(
        err.to_string(),
        "0/0 clusters are available: no cluster exists."
    );
}

#[test]
fn histogram_sorts_the_count_prefixed_strings() {
    let fit = FitError {
        num_all_clusters: 12,
        diagnosis: (0..12)
            .map(|i| {
                let reason = if i < 10 { "b reason" } else { "a reason" };
                (format!("m{i}"), vec![reason.to_owned()])
            })
            .collect(),
    };
    // "10 b reason" sorts before "2 a reason", as Go's sort.Strings does.
    assert_eq!(
        fit.to_string(),
        "0/12 clusters are available: 10 b reason, 2 a reason."
    );
}

#[test]
fn deleting_clusters_are_skipped_but_counted() {
    let mut deleting = cluster("m1", 10, json!({}));
    deleting.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-01-01T00:00:00Z")).expect("time"));
    let spec = binding(1, json!({}), json!([]));
    let err = run(vec![deleting], &spec, &ResourceBindingStatus::default()).expect_err("none");
    assert_eq!(
        err.to_string(),
        "0/1 clusters are available: no cluster exists."
    );
}

#[test]
fn unschedulable_message_is_wrapped() {
    let clusters = vec![cluster("m1", 4, json!({})), cluster("m2", 5, json!({}))];
    let spec = binding(
        12,
        json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}),
        json!([]),
    );
    let err = run(clusters, &spec, &ResourceBindingStatus::default()).expect_err("short");
    assert_eq!(
        err.to_string(),
        "failed to assign replicas: failed to scale up: Clusters available replicas 9 are not enough to schedule."
    );
    assert_eq!(err.reason(), "Unschedulable");
}

#[test]
fn selection_errors_are_scheduler_errors() {
    let clusters = vec![cluster("m1", 4, json!({}))];
    let spec = binding(
        1,
        json!({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2}]}),
        json!([]),
    );
    let err = run(clusters, &spec, &ResourceBindingStatus::default()).expect_err("select");
    assert_eq!(
        err.to_string(),
        "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups"
    );
    assert_eq!(err.reason(), "SchedulerError");
}

#[test]
fn vllm_static_weights() {
    let clusters = vec![
        cluster("cn-shanghai", 100, json!({})),
        cluster("us-west-2", 100, json!({})),
        cluster("eu-central-1", 100, json!({})),
    ];
    let spec = binding(
        10,
        json!({"clusterAffinity": {"clusterNames": ["cn-shanghai", "us-west-2", "eu-central-1"]},
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": ["cn-shanghai"]}, "weight": 50},
                {"targetCluster": {"clusterNames": ["us-west-2"]}, "weight": 30},
                {"targetCluster": {"clusterNames": ["eu-central-1"]}, "weight": 20}]}}}),
        json!([]),
    );
    let r = run(clusters, &spec, &ResourceBindingStatus::default()).expect("schedule");
    assert_eq!(
        result(&r),
        [("cn-shanghai", 5), ("eu-central-1", 2), ("us-west-2", 3)]
    );
}

#[test]
fn affinity_terms_fall_back_in_order() {
    let clusters = vec![cluster("m1", 2, json!({})), cluster("m2", 20, json!({}))];
    let spec = binding(
        5,
        json!({"clusterAffinities": [
                {"affinityName": "small", "clusterNames": ["m1"]},
                {"affinityName": "big", "clusterNames": ["m2"]}],
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}),
        json!([]),
    );
    let r = run(clusters.clone(), &spec, &ResourceBindingStatus::default()).expect("schedule");
    assert_eq!(result(&r), [("m2", 5)]);
    assert_eq!(r.affinity_name.as_deref(), Some("big"));
    // Sticky: observed "big" starts at "big" even if "small" would now fit.
    let status = ResourceBindingStatus {
        scheduler_observing_affinity_name: "big".into(),
        ..ResourceBindingStatus::default()
    };
    let mut small = binding(
        1,
        spec.placement
            .clone()
            .map(|p| serde_json::to_value(p).expect("json"))
            .unwrap_or_default(),
        json!([]),
    );
    small.replicas = 1;
    let r = run(clusters.clone(), &small, &status).expect("schedule");
    assert_eq!(r.affinity_name.as_deref(), Some("big"));
    // All fail: the first error is reported.
    let mut huge = spec.clone();
    huge.replicas = 100;
    let err = run(clusters, &huge, &ResourceBindingStatus::default()).expect_err("short");
    assert_eq!(
        err.to_string(),
        "failed to assign replicas: failed to scale up: Clusters available replicas 2 are not enough to schedule."
    );
}

#[test]
fn overflow_tiers_fill_primary_first() {
    let clusters = vec![
        cluster("p1", 3, json!({})),
        cluster("o1", 10, json!({})),
        cluster("o2", 10, json!({})),
    ];
    let spec = binding(
        8,
        json!({"clusterAffinities": [{"affinityName": "main", "clusterNames": ["p1"],
                "overflowAffinities": [{"affinityName": "burst", "clusterNames": ["o1", "o2"]}]}],
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}),
        json!([]),
    );
    let status = ResourceBindingStatus {
        scheduler_observing_affinity_name: "main".into(),
        ..ResourceBindingStatus::default()
    };
    let r = run(clusters.clone(), &spec, &status).expect("schedule");
    assert_eq!(result(&r), [("o1", 3), ("o2", 2), ("p1", 3)]);
    let mut too_many = spec.clone();
    too_many.replicas = 30;
    let err = run(clusters, &too_many, &status).expect_err("short");
    assert_eq!(
        err.to_string(),
        "failed to assign replicas: Clusters available replicas are not enough to schedule."
    );
}

#[test]
fn empty_workload_propagation_lists_selected_clusters() {
    let clusters = vec![cluster("a", 10, json!({})), cluster("b", 10, json!({}))];
    let spec = binding(
        1,
        json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}}),
        json!([]),
    );
    let framework = Framework::default();
    let options = ScheduleOptions {
        framework: &framework,
        estimators: &[],
        enable_empty_workload_propagation: true,
        divide_by_node_count: None,
        gpu_topology: None,
        workload_peers: None,
        assumed: None,
    };
    let r = schedule(
        &Snapshot::new(clusters),
        &spec,
        &ResourceBindingStatus::default(),
        &options,
    )
    .expect("schedule");
    assert_eq!(result(&r), [("a", 1), ("b", 0)]);
}

#[test]
fn estimators_take_the_minimum_and_ignore_unknown() {
    #[derive(Debug)]
    struct Fixed(Vec<i32>);
    impl ReplicaEstimator for Fixed {
        fn max_available_replicas(
            &self,
            _: &[&Cluster],
            _: Option<&flotilla_api::karmada::ReplicaRequirements>,
        ) -> Vec<i32> {
            self.0.clone()
        }
    }
    let clusters = [
        cluster("a", 10, json!({})),
        cluster("b", 10, json!({})),
        cluster("c", 10, json!({})),
    ];
    let refs: Vec<&Cluster> = clusters.iter().collect();
    let figures: Vec<SummaryFigures> = clusters.iter().map(SummaryFigures::new).collect();
    let figures: Vec<&SummaryFigures> = figures.iter().collect();
    let spec = binding(3, json!({}), json!([]));
    let fixed = Fixed(vec![4, -1, 20]);
    assert_eq!(
        available_replicas(&refs, &figures, &spec, &[&fixed]),
        [4, 10, 10]
    );
    let non_workload = binding(0, json!({}), json!([]));
    assert_eq!(
        available_replicas(&refs, &figures, &non_workload, &[&fixed]),
        [i32::MAX; 3]
    );
}

fn divided_placement(kind: u8) -> Value {
    match kind {
        0 => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}})
        }
        1 => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"}}})
        }
        _ => {
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": ["c0", "c1"]}, "weight": 2},
                {"targetCluster": {"labelSelector": {"matchLabels": {"name": "c2"}}}, "weight": 1}]}}})
        }
    }
}

proptest! {
    #[test]
    fn divided_sums_to_request_and_stays_in_affinity(
        capacities in proptest::collection::vec(0i64..40, 1..6),
        replicas in 1i32..60,
        kind in 0u8..3,
        allowed in proptest::collection::vec(any::<bool>(), 6),
        uid in "[a-f0-9]{0,8}",
    ) {
        let clusters: Vec<Cluster> = capacities
            .iter()
            .enumerate()
            .map(|(i, p)| cluster(&format!("c{i}"), *p, json!({})))
            .collect();
        let names: Vec<String> = (0..capacities.len())
            .filter(|i| allowed[*i])
            .map(|i| format!("c{i}"))
            .collect();
        let mut placement = divided_placement(kind);
        placement["clusterAffinity"] = json!({"clusterNames": names});
        let mut spec = binding(replicas, placement, json!([]));
        spec.resource.uid = uid;
        let first = run(clusters.clone(), &spec, &ResourceBindingStatus::default());
        let again = run(clusters, &spec, &ResourceBindingStatus::default());
        prop_assert_eq!(&first, &again, "deterministic for a fixed UID");
        if let Ok(r) = first {
            prop_assert_eq!(r.clusters.iter().map(|c| c.replicas).sum::<i32>(), replicas);
            for c in &r.clusters {
                prop_assert!(c.replicas > 0);
                if !names.is_empty() {
                    prop_assert!(names.contains(&c.name), "{} outside affinity", c.name);
                }
            }
        }
    }
}

/// Two GPU members with one HGX node each; `alpha` already runs a 2-GPU pod.
fn gpu_members() -> (Vec<Cluster>, AccurateEstimator) {
    let topology = {
        let gpus: Vec<_> = (0..8)
            .map(|i| json!({"index": i, "numaNode": i / 4, "pciSwitch": i / 2, "pciBusId": "x"}))
            .collect();
        json!({"interconnect": "NVSwitch", "gpus": gpus}).to_string()
    };
    let node = |name: &str| -> k8s_openapi::api::core::v1::Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "annotations": {"karmada.io/gpu-topology": topology}},
            "status": {"allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"}}
        }))
        .expect("node")
    };
    let busy: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {"name": "trainer", "namespace": "default"},
        "spec": {"nodeName": "alpha-0", "containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": "2"}}}]},
        "status": {"phase": "Running"}
    }))
    .expect("pod");
    let mut estimator = AccurateEstimator::default();
    estimator.insert(
        "alpha",
        NodeIndex::new(&[node("alpha-0")], &[busy]).expect("index"),
    );
    estimator.insert(
        "beta",
        NodeIndex::new(&[node("beta-0")], &[]).expect("index"),
    );
    let member = |name: &str| -> Cluster {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"syncMode": "Push"},
            "status": {
                "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
                "resourceSummary": {"allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"}}
            }
        }))
        .expect("cluster")
    };
    (vec![member("alpha"), member("beta")], estimator)
}

fn gpu_binding(replicas: i32) -> ResourceBindingSpec {
    serde_json::from_value(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "llm"},
        "replicas": replicas,
        "replicaRequirements": {"resourceRequest": {"nvidia.com/gpu": "3"}},
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Aggregated"}},
    }))
    .expect("binding")
}

#[test]
fn gpu_topology_prefers_clusters_where_replicas_stay_on_one_numa_node() {
    let (clusters, estimator) = gpu_members();
    let framework = Framework::default();
    let estimators: [&dyn ReplicaEstimator; 1] = [&estimator];
    let run_with = |replicas: i32, topology: bool| {
        let options = ScheduleOptions {
            framework: &framework,
            estimators: &estimators,
            enable_empty_workload_propagation: false,
            divide_by_node_count: None,
            gpu_topology: topology.then_some((&estimator, GpuTopologyLevel::NumaNode)),
            workload_peers: None,
            assumed: None,
        };
        let status = ResourceBindingStatus::default();
        schedule(
            &Snapshot::new(clusters.clone()),
            &gpu_binding(replicas),
            &status,
            &options,
        )
        .map(|r| {
            result(&r)
                .into_iter()
                .map(|(n, r)| (n.to_owned(), r))
                .collect::<Vec<_>>()
        })
    };
    // Plain counting: 6/3 = 2 replicas fit on alpha and 8/3 = 2 on beta; Aggregated takes the
    // first of the tie. Aligned: alpha's first NUMA node has 2 free GPUs, so only 1 replica
    // stays on one NUMA node there, against 2 on beta.
    assert_eq!(
        run_with(2, false).expect("plain"),
        [("alpha".to_owned(), 2)]
    );
    assert_eq!(
        run_with(2, true).expect("aligned"),
        [("beta".to_owned(), 2)]
    );
    // 3 replicas still fit aligned (1 + 2).
    assert_eq!(
        run_with(3, true).expect("aligned"),
        [("alpha".to_owned(), 1), ("beta".to_owned(), 2)]
    );
    // 4 do not (3 aligned): a preference, so Karmada's counting places them.
    assert_eq!(run_with(4, true), run_with(4, false));
    assert!(run_with(4, true).is_ok());
    // 5 fit nowhere: the same error as without the preference.
    assert_eq!(run_with(5, true), run_with(5, false));
    assert!(run_with(5, true).is_err());
}

/// Karmada's `scheduleResourceBindingWithClusterAffinities` reports every term that failed
/// before the one that fit (an event each); without clusterAffinities nothing is traced.
#[test]
fn failed_affinity_terms_are_traced() {
    let clusters = vec![cluster("m1", 2, json!({})), cluster("m2", 20, json!({}))];
    let spec = binding(
        5,
        json!({"clusterAffinities": [
                {"affinityName": "none", "clusterNames": ["absent"]},
                {"affinityName": "small", "clusterNames": ["m1"]},
                {"affinityName": "big", "clusterNames": ["m2"]}],
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}),
        json!([]),
    );
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
    let snapshot = Snapshot::new(clusters);
    let traced = schedule_traced(
        &snapshot,
        &spec,
        &ResourceBindingStatus::default(),
        &options,
    );
    assert_eq!(
        traced.result.expect("big fits").affinity_name.as_deref(),
        Some("big")
    );
    let failed: Vec<usize> = traced.failed_terms.iter().map(|f| f.index).collect();
    assert_eq!(failed, [0, 1]);
    assert!(matches!(
        traced.failed_terms[0].error,
        ScheduleError::NoClusterFit(_)
    ));
    assert!(matches!(
        traced.failed_terms[1].error,
        ScheduleError::Unschedulable(_)
    ));

    let plain = binding(
        5,
        json!({"clusterAffinity": {"clusterNames": ["m2"]}}),
        json!([]),
    );
    let traced = schedule_traced(
        &snapshot,
        &plain,
        &ResourceBindingStatus::default(),
        &options,
    );
    assert!(traced.result.is_ok());
    assert!(traced.failed_terms.is_empty());
}

#[test]
fn a_multi_component_workload_goes_to_one_cluster_with_room_for_a_whole_set() {
    // Pods: m1 takes 4 pods, m2 takes 10; a set is 1 + 4 = 5 pods.
    let clusters = || vec![cluster("m1", 4, json!({})), cluster("m2", 10, json!({}))];
    let mut spec = binding(
        0,
        json!({"clusterAffinity": {"clusterNames": ["m1", "m2"]},
               "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]}),
        json!([]),
    );
    spec.components = serde_json::from_value(json!([
        {"name": "jobmanager", "replicas": 1},
        {"name": "taskmanager", "replicas": 4},
    ]))
    .expect("components");
    let scheduled = run(clusters(), &spec, &ResourceBindingStatus::default()).expect("scheduled");
    assert_eq!(result(&scheduled), [("m2", 0)]);
    assert_eq!(scheduled.clusters[0].components.len(), 2);
    // Eleven-pod sets fit nowhere whole. (A Duplicated placement, the default, ignores
    // availability when selecting, as in Karmada; a Divided one does not.)
    spec.components[1].replicas = 10;
    spec.placement = Some(
        serde_json::from_value(json!({
            "clusterAffinity": {"clusterNames": ["m1", "m2"]},
            "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}],
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
        }))
        .expect("placement"),
    );
    let error = run(clusters(), &spec, &ResourceBindingStatus::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "failed to select clusters: no enough resource when selecting 1 clusters"
    );
}
