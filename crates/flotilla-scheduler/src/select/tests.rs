use flotilla_api::karmada::Cluster;
use serde_json::json;

use super::*;

// Karmada's own unit-test cases (`pkg/scheduler/core/spreadconstraint/*_test.go`), restated.
mod karmada_groups;
mod karmada_regions;
mod karmada_select;

fn clusters(specs: &[(&str, &str)]) -> Vec<Cluster> {
    specs
        .iter()
        .map(|(name, region)| {
            serde_json::from_value(json!({"metadata": {"name": name},
                "spec": {"syncMode": "Push", "region": region}}))
            .expect("cluster")
        })
        .collect()
}

/// A cluster with a provider, a region and one zone, as Karmada's tests build them.
fn topology(name: &str, provider: &str, region: &str, zone: &str) -> Cluster {
    serde_json::from_value(
        json!({"metadata": {"name": name}, "spec": {"syncMode": "Push",
        "provider": provider, "region": region, "zones": [zone]}}),
    )
    .expect("cluster")
}

/// One candidate with the given score and available replicas, not re-sorted.
fn detail(cluster: &Cluster, score: i64, available: i64) -> ClusterDetail<'_> {
    ClusterDetail {
        name: cluster.name(),
        score,
        overflow_order: 0,
        available_replicas: available,
        allocatable_replicas: available as i32,
        cluster,
    }
}

fn details<'a>(clusters: &'a [Cluster], figures: &[(i64, i64)]) -> Vec<ClusterDetail<'a>> {
    let mut out: Vec<_> = clusters
        .iter()
        .zip(figures)
        .map(|(c, (score, available))| ClusterDetail {
            name: c.name(),
            score: *score,
            overflow_order: 0,
            available_replicas: *available,
            allocatable_replicas: *available as i32,
            cluster: c,
        })
        .collect();
    sort_candidates(&mut out);
    out
}

fn placement(value: serde_json::Value) -> Placement {
    serde_json::from_value(value).expect("placement")
}

fn names<'a>(selected: &[ClusterDetail<'a>]) -> Vec<&'a str> {
    selected.iter().map(|c| c.name).collect()
}

fn spec(replicas: i32) -> ResourceBindingSpec {
    ResourceBindingSpec {
        replicas,
        ..ResourceBindingSpec::default()
    }
}

#[test]
fn candidate_order() {
    let cs = clusters(&[("b", ""), ("a", ""), ("c", ""), ("d", "")]);
    let d = details(&cs, &[(0, 5), (0, 5), (100, 1), (0, 9)]);
    assert_eq!(names(&d), ["c", "d", "a", "b"]);
}

#[test]
fn cluster_constraint_swaps_in_capacity() {
    // Karmada's own example: need 2 clusters and 80 replicas ⇒ member1 and member3.
    let cs = clusters(&[("member1", ""), ("member2", ""), ("member3", "")]);
    let d = details(&cs, &[(60, 40), (50, 30), (40, 60)]);
    let p = placement(
        json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted", "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]}),
    );
    let selected = select_best_clusters(&p, &spec(80), &d, 80).expect("select");
    assert_eq!(names(&selected), ["member1", "member3"]);
    let err = select_best_clusters(&p, &spec(101), &d, 101).expect_err("short");
    assert_eq!(err, "no enough resource when selecting 2 clusters");
}

#[test]
fn cluster_constraint_min_groups_and_duplicated_ignores_capacity() {
    let cs = clusters(&[("m1", ""), ("m2", ""), ("m3", "")]);
    let d = details(&cs, &[(0, 1), (0, 1), (0, 1)]);
    let dup = placement(
        json!({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}]}),
    );
    let selected = select_best_clusters(&dup, &spec(50), &d, 50).expect("select");
    assert_eq!(names(&selected), ["m1", "m2"]);
    let too_many = placement(
        json!({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 4, "maxGroups": 5}]}),
    );
    assert_eq!(
        select_best_clusters(&too_many, &spec(1), &d, 1).expect_err("min"),
        "the number of feasible clusters is less than spreadConstraint.MinGroups"
    );
    let zone_only = placement(
        json!({"spreadConstraints": [{"spreadByField": "zone", "minGroups": 1, "maxGroups": 2}]}),
    );
    assert_eq!(
        select_best_clusters(&zone_only, &spec(1), &d, 1).expect_err("zone"),
        "just support cluster and region spread constraint"
    );
}

