//! Karmada's Webster tables (`pkg/util/helper/webstermethod_test.go`) restated against
//! `allocate_webster_seats`. Karmada's "no tie-breaker" is fewer seats first, then the smaller
//! name: our `NameAscending`. Its two custom tie-breakers compare names only; in their rows both
//! parties hold 0 seats, so they are `NameAscending` and `NameDescending`.

use std::collections::BTreeMap;

use crate::webster::{Party, TieBreak, allocate_webster_seats};

fn votes(list: &[(&str, i64)]) -> BTreeMap<String, i64> {
    list.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect()
}

fn seats(list: &[(&str, i32)]) -> BTreeMap<String, i32> {
    list.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect()
}

/// Parties (name, votes, seats), sorted by name as the allocation returns them.
fn parties(list: &[(&str, i64, i32)]) -> Vec<Party> {
    list.iter()
        .map(|(name, votes, seats)| Party {
            name: (*name).to_owned(),
            votes: *votes,
            seats: *seats,
        })
        .collect()
}

#[test]
fn webster_example_gives_alpha_two_of_four_seats() {
    // ExampleAllocateWebsterSeats.
    let got = allocate_webster_seats(
        4,
        &votes(&[("Alpha", 1200), ("Beta", 900), ("Gamma", 400)]),
        &BTreeMap::new(),
        TieBreak::NameAscending,
    );
    assert_eq!(
        got,
        parties(&[("Alpha", 1200, 2), ("Beta", 900, 1), ("Gamma", 400, 1)])
    );
}

#[test]
fn webster_follows_the_classic_sainte_lague_rounds() {
    // TestAllocateWebsterSeats, "classic example, round 1..8": 8 seats among 4 parties with
    // 100k/80k/30k/20k votes, seat by seat.
    let v = votes(&[
        ("PartyA", 100_000),
        ("PartyB", 80_000),
        ("PartyC", 30_000),
        ("PartyD", 20_000),
    ]);
    let rounds: [[i32; 4]; 8] = [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [2, 1, 0, 0],
        [2, 1, 1, 0],
        [2, 2, 1, 0],
        [2, 2, 1, 1],
        [3, 2, 1, 1],
        [3, 3, 1, 1],
    ];
    for (round, want) in rounds.iter().enumerate() {
        let new_seats = round as i32 + 1;
        let got = allocate_webster_seats(new_seats, &v, &BTreeMap::new(), TieBreak::NameAscending);
        let want = parties(&[
            ("PartyA", 100_000, want[0]),
            ("PartyB", 80_000, want[1]),
            ("PartyC", 30_000, want[2]),
            ("PartyD", 20_000, want[3]),
        ]);
        assert_eq!(got, want, "round {new_seats}");
    }
}

#[test]
fn webster_edge_cases_and_tie_breaks() {
    // TestAllocateWebsterSeats, the remaining rows.
    type Row = (
        &'static str,
        i32,
        &'static [(&'static str, i64)],
        &'static [(&'static str, i32)],
        TieBreak,
        &'static [(&'static str, i64, i32)],
    );
    use TieBreak::{NameAscending as Asc, NameDescending as Desc};
    let table: [Row; 10] = [
        ("no parties: no result", 1, &[], &[], Asc, &[]),
        (
            "0 new seats: every party keeps 0",
            0,
            &[("PartyA", 100), ("PartyB", 200)],
            &[],
            Asc,
            &[("PartyA", 100, 0), ("PartyB", 200, 0)],
        ),
        ("no parties and no seats: no result", 0, &[], &[], Asc, &[]),
        (
            "equal priorities (3/3 and 1/1): the party with fewer seats wins",
            1,
            &[("PartyA", 3), ("PartyB", 1)],
            &[("PartyA", 1), ("PartyB", 0)],
            Asc,
            &[("PartyA", 3, 1), ("PartyB", 1, 1)],
        ),
        (
            "equal priorities and seats: the smaller name wins",
            1,
            &[("PartyA", 1), ("PartyB", 1)],
            &[],
            Asc,
            &[("PartyA", 1, 1), ("PartyB", 1, 0)],
        ),
        (
            "a tie-breaker preferring smaller names",
            1,
            &[("PartyA", 1), ("PartyB", 1)],
            &[],
            Asc,
            &[("PartyA", 1, 1), ("PartyB", 1, 0)],
        ),
        (
            "a tie-breaker preferring larger names",
            1,
            &[("PartyA", 1), ("PartyB", 1)],
            &[],
            Desc,
            &[("PartyA", 1, 0), ("PartyB", 1, 1)],
        ),
        (
            "an initial party without votes gets no new seat",
            2,
            &[("NewParty1", 1), ("NewParty2", 1)],
            &[("OldParty", 0)],
            Asc,
            &[("NewParty1", 1, 1), ("NewParty2", 1, 1), ("OldParty", 0, 0)],
        ),
        (
            "old and new parties compete: the seatless one first, then the smaller name",
            2,
            &[("OldParty", 1), ("NewParty", 1)],
            &[("OldParty", 1)],
            Asc,
            &[("NewParty", 1, 2), ("OldParty", 1, 1)],
        ),
        (
            "initial seats of a party without votes are kept",
            2,
            &[("PartyA", 100)],
            &[("PartyB", 3)],
            Asc,
            &[("PartyA", 100, 2), ("PartyB", 0, 3)],
        ),
    ];
    for (desc, new_seats, v, initial, tie, want) in table {
        let got = allocate_webster_seats(new_seats, &votes(v), &seats(initial), tie);
        assert_eq!(got, parties(want), "{desc}");
    }
}
