//! The cases of the PropagationPolicy and ClusterPropagationPolicy webhooks' tests
//! (`pkg/webhook/{propagationpolicy,clusterpropagationpolicy}/{validating,mutating}_test.go`)
//! and of `pkg/apis/policy/v1alpha1/propagation_helper_test.go`.
//!
//! The validating handlers are run on the objects as the Go tests decode them (no CRD schema
//! or defaults). Karmada denies with a bare message; Flotilla reports the same text as the
//! detail of a field error (docs/karmada-api.md, "Status code").

use serde_json::{Value, json};

use super::super::policy::propagation_policy;
use super::*;
use crate::validation::{FieldErrorKind, aggregate_message};

const SCHEDULER_NAME_UPDATED: &str = "the schedulerName should not be updated";

fn immutable(label: &str) -> String {
    format!("label {label} is immutable, it can only be set by the system during creation")
}

fn required(label: &str) -> String {
    format!(
        "label {label} is required, it should be set by the mutating admission webhook during creation"
    )
}

fn object(namespace: Option<&str>, labels: Value, spec: Value) -> Value {
    let mut metadata = json!({"name": "p", "labels": labels});
    if let Some(namespace) = namespace {
        metadata["namespace"] = namespace.into();
    }
    json!({"metadata": metadata, "spec": spec})
}

/// The handler's verdict: the details of its errors (empty: allowed).
fn details(namespaced: bool, new: &Value, old: Option<&Value>) -> Vec<String> {
    propagation_policy(namespaced, new, old)
        .into_iter()
        .map(|e| e.detail)
        .collect()
}

#[test]
fn propagation_policy_validating_handler_cases() {
    for (namespaced, label) in [(true, PP_PERMANENT_ID), (false, CPP_PERMANENT_ID)] {
        let namespace = namespaced.then_some("ns-1");
        // Scheduler name changed on update.
        let new = object(
            namespace,
            json!({}),
            json!({"schedulerName": "new-scheduler"}),
        );
        let old = object(
            namespace,
            json!({}),
            json!({"schedulerName": "default-scheduler"}),
        );
        assert_eq!(
            details(namespaced, &new, Some(&old)),
            [SCHEDULER_NAME_UPDATED]
        );
        // Permanent id changed on update.
        let new = object(namespace, json!({label: "new-id"}), json!({}));
        let old = object(namespace, json!({label: "old-id"}), json!({}));
        assert_eq!(details(namespaced, &new, Some(&old)), [immutable(label)]);
        // Permanent id missing on create.
        let new = object(namespace, json!({}), json!({}));
        assert_eq!(details(namespaced, &new, None), [required(label)]);
        // A labelled policy with the default scheduler.
        let new = object(
            namespace,
            json!({label: "new-id"}),
            json!({"schedulerName": "default-scheduler"}),
        );
        assert!(details(namespaced, &new, None).is_empty());
    }
}

#[test]
fn propagation_policy_selector_namespace_mismatch_is_denied_with_the_field_message() {
    let policy = object(
        Some("ns-1"),
        json!({PP_PERMANENT_ID: "new-id"}),
        json!({"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns-2"}]}),
    );
    assert_eq!(
        aggregate_message(&propagation_policy(true, &policy, None)),
        "spec.resourceSelectors[0].namespace: Invalid value: \"ns-2\": namespace of resource selector must be the same as the namespace of the policy"
    );
}

#[test]
fn update_rules_compare_labels_and_scheduler_names_as_strings() {
    // Go compares the strings: an absent label or scheduler name equals an empty one.
    for (namespaced, label) in [(true, PP_PERMANENT_ID), (false, CPP_PERMANENT_ID)] {
        let namespace = namespaced.then_some("ns-1");
        let new = object(namespace, json!({label: ""}), json!({"schedulerName": ""}));
        let old = object(namespace, json!({}), json!({}));
        assert!(details(namespaced, &new, Some(&old)).is_empty());
        // The label must still be present.
        assert_eq!(details(namespaced, &old, Some(&new)), [required(label)]);
    }
}

#[test]
fn update_denials_are_forbidden_and_creation_without_id_is_required() {
    let old = pp(json!({"resourceSelectors": selector()}));
    let mut renamed = old.clone();
    renamed["spec"]["schedulerName"] = "new-scheduler".into();
    let errors = validate(Kind::PropagationPolicy, &renamed, Some(&old));
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, FieldErrorKind::Forbidden);
    assert_eq!(errors[0].detail, SCHEDULER_NAME_UPDATED);
    let mut unlabelled = old.clone();
    unlabelled["metadata"]["labels"] = json!({});
    let errors = validate(Kind::PropagationPolicy, &unlabelled, None);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, FieldErrorKind::Required);
    assert_eq!(errors[0].detail, required(PP_PERMANENT_ID));
}

