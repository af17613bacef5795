//! Karmada's unit-test tables for replica assignment (`pkg/scheduler/core/assignment_test.go`)
//! restated as inputs to our assignment. Each row keeps Karmada's input and expected result.
//! Karmada breaks Webster ties by the template UID, which is as deterministic as ours, so every
//! row has one exact answer. Shared helpers for the sibling `karmada_*` files live here.

use flotilla_api::karmada::{
    Cluster, Placement, ResourceBindingSpec, ResourceBindingStatus, TargetCluster,
};
use serde_json::{Value, json};

use super::{cluster, pairs, placement};
use crate::assign::{AssignInput, Mode, assign_replicas, static_weight};
use crate::core::ScheduleError;
use crate::select::ClusterDetail;

/// One candidate as Karmada's tests give it: allocatable replicas, plus available replicas and
/// overflow tier (set only by the overflow cases).
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    pub name: &'static str,
    pub allocatable: i32,
    pub available: i64,
    pub tier: i32,
}

/// A candidate in tier 0 whose available replicas equal its allocatable ones.
pub(super) fn candidate(name: &'static str, allocatable: i32) -> Candidate {
    Candidate {
        name,
        allocatable,
        available: i64::from(allocatable),
        tier: 0,
    }
}

/// Candidates with the given allocatable replicas, in the given order.
pub(super) fn candidates(list: &[(&'static str, i32)]) -> Vec<Candidate> {
    list.iter().map(|(n, a)| candidate(n, *a)).collect()
}

/// Runs `assign_replicas` over `list` in the given order (Karmada's tests fix the order).
pub(super) fn assign_in(
    list: &[Candidate],
    placement: &Placement,
    spec: &ResourceBindingSpec,
    status: &ResourceBindingStatus,
    mode: Mode,
) -> Result<Vec<TargetCluster>, ScheduleError> {
    let clusters: Vec<Cluster> = list.iter().map(|c| cluster(c.name)).collect();
    let details = details(list, &clusters);
    assign_replicas(AssignInput {
        candidates: &details,
        spec,
        status,
        placement,
        mode,
        node_weights: None,
    })
}

fn details<'c>(list: &[Candidate], clusters: &'c [Cluster]) -> Vec<ClusterDetail<'c>> {
    list.iter()
        .zip(clusters)
        .map(|(c, cluster)| ClusterDetail {
            name: cluster.name(),
            score: 0,
            overflow_order: c.tier,
            available_replicas: c.available,
            allocatable_replicas: c.allocatable,
            cluster,
        })
        .collect()
}

/// A result as (name, replicas) sorted by name (Karmada compares results as sets).
pub(super) fn by_name(result: Vec<TargetCluster>) -> Vec<(String, i32)> {
    let mut out: Vec<_> = result.into_iter().map(|c| (c.name, c.replicas)).collect();
    out.sort();
    out
}

/// A binding spec with Karmada's empty `replicaRequirements`, so it counts as a workload.
pub(super) fn workload(replicas: i32, previous: &[(&str, i32)]) -> ResourceBindingSpec {
    ResourceBindingSpec {
        replica_requirements: Some(
            serde_json::from_value(json!({"resourceRequest": {}})).expect("requirements"),
        ),
        ..super::spec(replicas, previous)
    }
}

pub(super) fn from_json(value: Value) -> Placement {
    serde_json::from_value(value).expect("placement")
}

/// `Weighted` with static weights by cluster name, or without a weight preference.
pub(super) fn static_weights(rules: Option<&[(&str, i64)]>) -> Placement {
    let mut strategy = json!({"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted"});
    if let Some(rules) = rules {
        let list: Vec<Value> = rules
            .iter()
            .map(|(n, w)| json!({"targetCluster": {"clusterNames": [n]}, "weight": w}))
            .collect();
        strategy["weightPreference"] = json!({"staticWeightList": list});
    }
    from_json(json!({ "replicaScheduling": strategy }))
}

/// (description, strategy, candidates with allocatable replicas, previous result, replicas,
/// expected result or `None` for "not enough capacity").
type DynamicRow = (
    &'static str,
    &'static str,
    &'static [(&'static str, i32)],
    &'static [(&'static str, i32)],
    i32,
    Option<&'static [(&'static str, i32)]>,
);

fn check_dynamic(table: &[DynamicRow]) {
    for &(desc, kind, list, previous, replicas, want) in table {
        let got = assign_in(
            &candidates(list),
            &placement(kind),
            &workload(replicas, previous),
            &ResourceBindingStatus::default(),
            Mode::Steady,
        );
        match want {
            Some(want) => assert_eq!(by_name(got.expect(desc)), pairs(want), "{desc}"),
            None => match got {
                Err(ScheduleError::Unschedulable(message)) => {
                    assert!(
                        message.ends_with("are not enough to schedule."),
                        "{desc}: {message}"
                    );
                }
                other => panic!("{desc}: expected an Unschedulable error, got {other:?}"),
            },
        }
    }
}

const M123: &[&str] = &["member1", "member2", "member3"];

