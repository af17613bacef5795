//! Karmada's `TestGetWorksByBindingID` (`pkg/util/helper/work_test.go`) restated against
//! [`WorkIndex`], and the update merge of `CreateOrUpdateWork` (`pkg/controllers/ctrlutil`:
//! labels and annotations merged over the stored ones, finalizers merged and sorted) against
//! [`merged`]. `TestGetWorksByLabelsSet` is a label-selector List on a fake client (Go
//! plumbing; Flotilla lists through kube) and is not restated.

use std::collections::BTreeMap;

use flotilla_api::validation::karmada::{CRB_PERMANENT_ID, RB_PERMANENT_ID};

use super::*;

fn labelled(name: &str, labels: &[(&str, &str)]) -> Work {
    let mut work = Work::default();
    work.metadata.name = Some(name.into());
    work.metadata.namespace = Some("karmada-es-member1".into());
    work.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    work
}

fn names(found: Vec<(String, String)>) -> Vec<String> {
    found.into_iter().map(|(_, name)| name).collect()
}

const LABELS: &[&str] = &[RB_PERMANENT_ID, CRB_PERMANENT_ID];

#[test]
fn works_are_found_by_the_id_under_their_bindings_own_label() {
    let index = WorkIndex::default();
    index.upsert(
        &labelled("workWithRBID", &[(RB_PERMANENT_ID, "test-binding-id")]),
        LABELS,
    );
    index.upsert(
        &labelled("workWithCRBID", &[(CRB_PERMANENT_ID, "test-binding-id")]),
        LABELS,
    );
    index.upsert(&labelled("unlabelled", &[("app", "test")]), LABELS);
    assert_eq!(
        names(index.works_of(RB_PERMANENT_ID, "test-binding-id")),
        ["workWithRBID"]
    );
    assert_eq!(
        names(index.works_of(CRB_PERMANENT_ID, "test-binding-id")),
        ["workWithCRBID"]
    );
    assert!(index.works_of(RB_PERMANENT_ID, "other-id").is_empty());
}

#[test]
fn a_work_with_both_labels_is_found_through_either_and_forgotten_from_both() {
    let index = WorkIndex::default();
    let both = labelled(
        "both",
        &[(RB_PERMANENT_ID, "rb-1"), (CRB_PERMANENT_ID, "crb-1")],
    );
    index.upsert(&both, LABELS);
    assert_eq!(names(index.works_of(RB_PERMANENT_ID, "rb-1")), ["both"]);
    assert_eq!(names(index.works_of(CRB_PERMANENT_ID, "crb-1")), ["both"]);
    // Relabelled: only the new id finds it.
    index.upsert(&labelled("both", &[(RB_PERMANENT_ID, "rb-2")]), LABELS);
    assert!(index.works_of(RB_PERMANENT_ID, "rb-1").is_empty());
    assert!(index.works_of(CRB_PERMANENT_ID, "crb-1").is_empty());
    assert_eq!(names(index.works_of(RB_PERMANENT_ID, "rb-2")), ["both"]);
    index.remove(&both);
    assert!(index.works_of(RB_PERMANENT_ID, "rb-2").is_empty());
}

fn map(entries: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

#[test]
fn an_update_merges_metadata_over_the_stored_work_and_sorts_finalizers() {
    let mut stored = labelled(
        "nginx-687f7fb96f",
        &[
            ("work.karmada.io/permanent-id", "w-1"),
            (RB_PERMANENT_ID, "old"),
        ],
    );
    stored.metadata.annotations = map(&[
        ("someone/else", "kept"),
        ("work.karmada.io/conflict-resolution", "abort"),
    ]);
    stored.metadata.finalizers = Some(vec![
        "karmada.io/execution-controller".into(),
        "example.io/a".into(),
        "example.io/a".into(),
    ]);
    stored.spec.suspend_dispatching = Some(true);
    let mut desired = labelled("nginx-687f7fb96f", &[(RB_PERMANENT_ID, "rb-1")]);
    desired.metadata.annotations = map(&[("work.karmada.io/conflict-resolution", "overwrite")]);
    desired.metadata.finalizers = Some(vec!["karmada.io/execution-controller".into()]);
    desired.spec.suspend_dispatching = Some(false);
    let updated = merged(&stored, &desired);
    assert_eq!(
        updated.metadata.labels,
        map(&[
            ("work.karmada.io/permanent-id", "w-1"),
            (RB_PERMANENT_ID, "rb-1")
        ])
    );
    assert_eq!(
        updated.metadata.annotations,
        map(&[
            ("someone/else", "kept"),
            ("work.karmada.io/conflict-resolution", "overwrite"),
        ])
    );
    // Karmada's `MergeFinalizers`: a sorted set.
    assert_eq!(
        updated.metadata.finalizers,
        Some(vec![
            "example.io/a".to_owned(),
            "karmada.io/execution-controller".to_owned()
        ])
    );
    assert_eq!(updated.spec, desired.spec);
}

#[test]
fn merged_finalizers_are_deduplicated_and_sorted() {
    let owned = |list: &[&str]| list.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        merge_finalizers(&[], &owned(&[EXECUTION_FINALIZER])),
        [EXECUTION_FINALIZER]
    );
    assert_eq!(
        merge_finalizers(
            &owned(&["z.io/last", EXECUTION_FINALIZER, "a.io/first"]),
            &owned(&[EXECUTION_FINALIZER, "m.io/mid"])
        ),
        ["a.io/first", EXECUTION_FINALIZER, "m.io/mid", "z.io/last"]
    );
}
