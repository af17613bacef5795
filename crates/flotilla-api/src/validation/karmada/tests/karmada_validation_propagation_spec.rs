//! The cases of Karmada's `TestValidatePropagationSpec`, `TestValidateClusterTolerations` and
//! `TestValidateWorkloadAffinity` (pkg/util/validation/validation_test.go). Each input is
//! checked twice: against `ValidatePropagationSpec`'s port alone (as the Go test does), and
//! through admission as a PropagationPolicy (schema, defaults, webhook rules), which must give
//! the same verdict. Karmada checks that the aggregated error text contains the expected text.

use serde_json::{Value, json};

use super::super::policy::{placement, propagation_spec};
use super::*;
use crate::validation::{FieldPath, aggregate_message};

/// `ValidatePropagationSpec(spec, "")` joined as `ErrorList.ToAggregate().Error()`.
fn spec_message(spec: &Value) -> String {
    aggregate_message(&propagation_spec(spec, ""))
}

/// The same spec admitted as a PropagationPolicy in `default` (a selector added when the Go
/// case has none, since the schema requires one).
fn admitted_message(spec: &Value) -> String {
    let mut spec = spec.clone();
    if spec.get("resourceSelectors").is_none() {
        spec["resourceSelectors"] = selector();
    }
    aggregate_message(&validate(Kind::PropagationPolicy, &pp(spec), None))
}

/// Empty `expected`: accepted; otherwise the error text contains it.
fn assert_verdict(case: &str, message: &str, expected: &str) {
    if expected.is_empty() {
        assert_eq!(message, "", "{case}: expected no error");
    } else {
        assert!(
            message.contains(expected),
            "{case}: expected {expected:?} in {message:?}"
        );
    }
}

fn field_selector(key: &str, operator: &str) -> Value {
    json!({"fieldSelector": {"matchExpressions": [
        {"key": key, "operator": operator, "values": ["fooCloud"]}]}})
}

fn with_placement(placement: Value) -> Value {
    json!({"placement": placement})
}

fn spread(constraints: Value) -> Value {
    with_placement(json!({"spreadConstraints": constraints}))
}

fn suspension(suspension: Value) -> Value {
    json!({"suspension": suspension})
}

fn workload(affinity: Value) -> Value {
    with_placement(json!({"workloadAffinity": affinity}))
}

const UNSUPPORTED_KEY: &str = "unsupported key \"foo\", must be provider, region, or zone";
const UNSUPPORTED_OPERATOR: &str = "unsupported operator \"Exists\", must be In or NotIn";

