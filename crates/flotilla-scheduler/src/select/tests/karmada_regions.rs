//! Karmada's `select_clusters_by_region_test.go` cases: regions with given scores and clusters
//! (in candidate order), a region constraint and a cluster constraint.

use super::*;

/// A region as Karmada's cases give it: name, group score, and (cluster, score, available).
type Region<'r> = (&'r str, i64, &'r [(&'r str, i64, i64)]);

/// Runs the region algorithm with `(minGroups, maxGroups)` for regions and clusters.
fn by_region(
    region: (usize, usize),
    cluster: (usize, usize),
    regions: &[Region<'_>],
) -> Result<Vec<String>, String> {
    let constraint = |field: &str, (min_groups, max_groups)| SpreadConstraint {
        spread_by_field: field.into(),
        min_groups,
        max_groups,
        ..SpreadConstraint::default()
    };
    let clusters: Vec<Vec<Cluster>> = regions
        .iter()
        .map(|(region, _, members)| {
            members
                .iter()
                .map(|(name, _, _)| topology(name, "P1", region, "Z1"))
                .collect()
        })
        .collect();
    let details: Vec<Vec<ClusterDetail<'_>>> = regions
        .iter()
        .zip(&clusters)
        .map(|((_, _, members), cs)| {
            members
                .iter()
                .zip(cs)
                .map(|(&(_, score, available), c)| detail(c, score, available))
                .collect()
        })
        .collect();
    let map = regions
        .iter()
        .zip(&details)
        .map(|(&(name, score, _), ds)| {
            let info = RegionInfo {
                name,
                score,
                clusters: ds.iter().collect(),
            };
            (name, info)
        })
        .collect();
    select_by_region(
        &constraint("region", region),
        &constraint("cluster", cluster),
        map,
    )
    .map(|selected| selected.iter().map(|c| c.name.to_owned()).collect())
}

const TWO_REGIONS: [Region<'static>; 2] = [
    ("R1", 100, &[("member1", 100, 40), ("member2", 80, 40)]),
    (
        "R2",
        80,
        &[
            ("member3", 80, 40),
            ("member4", 80, 40),
            ("member5", 60, 40),
        ],
    ),
];

#[test]
fn one_region_with_the_higher_score_when_both_have_enough_clusters() {
    let selected = by_region((1, 1), (2, 2), &TWO_REGIONS).expect("select");
    assert_eq!(selected, ["member1", "member2"]);
}

#[test]
fn one_region_with_enough_clusters_beats_a_higher_score() {
    let selected = by_region((1, 1), (3, 3), &TWO_REGIONS).expect("select");
    assert_eq!(selected, ["member3", "member4", "member5"]);
}

#[test]
fn two_regions_with_enough_clusters_and_the_highest_score() {
    let regions: [Region<'_>; 4] = [
        ("R1", 90, &[("member1", 90, 40)]),
        (
            "R2",
            70,
            &[
                ("member2", 70, 40),
                ("member3", 60, 40),
                ("member4", 30, 40),
            ],
        ),
        ("R3", 80, &[("member5", 80, 40), ("member6", 50, 60)]),
        (
            "R4",
            50,
            &[
                ("member7", 50, 50),
                ("member8", 40, 50),
                ("member9", 10, 50),
                ("member10", 0, 50),
            ],
        ),
    ];
    // R1 + R2 (score 160, 4 clusters) is the heaviest pair reaching 4 clusters; it has exactly
    // 4 clusters, under the cluster maxGroups of 5.
    let selected = by_region((2, 2), (4, 5), &regions).expect("select");
    assert_eq!(selected, ["member1", "member2", "member3", "member4"]);
}

#[test]
fn more_than_min_regions_when_needed_for_enough_clusters() {
    let regions: [Region<'_>; 5] = [
        ("R1", 70, &[("member1", 70, 40)]),
        (
            "R2",
            40,
            &[
                ("member2", 40, 40),
                ("member3", 40, 40),
                ("member4", 40, 40),
            ],
        ),
        ("R3", 60, &[("member5", 60, 40), ("member6", 50, 60)]),
        ("R4", 70, &[("member7", 70, 100)]),
        ("R5", 50, &[("member8", 50, 50)]),
    ];
    // Six clusters need R2 and R3 plus one single-cluster region; R1 and R4 tie on score and
    // size, and R1 comes first by name. The first cluster of each region comes first (regions by
    // score), then the rest by score.
    let selected = by_region((1, 3), (6, 8), &regions).expect("select");
    assert_eq!(
        selected,
        [
            "member1", "member5", "member2", "member6", "member3", "member4"
        ]
    );
}

#[test]
fn region_selection_errors() {
    let one_region: [Region<'_>; 1] = [("R1", 100, &[("member1", 100, 40), ("member2", 80, 20)])];
    let mut two_regions = TWO_REGIONS;
    two_regions[0].2 = &[("member1", 100, 40), ("member2", 80, 60)];
    // (description, region (min, max), cluster (min, max), regions, error)
    type Row<'r> = (
        &'r str,
        (usize, usize),
        (usize, usize),
        &'r [Region<'r>],
        &'r str,
    );
    let table: [Row<'_>; 3] = [
        (
            "fewer regions than the region minGroups",
            (3, 3),
            (3, 3),
            &TWO_REGIONS,
            "the number of feasible region is less than spreadConstraint.MinGroups",
        ),
        (
            "no single region has the cluster minGroups",
            (1, 1),
            (4, 4),
            &two_regions,
            "the number of clusters is less than the cluster spreadConstraint.MinGroups",
        ),
        (
            "the only region has too few clusters and nothing can replace it",
            (1, 1),
            (3, 4),
            &one_region,
            "the number of clusters is less than the cluster spreadConstraint.MinGroups",
        ),
    ];
    for (description, region, cluster, regions, want) in table {
        let err = by_region(region, cluster, regions).expect_err(description);
        assert_eq!(err, want, "{description}");
    }
}
