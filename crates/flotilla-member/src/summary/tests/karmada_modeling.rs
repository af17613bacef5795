//! The cases of Karmada's `pkg/modeling/modeling_test.go`: how the grade minimums of a
//! cluster's resource models sort a node's free resources into grades, and the counts per
//! grade. Karmada's tests build its modelling summary directly from free-resource lists; here
//! each list is a node without pods, so its free resources are its allocatable.

use std::collections::BTreeMap;

use flotilla_api::karmada::{AllocatableModeling, ResourceModel, ResourceModelRange};
use flotilla_api::{Quantity, QuantityFormat};

use crate::summary::{NodeFacts, Tracker};

fn milli(v: i64) -> Quantity {
    Quantity::from_milli(v, QuantityFormat::DecimalSI)
}

fn units(v: i64) -> Quantity {
    Quantity::from_i64(v, QuantityFormat::DecimalSI)
}

/// Grades with the given (resource, minimum) ranges.
fn models(grades: &[&[(&str, Quantity)]]) -> Vec<ResourceModel> {
    grades
        .iter()
        .zip(0u32..)
        .map(|(ranges, grade)| ResourceModel {
            grade,
            ranges: ranges
                .iter()
                .map(|(name, min)| ResourceModelRange {
                    name: (*name).into(),
                    min: *min,
                    max: units(i64::MAX),
                })
                .collect(),
        })
        .collect()
}

/// Karmada's two-grade test models: CPU [0, 1m) and [1m, …), memory [0, 1.024) and
/// [1.024, …) (its minimums are milli-quantities).
fn two_grades() -> Vec<ResourceModel> {
    models(&[
        &[("cpu", milli(0)), ("memory", milli(0))],
        &[("cpu", milli(1)), ("memory", milli(1024))],
    ])
}

/// `count` pod-less nodes with the given free CPU (millis) and memory (bytes).
fn add_nodes(t: &mut Tracker, prefix: &str, count: usize, cpu_milli: i64, memory: i64) {
    for i in 0..count {
        let allocatable = BTreeMap::from([
            ("cpu".to_owned(), milli(cpu_milli)),
            ("memory".to_owned(), units(memory)),
        ]);
        t.upsert_node(
            &format!("{prefix}-{i}"),
            NodeFacts {
                ready: true,
                allocatable,
            },
        );
    }
}

fn counts(t: &Tracker, models: &[ResourceModel]) -> Vec<i64> {
    t.modelings(models).iter().map(|m| m.count).collect()
}

#[test]
fn one_modeling_per_grade() {
    let t = Tracker::new();
    assert_eq!(
        t.modelings(&two_grades()),
        vec![
            AllocatableModeling { grade: 0, count: 0 },
            AllocatableModeling { grade: 1, count: 0 }
        ]
    );
    let one = models(&[&[("cpu", milli(0)), ("memory", milli(0))]]);
    assert_eq!(
        t.modelings(&one),
        vec![AllocatableModeling { grade: 0, count: 0 }]
    );
}

#[test]
fn grades_listing_different_resources_give_no_modelings() {
    // The second grade lacks memory: Karmada's summary cannot be built.
    let uneven = models(&[
        &[("cpu", milli(0)), ("memory", milli(0))],
        &[("cpu", milli(1))],
    ]);
    let mut t = Tracker::new();
    add_nodes(&mut t, "n", 2, 8, 3 * 1024);
    assert!(t.modelings(&uneven).is_empty());
}

#[test]
fn a_node_falls_in_the_last_grade_whose_minimum_it_reaches() {
    let ladder = |mins: &[i64]| {
        let grades: Vec<Vec<(&str, Quantity)>> =
            mins.iter().map(|m| vec![("cpu", milli(*m))]).collect();
        let refs: Vec<&[(&str, Quantity)]> = grades.iter().map(Vec::as_slice).collect();
        models(&refs)
    };
    // (grade minimums in millicores, free millicores, Karmada's grade index or none)
    let table: [(&[i64], i64, Option<usize>); 3] = [
        (&[1999, 4327, 9783, 12378, 23480, 74217], 10_000, Some(2)),
        (
            &[1000, 3400, 4500, 8700, 11599, 62300, 95600, 134600],
            9700,
            Some(3),
        ),
        // Below the first minimum: no grade, the node is not counted.
        (&[1000, 2000], 0, None),
    ];
    for (mins, free, want) in table {
        let m = ladder(mins);
        let mut t = Tracker::new();
        let allocatable = BTreeMap::from([("cpu".to_owned(), milli(free))]);
        t.upsert_node(
            "n",
            NodeFacts {
                ready: true,
                allocatable,
            },
        );
        let mut expected = vec![0; mins.len()];
        if let Some(index) = want {
            expected[index] = 1;
        }
        assert_eq!(counts(&t, &m), expected, "{free}m over {mins:?}");
    }
}

#[test]
fn the_lowest_grade_over_all_resources_wins() {
    // (free millicores, free memory bytes, Karmada's grade)
    let table = [
        // Exactly the grade-1 minimums.
        (1, 1024, 1),
        // Far above them.
        (20, 1024 * 100, 1),
        // CPU at grade 0 holds the node there whatever its memory.
        (0, 19, 0),
    ];
    for (cpu, memory, grade) in table {
        let mut t = Tracker::new();
        add_nodes(&mut t, "n", 1, cpu, memory);
        let mut expected = vec![0, 0];
        expected[grade] = 1;
        assert_eq!(counts(&t, &two_grades()), expected, "{cpu}m {memory}");
    }
}

#[test]
fn counts_add_up_nodes_of_the_same_and_of_different_shapes() {
    let m = two_grades();
    let mut t = Tracker::new();
    // Karmada adds 3 nodes of (8m, 3Ki), 1 and then 2 of (1m, 6Ki): six in grade 1.
    add_nodes(&mut t, "a", 3, 8, 3 * 1024);
    add_nodes(&mut t, "b", 1, 1, 6 * 1024);
    add_nodes(&mut t, "c", 2, 1, 6 * 1024);
    assert_eq!(counts(&t, &m), vec![0, 6]);
    // Then 2 nodes of (0, 19): grade 0.
    add_nodes(&mut t, "d", 2, 0, 19);
    assert_eq!(counts(&t, &m), vec![2, 6]);
}
