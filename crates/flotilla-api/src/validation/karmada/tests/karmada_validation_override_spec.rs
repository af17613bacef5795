//! The cases of Karmada's `TestValidateOverrideSpec` and `TestEmptyOverrides`
//! (pkg/util/validation/validation_test.go), of the OverridePolicy and ClusterOverridePolicy
//! validating webhooks' `TestValidatingAdmission_Handle` and of the OverridePolicy mutating
//! webhook's `TestMutatingAdmission_Handle_FullCoverage`. The webhook cases run the port of
//! `ValidateOverrideSpec` on the decoded spec, as the handlers do (their objects skip what the
//! CRD schema would add or refuse); Karmada checks that the denial contains the expected text.

use serde_json::{Value, json};

use super::super::overrides::override_spec;
use super::*;
use crate::validation::aggregate_message;

const UNSUPPORTED_KEY: &str = "unsupported key \"foo\", must be provider, region, or zone";
const UNSUPPORTED_OPERATOR: &str = "unsupported operator \"Gt\", must be In or NotIn";

fn cluster_names() -> Value {
    json!({"clusterNames": ["cluster-name"]})
}

fn field_selector(key: &str) -> Value {
    json!({"fieldSelector": {"matchExpressions": [
        {"key": key, "operator": if key == "foo" { "In" } else { "Gt" }, "values": ["fooCloud"]}]}})
}

/// One override rule for `cluster-name` with `overriders`.
fn rule(overriders: Value) -> Value {
    json!([{"targetCluster": cluster_names(), "overriders": overriders}])
}

fn plaintext() -> Value {
    json!({"plaintext": [{"path": "spec/image"}]})
}

fn field_overrider(overrider: Value) -> Value {
    rule(json!({"fieldOverrider": [overrider]}))
}

/// Empty `expected`: accepted; otherwise the aggregated message contains it.
fn assert_verdict(case: &str, spec: &Value, namespace: &str, expected: &str) {
    let message = aggregate_message(&override_spec(spec, namespace));
    if expected.is_empty() {
        assert_eq!(message, "", "{case}: expected no error");
    } else {
        assert!(
            message.contains(expected),
            "{case}: expected {expected:?} in {message:?}"
        );
    }
}

#[test]
fn override_specs_get_karmadas_verdicts() {
    let bad_key = json!({"testannotation~projectId": "c-m-lfx9lk92p-v86cf"});
    for (case, spec, expected) in [
        (
            "overrideRules alone",
            json!({"overrideRules": [{"targetCluster": cluster_names()}]}),
            "",
        ),
        (
            "targetCluster and overriders alone",
            json!({"targetCluster": cluster_names(), "overriders": plaintext()}),
            "",
        ),
        (
            "overrideRules with targetCluster",
            json!({"overrideRules": [{"targetCluster": cluster_names()}], "targetCluster": cluster_names()}),
            "overrideRules and targetCluster can't co-exist",
        ),
        (
            "overrideRules with overriders",
            json!({"overrideRules": [{"targetCluster": cluster_names()}], "overriders": plaintext()}),
            "overrideRules and overriders can't co-exist",
        ),
        (
            "overrideRules with targetCluster and overriders",
            json!({"overrideRules": [{"targetCluster": cluster_names()}],
                "targetCluster": cluster_names(), "overriders": plaintext()}),
            "can't co-exist",
        ),
        (
            "invalid annotation key",
            json!({"overrideRules": rule(json!({"annotationsOverrider": [{"operator": "add", "value": bad_key}]}))}),
            "Invalid value: \"testannotation~projectId\"",
        ),
        (
            "invalid label key",
            json!({"overrideRules": rule(json!({"labelsOverrider": [{"operator": "add", "value": bad_key}]}))}),
            "Invalid value: \"testannotation~projectId\"",
        ),
        (
            "targetCluster field selector with an unsupported key",
            json!({"targetCluster": field_selector("foo")}),
            UNSUPPORTED_KEY,
        ),
        (
            "targetCluster field selector with an unsupported operator",
            json!({"targetCluster": field_selector("provider")}),
            UNSUPPORTED_OPERATOR,
        ),
        (
            "rule field selector with an unsupported key",
            json!({"overrideRules": [{"targetCluster": field_selector("foo")}]}),
            UNSUPPORTED_KEY,
        ),
        (
            "rule field selector with an unsupported operator",
            json!({"overrideRules": [{"targetCluster": field_selector("provider")}]}),
            UNSUPPORTED_OPERATOR,
        ),
        (
            "field overrider with neither YAML nor JSON",
            json!({"overrideRules": field_overrider(json!({"fieldPath": "/data/config"}))}),
            "FieldOverrider must have either JSON or YAML set",
        ),
        (
            "field overrider with YAML and JSON",
            json!({"overrideRules": field_overrider(json!({"fieldPath": "/data/config",
                "json": [{"subPath": "/key", "operator": "remove"}],
                "yaml": [{"subPath": "/key", "operator": "remove"}]}))}),
            "FieldOverrider has both YAML and JSON set. Only one is allowed",
        ),
        (
            "field overrider with YAML only",
            json!({"overrideRules": field_overrider(json!({"fieldPath": "/data/config",
                "yaml": [{"subPath": "/key", "operator": "remove"}]}))}),
            "",
        ),
        (
            "field overrider with JSON only",
            json!({"overrideRules": field_overrider(json!({"fieldPath": "/data/config",
                "json": [{"subPath": "/key", "operator": "remove"}]}))}),
            "",
        ),
    ] {
        assert_verdict(case, &spec, "", expected);
    }
}

