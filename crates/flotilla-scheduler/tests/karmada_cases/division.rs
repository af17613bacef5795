//! Replica division: static weights (`Test_assignByStaticWeightStrategy`,
//! `Test_DistributionOfReplicas`), dynamic weights and Aggregated on a first schedule
//! (`Test_dynamicScaleUp`, `Test_dynamicDivideReplicas`), scaling (`Test_dynamicScale`), Fresh
//! reschedules, overflow tiers (`TestAssignReplicas`) and Duplicated.

use serde_json::json;

use super::{Case, ODD_UID, aggregated, check, dynamic, member, member_with, static_weights};

fn members(pods: &[i64]) -> Vec<serde_json::Value> {
    pods.iter()
        .enumerate()
        .map(|(i, p)| member(&format!("member{}", i + 1), *p))
        .collect()
}

const UNSCHEDULABLE: &str = "Unschedulable";

#[test]
fn static_weights_divide_by_webster_and_ignore_the_previous_result() {
    let m3 = || members(&[100, 100, 100]);
    let m4 = || members(&[100, 100, 100, 100]);
    let w321 = || static_weights(&[("member1", 3), ("member2", 2), ("member3", 1)]);
    let w2111 = || {
        static_weights(&[
            ("member1", 2),
            ("member2", 1),
            ("member3", 1),
            ("member4", 1),
        ])
    };
    let w1111 = || {
        static_weights(&[
            ("member1", 1),
            ("member2", 1),
            ("member3", 1),
            ("member4", 1),
        ])
    };
    let w111 = || static_weights(&[("member1", 1), ("member2", 1), ("member3", 1)]);
    let no_preference = json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted"}});
    check(vec![
        Case::new("12 replicas at 3:2:1 split 6/4/2", m3(), w321(), 12).placed(&[
            ("member1", 6),
            ("member2", 4),
            ("member3", 2),
        ]),
        Case::new("13 replicas at 3:2:1: the remainder goes to the heaviest", m3(), w321(), 13)
            .placed(&[("member1", 7), ("member2", 4), ("member3", 2)]),
        Case::new("14 replicas at 3:2:1 split 7/5/2", m3(), w321(), 14).placed(&[
            ("member1", 7),
            ("member2", 5),
            ("member3", 2),
        ]),
        Case::new(
            "without a weight preference every cluster weighs 1",
            m3(),
            no_preference.clone(),
            12,
        )
        .placed(&[("member1", 4), ("member2", 4), ("member3", 4)]),
        Case::new(
            "a workload scaled to 0 gets no cluster",
            members(&[100, 100]),
            static_weights(&[("member1", 1), ("member2", 1)]),
            0,
        )
        .requirements(json!({"resourceRequest": {"cpu": "100m"}}))
        .placed(&[]),
        Case::new(
            "a selected cluster no rule weighs gets nothing",
            members(&[100, 100]),
            static_weights(&[("member1", 1)]),
            2,
        )
        .placed(&[("member1", 2)]),
        Case::new(
            "a cluster matched by several rules takes the largest weight",
            members(&[100, 100]),
            static_weights(&[("member1", 1), ("member2", 1), ("member1", 2)]),
            3,
        )
        .placed(&[("member1", 2), ("member2", 1)]),
        Case::new("3 at 1:1: the odd replica goes to the smaller name", members(&[100, 100]),
            static_weights(&[("member1", 1), ("member2", 1)]), 3)
        .placed(&[("member1", 2), ("member2", 1)]),
        Case::new("3 at 1:1:1", m3(), w111(), 3).placed(&[
            ("member1", 1),
            ("member2", 1),
            ("member3", 1),
        ]),
        Case::new("scaling 3 to 5 at 1:1:1 recomputes 2/2/1", m3(), w111(), 5)
            .previous(&[("member1", 1), ("member2", 1), ("member3", 1)])
            .placed(&[("member1", 2), ("member2", 2), ("member3", 1)]),
        Case::new("7 at 2:1:1:1", m4(), w2111(), 7).placed(&[
            ("member1", 3),
            ("member2", 2),
            ("member3", 1),
            ("member4", 1),
        ]),
        Case::new("scaling 7 to 8 at 2:1:1:1", m4(), w2111(), 8)
            .previous(&[("member1", 3), ("member2", 2), ("member3", 1), ("member4", 1)])
            .placed(&[("member1", 3), ("member2", 2), ("member3", 2), ("member4", 1)]),
        Case::new("9 at 2:1:1:1", m4(), w2111(), 9).placed(&[
            ("member1", 3),
            ("member2", 2),
            ("member3", 2),
            ("member4", 2),
        ]),
        Case::new("scaling 9 to 8 at 2:1:1:1", m4(), w2111(), 8)
            .previous(&[("member1", 3), ("member2", 2), ("member3", 2), ("member4", 2)])
            .placed(&[("member1", 3), ("member2", 2), ("member3", 2), ("member4", 1)]),
        Case::new("6 at 1:1:1:1", m4(), w1111(), 6).placed(&[
            ("member1", 2),
            ("member2", 2),
            ("member3", 1),
            ("member4", 1),
        ]),
        Case::new("changing 1:1:1:1 to 2:1:1:1 at 6 replicas", m4(), w2111(), 6)
            .previous(&[("member1", 2), ("member2", 2), ("member3", 1), ("member4", 1)])
            .placed(&[("member1", 3), ("member2", 1), ("member3", 1), ("member4", 1)]),
        Case::new("5 at 1:1:1", m3(), w111(), 5).placed(&[
            ("member1", 2),
            ("member2", 2),
            ("member3", 1),
        ]),
        Case::new("adding a fourth cluster at 1:1:1:1 with 5 replicas", m4(), w1111(), 5)
            .previous(&[("member1", 2), ("member2", 2), ("member3", 1)])
            .placed(&[("member1", 2), ("member2", 1), ("member3", 1), ("member4", 1)]),
        Case::new("removing the fourth cluster at 1:1:1 with 6 replicas", m3(), w111(), 6)
            .previous(&[("member1", 2), ("member2", 2), ("member3", 1), ("member4", 1)])
            .placed(&[("member1", 2), ("member2", 2), ("member3", 2)]),
        Case::new(
            "an odd template UID gives ties to the larger names",
            m4(),
            w1111(),
            6,
        )
        .uid(ODD_UID)
        .placed(&[("member1", 1), ("member2", 1), ("member3", 2), ("member4", 2)]),
        Case::new(
            "weights by label selector: the largest matching rule wins, unlabelled clusters get nothing",
            vec![
                member_with("member1", 100, json!({"metadata": {"labels": {"tier": "gold", "zone": "a"}}})),
                member_with("member2", 100, json!({"metadata": {"labels": {"tier": "silver", "zone": "a"}}})),
                member_with("member3", 100, json!({"metadata": {"labels": {"tier": "silver"}}})),
                member("member4", 100),
            ],
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted", "weightPreference": {"staticWeightList": [
                    {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "gold"}}}, "weight": 3},
                    {"targetCluster": {"labelSelector": {"matchLabels": {"tier": "silver"}}}, "weight": 1},
                    {"targetCluster": {"labelSelector": {"matchLabels": {"zone": "a"}}}, "weight": 2}]}}}),
            14,
        )
        .placed(&[("member1", 7), ("member2", 5), ("member3", 2)]),
        Case::new(
            "no cluster matching any rule: every candidate weighs 1",
            m3(),
            static_weights(&[("elsewhere", 5)]),
            4,
        )
        .placed(&[("member1", 2), ("member2", 1), ("member3", 1)]),
    ]);
}