#[test]
fn static_weights_divide_by_webster_with_karmadas_rules() {
    // Test_assignByStaticWeightStrategy: the strategy's own result, before zero-replica
    // clusters are dropped.
    type Row = (
        &'static str,
        &'static [&'static str],
        Option<&'static [(&'static str, i64)]>,
        i32,
        &'static [(&'static str, i32)],
    );
    let w321: &[(&str, i64)] = &[("member1", 3), ("member2", 2), ("member3", 1)];
    let table: [Row; 7] = [
        (
            "12 at 3:2:1 splits 6/4/2",
            M123,
            Some(w321),
            12,
            &[("member1", 6), ("member2", 4), ("member3", 2)],
        ),
        (
            "without a weight preference every cluster weighs 1",
            M123,
            None,
            12,
            &[("member1", 4), ("member2", 4), ("member3", 4)],
        ),
        (
            "13 at 3:2:1 gives the remainder to the heaviest",
            M123,
            Some(w321),
            13,
            &[("member1", 7), ("member2", 4), ("member3", 2)],
        ),
        (
            "14 at 3:2:1 splits 7/5/2",
            M123,
            Some(w321),
            14,
            &[("member1", 7), ("member2", 5), ("member3", 2)],
        ),
        (
            "0 replicas leave every weighted cluster with 0",
            &["member1", "member2"],
            Some(&[("member1", 1), ("member2", 1)]),
            0,
            &[("member1", 0), ("member2", 0)],
        ),
        (
            "a selected cluster without a weight takes no part",
            &["member1", "member2"],
            Some(&[("member1", 1)]),
            2,
            &[("member1", 2)],
        ),
        (
            "a cluster matched by several rules takes the largest weight",
            &["member1", "member2"],
            Some(&[("member1", 1), ("member2", 1), ("member1", 2)]),
            3,
            &[("member1", 2), ("member2", 1)],
        ),
    ];
    for (desc, names, rules, replicas, want) in table {
        let list: Vec<Candidate> = names.iter().map(|n| candidate(n, 0)).collect();
        let clusters: Vec<Cluster> = list.iter().map(|c| cluster(c.name)).collect();
        let details = details(&list, &clusters);
        let p = static_weights(rules);
        let spec = workload(replicas, &[]);
        let input = AssignInput {
            candidates: &details,
            spec: &spec,
            status: &ResourceBindingStatus::default(),
            placement: &p,
            mode: Mode::Steady,
            node_weights: None,
        };
        assert_eq!(
            by_name(static_weight(input, replicas)),
            pairs(want),
            "{desc}"
        );
        // Through `assign_replicas` the zero-replica clusters are dropped.
        let kept: Vec<_> = pairs(want).into_iter().filter(|(_, r)| *r > 0).collect();
        let got = assign_in(
            &list,
            &p,
            &spec,
            &ResourceBindingStatus::default(),
            Mode::Steady,
        );
        assert_eq!(by_name(got.expect(desc)), kept, "{desc}");
    }
}

#[test]
fn steady_scaling_divides_the_difference_and_scale_down_uses_the_previous_counts() {
    // Test_dynamicScale.
    const M1: &[(&str, i32)] = &[("member1", 1), ("member2", 1), ("member3", 1)];
    const PREV_246: &[(&str, i32)] = &[("member1", 2), ("member2", 4), ("member3", 6)];
    const PREV_48: &[(&str, i32)] = &[("member1", 4), ("member2", 8)];
    check_dynamic(&[
        (
            "dynamic 12 -> 6 over 1:1:1 scales down by the previous counts",
            "dynamic",
            M1,
            PREV_246,
            6,
            Some(&[("member1", 1), ("member2", 2), ("member3", 3)]),
        ),
        (
            "dynamic 12 -> 24 over 10:10:10 adds 4 to each",
            "dynamic",
            &[("member1", 10), ("member2", 10), ("member3", 10)],
            PREV_246,
            24,
            Some(&[("member1", 6), ("member2", 8), ("member3", 10)]),
        ),
        (
            "dynamic 12 -> 24 over 1:1:1 does not fit",
            "dynamic",
            M1,
            PREV_246,
            24,
            None,
        ),
        (
            "aggregated 12 -> 6 over 1:1:1 keeps the bigger cluster",
            "aggregated",
            M1,
            PREV_48,
            6,
            Some(&[("member2", 6)]),
        ),
        (
            "aggregated 12 -> 8 over 100:100 keeps the bigger cluster",
            "aggregated",
            &[("member1", 100), ("member2", 100)],
            PREV_48,
            8,
            Some(&[("member2", 8)]),
        ),
        (
            "aggregated 12 -> 24 over 4:6:8 needs all three",
            "aggregated",
            &[("member1", 4), ("member2", 6), ("member3", 8)],
            PREV_48,
            24,
            Some(&[("member1", 7), ("member2", 12), ("member3", 5)]),
        ),
        (
            "aggregated 12 -> 24 over 6:6:20 stays on the clusters in use",
            "aggregated",
            &[("member1", 6), ("member2", 6), ("member3", 20)],
            PREV_48,
            24,
            Some(&[("member1", 10), ("member2", 14)]),
        ),
        (
            "aggregated 12 -> 24 over 1:1:1 does not fit",
            "aggregated",
            M1,
            PREV_48,
            24,
            None,
        ),
        (
            "aggregated 12 -> 24 with member2 gone and member4 new: its 8 replicas count as new",
            "aggregated",
            &[("member1", 4), ("member3", 8), ("member4", 12)],
            PREV_48,
            24,
            Some(&[("member1", 7), ("member3", 7), ("member4", 10)]),
        ),
    ]);
}