#[test]
fn all_three_deprecated_and_new_forms_together_give_both_errors() {
    let spec = json!({"overrideRules": [{"targetCluster": cluster_names()}],
        "targetCluster": cluster_names(), "overriders": plaintext()});
    let message = aggregate_message(&override_spec(&spec, ""));
    assert_eq!(
        message,
        "[spec.targetCluster: Invalid value: {\"clusterNames\":[\"cluster-name\"]}: overrideRules and targetCluster can't co-exist, spec.overriders: Invalid value: {\"plaintext\":[{\"path\":\"spec/image\"}]}: overrideRules and overriders can't co-exist]"
    );
}

#[test]
fn empty_overriders_ignore_field_overriders_only() {
    let with_rules = |overriders: Value| {
        override_spec(
            &json!({"overrideRules": [{"targetCluster": cluster_names()}], "overriders": overriders}),
            "",
        )
    };
    // Karmada's `emptyOverrides` cases: none set; plaintext; plaintext, image and command.
    assert!(with_rules(json!({})).is_empty());
    assert_eq!(with_rules(plaintext()).len(), 1);
    let several = json!({
        "plaintext": [{"path": "spec/image"}],
        "imageOverrider": [{"component": "Registry", "operator": "remove", "value": "fictional.registry.us"}],
        "commandOverrider": [{"containerName": "nginx", "operator": "add", "value": ["echo 'hello karmada'"]}],
    });
    assert_eq!(with_rules(several).len(), 1);
    // Empty lists count as empty, and field overriders are not looked at.
    assert!(with_rules(json!({"plaintext": [], "argsOverrider": []})).is_empty());
    assert!(with_rules(json!({"fieldOverrider": [{"fieldPath": "/a", "json": []}]})).is_empty());
}

/// A one-rule spec for `member1` with `overriders`, as the webhook tests write it.
fn webhook_spec(overriders: Value) -> Value {
    json!({
        "resourceSelectors": [{"apiVersion": "test-apiversion", "kind": "test"}],
        "overrideRules": [{"targetCluster": {"clusterNames": ["member1"]}, "overriders": overriders}],
    })
}

/// A rule without a target cluster holding one field overrider.
fn field_rule(overrider: Value) -> Value {
    json!({"overrideRules": [{"overriders": {"fieldOverrider": [overrider]}}]})
}

#[test]
fn override_policy_webhook_denials_match_karmada() {
    let labels = json!({"labelsOverrider": [{"operator": "add",
        "value": {"testannotation~projectId": "c-m-lfx9lk92p-v86cf"}}]});
    let remove = json!({"plaintext": [{"path": "/spec/optional", "operator": "remove"}]});
    let cases = [
        (
            "invalid label key",
            webhook_spec(labels),
            "",
            "Invalid value: \"testannotation~projectId\"",
        ),
        ("valid plaintext remove", webhook_spec(remove), "", ""),
        (
            "field overrider with YAML and JSON",
            webhook_spec(json!({"fieldOverrider": [{"fieldPath": "/data/config",
                "json": [{"subPath": "/db-config", "operator": "replace", "value": {"db": "new"}}],
                "yaml": [{"subPath": "/db-config", "operator": "replace", "value": "db: new"}]}]})),
            "",
            "FieldOverrider has both YAML and JSON set. Only one is allowed",
        ),
        (
            "fieldPath not a JSON pointer",
            field_rule(json!({"fieldPath": "invalidPath",
                "yaml": [{"subPath": "/db-config", "operator": "replace", "value": "db: new"}]})),
            "",
            "spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath: Invalid value: \"invalidPath\": JSON pointer must be empty or start with a \"/",
        ),
        (
            "JSON subPath not a JSON pointer",
            field_rule(json!({"fieldPath": "/data/config",
                "json": [{"subPath": "invalidSubPath", "operator": "replace", "value": {"db": "new"}}]})),
            "",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].subPath: Invalid value: \"invalidSubPath\": JSON pointer must be empty or start with a \"/",
        ),
        (
            "YAML subPath not a JSON pointer",
            field_rule(json!({"fieldPath": "/data/config",
                "yaml": [{"subPath": "invalidSubPath", "operator": "replace", "value": "db: new"}]})),
            "",
            "spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].subPath: Invalid value: \"invalidSubPath\": JSON pointer must be empty or start with a \"/",
        ),
        (
            "replace without a value",
            field_rule(json!({"fieldPath": "/data/config",
                "json": [{"subPath": "/db-config", "operator": "replace"}]})),
            "",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: null: value is required for add or replace operation",
        ),
        (
            "add without a value",
            field_rule(json!({"fieldPath": "/data/config",
                "json": [{"subPath": "/db-config", "operator": "add"}]})),
            "",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: null: value is required for add or replace operation",
        ),
        (
            "remove with a value",
            field_rule(json!({"fieldPath": "/data/config",
                "json": [{"subPath": "/db-config", "operator": "remove", "value": {"db": "new"}}]})),
            "",
            "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: {\"db\":\"new\"}: value is not allowed for remove operation",
        ),
        (
            "selector namespace differs from the policy's",
            json!({"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns-2"}]}),
            "ns-1",
            "spec.resourceSelectors[0].namespace: Invalid value: \"ns-2\": namespace of resource selector must be the same as the namespace of the policy",
        ),
    ];
    for (case, spec, namespace, expected) in cases {
        assert_verdict(case, &spec, namespace, expected);
    }
}

