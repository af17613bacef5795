use serde_json::json;

mod karmada_compare;
mod karmada_selector;

use super::*;

fn selector(value: serde_json::Value) -> ResourceSelector {
    serde_json::from_value(value).expect("selector")
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}}})
}

#[test]
fn implicit_priority_ranks_name_over_labels_over_match_all() {
    let object = deployment();
    let all = selector(json!({"apiVersion": "apps/v1", "kind": "Deployment"}));
    let labels = selector(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "labelSelector": {"matchLabels": {"app": "nginx"}}}));
    let name = selector(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx",
        "labelSelector": {"matchLabels": {"app": "other"}}}),
    );
    assert_eq!(selector_priority(&object, &all), ImplicitPriority::MatchAll);
    assert_eq!(
        selector_priority(&object, &labels),
        ImplicitPriority::MatchLabelSelector
    );
    // A name decides alone: the non-matching label selector is ignored.
    assert_eq!(
        selector_priority(&object, &name),
        ImplicitPriority::MatchName
    );
    assert_eq!(
        selectors_priority(&object, &[all, labels, name]),
        ImplicitPriority::MatchName
    );
}

#[test]
fn kind_version_namespace_name_and_labels_must_match() {
    let object = deployment();
    for s in [
        json!({"apiVersion": "apps/v1beta1", "kind": "Deployment"}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet"}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "other"}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "labelSelector": {"matchLabels": {"app": "web"}}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "labelSelector": {"matchLabels": {"app": "nginx", "tier": "web"}}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "labelSelector": {"matchLabels": {"app": "nginx"},
                "matchExpressions": [{"key": "tier", "operator": "Exists"}]}}),
        // Its labels match, but the selector is invalid: it selects nothing.
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "labelSelector": {"matchLabels": {"app": "nginx"},
                "matchExpressions": [{"key": "tier", "operator": "In"}]}}),
    ] {
        assert_eq!(
            selector_priority(&object, &selector(s.clone())),
            ImplicitPriority::Mismatch,
            "{s}"
        );
    }
    assert_eq!(selectors_priority(&object, &[]), ImplicitPriority::Mismatch);
}

fn candidate<'a>(
    name: &'a str,
    explicit: i32,
    selectors: &'a [ResourceSelector],
) -> Candidate<'a, &'a str> {
    Candidate {
        name,
        explicit,
        selectors,
        deleting: false,
        item: name,
    }
}

#[test]
fn explicit_priority_then_implicit_priority_then_smaller_name_wins() {
    let object = deployment();
    let all = [selector(
        json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
    )];
    let by_name = [selector(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}),
    )];
    let winner = |candidates: Vec<Candidate<'_, &str>>| {
        best_match(&Subject::of(&object), candidates).map(|(c, _)| c.item.to_owned())
    };
    // Explicit priority beats a more specific selector.
    assert_eq!(
        winner(vec![
            candidate("b-name", 0, &by_name),
            candidate("z-all", 5, &all)
        ]),
        Some("z-all".to_owned())
    );
    // Equal explicit priority: the name selector wins.
    assert_eq!(
        winner(vec![
            candidate("a-all", 0, &all),
            candidate("z-name", 0, &by_name)
        ]),
        Some("z-name".to_owned())
    );
    // Full tie: the alphabetically smaller name wins, whatever the order.
    assert_eq!(
        winner(vec![
            candidate("beta", 1, &all),
            candidate("alpha", 1, &all)
        ]),
        Some("alpha".to_owned())
    );
    let mut deleting = candidate("alpha", 9, &by_name);
    deleting.deleting = true;
    assert_eq!(
        winner(vec![deleting, candidate("beta", 0, &all)]),
        Some("beta".to_owned())
    );
    assert_eq!(winner(vec![]), None);
}

#[test]
fn preemption_needs_always_and_respects_policy_kinds() {
    // A PropagationPolicy takes templates from lower PropagationPolicies and any CPP.
    assert!(may_preempt(false, 2, "Always", false, 1));
    assert!(!may_preempt(false, 1, "Always", false, 1));
    assert!(may_preempt(false, 0, "Always", true, 9));
    // A CPP only from lower CPPs, never from a PropagationPolicy.
    assert!(may_preempt(true, 2, "Always", true, 1));
    assert!(!may_preempt(true, 9, "Always", false, 0));
    // `Never` (the default) never preempts.
    assert!(!may_preempt(false, 9, "Never", false, 0));
    assert!(!may_preempt(false, 9, "", true, 0));
}
