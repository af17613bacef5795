//! Karmada's `detector/compare_test.go` cases: which of several (Cluster)PropagationPolicies
//! a template gets. Karmada runs the same table against PropagationPolicies and
//! ClusterPropagationPolicies; Flotilla weighs both kinds with [`best_match`], so one table
//! covers both.

use serde_json::{Value, json};

use super::*;

/// The template every case matches against: Deployment `test/nginx` labelled `app: nginx`.
fn nginx_in(namespace: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": namespace, "labels": {"app": "nginx"}}})
}

fn by_name() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx", "namespace": "test"})
}

fn by_label() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "test",
        "labelSelector": {"matchLabels": {"app": "nginx"}}})
}

fn all_in_test() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "test"})
}

/// A policy: its name, `spec.priority` (absent counts as 0) and its one selector.
type Policy = (&'static str, Option<i32>, Value);

/// The name of the policy `template` gets among `policies`, in list order.
fn winner(template: &Value, policies: &[Policy]) -> Option<String> {
    let selectors: Vec<Vec<ResourceSelector>> = policies
        .iter()
        .map(|(_, _, s)| vec![selector(s.clone())])
        .collect();
    let candidates = policies
        .iter()
        .zip(&selectors)
        .map(|((name, priority, _), selectors)| Candidate {
            name,
            explicit: priority.unwrap_or(0),
            selectors,
            deleting: false,
            item: *name,
        });
    best_match(&Subject::of(template), candidates).map(|(c, _)| c.item.to_owned())
}

#[test]
fn highest_priority_policy_cases_of_karmada() {
    let cases: Vec<(&str, Value, Vec<Policy>, Option<&str>)> = vec![
        ("empty policies", nginx_in("test"), vec![], None),
        (
            "no policy selects a template of another namespace",
            nginx_in("test01"),
            vec![
                ("match-with-name", None, by_name()),
                ("match-with-label", None, by_label()),
            ],
            None,
        ),
        (
            "different implicit priority: the name selector wins",
            nginx_in("test"),
            vec![
                ("match-with-name", None, by_name()),
                ("match-with-label", None, by_label()),
                ("match-all", None, all_in_test()),
            ],
            Some("match-with-name"),
        ),
        (
            "same implicit priority: the smaller name wins",
            nginx_in("test"),
            vec![("a-pp", None, by_name()), ("b-pp", None, by_name())],
            Some("a-pp"),
        ),
        (
            "explicit priority 1 beats an absent priority",
            nginx_in("test"),
            vec![("a-pp", None, by_name()), ("b-pp", Some(1), by_name())],
            Some("b-pp"),
        ),
        (
            "explicit priority 2 by label beats explicit priority 1 by name",
            nginx_in("test"),
            vec![("a-pp", Some(1), by_name()), ("b-pp", Some(2), by_label())],
            Some("b-pp"),
        ),
        (
            "equal explicit priority and selector: the smaller name wins",
            nginx_in("test"),
            vec![("a-pp", Some(1), by_name()), ("b-pp", Some(1), by_name())],
            Some("a-pp"),
        ),
        (
            "equal explicit priority: the name selector beats the label selector",
            nginx_in("test"),
            vec![("a-pp", Some(1), by_label()), ("b-pp", Some(1), by_name())],
            Some("b-pp"),
        ),
        (
            "explicit priority -1 loses to an absent priority (0)",
            nginx_in("test"),
            vec![("a-pp", None, by_label()), ("b-pp", Some(-1), by_name())],
            Some("a-pp"),
        ),
    ];
    for (case, template, policies, expected) in cases {
        assert_eq!(winner(&template, &policies).as_deref(), expected, "{case}");
        // The order policies are listed in never decides.
        let mut reversed = policies.clone();
        reversed.reverse();
        assert_eq!(
            winner(&template, &reversed).as_deref(),
            expected,
            "{case} (reversed)"
        );
    }
}

#[test]
fn a_full_tie_goes_to_the_alphabetically_smaller_name() {
    // `getHigherPriority(Cluster)PropagationPolicy`: names compare as strings, so a prefix
    // ("ab") and the empty name come first.
    let template = nginx_in("test");
    for (a, b, expected) in [("A", "B", "A"), ("abc", "ab", "ab"), ("", "ab", "")] {
        let policies = [(a, None, by_name()), (b, None, by_name())];
        assert_eq!(
            winner(&template, &policies).as_deref(),
            Some(expected),
            "{a} vs {b}"
        );
    }
    // With a single candidate (Karmada's nil current policy), that candidate wins.
    assert_eq!(
        winner(&template, &[("ab", None, by_name())]).as_deref(),
        Some("ab")
    );
}