#[test]
fn first_schedules_divide_by_allocatable_replicas() {
    // Test_dynamicScaleUp (every row has a single acceptable result).
    const M3: &[(&str, i32)] = &[("member1", 3), ("member2", 3), ("member3", 3)];
    const M6810: &[(&str, i32)] = &[("member1", 6), ("member2", 8), ("member3", 10)];
    check_dynamic(&[
        (
            "dynamic 12 over 6:8:10",
            "dynamic",
            M6810,
            &[],
            12,
            Some(&[("member1", 3), ("member2", 4), ("member3", 5)]),
        ),
        (
            "dynamic 12 over 8:8:10 evens out",
            "dynamic",
            &[("member1", 8), ("member2", 8), ("member3", 10)],
            &[],
            12,
            Some(&[("member1", 4), ("member2", 4), ("member3", 4)]),
        ),
        (
            "dynamic 12 over 3:3:3 does not fit",
            "dynamic",
            M3,
            &[],
            12,
            None,
        ),
        (
            "aggregated 12 over 6:8:10 takes the two largest",
            "aggregated",
            M6810,
            &[],
            12,
            Some(&[("member2", 5), ("member3", 7)]),
        ),
        (
            "aggregated 12 over 12:8:10 fits in the largest",
            "aggregated",
            &[("member1", 12), ("member2", 8), ("member3", 10)],
            &[],
            12,
            Some(&[("member1", 12)]),
        ),
        (
            "aggregated 12 over 3:3:3 does not fit",
            "aggregated",
            M3,
            &[],
            12,
            None,
        ),
        (
            "dynamic 12 over 3:3 with member3 gone: its 6 replicas are divided again",
            "dynamic",
            &[("member1", 3), ("member2", 3)],
            &[("member1", 6), ("member3", 6)],
            12,
            Some(&[("member1", 9), ("member2", 3)]),
        ),
    ]);
}

#[test]
fn duplicated_gives_every_candidate_the_full_count() {
    // Test_assignByDuplicatedStrategy. Karmada's "no candidates" row calls the strategy directly
    // (empty result); `AssignReplicas` refuses an empty list first, and so do we.
    let p = placement("duplicated");
    let two = [candidate("member1", 0), candidate("member2", 0)];
    let status = ResourceBindingStatus::default();
    let got = assign_in(&two, &p, &super::spec(2, &[]), &status, Mode::Steady);
    assert_eq!(
        by_name(got.expect("two")),
        pairs(&[("member1", 2), ("member2", 2)])
    );
    let got = assign_in(&two, &p, &super::spec(0, &[]), &status, Mode::Steady);
    assert_eq!(
        by_name(got.expect("zero")),
        pairs(&[("member1", 0), ("member2", 0)])
    );
    let err = assign_in(&[], &p, &super::spec(2, &[]), &status, Mode::Steady).expect_err("none");
    assert_eq!(err.to_string(), "no clusters available to schedule");
}

#[test]
fn too_little_capacity_stays_an_unschedulable_error_under_the_wrapper() {
    // Test_assignByDynamicStrategy_UnschedulableErrorPreserved.
    let got = assign_in(
        &[candidate("member1", 3)],
        &placement("dynamic"),
        &workload(10, &[]),
        &ResourceBindingStatus::default(),
        Mode::Steady,
    );
    assert_eq!(
        got,
        Err(ScheduleError::Unschedulable(
            "failed to scale up: Clusters available replicas 3 are not enough to schedule.".into()
        ))
    );
}

#[test]
fn a_fresh_aggregated_reschedule_does_not_prefer_the_clusters_in_use() {
    // Not a Karmada test row: `dynamicFreshScale` clears the previous result before dividing,
    // so Aggregated orders clusters only by allocatable + held replicas. member1 holds 4 and has
    // 2 free (weight 6), member2 has 10 free: a fresh 4 goes to member2.
    let list = candidates(&[("member1", 2), ("member2", 10)]);
    let status = ResourceBindingStatus::default();
    let spec = workload(4, &[("member1", 4)]);
    let got = assign_in(&list, &placement("aggregated"), &spec, &status, Mode::Fresh);
    assert_eq!(by_name(got.expect("fresh")), pairs(&[("member2", 4)]));
    // A steady scale-up still fills the cluster in use first.
    let spec = workload(6, &[("member1", 4)]);
    let got = assign_in(
        &list,
        &placement("aggregated"),
        &spec,
        &status,
        Mode::Steady,
    );
    assert_eq!(by_name(got.expect("steady")), pairs(&[("member1", 6)]));
}
