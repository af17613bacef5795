//! Cluster selection: spread constraints by cluster (`TestSelectBestClusters`,
//! `TestSelectClusters`), region groups (`TestSelectGroups`) and the clusterAffinities fallback.

use flotilla_scheduler::select::{GroupInfo, select_groups};
use serde_json::{Value, json};

use super::{Case, aggregated, check, dynamic, member, member_with, scored};

/// Karmada's four-cluster fixture: (name, available replicas, score).
fn fixture() -> Vec<Value> {
    vec![
        scored("member4", 50, 60),
        scored("member2", 60, 40),
        scored("member3", 80, 30),
        scored("member1", 40, 20),
    ]
}

fn spread(placement: Value, min: i64, max: i64) -> Value {
    let mut p = placement;
    p["spreadConstraints"] =
        json!([{"spreadByField": "cluster", "minGroups": min, "maxGroups": max}]);
    p
}

const SELECT_ERROR: &str = "SchedulerError";

#[test]
fn cluster_spread_constraints() {
    let divided_no_preference = json!({"replicaScheduling": {"replicaSchedulingType": "Divided"}});
    check(vec![
        Case::new(
            "the best-scored clusters, capacity ignored without replicaScheduling",
            fixture(),
            spread(json!({}), 1, 2),
            100,
        )
        .placed(&[("member2", 100), ("member4", 100)]),
        Case::new(
            "Duplicated ignores capacity",
            fixture(),
            spread(json!({"replicaScheduling": {"replicaSchedulingType": "Duplicated"}}), 1, 2),
            120,
        )
        .placed(&[("member2", 120), ("member4", 120)]),
        Case::new(
            "static weights ignore spread constraints",
            fixture(),
            spread(
                json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Weighted", "weightPreference": {"staticWeightList": [
                        {"targetCluster": {"clusterNames": ["member1"]}, "weight": 2}]}}}),
                1,
                2,
            ),
            120,
        )
        .placed(&[("member1", 120)]),
        Case::new(
            "Divided without a preference defaults to even static weights and ignores the spread",
            fixture(),
            spread(divided_no_preference, 1, 2),
            120,
        )
        .placed(&[("member1", 30), ("member2", 30), ("member3", 30), ("member4", 30)]),
        Case::new(
            "short of capacity, the last selected cluster is swapped for a bigger one",
            fixture(),
            spread(dynamic(), 1, 2),
            120,
        )
        .placed(&[("member3", 74), ("member4", 46)]),
        Case::new(
            "aggregated after the swap",
            fixture(),
            spread(aggregated(), 1, 2),
            120,
        )
        .placed(&[("member3", 74), ("member4", 46)]),
        Case::new("not enough capacity in any two clusters", fixture(), spread(dynamic(), 1, 2), 200)
            .fails(
                SELECT_ERROR,
                "failed to select clusters: no enough resource when selecting 2 clusters",
            ),
        Case::new("fewer clusters than minGroups", fixture(), spread(json!({}), 7, 7), 30).fails(
            SELECT_ERROR,
            "failed to select clusters: the number of feasible clusters is less than spreadConstraint.MinGroups",
        ),
        Case::new(
            "maxGroups left at 0 selects nothing (Duplicated)",
            fixture(),
            json!({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1}]}),
            3,
        )
        .fails(SELECT_ERROR, "failed to assign replicas: no clusters available to schedule"),
        Case::new(
            "maxGroups left at 0 selects nothing (dynamic weights)",
            fixture(),
            {
                let mut p = dynamic();
                p["spreadConstraints"] = json!([{"spreadByField": "cluster", "minGroups": 1}]);
                p
            },
            3,
        )
        .fails(
            SELECT_ERROR,
            "failed to select clusters: no enough resource when selecting 0 clusters",
        ),
        Case::new(
            "the top cluster within the affinity",
            vec![scored("cluster1", 10, 10), scored("cluster2", 10, 20), scored("cluster3", 10, 15)],
            {
                let mut p = spread(json!({}), 1, 1);
                p["clusterAffinity"] = json!({"clusterNames": ["cluster1", "cluster2", "cluster3"]});
                p
            },
            1,
        )
        .placed(&[("cluster2", 1)]),
        Case::new(
            "overflow tiers order candidates before scores",
            vec![scored("cluster1", 10, 10), scored("cluster2", 10, 20)],
            {
                let mut p = spread(dynamic(), 1, 1);
                p["clusterAffinities"] = json!([{"affinityName": "affinity1",
                    "clusterNames": ["cluster1"],
                    "overflowAffinities": [{"affinityName": "overflow", "clusterNames": ["cluster2"]}]}]);
                p
            },
            2,
        )
        .status(json!({"schedulerObservingAffinityName": "affinity1"}))
        .placed(&[("cluster1", 2)]),
        Case::new(
            "spreading by zone alone is only a filter and selection fails",
            vec![
                member_with("member1", 10, json!({"spec": {"zones": ["z1"]}})),
                member("member2", 10),
            ],
            json!({"spreadConstraints": [{"spreadByField": "zone", "minGroups": 1, "maxGroups": 1}]}),
            1,
        )
        .fails(SELECT_ERROR, "failed to select clusters: just support cluster and region spread constraint"),
    ]);
}

