//! Karmada's tables for dividing by dynamic weights (`division_algorithm_test.go`), for
//! `AssignReplicas` with overflow tiers and component results (`common_test.go`) and for
//! attaching zero-replica clusters (`util_test.go`), all under `pkg/scheduler/core/`.

use flotilla_api::karmada::{Component, ResourceBindingStatus, TargetComponent};
use serde_json::json;

use super::karmada_cases::{
    Candidate, assign_in, by_name, candidate, candidates, from_json, static_weights, workload,
};
use super::{pairs, placement};
use crate::assign::Mode;
use crate::core::ScheduleError;

#[test]
fn dynamic_weights_divide_by_webster_and_aggregated_keeps_the_shortest_prefix() {
    // Test_dynamicDivideReplicas: 12 replicas over the given weights (a first schedule, so the
    // weights are the allocatable replicas), candidates in Karmada's order.
    type Row = (
        &'static str,
        &'static str,
        &'static [(&'static str, i32)],
        &'static [(&'static str, i32)],
    );
    let table: [Row; 5] = [
        (
            "dynamic 18:12:6 divides 6/4/2",
            "dynamic",
            &[("member1", 18), ("member2", 12), ("member3", 6)],
            &[("member1", 6), ("member2", 4), ("member3", 2)],
        ),
        (
            "dynamic 20:12:6 still divides 6/4/2",
            "dynamic",
            &[("member1", 20), ("member2", 12), ("member3", 6)],
            &[("member1", 6), ("member2", 4), ("member3", 2)],
        ),
        (
            "dynamic 6:12:6 divides 3/6/3",
            "dynamic",
            &[("member1", 6), ("member2", 12), ("member3", 6)],
            &[("member1", 3), ("member2", 6), ("member3", 3)],
        ),
        (
            "aggregated 12:6:6 fits in the first",
            "aggregated",
            &[("member2", 12), ("member1", 6), ("member3", 6)],
            &[("member2", 12)],
        ),
        (
            "aggregated 6:6:6 takes the first two",
            "aggregated",
            &[("member1", 6), ("member2", 6), ("member3", 6)],
            &[("member1", 6), ("member2", 6)],
        ),
    ];
    for (desc, kind, list, want) in table {
        let got = assign_in(
            &candidates(list),
            &placement(kind),
            &workload(12, &[]),
            &ResourceBindingStatus::default(),
            Mode::Steady,
        );
        assert_eq!(by_name(got.expect(desc)), pairs(want), "{desc}");
    }
}

#[test]
fn assign_replicas_handles_workloads_non_workloads_and_unsupported_strategies() {
    // TestAssignReplicas, the rows without overflow.
    let status = ResourceBindingStatus::default();
    let weighted = static_weights(None);
    let got = assign_in(
        &[candidate("member1", 0)],
        &weighted,
        &super::spec(3, &[]),
        &status,
        Mode::Steady,
    );
    assert_eq!(by_name(got.expect("single")), pairs(&[("member1", 3)]));

    let err = assign_in(&[], &weighted, &super::spec(1, &[]), &status, Mode::Steady)
        .expect_err("no clusters");
    assert_eq!(
        err,
        ScheduleError::Scheduler("no clusters available to schedule".into())
    );

    // A non-workload (no replicas, no requirements) goes to every candidate without a count.
    let two = [candidate("member1", 0), candidate("member2", 0)];
    let got = assign_in(
        &two,
        &placement("duplicated"),
        &super::spec(0, &[]),
        &status,
        Mode::Steady,
    );
    assert_eq!(
        by_name(got.expect("non-workload")),
        pairs(&[("member1", 0), ("member2", 0)])
    );

    let unsupported = from_json(json!({"replicaScheduling": {
        "replicaSchedulingType": "UnsupportedType",
        "replicaDivisionPreference": "UnsupportedPreference"}}));
    let err = assign_in(
        &[candidate("member1", 0)],
        &unsupported,
        &super::spec(3, &[]),
        &status,
        Mode::Steady,
    )
    .expect_err("unsupported");
    assert!(
        err.to_string()
            .starts_with("unsupported replica scheduling strategy"),
        "{err}"
    );
}

/// Candidate `name` in overflow tier `tier` with `available` (allocatable + held) and
/// `allocatable` replicas.
fn tiered(name: &'static str, tier: i32, available: i64, allocatable: i32) -> Candidate {
    Candidate {
        name,
        allocatable,
        available,
        tier,
    }
}