fn propagation_spec_cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "valid spec",
            json!({"placement": {
                "clusterAffinity": {"fieldSelector": {"matchExpressions": [
                    {"key": "provider", "operator": "In", "values": ["fooCloud"]},
                    {"key": "region", "operator": "NotIn", "values": ["fooCloud"]},
                    {"key": "zone", "operator": "NotIn", "values": ["fooCloud"]},
                ]}},
                "spreadConstraints": [
                    {"maxGroups": 2, "minGroups": 1, "spreadByField": "region"},
                    {"spreadByField": "cluster"},
                ],
            }}),
            "",
        ),
        (
            "clusterAffinity.fieldSelector has unsupported key",
            with_placement(json!({"clusterAffinity": field_selector("foo", "In")})),
            UNSUPPORTED_KEY,
        ),
        (
            "clusterAffinity.fieldSelector has unsupported operator",
            with_placement(json!({"clusterAffinity": field_selector("provider", "Exists")})),
            UNSUPPORTED_OPERATOR,
        ),
        (
            "clusterAffinities cannot co-exist with clusterAffinity",
            with_placement(json!({
                "clusterAffinity": {"clusterNames": ["m1"]},
                "clusterAffinities": [{"affinityName": "group1", "clusterNames": ["m1"]}],
            })),
            "clusterAffinities cannot co-exist with clusterAffinity",
        ),
        (
            "clusterAffinities different affinities have the same affinityName",
            with_placement(json!({"clusterAffinities": [
                {"affinityName": "group1", "clusterNames": ["m1"]},
                {"affinityName": "group1", "clusterNames": ["m2"]},
            ]})),
            "each affinity term in a policy must have a unique name",
        ),
        (
            "clusterAffinities[index] fieldSelector has unsupported key",
            with_placement(json!({"clusterAffinities": [
                {"affinityName": "group1", "fieldSelector": field_selector("foo", "In")["fieldSelector"]},
            ]})),
            UNSUPPORTED_KEY,
        ),
        (
            "clusterAffinities[index] fieldSelector has unsupported operator",
            with_placement(json!({"clusterAffinities": [
                {"affinityName": "group1", "fieldSelector": field_selector("provider", "Exists")["fieldSelector"]},
            ]})),
            UNSUPPORTED_OPERATOR,
        ),
        (
            "spreadByLabel co-exists with spreadByField",
            spread(json!([{"spreadByField": "cluster", "spreadByLabel": "foo"}])),
            "spreadByLabel should not co-exist with spreadByField",
        ),
        (
            "maxGroups lower than minGroups",
            spread(json!([{"maxGroups": 1, "minGroups": 2}])),
            "maxGroups lower than minGroups is not allowed",
        ),
        (
            "maxGroups lower than 0",
            spread(json!([{"maxGroups": -1, "minGroups": 1}])),
            "maxGroups lower than 0 is not allowed",
        ),
        (
            "minGroups lower than 0",
            spread(json!([{"maxGroups": 2, "minGroups": -2}])),
            "minGroups lower than 0 is not allowed",
        ),
        (
            "two cluster spread constraints",
            spread(json!([
                {"spreadByField": "cluster", "maxGroups": 2, "minGroups": -2},
                {"spreadByField": "cluster", "maxGroups": 5, "minGroups": 3},
                {"spreadByLabel": "grouped-by-net", "maxGroups": 5, "minGroups": 3},
            ])),
            "multiple cluster spread constraints are not allowed",
        ),
        (
            "multiple region spread constraints",
            spread(json!([
                {"spreadByField": "region", "maxGroups": 1, "minGroups": 3},
                {"spreadByField": "region", "maxGroups": 4, "minGroups": 2},
                {"spreadByField": "region", "maxGroups": 6, "minGroups": 5},
                {"spreadByField": "cluster", "maxGroups": 10, "minGroups": 5},
            ])),
            "multiple region spread constraints are not allowed",
        ),
        (
            "spreadByField cluster must be included when spreading by field",
            spread(json!([{"spreadByField": "region"}])),
            "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
        ),
        (
            "resourceSelector name is empty when preemption is Always",
            json!({"preemption": "Always", "resourceSelectors": [
                {"apiVersion": "v1", "kind": "Pod", "namespace": "default"}]}),
            "name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption",
        ),
        (
            "suspension dispatching cannot co-exist with dispatchingOnClusters",
            suspension(
                json!({"dispatching": true, "dispatchingOnClusters": {"clusterNames": ["cluster-name"]}}),
            ),
            "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames",
        ),
        (
            "dispatching with no dispatchingOnClusters is valid",
            suspension(json!({"dispatching": true})),
            "",
        ),
        (
            "dispatching with empty dispatchingOnClusters.clusterNames is valid",
            suspension(json!({"dispatching": true, "dispatchingOnClusters": {"clusterNames": []}})),
            "",
        ),
        (
            "dispatchingOnClusters.clusterNames without dispatching is valid",
            suspension(json!({"dispatchingOnClusters": {"clusterNames": ["cluster-name"]}})),
            "",
        ),
        (
            "dispatchingOnClusters.clusterNames with dispatching false is valid",
            suspension(
                json!({"dispatching": false, "dispatchingOnClusters": {"clusterNames": ["cluster-name"]}}),
            ),
            "",
        ),
        (
            "workloadAffinity affinity and antiAffinity share a groupByLabelKey",
            workload(json!({"affinity": {"groupByLabelKey": "app.group"},
                "antiAffinity": {"groupByLabelKey": "app.group"}})),
            "affinity and antiAffinity must not use the same groupByLabelKey",
        ),
        (
            "workloadAffinity with different groupByLabelKeys is valid",
            workload(json!({"affinity": {"groupByLabelKey": "app.group"},
                "antiAffinity": {"groupByLabelKey": "app.region"}})),
            "",
        ),
        (
            "workloadAffinity with only affinity is valid",
            workload(json!({"affinity": {"groupByLabelKey": "app.group"}})),
            "",
        ),
        (
            "workloadAffinity with only antiAffinity is valid",
            workload(json!({"antiAffinity": {"groupByLabelKey": "app.group"}})),
            "",
        ),
        (
            "workloadAffinity affinity with an invalid groupByLabelKey",
            workload(json!({"affinity": {"groupByLabelKey": "INVALID KEY!"}})),
            "spec.placement.workloadAffinity.affinity.groupByLabelKey",
        ),
        (
            "workloadAffinity antiAffinity with an invalid groupByLabelKey",
            workload(json!({"antiAffinity": {"groupByLabelKey": "INVALID KEY!"}})),
            "spec.placement.workloadAffinity.antiAffinity.groupByLabelKey",
        ),
    ]
}

