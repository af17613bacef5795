//! Karmada's `dependencies_distributor_test.go` cases on which independent bindings depend on
//! an object (by name or label selector, same apiVersion, kind and namespace), restated
//! against Flotilla's index of the bindings' dependencies.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;

/// The binding `test/test-binding`, indexed with the dependencies `recorded` (the JSON
/// Karmada keeps in `resourcebinding.karmada.io/dependencies`).
fn indexed(recorded: Value) -> (Dependents, BindingKey) {
    let wanted: Vec<DependentObjectReference> =
        serde_json::from_value(recorded).expect("dependencies");
    let binding = ("test".to_owned(), "test-binding".to_owned());
    let (named, selectors) = index_of(&wanted);
    let mut dependents = Dependents::default();
    dependents.set(&binding, named);
    dependents.set_selectors(&binding, selectors);
    (dependents, binding)
}

/// Whether the object `apiVersion kind namespace/name` with `labels` is one the binding
/// recorded with `recorded` depends on.
fn matches(recorded: Value, object: [&str; 4], labels: &[(&str, &str)]) -> bool {
    let (dependents, binding) = indexed(recorded);
    let labels: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let key = (
        object[0].to_owned(),
        object[1].to_owned(),
        object[2].to_owned(),
        object[3].to_owned(),
    );
    let wanting = dependents.wanting(&key, &labels);
    assert!(wanting.is_empty() || wanting == [binding].into());
    !wanting.is_empty()
}

/// (case, recorded dependencies, object, its labels, matched).
type Case = (
    &'static str,
    Value,
    [&'static str; 4],
    Vec<(&'static str, &'static str)>,
    bool,
);

const CM: [&str; 4] = ["v1", "ConfigMap", "test", "test-cm"];

#[test]
fn objects_depended_on_by_name_or_selector_find_their_bindings() {
    // Test_matchesWithBindingDependencies, one row per case: (case, recorded, object,
    // labels, matched). Karmada's error cases (invalid JSON, an invalid selector) match
    // nothing here: the binding's distribution fails on them instead.
    let cases: Vec<Case> = vec![
        (
            "custom resource",
            json!([{"apiVersion": "example-stgzr.karmada.io/v1alpha1", "kind": "Foot5zmh",
                "namespace": "karmadatest-vpvll", "name": "cr-fxzq6"}]),
            [
                "example-stgzr.karmada.io/v1alpha1",
                "Foot5zmh",
                "karmadatest-vpvll",
                "cr-fxzq6",
            ],
            vec![],
            true,
        ),
        (
            "configmap",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "karmadatest-h46wh",
                "name": "configmap-8w426"}]),
            ["v1", "ConfigMap", "karmadatest-h46wh", "configmap-8w426"],
            vec![],
            true,
        ),
        (
            "labels, matchExpressions In",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "labelSelector": {"matchExpressions":
                    [{"key": "app", "operator": "In", "values": ["test"]}]}}]),
            ["v1", "ConfigMap", "test", ""],
            vec![("app", "test")],
            true,
        ),
        ("no dependencies", json!([]), CM, vec![], false),
        (
            "apiVersion mismatch",
            json!([{"apiVersion": "v2", "kind": "ConfigMap", "namespace": "test",
                "name": "test-cm"}]),
            CM,
            vec![],
            false,
        ),
        (
            "kind mismatch",
            json!([{"apiVersion": "v1", "kind": "Secret", "namespace": "test",
                "name": "test-cm"}]),
            CM,
            vec![],
            false,
        ),
        (
            "namespace mismatch",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "other",
                "name": "test-cm"}]),
            CM,
            vec![],
            false,
        ),
        (
            "name mismatch",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "name": "other-cm"}]),
            CM,
            vec![],
            false,
        ),
        (
            "selector does not match",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "labelSelector": {"matchLabels": {"app": "test"}}}]),
            CM,
            vec![("app", "other")],
            false,
        ),
        (
            "no labels, selector wants some",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "labelSelector": {"matchLabels": {"app": "test"}}}]),
            CM,
            vec![],
            false,
        ),
        (
            "invalid selector operator",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "labelSelector": {"matchExpressions":
                    [{"key": "app", "operator": "InvalidOperator", "values": ["test"]}]}}]),
            CM,
            vec![("app", "test")],
            false,
        ),
        (
            "second dependency by name",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                    "name": "test-cm"},
                {"apiVersion": "v1", "kind": "Secret", "namespace": "test",
                    "name": "test-secret"}]),
            ["v1", "Secret", "test", "test-secret"],
            vec![],
            true,
        ),
        (
            "second dependency by selector",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                    "name": "test-cm"},
                {"apiVersion": "v1", "kind": "Secret", "namespace": "test",
                    "labelSelector": {"matchLabels": {"env": "prod"}}}]),
            ["v1", "Secret", "test", "test-secret"],
            vec![("env", "prod")],
            true,
        ),
        (
            "matchLabels subset",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "labelSelector": {"matchLabels": {"app": "test"}}}]),
            CM,
            vec![("app", "test"), ("tier", "frontend")],
            true,
        ),
        (
            "empty selector matches all",
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
                "labelSelector": {}}]),
            CM,
            vec![("app", "test")],
            true,
        ),
    ];
    for (case, recorded, object, labels, want) in cases {
        assert_eq!(matches(recorded, object, &labels), want, "{case}");
    }
}

#[test]
fn a_name_wins_over_a_selector_next_to_it() {
    // Karmada ignores a labelSelector when a name is set.
    let recorded = json!([{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "test",
        "name": "test-cm", "labelSelector": {"matchLabels": {"app": "test"}}}]);
    assert!(!matches(
        recorded.clone(),
        ["v1", "ConfigMap", "test", "other"],
        &[("app", "test")]
    ));
    assert!(matches(recorded, CM, &[]));
}

#[test]
fn a_changed_object_requeues_the_bindings_depending_on_it() {
    // Test_reconcileResourceTemplate: binding test/test-binding records Deployment
    // test/demo-app; an event of that Deployment (labels app=test) queues it once.
    let (dependents, binding) = indexed(json!([{"apiVersion": "apps/v1",
        "kind": "Deployment", "namespace": "test", "name": "demo-app"}]));
    let key = (
        "apps/v1".to_owned(),
        "Deployment".to_owned(),
        "test".to_owned(),
        "demo-app".to_owned(),
    );
    let labels = [("app".to_owned(), "test".to_owned())].into();
    assert_eq!(dependents.wanting(&key, &labels), [binding].into());
}

#[test]
fn objects_no_longer_selected_or_named_are_not_depended_on() {
    // TestDependenciesDistributor_findOrphanAttachedBindingsByDependencies: Pod default/pod
    // labelled bar=bar against a selector bar=foo; Pod default/test2 against the name `pod`.
    let recorded = json!([{"apiVersion": "v1", "kind": "Secret", "namespace": "default",
            "name": "test"},
        {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
            "labelSelector": {"matchLabels": {"bar": "foo"}}}]);
    assert!(!matches(
        recorded,
        ["v1", "Pod", "default", "pod"],
        &[("bar", "bar")]
    ));
    let recorded = json!([{"apiVersion": "v1", "kind": "Secret", "namespace": "default",
            "name": "test"},
        {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": "pod"}]);
    assert!(!matches(
        recorded,
        ["v1", "Pod", "default", "test2"],
        &[("bar", "foo")]
    ));
}
