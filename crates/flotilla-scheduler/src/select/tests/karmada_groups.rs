//! Karmada's `group_clusters_test.go` and `select_groups_test.go` cases: candidate order, region
//! grouping, group scores and the `selectGroups` combination search.

use super::*;

/// `Test_GroupClustersWithScore`: four clusters, 100 available replicas each, scored 20/40/30/60.
/// Candidates are ordered by score whatever the constraints; a region constraint groups them into
/// R1 and R2. (Karmada also builds zone and provider groups; Flotilla does not, as selection never
/// reads them, so those counts have no counterpart.)
#[test]
fn candidates_order_by_score_and_group_into_two_regions() {
    let cs = [
        topology("member1", "P1", "R1", "Z1"),
        topology("member2", "P1", "R1", "Z2"),
        topology("member3", "P2", "R1", "Z1"),
        topology("member4", "P2", "R2", "Z2"),
    ];
    let mut d: Vec<_> = cs
        .iter()
        .zip([20, 40, 30, 60])
        .map(|(c, score)| detail(c, score, 100))
        .collect();
    sort_candidates(&mut d);
    assert_eq!(names(&d), ["member4", "member2", "member3", "member1"]);

    let one = |field: &str| json!({"spreadByField": field, "minGroups": 1, "maxGroups": 1});
    let table = [
        ("region alone", json!([one("region")])),
        (
            "provider, region and zone",
            json!([one("provider"), one("region"), one("zone")]),
        ),
    ];
    for (description, constraints) in table {
        let p = placement(json!({ "spreadConstraints": constraints }));
        let regions = group_regions(&p, &spec(0), &d, 1);
        let grouped: Vec<(&str, Vec<&str>)> = regions
            .values()
            .map(|r| (r.name, r.clusters.iter().map(|c| c.name).collect()))
            .collect();
        assert_eq!(
            grouped,
            [
                ("R1", vec!["member2", "member3", "member1"]),
                ("R2", vec!["member4"]),
            ],
            "{description}"
        );
    }
}

/// Karmada's `generateClusterScores`: `memberN` with the given scores and available replicas.
fn members<'a>(cs: &'a [Cluster], scores: [i64; 5], available: [i64; 5]) -> Vec<ClusterDetail<'a>> {
    cs.iter()
        .zip(scores.into_iter().zip(available))
        .map(|(c, (score, available))| detail(c, score, available))
        .collect()
}

/// Karmada's `generateRbSpec` placements, by name.
fn strategy(kind: &str) -> Placement {
    let scheduling = match kind {
        "duplicated" => json!({"replicaSchedulingType": "Duplicated"}),
        "aggregated" => json!({"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Aggregated"}),
        "dynamicWeight" => json!({"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"}}),
        "staticWeight" => json!({"replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": []}}),
        other => panic!("unknown strategy {other}"),
    };
    placement(json!({ "replicaScheduling": scheduling }))
}

/// `Test_CalcGroupScore`: which of two five-cluster groups scores at least as high as the other.
#[test]
fn group_score_prefers_capacity_then_score() {
    let cs: Vec<Cluster> = (1..=5)
        .map(|i| topology(&format!("member{i}"), "P1", "R1", "Z1"))
        .collect();
    type Figures = ([i64; 5], [i64; 5]);
    // (description, group 1, group 2, strategy, replicas, region minGroups, group 1 wins)
    let table: [(&str, Figures, Figures, &str, i32, usize, bool); 6] = [
        (
            "Duplicated: more clusters able to run every replica wins",
            ([100, 100, 0, 0, 0], [30, 30, 30, 30, 30]),
            ([100; 5], [30, 30, 30, 10, 10]),
            "duplicated",
            20,
            0,
            true,
        ),
        (
            "Duplicated: as many able clusters, the higher average score wins",
            ([100, 100, 0, 0, 0], [30, 30, 30, 10, 10]),
            ([100; 5], [30, 30, 30, 10, 10]),
            "duplicated",
            20,
            0,
            false,
        ),
        (
            "Aggregated: a group reaching the per-region target beats one short of it",
            ([100, 100, 0, 0, 0], [30, 30, 30, 10, 10]),
            ([100; 5], [10, 10, 10, 5, 5]),
            "aggregated",
            100,
            2,
            true,
        ),
        (
            "dynamic weight: both short, more available replicas wins",
            ([100, 100, 0, 0, 0], [10, 10, 10, 10, 5]),
            ([100; 5], [10, 10, 10, 5, 5]),
            "dynamicWeight",
            100,
            2,
            true,
        ),
        (
            "static weight: equally short, the higher average score wins",
            ([100, 100, 0, 0, 0], [10, 10, 10, 5, 5]),
            ([100; 5], [10, 10, 10, 5, 5]),
            "staticWeight",
            100,
            2,
            false,
        ),
        (
            "Aggregated: both reach the target, the higher score wins over more capacity",
            ([0; 5], [100; 5]),
            ([100; 5], [50; 5]),
            "aggregated",
            100,
            2,
            false,
        ),
    ];
    for (description, (scores1, available1), (scores2, available2), kind, replicas, min, wins) in
        table
    {
        let p = strategy(kind);
        let s = spec(replicas);
        let group1 = members(&cs, scores1, available1);
        let group2 = members(&cs, scores2, available2);
        let score1 = group_score(&group1.iter().collect::<Vec<_>>(), &p, &s, min);
        let score2 = group_score(&group2.iter().collect::<Vec<_>>(), &p, &s, min);
        assert_eq!(
            score1 >= score2,
            wins,
            "{description}: {score1} vs {score2}"
        );
    }
}