#[test]
fn static_weights_ignore_spread_constraints() {
    let cs = clusters(&[("m1", ""), ("m2", ""), ("m3", "")]);
    let d = details(&cs, &[(0, 1), (0, 1), (0, 1)]);
    let p = placement(
        json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted"},
        "spreadConstraints": [{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 1}]}),
    );
    assert_eq!(
        select_best_clusters(&p, &spec(3), &d, 3)
            .expect("select")
            .len(),
        3
    );
}

#[test]
fn region_constraint_picks_best_cluster_per_region_then_fills() {
    let cs = clusters(&[
        ("a1", "ra"),
        ("a2", "ra"),
        ("b1", "rb"),
        ("c1", "rc"),
        ("c2", "rc"),
        ("c3", "rc"),
    ]);
    let d = details(&cs, &[(0, 10), (0, 20), (0, 5), (0, 7), (0, 8), (0, 9)]);
    let p = placement(json!({"spreadConstraints": [
        {"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
        {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 4}]}));
    let selected = select_best_clusters(&p, &spec(2), &d, 2).expect("select");
    // Duplicated group score: valid clusters × 1000. ra = 2000, rc = 3000, rb = 1000.
    // Groups sorted by size: rb(1), ra(2), rc(3); feasible pairs with ≥ 3 clusters: (rb,rc),
    // (ra,rc) (weight 5000 wins), (ra, rb) has 3 clusters too but weight 3000.
    assert_eq!(names(&selected), ["c3", "a2", "a1", "c2"]);
}

#[test]
fn region_errors() {
    let cs = clusters(&[("a1", "ra"), ("b1", "rb")]);
    let d = details(&cs, &[(0, 10), (0, 10)]);
    let p = placement(json!({"spreadConstraints": [
        {"spreadByField": "region", "minGroups": 3, "maxGroups": 3},
        {"spreadByField": "cluster", "minGroups": 1, "maxGroups": 3}]}));
    assert_eq!(
        select_best_clusters(&p, &spec(1), &d, 1).expect_err("regions"),
        "the number of feasible region is less than spreadConstraint.MinGroups"
    );
    let p = placement(json!({"spreadConstraints": [
        {"spreadByField": "region", "minGroups": 1, "maxGroups": 2},
        {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 3}]}));
    assert_eq!(
        select_best_clusters(&p, &spec(1), &d, 1).expect_err("clusters"),
        "the number of clusters is less than the cluster spreadConstraint.MinGroups"
    );
}

fn group(name: &str, value: usize, weight: i64) -> GroupInfo {
    GroupInfo {
        name: name.into(),
        value,
        weight,
    }
}

#[test]
fn select_groups_prefers_weight_then_value_then_prefix() {
    let groups = vec![
        group("G1", 2, 300),
        group("G2", 3, 200),
        group("G3", 6, 100),
        group("G4", 7, 50),
    ];
    // min=max=2, target 7: feasible pairs; the best weight is G1+G2? 2+3 = 5 < 7, not feasible.
    // G1+G3 (400), G1+G4 (350), G2+G3 (300), G2+G4 (250), G3+G4 (150).
    assert_eq!(select_groups(groups.clone(), 2, 2, 7), ["G1", "G3"]);
    // With max 3, G1+G2+G3 (600) beats the pairs; G1+G2+G4 (550).
    assert_eq!(select_groups(groups.clone(), 1, 3, 7), ["G1", "G2", "G3"]);
    // Nothing can reach 100 clusters.
    assert!(select_groups(groups, 1, 4, 100).is_empty());
}

#[test]
fn select_groups_shorter_prefix_wins() {
    // DFS finds [X,Y,Z] (350, ordered X,Z,Y) and [X,Z] (300); the pair is a prefix of the
    // heavier triple, so it wins.
    let groups = vec![group("X", 1, 200), group("Y", 1, 50), group("Z", 3, 100)];
    assert_eq!(select_groups(groups, 1, 3, 3), ["X", "Z"]);
}