#[test]
fn cluster_override_policy_webhook_denials_match_karmada() {
    let labels = json!({"labelsOverrider": [{"operator": "add",
        "value": {"testannotation~projectId": "c-m-lfx9lk92p-v86cf"}}]});
    let remove = json!({"plaintext": [{"path": "/spec/optional", "operator": "remove"}]});
    for (case, spec, expected) in [
        (
            "invalid label key",
            webhook_spec(labels),
            "Invalid value: \"testannotation~projectId\"",
        ),
        ("valid plaintext remove", webhook_spec(remove), ""),
    ] {
        let policy = json!({"metadata": {"name": "c"}, "spec": spec});
        let message = aggregate_message(&validate(Kind::ClusterOverridePolicy, &policy, None));
        if expected.is_empty() {
            assert_eq!(message, "", "{case}");
        } else {
            assert!(message.contains(expected), "{case}: {message}");
        }
    }
}

#[test]
fn override_policy_webhook_through_admission() {
    // The webhook cases whose objects the CRD schema also accepts, admitted in `ns-1`.
    let op = |spec: Value| {
        let policy = defaulted(
            Kind::OverridePolicy,
            json!({"metadata": {"name": "o", "namespace": "ns-1"}, "spec": spec}),
        );
        aggregate_message(&validate(Kind::OverridePolicy, &policy, None))
    };
    let remove = json!({"plaintext": [{"path": "/spec/optional", "operator": "remove"}]});
    assert_eq!(op(webhook_spec(remove)), "");
    assert_eq!(
        op(field_rule(json!({"fieldPath": "/data/config",
            "json": [{"subPath": "/db-config", "operator": "remove", "value": {"db": "new"}}]}))),
        "spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value: Invalid value: {\"db\":\"new\"}: value is not allowed for remove operation"
    );
    assert_eq!(
        op(
            json!({"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns-2"}]})
        ),
        "spec.resourceSelectors[0].namespace: Invalid value: \"ns-2\": namespace of resource selector must be the same as the namespace of the policy"
    );
}

#[test]
fn override_policy_selectors_take_the_policy_namespace_and_nothing_else_changes() {
    let policy = defaulted(
        Kind::OverridePolicy,
        json!({"metadata": {"name": "test-override-policy", "namespace": "test-namespace"},
            "spec": {"resourceSelectors": [{"namespace": ""}, {}]}}),
    );
    assert_eq!(
        policy,
        json!({"metadata": {"name": "test-override-policy", "namespace": "test-namespace"},
            "spec": {"resourceSelectors": [{"namespace": "test-namespace"}, {"namespace": "test-namespace"}]}})
    );
}

#[test]
fn label_and_annotation_overriders_use_karmadas_apimachinery_wording() {
    // karmada-webhook builds on apimachinery v0.36: lengths in bytes, "a valid label key".
    let long = "v".repeat(64);
    let spec = json!({"overrideRules": rule(json!({
        "labelsOverrider": [{"operator": "add", "value": {"app": long}}],
        "annotationsOverrider": [{"operator": "add", "value": {"a/b/c": "x"}}],
    }))});
    assert_eq!(
        messages(&override_spec(&spec, "")),
        [
            "spec.overrideRules[0].overriders.annotationsOverrider[0].value: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_owned(),
            format!(
                "spec.overrideRules[0].overriders.labelsOverrider[0].value: Invalid value: \"{long}\": must be no more than 63 bytes"
            ),
        ]
    );
}