#[test]
fn propagation_specs_get_karmadas_verdicts() {
    for (case, spec, expected) in propagation_spec_cases() {
        assert_verdict(case, &spec_message(&spec), expected);
        assert_verdict(case, &admitted_message(&spec), expected);
    }
}

#[test]
fn cluster_tolerations_refuse_only_lt_and_gt() {
    let unsupported = "spec.placement.clusterTolerations[0].operator: Unsupported value: \"Lt\": supported values: \"\", \"Exists\", \"Equal\"";
    for (case, tolerations, expected) in [
        ("no tolerations", Value::Null, ""),
        ("Exists", json!([{"key": "key1", "operator": "Exists"}]), ""),
        (
            "Equal",
            json!([{"key": "key1", "operator": "Equal", "value": "value1"}]),
            "",
        ),
        (
            "no operator (Equal)",
            json!([{"key": "key1", "value": "value1"}]),
            "",
        ),
        (
            "Lt",
            json!([{"key": "key1", "operator": "Lt", "value": "100"}]),
            unsupported,
        ),
        (
            "Gt",
            json!([{"key": "key1", "operator": "Gt", "value": "100"}]),
            "Unsupported value: \"Gt\"",
        ),
        (
            "Equal then Lt",
            json!([{"key": "key1", "operator": "Equal", "value": "value1"},
                {"key": "key2", "operator": "Lt", "value": "100"}]),
            "spec.placement.clusterTolerations[1].operator: Unsupported value: \"Lt\"",
        ),
    ] {
        let spec = with_placement(json!({"clusterTolerations": tolerations}));
        let errors = placement(
            &spec["placement"],
            &FieldPath::new("spec").child("placement"),
        );
        assert_verdict(case, &aggregate_message(&errors), expected);
        assert_verdict(case, &admitted_message(&spec), expected);
    }
}

#[test]
fn workload_affinity_terms_need_label_keys_that_differ() {
    for (case, affinity, expected) in [
        ("no workload affinity", Value::Null, ""),
        (
            "only affinity",
            json!({"affinity": {"groupByLabelKey": "app.group"}}),
            "",
        ),
        (
            "only antiAffinity",
            json!({"antiAffinity": {"groupByLabelKey": "app.group"}}),
            "",
        ),
        (
            "different keys",
            json!({"affinity": {"groupByLabelKey": "app.group"},
                "antiAffinity": {"groupByLabelKey": "app.region"}}),
            "",
        ),
        (
            "the same key",
            json!({"affinity": {"groupByLabelKey": "app.group"},
                "antiAffinity": {"groupByLabelKey": "app.group"}}),
            "affinity and antiAffinity must not use the same groupByLabelKey",
        ),
        (
            "affinity key invalid",
            json!({"affinity": {"groupByLabelKey": "INVALID KEY!"}}),
            "spec.placement.workloadAffinity.affinity.groupByLabelKey",
        ),
        (
            "antiAffinity key invalid",
            json!({"antiAffinity": {"groupByLabelKey": "INVALID KEY!"}}),
            "spec.placement.workloadAffinity.antiAffinity.groupByLabelKey",
        ),
    ] {
        let spec = workload(affinity);
        let errors = placement(
            &spec["placement"],
            &FieldPath::new("spec").child("placement"),
        );
        assert_verdict(case, &aggregate_message(&errors), expected);
        assert_verdict(case, &admitted_message(&spec), expected);
    }
}

#[test]
fn an_invalid_group_by_label_key_is_reported_with_the_label_key_message() {
    assert_eq!(
        spec_message(&workload(
            json!({"affinity": {"groupByLabelKey": "INVALID KEY!"}})
        )),
        "spec.placement.workloadAffinity.affinity.groupByLabelKey: Invalid value: \"INVALID KEY!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    );
}