/// The spec of the mutating webhooks' full-coverage tests, as Go marshals it (empty
/// `omitempty` fields left out: the spread constraint is `{}`, `propagateDeps` absent).
fn mutating_spec(selectors: Value) -> Value {
    json!({
        "placement": {
            "spreadConstraints": [{}],
            "replicaScheduling": {"replicaSchedulingType": "Divided"},
        },
        "resourceSelectors": selectors,
        "failover": {"application": {"purgeMode": "Gracefully"}},
    })
}

fn service_import() -> Value {
    json!({"kind": "ServiceImport", "apiVersion": "multicluster.x-k8s.io/v1alpha1"})
}

/// The fields Karmada's mutating tests expect after mutation (apart from the id's value).
fn assert_mutated(policy: &Value, label: &str, finalizer: &str, selectors: Value) {
    let spec = &policy["spec"];
    let placement = &spec["placement"];
    assert_eq!(
        placement["spreadConstraints"],
        json!([{"spreadByField": "cluster", "minGroups": 1}])
    );
    assert_eq!(
        placement["replicaScheduling"],
        json!({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"})
    );
    assert_eq!(spec["propagateDeps"], true);
    assert_eq!(spec["resourceSelectors"], selectors);
    let application = &spec["failover"]["application"];
    assert_eq!(application["purgeMode"], "Gracefully");
    assert_eq!(application["gracePeriodSeconds"], 600);
    assert!(policy["metadata"]["labels"][label].is_string());
    assert_eq!(policy["metadata"]["finalizers"], json!([finalizer]));
}

#[test]
fn propagation_policy_mutation_matches_karmadas_full_coverage_case() {
    let policy = defaulted(
        Kind::PropagationPolicy,
        json!({"metadata": {"name": "test-propagation-policy", "namespace": "test-namespace"},
        "spec": mutating_spec(json!([
            service_import(),
            {"apiVersion": "", "kind": ""},
        ]))}),
    );
    let mut imported = service_import();
    imported["namespace"] = "test-namespace".into();
    assert_mutated(
        &policy,
        PP_PERMANENT_ID,
        PP_FINALIZER,
        json!([imported, {"apiVersion": "", "kind": "", "namespace": "test-namespace"}]),
    );
}

#[test]
fn cluster_propagation_policy_mutation_matches_karmadas_full_coverage_case() {
    let policy = defaulted(
        Kind::ClusterPropagationPolicy,
        json!({"metadata": {"name": "test-cp-policy"},
            "spec": mutating_spec(json!([service_import()]))}),
    );
    assert_mutated(
        &policy,
        CPP_PERMANENT_ID,
        CPP_FINALIZER,
        json!([service_import()]),
    );
}

#[test]
fn explicit_priority_defaults_to_zero_and_keeps_a_declared_one() {
    // `ExplicitPriority`: the schema default makes an undeclared priority 0.
    for (kind, metadata) in [
        (
            Kind::PropagationPolicy,
            json!({"name": "p", "namespace": "default"}),
        ),
        (Kind::ClusterPropagationPolicy, json!({"name": "p"})),
    ] {
        for (declared, expected) in [(None, 0), (Some(20), 20)] {
            let mut spec = json!({"resourceSelectors": selector()});
            if let Some(priority) = declared {
                spec["priority"] = priority.into();
            }
            let policy = defaulted(kind, json!({"metadata": metadata, "spec": spec}));
            assert_eq!(policy["spec"]["priority"], expected, "{kind:?}");
            let typed: crate::karmada::PropagationPolicy =
                serde_json::from_value(json!({"spec": {"priority": declared}})).expect("a policy");
            assert_eq!(typed.spec.priority.unwrap_or(0), expected);
        }
    }
}

#[test]
fn replica_scheduling_type_is_duplicated_unless_declared() {
    use crate::karmada::Placement;
    let undeclared: Placement = serde_json::from_value(json!({})).expect("placement");
    assert_eq!(undeclared.replica_scheduling_type(), "Duplicated");
    let divided: Placement =
        serde_json::from_value(json!({"replicaScheduling": {"replicaSchedulingType": "Divided"}}))
            .expect("placement");
    assert_eq!(divided.replica_scheduling_type(), "Divided");
}
