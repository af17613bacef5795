//! Karmada's dispenser tables (`pkg/util/helper/binding_test.go`: `Test_dispenser_AllocateByWeight`,
//! `TestDispenseReplicasByTargetClusters`, `TestDone`, `TestGetWeightSum`) restated against
//! `spread_replicas_by_weights` (with a previous result) and `spread_replicas_by_static_weights`
//! (a first division, as the static-weight assignment does). Results hold every weighted party,
//! zero-seat ones included, sorted by name; Karmada compares them as sets.

use super::{EVEN_UID, ODD_UID, targets, weights};
use crate::karmada::TargetCluster;
use crate::karmada::webster::{spread_replicas_by_static_weights, spread_replicas_by_weights};

/// (description, new replicas, previous result, weights, UID, expected result).
type AllocateRow = (
    &'static str,
    i32,
    &'static [(&'static str, i32)],
    &'static [(&'static str, i32)],
    &'static str,
    &'static [(&'static str, i32)],
);

const ABC_123: &[(&str, i32)] = &[("A", 1), ("B", 2), ("C", 3)];
const AB_21: &[(&str, i32)] = &[("A", 2), ("B", 1)];
const ABC_170: &[(&str, i32)] = &[("A", 170), ("B", 110), ("C", 60)];
const AB_11: &[(&str, i32)] = &[("A", 1), ("B", 1)];

#[test]
fn allocating_by_weight_adds_the_new_replicas_to_the_previous_result() {
    // Test_dispenser_AllocateByWeight: weights equal to the previous counts, scaled up.
    let table: [AllocateRow; 3] = [
        (
            "scale up by 6 doubles 1/2/3",
            6,
            ABC_123,
            ABC_123,
            "",
            &[("A", 2), ("B", 4), ("C", 6)],
        ),
        (
            "scale up by 3 gives each one more",
            3,
            ABC_123,
            ABC_123,
            "",
            &[("A", 2), ("B", 3), ("C", 4)],
        ),
        (
            "scale up by 2 goes to the heavier two",
            2,
            ABC_123,
            ABC_123,
            "",
            &[("A", 1), ("B", 3), ("C", 4)],
        ),
    ];
    check(&table);
}

#[test]
fn allocating_by_weight_from_scratch_follows_webster_and_the_uid_tie_break() {
    // Test_dispenser_AllocateByWeight, the rows without a previous result.
    let table: [AllocateRow; 7] = [
        ("2:1, one replica", 1, &[], AB_21, "", &[("A", 1), ("B", 0)]),
        (
            "2:1, two replicas",
            2,
            &[],
            AB_21,
            "",
            &[("A", 1), ("B", 1)],
        ),
        (
            "2:1, three replicas",
            3,
            &[],
            AB_21,
            "",
            &[("A", 2), ("B", 1)],
        ),
        (
            "170:110:60, five replicas",
            5,
            &[],
            ABC_170,
            "",
            &[("A", 2), ("B", 2), ("C", 1)],
        ),
        (
            "170:110:60, six replicas",
            6,
            &[],
            ABC_170,
            "",
            &[("A", 3), ("B", 2), ("C", 1)],
        ),
        (
            "1:1, five replicas, odd UID: the larger name wins the tie",
            5,
            &[],
            AB_11,
            ODD_UID,
            &[("A", 2), ("B", 3)],
        ),
        (
            "1:1, five replicas, even UID: the smaller name wins the tie",
            5,
            &[],
            AB_11,
            EVEN_UID,
            &[("A", 3), ("B", 2)],
        ),
    ];
    check(&table);
    // A first division through the 64-bit static-weight entry point gives the same.
    for (desc, replicas, _, w, uid, want) in table {
        let w: Vec<(&str, i64)> = w.iter().map(|(n, v)| (*n, i64::from(*v))).collect();
        assert_eq!(
            spread_replicas_by_static_weights(replicas, &weights(&w), uid),
            targets(want),
            "{desc}"
        );
    }
}

fn check(table: &[AllocateRow]) {
    for &(desc, replicas, previous, w, uid, want) in table {
        let got = spread_replicas_by_weights(replicas, &targets(w), &targets(previous), uid);
        assert_eq!(got, targets(want), "{desc}");
        // Every replica is dispensed.
        let total: i32 = got.iter().map(|c| c.replicas).sum();
        let before: i32 = previous.iter().map(|(_, r)| r).sum();
        assert_eq!(total, before + replicas, "{desc}");
    }
}

#[test]
fn spreading_by_target_clusters_uses_their_replicas_as_weights() {
    // TestDispenseReplicasByTargetClusters: no previous result, empty UID. For "1:1:1, 10" Karmada
    // accepts any cluster holding the 4th replica; the empty UID picks the smallest name.
    type Row = (
        &'static str,
        &'static [(&'static str, i32)],
        i32,
        &'static [(&'static str, i32)],
    );
    let m111: &[(&str, i32)] = &[("member1", 5), ("member2", 5), ("member3", 5)];
    let table: [Row; 5] = [
        ("no clusters: no result", &[], 10, &[]),
        (
            "one cluster takes everything",
            &[("member1", 5)],
            10,
            &[("member1", 10)],
        ),
        (
            "1:1:1, 12 splits evenly",
            m111,
            12,
            &[("member1", 4), ("member2", 4), ("member3", 4)],
        ),
        (
            "1:1:1, 10 gives the remainder to one cluster",
            m111,
            10,
            &[("member1", 4), ("member2", 3), ("member3", 3)],
        ),
        (
            "1:2:3, 13 splits 2/4/7",
            &[("member1", 1), ("member2", 2), ("member3", 3)],
            13,
            &[("member1", 2), ("member2", 4), ("member3", 7)],
        ),
    ];
    for (desc, clusters, sum, want) in table {
        assert_eq!(
            spread_replicas_by_weights(sum, &targets(clusters), &[], ""),
            targets(want),
            "{desc}"
        );
    }
}

#[test]
fn nothing_is_dispensed_once_done_or_without_weight() {
    // TestDone: the dispenser is done when no replica is left and it already has a result; a
    // done dispenser leaves the result as it is.
    let previous = targets(&[("cluster1", 3)]);
    let w = targets(&[("cluster1", 1), ("cluster2", 1)]);
    assert_eq!(spread_replicas_by_weights(0, &w, &previous, ""), previous);
    // Not done: replicas left are dispensed on top of the result.
    assert_eq!(
        spread_replicas_by_weights(5, &w, &previous, ""),
        targets(&[("cluster1", 4), ("cluster2", 4)])
    );
    // Not done either with no result yet: every weighted party is listed, with 0.
    assert_eq!(
        spread_replicas_by_weights(0, &w, &[], ""),
        targets(&[("cluster1", 0), ("cluster2", 0)])
    );

    // TestGetWeightSum: a zero weight sum (no weights, or only zero weights) dispenses
    // nothing and keeps the previous result; a positive sum dispenses.
    let none: Vec<TargetCluster> = Vec::new();
    assert_eq!(
        spread_replicas_by_weights(5, &none, &previous, ""),
        previous
    );
    assert_eq!(
        spread_replicas_by_weights(5, &targets(&[("cluster2", 0)]), &previous, ""),
        previous
    );
    assert_eq!(
        spread_replicas_by_weights(6, &targets(ABC_123), &[], ""),
        targets(&[("A", 1), ("B", 2), ("C", 3)])
    );
}