/// `Test_CalcGroupScoreForDuplicate`: no cluster able to run every replica scores 0.
#[test]
fn duplicated_group_without_able_clusters_scores_zero() {
    let p = strategy("duplicated");
    let cs = [
        topology("member1", "P1", "R1", "Z1"),
        topology("member2", "P1", "R1", "Z1"),
    ];
    let short = [detail(&cs[0], 50, 5), detail(&cs[1], 50, 5)];
    let table: [(&str, Vec<&ClusterDetail<'_>>); 2] = [
        ("no clusters", Vec::new()),
        ("every cluster short of 10", short.iter().collect()),
    ];
    for (description, clusters) in table {
        assert_eq!(group_score(&clusters, &p, &spec(10), 0), 0, "{description}");
    }
}

/// `TestSelectGroups`: (description, groups as (name, clusters, score), min, max, target,
/// expected names in the returned order).
#[test]
fn select_groups_karmada_table() {
    type Row<'r> = (
        &'r str,
        &'r [(&'r str, usize, i64)],
        usize,
        usize,
        usize,
        &'r [&'r str],
    );
    let table: [Row<'_>; 9] = [
        ("no groups", &[], 2, 3, 1, &[]),
        ("fewer groups than min", &[("R1", 1, 80)], 2, 3, 1, &[]),
        (
            "too few clusters in all groups together",
            &[("R1", 1, 80), ("R2", 2, 30)],
            2,
            3,
            4,
            &[],
        ),
        ("a single group", &[("R1", 1, 80)], 1, 3, 1, &["R1"]),
        (
            "only one combination reaches the target",
            &[
                ("R1", 1, 80),
                ("R3", 1, 80),
                ("R2", 1, 60),
                ("R5", 2, 60),
                ("R4", 5, 50),
                ("R6", 3, 50),
            ],
            1,
            3,
            10,
            &["R5", "R4", "R6"],
        ),
        (
            "a shorter prefix of the heaviest combination wins",
            &[
                ("R1", 1, 80),
                ("R2", 4, 40),
                ("R3", 1, 30),
                ("R4", 3, 30),
                ("R5", 3, 20),
                ("R6", 5, 10),
            ],
            2,
            6,
            5,
            &["R1", "R2"],
        ),
        (
            "the highest total score wins",
            &[
                ("R1", 1, 60),
                ("R2", 1, 50),
                ("R3", 1, 40),
                ("R4", 3, 30),
                ("R5", 3, 20),
                ("R6", 3, 10),
            ],
            1,
            3,
            6,
            &["R1", "R4", "R5"],
        ),
        (
            "equal score and clusters: the combination found first wins",
            &[("R1", 1, 60), ("R2", 2, 50), ("R3", 3, 40), ("R4", 4, 30)],
            1,
            2,
            5,
            &["R1", "R4"],
        ),
        (
            "equal score: more clusters wins",
            &[("R4", 1, 60), ("R3", 3, 50), ("R1", 3, 40), ("R2", 4, 30)],
            1,
            2,
            5,
            &["R3", "R1"],
        ),
    ];
    for (description, groups, min, max, target, want) in table {
        let groups = groups
            .iter()
            .map(|&(name, value, weight)| group(name, value, weight))
            .collect();
        assert_eq!(
            select_groups(groups, min, max, target),
            want,
            "{description}"
        );
    }
}
