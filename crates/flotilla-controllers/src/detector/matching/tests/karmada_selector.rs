//! Karmada's `util/selector_test.go` cases of `ResourceMatches`, `ResourceSelectorPriority`,
//! `ResourceMatchSelectors` and `ResourceMatchSelectorsPriority`: how specifically a
//! resource selector matches a template ([`selector_priority`], [`selectors_priority`]; a
//! selector "matches" when its priority is above [`ImplicitPriority::Mismatch`]).

use serde_json::{Value, json};

use super::*;

/// Pod `default/test` labelled `foo: bar`.
fn pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "test", "namespace": "default", "labels": {"foo": "bar"}}})
}

fn matches(object: &Value, s: &ResourceSelector) -> bool {
    selector_priority(object, s) > ImplicitPriority::Mismatch
}

#[test]
fn a_selector_matches_by_name_labels_or_kind_alone() {
    let object = pod();
    for (case, s, priority) in [
        (
            "miss match",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "unmatched"}),
            ImplicitPriority::Mismatch,
        ),
        (
            "match all",
            json!({"apiVersion": "v1", "kind": "Pod"}),
            ImplicitPriority::MatchAll,
        ),
        (
            "match labels",
            json!({"apiVersion": "v1", "kind": "Pod",
                "labelSelector": {"matchLabels": {"foo": "bar"}}}),
            ImplicitPriority::MatchLabelSelector,
        ),
        (
            "match name",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "test"}),
            ImplicitPriority::MatchName,
        ),
    ] {
        let s = selector(s);
        assert_eq!(selector_priority(&object, &s), priority, "{case}");
        assert_eq!(
            matches(&object, &s),
            priority != ImplicitPriority::Mismatch,
            "{case}"
        );
    }
}

#[test]
fn selector_priority_cases_of_karmada() {
    let object = pod();
    for (case, s, priority) in [
        (
            "apiVersion not matched",
            json!({"apiVersion": "unmatched", "kind": "Pod", "name": "foo", "namespace": "default"}),
            ImplicitPriority::Mismatch,
        ),
        (
            "kind not matched",
            json!({"apiVersion": "v1", "kind": "Unmatched", "name": "foo", "namespace": "default"}),
            ImplicitPriority::Mismatch,
        ),
        (
            "namespace not matched",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "foo", "namespace": "Unmatched"}),
            ImplicitPriority::Mismatch,
        ),
        (
            "namespace unset and name matched",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "test"}),
            ImplicitPriority::MatchName,
        ),
        (
            "name and labels set: the name not matched",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "unmatched",
                "labelSelector": {"matchLabels": {"foo": "bar"}}}),
            ImplicitPriority::Mismatch,
        ),
        (
            "name and labels set: the name matched, the labels ignored",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "test",
                "labelSelector": {"matchLabels": {"foo": "unmatched"}}}),
            ImplicitPriority::MatchName,
        ),
        (
            "name only, not matched",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "unmatched"}),
            ImplicitPriority::Mismatch,
        ),
        (
            "name only, matched",
            json!({"apiVersion": "v1", "kind": "Pod", "name": "test"}),
            ImplicitPriority::MatchName,
        ),
        (
            "labels only, not matched",
            json!({"apiVersion": "v1", "kind": "Pod",
                "labelSelector": {"matchLabels": {"foo": "unmatched"}}}),
            ImplicitPriority::Mismatch,
        ),
        (
            "labels only, matched",
            json!({"apiVersion": "v1", "kind": "Pod",
                "labelSelector": {"matchLabels": {"foo": "bar"}}}),
            ImplicitPriority::MatchLabelSelector,
        ),
        (
            "neither name nor labels: matches all",
            json!({"apiVersion": "v1", "kind": "Pod"}),
            ImplicitPriority::MatchAll,
        ),
        (
            "an invalid label selector (empty key) matches nothing",
            json!({"apiVersion": "v1", "kind": "Pod",
                "labelSelector": {"matchLabels": {"": "bar"}}}),
            ImplicitPriority::Mismatch,
        ),
    ] {
        assert_eq!(selector_priority(&object, &selector(s)), priority, "{case}");
    }
}

#[test]
fn any_matching_selector_matches_and_the_highest_priority_counts() {
    let object = pod();
    let matched = selector(json!({"apiVersion": "v1", "kind": "Pod"}));
    let unmatched = selector(json!({"apiVersion": "v1", "kind": "Unmatched"}));
    let by_name = selector(json!({"apiVersion": "v1", "kind": "Pod", "name": "test"}));
    // `ResourceMatchSelectors`.
    for (case, selectors, expected) in [
        ("empty", vec![], false),
        (
            "[matched, unmatched]",
            vec![matched.clone(), unmatched.clone()],
            true,
        ),
        (
            "[unmatched, matched]",
            vec![unmatched.clone(), matched.clone()],
            true,
        ),
        (
            "[unmatched, unmatched]",
            vec![unmatched.clone(), unmatched.clone()],
            false,
        ),
        (
            "[matched, matched]",
            vec![matched.clone(), matched.clone()],
            true,
        ),
    ] {
        assert_eq!(
            selectors_priority(&object, &selectors) > ImplicitPriority::Mismatch,
            expected,
            "{case}"
        );
    }
    // `ResourceMatchSelectorsPriority`.
    for (case, selectors, expected) in [
        ("empty", vec![], ImplicitPriority::Mismatch),
        (
            "[1, 1]",
            vec![matched.clone(), matched.clone()],
            ImplicitPriority::MatchAll,
        ),
        (
            "[1, 3]",
            vec![matched.clone(), by_name.clone()],
            ImplicitPriority::MatchName,
        ),
        (
            "[3, 1]",
            vec![by_name.clone(), matched.clone()],
            ImplicitPriority::MatchName,
        ),
    ] {
        assert_eq!(selectors_priority(&object, &selectors), expected, "{case}");
    }
    assert_eq!(ImplicitPriority::MatchAll as i32, 1);
    assert_eq!(ImplicitPriority::MatchName as i32, 3);
}