#[test]
fn region_spread_constraints() {
    let region = |name: &str, pods: i64, region: &str| {
        member_with(name, pods, json!({"spec": {"region": region}}))
    };
    let clusters = || {
        vec![
            region("member1", 40, "R1"),
            region("member2", 40, "R1"),
            region("member3", 40, "R2"),
            region("member4", 40, "R2"),
            region("member5", 40, "R2"),
            member("member6", 40),
        ]
    };
    let placement = |region_groups: (i64, i64), cluster_groups: (i64, i64)| {
        let mut p = dynamic();
        p["spreadConstraints"] = json!([
            {"spreadByField": "region", "minGroups": region_groups.0, "maxGroups": region_groups.1},
            {"spreadByField": "cluster", "minGroups": cluster_groups.0, "maxGroups": cluster_groups.1}]);
        p
    };
    check(vec![
        // Group scores (Divided): target ceil(60/1) = 60, reached by two clusters in either
        // region (60·1000 each); on equal scores the region with more clusters wins, then its
        // best cluster and the next by (score, available, name) up to the cluster maxGroups.
        // member6 has no region and is filtered.
        Case::new("equal region scores: more clusters wins", clusters(), placement((1, 1), (2, 2)), 60)
            .placed(&[("member3", 30), ("member4", 30)]),
        Case::new("only R2 has three clusters", clusters(), placement((1, 1), (3, 3)), 60)
            .placed(&[("member3", 20), ("member4", 20), ("member5", 20)]),
        Case::new("two regions fill up to the cluster maxGroups", clusters(), placement((2, 2), (4, 5)), 120)
            .placed(&[
                ("member1", 24),
                ("member2", 24),
                ("member3", 24),
                ("member4", 24),
                ("member5", 24),
            ]),
        Case::new("not enough regions", clusters(), placement((3, 3), (1, 5)), 10).fails(
            SELECT_ERROR,
            "failed to select clusters: the number of feasible region is less than spreadConstraint.MinGroups",
        ),
        Case::new("no region combination has enough clusters", clusters(), placement((1, 1), (4, 4)), 10)
            .fails(
                SELECT_ERROR,
                "failed to select clusters: the number of clusters is less than the cluster spreadConstraint.MinGroups",
            ),
    ]);
}

fn group(name: &str, value: usize, weight: i64) -> GroupInfo {
    GroupInfo {
        name: name.to_owned(),
        value,
        weight,
    }
}