#[test]
fn overflow_tiers_fill_in_order_and_fail_when_all_are_short() {
    // TestAssignReplicas, the overflow rows: dynamic weights, term "affinity1" on member1 with
    // an overflow affinity on member2, observed by the status.
    let p = from_json(json!({
        "replicaScheduling": {"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
        "clusterAffinities": [{"affinityName": "affinity1", "clusterNames": ["member1"],
            "overflowAffinities": [{"affinityName": "overflow", "clusterNames": ["member2"]}]}]
    }));
    let status = ResourceBindingStatus {
        scheduler_observing_affinity_name: "affinity1".into(),
        ..ResourceBindingStatus::default()
    };
    type Row = (
        &'static str,
        [Candidate; 2],
        i32,
        &'static [(&'static str, i32)],
        Option<&'static [(&'static str, i32)]>,
    );
    let table: [Row; 4] = [
        (
            "the primary tier has room: no overflow",
            [tiered("member1", 0, 10, 10), tiered("member2", 1, 10, 10)],
            5,
            &[],
            Some(&[("member1", 5)]),
        ),
        (
            "the primary tier is full: the rest overflows",
            [tiered("member1", 0, 2, 2), tiered("member2", 1, 10, 10)],
            5,
            &[],
            Some(&[("member1", 2), ("member2", 3)]),
        ),
        (
            "every tier is full: unschedulable",
            [tiered("member1", 0, 2, 2), tiered("member2", 1, 2, 2)],
            10,
            &[],
            None,
        ),
        (
            "replicas already held count in the tier's capacity (2 free + 3 held)",
            [tiered("member1", 0, 5, 2), tiered("member2", 1, 10, 10)],
            8,
            &[("member1", 3)],
            Some(&[("member1", 5), ("member2", 3)]),
        ),
    ];
    for (desc, list, replicas, previous, want) in table {
        let got = assign_in(
            &list,
            &p,
            &super::spec(replicas, previous),
            &status,
            Mode::Steady,
        );
        match want {
            // Karmada also checks the order: tier by tier.
            Some(want) => {
                let got: Vec<_> = got
                    .expect(desc)
                    .into_iter()
                    .map(|c| (c.name, c.replicas))
                    .collect();
                assert_eq!(got, pairs(want), "{desc}");
            }
            None => assert_eq!(
                got,
                Err(ScheduleError::Unschedulable(
                    "Clusters available replicas are not enough to schedule.".into()
                )),
                "{desc}"
            ),
        }
    }
}

#[test]
fn multi_component_results_only_on_a_single_cluster_spread() {
    // TestAssignComponentSchedulingResults. Karmada's "feature disabled" row is skipped: the
    // gate decides upstream whether a binding has components at all.
    let one_cluster = from_json(json!({"spreadConstraints": [
        {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]}));
    let components = vec![
        Component {
            name: "jobmanager".into(),
            replicas: 1,
            replica_requirements: None,
        },
        Component {
            name: "taskmanager".into(),
            replicas: 4,
            replica_requirements: None,
        },
    ];
    let member1 = [candidate("member1", 0)];
    let status = ResourceBindingStatus::default();
    for (desc, placement, want) in [
        (
            "a multi-component workload records every component",
            one_cluster,
            vec![
                TargetComponent {
                    name: "jobmanager".into(),
                    replicas: 1,
                },
                TargetComponent {
                    name: "taskmanager".into(),
                    replicas: 4,
                },
            ],
        ),
        (
            "without the single-cluster spread: no component result",
            from_json(json!({})),
            vec![],
        ),
    ] {
        let mut spec = super::spec(0, &[]);
        spec.components = components.clone();
        spec.placement = Some(placement.clone());
        let got = assign_in(&member1, &placement, &spec, &status, Mode::Steady).expect(desc);
        assert_eq!(got.len(), 1, "{desc}");
        assert_eq!(
            (got[0].name.as_str(), got[0].replicas),
            ("member1", 0),
            "{desc}"
        );
        assert_eq!(got[0].components, want, "{desc}");
    }
    // An ordinary workload keeps its scalar result.
    let got = assign_in(
        &member1,
        &static_weights(None),
        &super::spec(3, &[]),
        &status,
        Mode::Steady,
    );
    let got = got.expect("ordinary");
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].name.as_str(), got[0].replicas), ("member1", 3));
    assert!(got[0].components.is_empty());
}

#[test]
fn empty_workload_propagation_attaches_unassigned_candidates_with_zero() {
    // Test_attachZeroReplicasCluster: member3 is selected but gets no replica (no static
    // weight); Karmada's `--enable-empty-workload-propagation` lists it with 0.
    use crate::core::{ScheduleOptions, Snapshot, schedule};
    use crate::framework::Framework;
    let clusters = ["member1", "member2", "member3"].map(|name| {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"syncMode": "Push"},
            "status": {
                "apiEnablements": [{"groupVersion": "apps/v1",
                    "resources": [{"name": "deployments", "kind": "Deployment"}]}],
                "resourceSummary": {"allocatable": {"pods": "100"}}
            }
        }))
        .expect("cluster")
    });
    let spec = serde_json::from_value(json!({
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
            "name": "web"},
        "replicas": 3,
        "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted", "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                {"targetCluster": {"clusterNames": ["member2"]}, "weight": 2}]}}}
    }))
    .expect("binding");
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
    let got = schedule(
        &Snapshot::new(clusters.to_vec()),
        &spec,
        &ResourceBindingStatus::default(),
        &options,
    )
    .expect("schedule");
    assert_eq!(
        by_name(got.clusters),
        pairs(&[("member1", 1), ("member2", 2), ("member3", 0)])
    );
}
