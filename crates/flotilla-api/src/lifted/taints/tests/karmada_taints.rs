//! Karmada's taint-helper tables (`pkg/util/helper/taint_test.go`: `TestHasNoExecuteTaints`,
//! `TestGetNoExecuteTaints`, `TestGetMinTolerationTimeWithCurrentTime`,
//! `TestGetMatchingTolerations`) restated against `no_execute_taints`, `min_toleration_time`
//! and `matching_tolerations`. Karmada's "-1" (tolerated forever) is our `None`; its
//! `(false, [])` (some taint untolerated) is our `None` from `matching_tolerations`.

use std::time::Duration;

use super::*;

const UNREACHABLE: &str = "cluster.karmada.io/unreachable";
const NOT_READY: &str = "cluster.karmada.io/not-ready";

#[test]
fn only_no_execute_taints_are_picked() {
    type Row = (
        &'static str,
        [Taint; 2],
        &'static [(&'static str, &'static str)],
    );
    let table: [Row; 2] = [
        (
            "a NoExecute taint beside a NoSchedule one",
            [
                taint(UNREACHABLE, None, "NoExecute"),
                taint(NOT_READY, None, "NoSchedule"),
            ],
            &[(UNREACHABLE, "NoExecute")],
        ),
        (
            "PreferNoSchedule and NoSchedule only",
            [
                taint(UNREACHABLE, None, "PreferNoSchedule"),
                taint(NOT_READY, None, "NoSchedule"),
            ],
            &[],
        ),
    ];
    for (desc, taints, want) in table {
        let got = no_execute_taints(&taints);
        let want: Vec<Taint> = want.iter().map(|(k, e)| taint(k, None, e)).collect();
        assert_eq!(got, want, "{desc}");
        // Karmada's `HasNoExecuteTaints`.
        assert_eq!(!got.is_empty(), !want.is_empty(), "{desc}");
    }
}

/// A NoExecute toleration of `key` with `Exists` and optional seconds.
fn exists(key: &str, seconds: Option<i64>) -> Toleration {
    let mut t = toleration(key, "Exists", "", "NoExecute");
    t.toleration_seconds = seconds;
    t
}

/// A NoExecute taint `key=value`, added at `at` when given.
fn no_execute(key: &str, value: &str, at: Option<&str>) -> Taint {
    let t = taint(key, Some(value), "NoExecute");
    match at {
        Some(at) => added(t, at),
        None => t,
    }
}

#[test]
fn the_min_toleration_time_is_the_earliest_trigger_from_now() {
    // Karmada's fixed "now": 2025-09-23 12:00:00 UTC.
    let now: jiff::Timestamp = "2025-09-23T12:00:00Z".parse().expect("now");
    let noon = Some("2025-09-23T12:00:00Z");
    type Row = (&'static str, Vec<Taint>, Vec<Toleration>, Option<Duration>);
    let table: [Row; 7] = [
        (
            "no NoExecute taints: tolerated forever",
            vec![],
            vec![exists("key", Some(60))],
            None,
        ),
        (
            "no used tolerations: now",
            vec![no_execute("key", "value", noon)],
            vec![],
            Some(Duration::ZERO),
        ),
        (
            "60 s from a taint added now",
            vec![no_execute("key", "value", noon)],
            vec![exists("key", Some(60))],
            Some(Duration::from_secs(60)),
        ),
        (
            "a toleration without seconds: forever",
            vec![no_execute("key", "value", noon)],
            vec![exists("key", None)],
            None,
        ),
        (
            "a taint without timeAdded starts no clock",
            vec![no_execute("key", "value", None)],
            vec![exists("key", Some(60))],
            None,
        ),
        (
            "the earliest of 120 s and 60 s",
            vec![
                no_execute("key1", "value1", noon),
                no_execute("key2", "value2", noon),
            ],
            vec![exists("key1", Some(120)), exists("key2", Some(60))],
            Some(Duration::from_secs(60)),
        ),
        (
            "60 s from two minutes ago: already due",
            vec![no_execute("key", "value", Some("2025-09-23T11:58:00Z"))],
            vec![exists("key", Some(60))],
            Some(Duration::ZERO),
        ),
    ];
    for (desc, taints, tolerations, want) in table {
        let used: Vec<&Toleration> = tolerations.iter().collect();
        assert_eq!(min_toleration_time(&taints, &used, now), want, "{desc}");
    }
}

#[test]
fn matching_tolerations_pair_each_taint_with_its_first_toleration() {
    let taints = [
        taint("key1", Some("value1"), "NoSchedule"),
        taint("key2", Some("value2"), "NoSchedule"),
    ];
    // No taints: all tolerated, by nothing.
    let any = [toleration("key1", "", "value1", "NoSchedule")];
    assert_eq!(matching_tolerations(&[], &any), Some(vec![]));
    // No tolerations: not tolerated.
    assert_eq!(matching_tolerations(&taints[..1], &[]), None);
    // Each taint tolerated by an Equal (empty operator) toleration of the same value.
    let both = [
        toleration("key1", "", "value1", "NoSchedule"),
        toleration("key2", "", "value2", "NoSchedule"),
    ];
    assert_eq!(
        matching_tolerations(&taints, &both),
        Some(vec![&both[0], &both[1]])
    );
    // Other values: not tolerated.
    let other = [
        toleration("key1", "", "value_1", "NoSchedule"),
        toleration("key2", "", "value_2", "NoSchedule"),
    ];
    assert_eq!(matching_tolerations(&taints, &other), None);
}