#[test]
fn dynamic_weights_and_aggregated_on_a_first_schedule() {
    check(vec![
        Case::new("12 over 6:8:10 available", members(&[6, 8, 10]), dynamic(), 12).placed(&[
            ("member1", 3),
            ("member2", 4),
            ("member3", 5),
        ]),
        Case::new("12 over 8:8:10 available", members(&[8, 8, 10]), dynamic(), 12).placed(&[
            ("member1", 4),
            ("member2", 4),
            ("member3", 4),
        ]),
        Case::new("12 over 18:12:6", members(&[18, 12, 6]), dynamic(), 12).placed(&[
            ("member1", 6),
            ("member2", 4),
            ("member3", 2),
        ]),
        Case::new("12 over 20:12:6", members(&[20, 12, 6]), dynamic(), 12).placed(&[
            ("member1", 6),
            ("member2", 4),
            ("member3", 2),
        ]),
        Case::new("12 over 6:12:6", members(&[6, 12, 6]), dynamic(), 12).placed(&[
            ("member1", 3),
            ("member2", 6),
            ("member3", 3),
        ]),
        Case::new("12 over 3:3:3 does not fit", members(&[3, 3, 3]), dynamic(), 12).fails(
            UNSCHEDULABLE,
            "failed to assign replicas: failed to scale up: Clusters available replicas 9 are not enough to schedule.",
        ),
        Case::new(
            "aggregated 12 over 6:8:10 uses the two largest",
            members(&[6, 8, 10]),
            aggregated(),
            12,
        )
        .placed(&[("member2", 5), ("member3", 7)]),
        Case::new(
            "aggregated 12 over 12:8:10 fits in one",
            members(&[12, 8, 10]),
            aggregated(),
            12,
        )
        .placed(&[("member1", 12)]),
        Case::new(
            "aggregated 12 over 6:12:6 fits in the middle one",
            members(&[6, 12, 6]),
            aggregated(),
            12,
        )
        .placed(&[("member2", 12)]),
        Case::new(
            "aggregated 12 over 6:6:6: equal clusters are taken by name",
            members(&[6, 6, 6]),
            aggregated(),
            12,
        )
        .placed(&[("member1", 6), ("member2", 6)]),
        Case::new("aggregated 12 over 3:3:3 does not fit", members(&[3, 3, 3]), aggregated(), 12)
            .fails(
                UNSCHEDULABLE,
                "failed to assign replicas: failed to scale up: Clusters available replicas 9 are not enough to schedule.",
            ),
        Case::new(
            "a previous cluster that vanished: its replicas are divided again",
            vec![member("member1", 3), member("member2", 3)],
            dynamic(),
            12,
        )
        .previous(&[("member1", 6), ("member3", 6)])
        .placed(&[("member1", 9), ("member2", 3)]),
    ]);
}

