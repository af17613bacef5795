use super::*;

// Karmada's own dispenser cases (`binding_test.go`), restated.
mod karmada_dispenser;

/// A UID whose FNV-1a 32 hash is even (from Karmada's tests).
pub(crate) const EVEN_UID: &str = "4858ca61-3ff8-4095-8267-f3d059d8074c";
/// A UID whose FNV-1a 32 hash is odd (from Karmada's tests).
pub(crate) const ODD_UID: &str = "d43fdeeb-d750-4e2b-bee3-64eb94534f4c";

fn targets(pairs: &[(&str, i32)]) -> Vec<TargetCluster> {
    pairs
        .iter()
        .map(|(n, r)| TargetCluster::new(*n, *r))
        .collect()
}

fn weights(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(n, w)| ((*n).to_owned(), *w)).collect()
}

#[test]
fn uid_parity_picks_the_tie_breaker() {
    assert_eq!(TieBreak::from_uid(""), TieBreak::NameAscending);
    assert_eq!(TieBreak::from_uid(EVEN_UID), TieBreak::NameAscending);
    assert_eq!(TieBreak::from_uid(ODD_UID), TieBreak::NameDescending);
}

#[test]
fn static_examples_from_the_reference() {
    type Row<'a> = (i32, &'a [(&'a str, i64)], &'a [(&'a str, i32)]);
    let table: [Row<'_>; 7] = [
        (
            12,
            &[("a", 3), ("b", 2), ("c", 1)],
            &[("a", 6), ("b", 4), ("c", 2)],
        ),
        (
            13,
            &[("a", 3), ("b", 2), ("c", 1)],
            &[("a", 7), ("b", 4), ("c", 2)],
        ),
        (
            14,
            &[("a", 3), ("b", 2), ("c", 1)],
            &[("a", 7), ("b", 5), ("c", 2)],
        ),
        (3, &[("a", 1), ("b", 1)], &[("a", 2), ("b", 1)]),
        (
            9,
            &[("a", 2), ("b", 1), ("c", 1), ("d", 1)],
            &[("a", 3), ("b", 2), ("c", 2), ("d", 2)],
        ),
        (
            6,
            &[("A", 170), ("B", 110), ("C", 60)],
            &[("A", 3), ("B", 2), ("C", 1)],
        ),
        (
            10,
            &[("x", 50), ("y", 30), ("z", 20)],
            &[("x", 5), ("y", 3), ("z", 2)],
        ),
    ];
    for (replicas, w, want) in table {
        assert_eq!(
            spread_replicas_by_static_weights(replicas, &weights(w), ""),
            targets(want),
            "{replicas} @ {w:?}"
        );
    }
}

#[test]
fn ties_follow_uid_parity() {
    let w = weights(&[("A", 1), ("B", 1)]);
    assert_eq!(
        spread_replicas_by_static_weights(5, &w, ODD_UID),
        targets(&[("A", 2), ("B", 3)])
    );
    assert_eq!(
        spread_replicas_by_static_weights(5, &w, EVEN_UID),
        targets(&[("A", 3), ("B", 2)])
    );
    assert_eq!(
        spread_replicas_by_static_weights(5, &w, ""),
        targets(&[("A", 3), ("B", 2)])
    );
}

#[test]
fn scale_up_on_top_of_initial_seats() {
    let init = targets(&[("A", 1), ("B", 2), ("C", 3)]);
    let w = targets(&[("A", 1), ("B", 2), ("C", 3)]);
    assert_eq!(
        spread_replicas_by_weights(6, &w, &init, ""),
        targets(&[("A", 2), ("B", 4), ("C", 6)])
    );
}

#[test]
fn zero_weights_and_zero_seats() {
    assert_eq!(
        spread_replicas_by_static_weights(5, &weights(&[("a", 0)]), ""),
        vec![]
    );
    assert_eq!(
        spread_replicas_by_weights(5, &targets(&[("a", 0)]), &[], ""),
        vec![]
    );
    // Every party is returned, including 0-seat ones.
    assert_eq!(
        spread_replicas_by_weights(1, &targets(&[("a", 1), ("b", 1)]), &[], ""),
        targets(&[("a", 1), ("b", 0)])
    );
}

#[test]
fn webster_fewer_seats_win_ties_before_names() {
    // a has 1 seat and 3 votes (priority 1), b has 0 seats and 1 vote (priority 1): b wins.
    let votes = weights(&[("a", 3), ("b", 1)]);
    let init: BTreeMap<String, i32> = [("a".to_owned(), 1)].into_iter().collect();
    let out = allocate_webster_seats(1, &votes, &init, TieBreak::NameAscending);
    assert_eq!(out.iter().map(|p| p.seats).collect::<Vec<_>>(), [1, 1]);
}
