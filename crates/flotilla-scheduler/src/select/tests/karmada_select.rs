//! Karmada's `select_clusters_test.go` and `util_test.go` cases: the cluster spread constraint,
//! strategies that ignore capacity or constraints, and candidate order.

use super::*;

/// `TestSelectBestClusters`: candidates member4 (score 60, 50 available), member2 (40, 60),
/// member3 (30, 80), member1 (20, 40) under a cluster constraint.
#[test]
fn cluster_constraint_karmada_table() {
    let cs = [
        topology("member4", "P2", "R2", "Z2"),
        topology("member2", "P1", "R1", "Z2"),
        topology("member3", "P2", "R1", "Z1"),
        topology("member1", "P1", "R1", "Z1"),
    ];
    let d: Vec<_> = cs
        .iter()
        .zip([(60, 50), (40, 60), (30, 80), (20, 40)])
        .map(|(c, (score, available))| detail(c, score, available))
        .collect();
    let one_to_two = json!([{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]);
    let divided = json!({"replicaSchedulingType": "Divided"});
    // (description, placement, need replicas, selected or error)
    type Expected<'r> = Result<&'r [&'r str], &'r str>;
    let table: [(&str, Placement, i32, Expected<'_>); 6] = [
        (
            "without replicaScheduling: the best-scored clusters, capacity ignored",
            placement(json!({ "spreadConstraints": one_to_two })),
            100,
            Ok(&["member4", "member2"]),
        ),
        (
            "Duplicated ignores capacity",
            placement(json!({"spreadConstraints": one_to_two,
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}})),
            120,
            Ok(&["member4", "member2"]),
        ),
        (
            "static weights ignore the spread constraint: every candidate",
            placement(json!({"spreadConstraints": one_to_two,
                "replicaScheduling": {"replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Weighted",
                    "weightPreference": {"staticWeightList": [
                        {"targetCluster": {"clusterNames": ["member1"]}, "weight": 2}]}}})),
            120,
            Ok(&["member4", "member2", "member3", "member1"]),
        ),
        (
            "Divided: 50 + 60 < 120, so member3 (80) replaces member2",
            placement(json!({"spreadConstraints": one_to_two, "replicaScheduling": divided})),
            120,
            Ok(&["member4", "member3"]),
        ),
        (
            "Divided: no two clusters reach 200",
            placement(json!({"spreadConstraints": one_to_two, "replicaScheduling": divided})),
            200,
            Err("no enough resource when selecting 2 clusters"),
        ),
        (
            "more clusters required than feasible",
            placement(json!({"spreadConstraints":
                [{"spreadByField": "cluster", "minGroups": 7, "maxGroups": 7}]})),
            30,
            Err("the number of feasible clusters is less than spreadConstraint.MinGroups"),
        ),
    ];
    for (description, p, need, want) in table {
        let got = select_best_clusters(&p, &spec(need), &d, need);
        let got = got.as_ref().map(|s| names(s)).map_err(String::as_str);
        assert_eq!(got, want.map(<[&str]>::to_vec), "{description}");
    }
}

/// `TestIsSpreadConstraintExisted` has no direct counterpart; its two cases, seen through
/// selection: a cluster constraint next to a zone one is still applied, and without a cluster
/// constraint a region one selects only the best cluster of each region.
#[test]
fn cluster_constraint_found_among_other_fields() {
    let cs = [
        topology("m1", "P1", "R1", "Z1"),
        topology("m2", "P1", "R1", "Z1"),
        topology("m3", "P1", "R2", "Z1"),
    ];
    let d = details(&cs, &[(30, 10), (20, 10), (10, 10)]);
    let cluster_and_zone = placement(json!({"spreadConstraints": [
        {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1},
        {"spreadByField": "zone", "minGroups": 1, "maxGroups": 1}]}));
    let selected = select_best_clusters(&cluster_and_zone, &spec(1), &d, 1).expect("select");
    assert_eq!(names(&selected), ["m1"]);
    let region_and_zone = placement(json!({"spreadConstraints": [
        {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
        {"spreadByField": "zone", "minGroups": 1, "maxGroups": 1}]}));
    let selected = select_best_clusters(&region_and_zone, &spec(1), &d, 1).expect("select");
    assert_eq!(names(&selected), ["m1", "m3"]);
}

/// `Test_sortClusters`: score desc, then available replicas desc, then name. (Karmada's case
/// "same score, default to sort by name" sorts without the available-replicas comparison;
/// Flotilla always compares it, and that case's expected order is the same either way.)
#[test]
fn candidates_sort_by_score_then_available_then_name() {
    let cs = clusters(&[("a", ""), ("b", "")]);
    // (description, (score, available) of a and b, expected order)
    type Figures = [(i64, i64); 2];
    let table: [(&str, Figures, [&str; 2]); 4] = [
        ("different scores", [(1, 0), (2, 0)], ["b", "a"]),
        (
            "same score, a has more available",
            [(1, 10), (1, 5)],
            ["a", "b"],
        ),
        (
            "same score, b has more available",
            [(1, 5), (1, 10)],
            ["b", "a"],
        ),
        (
            "same score and available: by name",
            [(1, 5), (1, 5)],
            ["a", "b"],
        ),
    ];
    for (description, figures, want) in table {
        let mut d: Vec<_> = cs
            .iter()
            .zip(figures)
            .map(|(c, (score, available))| detail(c, score, available))
            .rev()
            .collect();
        sort_candidates(&mut d);
        assert_eq!(names(&d), want, "{description}");
    }
}