#[test]
fn dynamic_scaling_keeps_the_previous_result() {
    let prev = [("member1", 2), ("member2", 4), ("member3", 6)];
    let agg_prev = [("member1", 4), ("member2", 8)];
    check(vec![
        Case::new("12 to 6 shrinks by the previous counts", members(&[1, 1, 1]), dynamic(), 6)
            .previous(&prev)
            .placed(&[("member1", 1), ("member2", 2), ("member3", 3)]),
        Case::new("12 to 24 divides only the increase", members(&[10, 10, 10]), dynamic(), 24)
            .previous(&prev)
            .placed(&[("member1", 6), ("member2", 8), ("member3", 10)]),
        Case::new("12 to 24 with 1:1:1 free does not fit", members(&[1, 1, 1]), dynamic(), 24)
            .previous(&prev)
            .fails(
                UNSCHEDULABLE,
                "failed to assign replicas: failed to scale up: Clusters available replicas 3 are not enough to schedule.",
            ),
        Case::new("unchanged replicas keep the previous result", members(&[0, 0, 0]), dynamic(), 12)
            .previous(&prev)
            .placed(&prev),
        Case::new("aggregated 12 to 6 keeps the fullest cluster", members(&[1, 1, 1]), aggregated(), 6)
            .previous(&agg_prev)
            .placed(&[("member2", 6)]),
        Case::new("aggregated 12 to 8", members(&[100, 100]), aggregated(), 8)
            .previous(&agg_prev)
            .placed(&[("member2", 8)]),
        Case::new("aggregated 12 to 24 over 4:6:8 free", members(&[4, 6, 8]), aggregated(), 24)
            .previous(&agg_prev)
            .placed(&[("member1", 7), ("member2", 12), ("member3", 5)]),
        Case::new(
            "aggregated 12 to 24 over 6:6:20 free stays on the clusters in use",
            members(&[6, 6, 20]),
            aggregated(),
            24,
        )
        .previous(&agg_prev)
        .placed(&[("member1", 10), ("member2", 14)]),
        Case::new("aggregated 12 to 24 with 1:1:1 free does not fit", members(&[1, 1, 1]), aggregated(), 24)
            .previous(&agg_prev)
            .fails(
                UNSCHEDULABLE,
                "failed to assign replicas: failed to scale up: Clusters available replicas 3 are not enough to schedule.",
            ),
        Case::new(
            "aggregated 12 to 24 after member2 vanished and member4 appeared",
            vec![member("member1", 4), member("member3", 8), member("member4", 12)],
            aggregated(),
            24,
        )
        .previous(&agg_prev)
        .placed(&[("member1", 7), ("member3", 7), ("member4", 10)]),
    ]);
}

#[test]
fn fresh_reschedule_recomputes_from_scratch() {
    let triggered = json!({"lastScheduledTime": "2026-01-01T00:00:00Z"});
    let fresh = |name, pods: &[i64], replicas| {
        Case::new(name, members(pods), dynamic(), replicas)
            .previous(&[("member1", 2), ("member2", 4), ("member3", 6)])
            .status(triggered.clone())
    };
    check(vec![
        // Weights are allocatable + previous: 12, 4, 6. Webster's exact ties (4/1 = 12/3)
        // go to the party with fewer seats.
        with_trigger(fresh("a fresh 12 over 10:0:0 free", &[10, 0, 0], 12))
            .placed(&[("member1", 7), ("member2", 2), ("member3", 3)]),
        with_trigger(fresh("a fresh 24 over 1:1:1 free", &[1, 1, 1], 24)).fails(
            UNSCHEDULABLE,
            "failed to assign replicas: failed to do fresh scale: Clusters available replicas 15 are not enough to schedule.",
        ),
        // Without the trigger the same input is a steady state.
        fresh("no trigger: steady", &[10, 0, 0], 12)
            .placed(&[("member1", 2), ("member2", 4), ("member3", 6)]),
    ]);
}