#[test]
fn select_groups_table() {
    type Row = (
        &'static str,
        Vec<GroupInfo>,
        usize,
        usize,
        usize,
        Vec<&'static str>,
    );
    let table: Vec<Row> = vec![
        ("empty groups", vec![], 2, 3, 1, vec![]),
        (
            "not enough groups",
            vec![group("R1", 1, 80)],
            2,
            3,
            1,
            vec![],
        ),
        (
            "not enough clusters",
            vec![group("R1", 1, 80), group("R2", 2, 30)],
            2,
            3,
            4,
            vec![],
        ),
        ("one group", vec![group("R1", 1, 80)], 1, 3, 1, vec!["R1"]),
        (
            "the heaviest feasible combination, ordered by weight then name",
            vec![
                group("R1", 1, 80),
                group("R3", 1, 80),
                group("R2", 1, 60),
                group("R5", 2, 60),
                group("R4", 5, 50),
                group("R6", 3, 50),
            ],
            1,
            3,
            10,
            vec!["R5", "R4", "R6"],
        ),
        (
            "a prefix of the best combination wins",
            vec![
                group("R1", 1, 80),
                group("R2", 4, 40),
                group("R3", 1, 30),
                group("R4", 3, 30),
                group("R5", 3, 20),
                group("R6", 5, 10),
            ],
            2,
            6,
            5,
            vec!["R1", "R2"],
        ),
        (
            "the highest score",
            vec![
                group("R1", 1, 60),
                group("R2", 1, 50),
                group("R3", 1, 40),
                group("R4", 3, 30),
                group("R5", 3, 20),
                group("R6", 3, 10),
            ],
            1,
            3,
            6,
            vec!["R1", "R4", "R5"],
        ),
        (
            "equal score and clusters: the one found first",
            vec![
                group("R1", 1, 60),
                group("R2", 2, 50),
                group("R3", 3, 40),
                group("R4", 4, 30),
            ],
            1,
            2,
            5,
            vec!["R1", "R4"],
        ),
        (
            "equal score: more clusters",
            vec![
                group("R4", 1, 60),
                group("R3", 3, 50),
                group("R1", 3, 40),
                group("R2", 4, 30),
            ],
            1,
            2,
            5,
            vec!["R3", "R1"],
        ),
    ];
    for (name, groups, min, max, target, want) in table {
        assert_eq!(select_groups(groups, min, max, target), want, "{name}");
    }
}

#[test]
fn cluster_affinities_fall_back_in_order() {
    let terms = || {
        json!({"clusterAffinities": [
            {"affinityName": "local", "clusterNames": ["member1"]},
            {"affinityName": "cloud", "clusterNames": ["member2", "member3"]}],
            "replicaScheduling": {"replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"}}})
    };
    let clusters = || {
        vec![
            member("member1", 2),
            member("member2", 4),
            member("member3", 4),
        ]
    };
    check(vec![
        Case::new("the first term fits", clusters(), terms(), 2).placed(&[("member1", 2)]),
        Case::new("the first term is short: the second is tried", clusters(), terms(), 6)
            .placed(&[("member2", 3), ("member3", 3)]),
        Case::new(
            "every term fails: the first error is reported",
            clusters(),
            terms(),
            20,
        )
        .fails(
            "Unschedulable",
            "failed to assign replicas: failed to scale up: Clusters available replicas 2 are not enough to schedule.",
        ),
        Case::new(
            "a later observed term is sticky even when an earlier one would fit",
            clusters(),
            terms(),
            2,
        )
        .status(json!({"schedulerObservingAffinityName": "cloud"}))
        .placed(&[("member2", 1), ("member3", 1)]),
        Case::new(
            "a Fresh reschedule starts again from the first term",
            clusters(),
            terms(),
            2,
        )
        .status(json!({"schedulerObservingAffinityName": "cloud",
            "lastScheduledTime": "2026-01-01T00:00:00Z"}))
        .triggered_at("2026-01-02T00:00:00Z")
        .placed(&[("member1", 2)]),
        Case::new(
            "no term fits any cluster: NoClusterFit of the first term",
            clusters(),
            json!({"clusterAffinities": [
                {"affinityName": "a", "clusterNames": ["nowhere"]},
                {"affinityName": "b", "clusterNames": ["elsewhere"]}]}),
            1,
        )
        .fails(
            "NoClusterFit",
            "0/3 clusters are available: 3 cluster(s) did not match the placement cluster affinity constraint.",
        ),
        Case::new(
            "an empty clusterAffinities list is no affinity (Karmada drops it on the way to the binding)",
            clusters(),
            json!({"clusterAffinities": []}),
            1,
        )
        .placed(&[("member1", 1), ("member2", 1), ("member3", 1)]),
    ]);
}