/// Sets `rescheduleTriggeredAt` after `lastScheduledTime`.
fn with_trigger(case: Case) -> Case {
    case.triggered_at("2026-01-02T00:00:00Z")
}

#[test]
fn overflow_affinities_fill_tiers_in_order() {
    let overflow = || {
        let mut p = dynamic();
        p["clusterAffinities"] = json!([{"affinityName": "affinity1",
            "clusterNames": ["member1"],
            "overflowAffinities": [{"affinityName": "overflow", "clusterNames": ["member2"]}]}]);
        p
    };
    let observed = json!({"schedulerObservingAffinityName": "affinity1"});
    check(vec![
        Case::new("the primary tier has room", members(&[10, 10]), overflow(), 5)
            .status(observed.clone())
            .placed(&[("member1", 5)]),
        Case::new("the primary tier is full: the rest overflows", members(&[2, 10]), overflow(), 5)
            .status(observed.clone())
            .placed(&[("member1", 2), ("member2", 3)]),
        Case::new("every tier is full", members(&[2, 2]), overflow(), 10)
            .status(observed.clone())
            .fails(
                UNSCHEDULABLE,
                "failed to assign replicas: Clusters available replicas are not enough to schedule.",
            ),
        Case::new(
            "replicas already in the primary tier count towards its room",
            members(&[2, 10]),
            overflow(),
            8,
        )
        .status(observed.clone())
        .previous(&[("member1", 3)])
        .placed(&[("member1", 5), ("member2", 3)]),
    ]);
}

#[test]
fn duplicated_gives_every_cluster_all_replicas() {
    check(vec![
        Case::new("two clusters", members(&[1, 1]), json!({}), 2)
            .placed(&[("member1", 2), ("member2", 2)]),
        Case::new(
            "a non-workload lists every cluster without replicas",
            members(&[1, 1]),
            json!({}),
            0,
        )
        .kind("ConfigMap")
        .placed(&[("member1", 0), ("member2", 0)]),
        Case::new(
            "unsupported strategy",
            members(&[1]),
            json!({"replicaScheduling": {"replicaSchedulingType": "UnsupportedType",
                "replicaDivisionPreference": "UnsupportedPreference"}}),
            3,
        )
        .fails(
            "SchedulerError",
            "failed to assign replicas: unsupported replica scheduling strategy, replicaSchedulingType: UnsupportedType, replicaDivisionPreference: UnsupportedPreference, please try another scheduling strategy",
        ),
    ]);
}

#[test]
fn tie_breaks() {
    let even_uid = "4858ca61-3ff8-4095-8267-f3d059d8074c";
    check(vec![
        Case::new(
            "dynamic: an odd replica over equal clusters goes to the smaller name (empty UID)",
            members(&[4, 4]),
            dynamic(),
            3,
        )
        .placed(&[("member1", 2), ("member2", 1)]),
        Case::new(
            "dynamic: the same with an even UID hash",
            members(&[4, 4]),
            dynamic(),
            3,
        )
        .uid(even_uid)
        .placed(&[("member1", 2), ("member2", 1)]),
        Case::new(
            "dynamic: an odd UID hash gives it to the larger name",
            members(&[4, 4]),
            dynamic(),
            3,
        )
        .uid(ODD_UID)
        .placed(&[("member1", 1), ("member2", 2)]),
        Case::new(
            "aggregated: equal room, the smaller name is filled first",
            vec![member("zeta", 5), member("alpha", 5), member("mid", 3)],
            aggregated(),
            5,
        )
        .placed(&[("alpha", 5)]),
        Case::new(
            "aggregated: the UID does not choose the cluster, only Webster's ties",
            vec![member("zeta", 5), member("alpha", 5), member("mid", 3)],
            aggregated(),
            5,
        )
        .uid(ODD_UID)
        .placed(&[("alpha", 5)]),
        Case::new(
            "aggregated: more room wins over the name",
            vec![member("alpha", 4), member("zeta", 6)],
            aggregated(),
            4,
        )
        .placed(&[("zeta", 4)]),
        Case::new(
            "aggregated: a cluster already used comes first, even with less room",
            vec![member("alpha", 2), member("zeta", 10)],
            aggregated(),
            5,
        )
        .previous(&[("alpha", 1)])
        // 4 new replicas over 2:10; Webster's third seat is an exact tie (2/1 = 10/5) that the
        // party with fewer seats wins.
        .placed(&[("alpha", 2), ("zeta", 3)]),
        Case::new(
            "aggregated: the cluster in use alone when it has room",
            vec![member("alpha", 4), member("zeta", 10)],
            aggregated(),
            5,
        )
        .previous(&[("alpha", 1)])
        .placed(&[("alpha", 5)]),
    ]);
}
