//! The cases of Karmada's `TestValidateApplicationFailover`, `TestValidateClusterFailover`,
//! `TestValidatePlacement` and `TestValidateOverflowAffinities`
//! (pkg/util/validation/validation_test.go). The failover tests compare the whole aggregated
//! message (`ErrorList.ToAggregate().Error()`), so these do too.

use serde_json::{Value, json};

use super::super::policy::{failover, placement};
use super::*;
use crate::validation::{FieldPath, aggregate_message};

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

fn failover_message(failover_behavior: Value) -> String {
    let path = FieldPath::new("spec").child("failover");
    aggregate_message(&failover(&failover_behavior, &path))
}

/// An application failover tolerating 100 seconds, with `extra` fields.
fn application(extra: Value) -> Value {
    let mut application = json!({"decisionConditions": {"tolerationSeconds": 100}});
    for (key, value) in extra.as_object().into_iter().flatten() {
        application[key] = value.clone();
    }
    application
}

fn rules(aliases: &[&str]) -> Value {
    let rules: Vec<Value> = aliases
        .iter()
        .map(|alias| json!({"aliasLabelName": alias, "jsonPath": "{.availableReplicas}"}))
        .collect();
    json!({"statePreservation": {"rules": rules}})
}

fn alias_error(scope: &str, index: usize, alias: &str, message: &str) -> String {
    format!(
        "spec.failover.{scope}.statePreservation.rules[{index}].aliasLabelName: Invalid value: \"{alias}\": {message}"
    )
}

#[test]
fn application_failover_messages_match_karmada() {
    let long = "a".repeat(64);
    let cases: Vec<(&str, Value, String)> = vec![
        ("no application failover", Value::Null, String::new()),
        (
            "negative tolerationSeconds",
            json!({"decisionConditions": {"tolerationSeconds": -100}}),
            "spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -100: must be greater than or equal to 0".into(),
        ),
        (
            "gracePeriodSeconds without purgeMode Gracefully",
            application(json!({"purgeMode": "Directly", "gracePeriodSeconds": 100})),
            "spec.failover.application.gracePeriodSeconds: Invalid value: 100: only takes effect when purgeMode is gracefully".into(),
        ),
        (
            "negative gracePeriodSeconds with Gracefully",
            application(json!({"purgeMode": "Gracefully", "gracePeriodSeconds": -100})),
            "spec.failover.application.gracePeriodSeconds: Invalid value: -100: must be greater than 0".into(),
        ),
        (
            "Gracefully without gracePeriodSeconds",
            application(json!({"purgeMode": "Gracefully"})),
            "spec.failover.application.gracePeriodSeconds: Invalid value: null: should not be empty when purgeMode is gracefully".into(),
        ),
        ("correctly declared", application(json!({})), String::new()),
        (
            "no statePreservation",
            application(json!({"statePreservation": null})),
            String::new(),
        ),
        (
            "valid state-preservation rules",
            application(rules(&["valid-label-name", "example.com/state-key"])),
            String::new(),
        ),
        (
            "alias starts with a dash",
            application(rules(&["-invalid-label"])),
            alias_error("application", 0, "-invalid-label", NAME_PART),
        ),
        (
            "alias ends with a dash",
            application(rules(&["invalid-label-"])),
            alias_error("application", 0, "invalid-label-", NAME_PART),
        ),
        (
            "alias with an invalid character",
            application(rules(&["invalid@label"])),
            alias_error("application", 0, "invalid@label", NAME_PART),
        ),
        (
            "alias too long",
            application(rules(&[&long])),
            alias_error(
                "application",
                0,
                &long,
                "name part must be no more than 63 bytes",
            ),
        ),
        (
            "two invalid aliases, aggregated",
            application(rules(&["-invalid1", "invalid2@"])),
            format!(
                "[{}, {}]",
                alias_error("application", 0, "-invalid1", NAME_PART),
                alias_error("application", 1, "invalid2@", NAME_PART)
            ),
        ),
        (
            "alias with a valid prefix",
            application(rules(&["example.com/my-state"])),
            String::new(),
        ),
        (
            "alias with an upper-case prefix",
            application(rules(&["INVALID.COM/my-state"])),
            alias_error(
                "application",
                0,
                "INVALID.COM/my-state",
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
        ),
    ];
    for (case, application, expected) in cases {
        assert_eq!(
            failover_message(json!({"application": application})),
            expected,
            "{case}"
        );
    }
}

#[test]
fn cluster_failover_checks_only_state_preservation() {
    for (case, cluster, expected) in [
        ("no cluster failover", Value::Null, String::new()),
        (
            "valid state preservation",
            json!({"purgeMode": "Gracefully", "statePreservation": {"rules": [
                {"aliasLabelName": "cluster-state", "jsonPath": "{.status.nodeCount}"}]}}),
            String::new(),
        ),
        (
            "invalid alias",
            json!({"purgeMode": "Directly", "statePreservation": {"rules": [
                {"aliasLabelName": "-invalid-cluster-label", "jsonPath": "{.status.nodeCount}"}]}}),
            alias_error("cluster", 0, "-invalid-cluster-label", NAME_PART),
        ),
        (
            "no state preservation",
            json!({"purgeMode": "Gracefully"}),
            String::new(),
        ),
    ] {
        assert_eq!(
            failover_message(json!({"cluster": cluster})),
            expected,
            "{case}"
        );
    }
}

/// `ValidatePlacement`'s errors under `spec.placement`.
fn placement_errors(value: &Value) -> Vec<String> {
    let path = FieldPath::new("spec").child("placement");
    messages(&placement(value, &path))
}

fn primary_with_overflow(name: &str, member: &str, overflow_member: &str) -> Value {
    json!({"affinityName": name, "clusterNames": [member], "overflowAffinities": [
        {"affinityName": "overflow-1", "clusterNames": [overflow_member]}]})
}

const NEEDS_DYNAMIC_OR_AGGREGATED: &str =
    "overflowAffinities can only be used together with dynamic weight or aggregated scheduling";

#[test]
fn placement_cases_count_and_name_their_errors() {
    let overflow = json!([primary_with_overflow("primary", "member1", "member2")]);
    for (case, value, count, expected) in [
        (
            "clusterAffinity and clusterAffinities together",
            json!({"clusterAffinity": {"clusterNames": ["member1"]},
                "clusterAffinities": [{"affinityName": "group1"}]}),
            1,
            "clusterAffinities cannot co-exist with clusterAffinity",
        ),
        (
            "overflow without replicaScheduling",
            json!({"clusterAffinities": overflow}),
            1,
            NEEDS_DYNAMIC_OR_AGGREGATED,
        ),
        (
            "overflow with static weights",
            json!({"clusterAffinities": overflow, "replicaScheduling": {
                "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                "weightPreference": {"staticWeightList": [
                    {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1}]}}}),
            1,
            NEEDS_DYNAMIC_OR_AGGREGATED,
        ),
        (
            "overflow with a dynamic weight",
            json!({"clusterAffinities": overflow, "replicaScheduling": {
                "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}),
            0,
            "",
        ),
        (
            "overflow with Aggregated",
            json!({"clusterAffinities": overflow, "replicaScheduling": {
                "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}}),
            0,
            "",
        ),
        (
            "two terms, only the second overflows",
            json!({"clusterAffinities": [
                {"affinityName": "group1", "clusterNames": ["member1"]},
                primary_with_overflow("group2", "member2", "member3"),
            ]}),
            1,
            NEEDS_DYNAMIC_OR_AGGREGATED,
        ),
        (
            "no overflow, no replicaScheduling",
            json!({"clusterAffinities": [{"affinityName": "primary", "clusterNames": ["member1"]}]}),
            0,
            "",
        ),
    ] {
        let errors = placement_errors(&value);
        assert_eq!(errors.len(), count, "{case}: {errors:?}");
        assert!(
            errors.iter().all(|e| e.contains(expected)),
            "{case}: {errors:?}"
        );
    }
    let errors = placement_errors(&json!({"clusterAffinities": overflow}));
    assert!(
        errors[0].starts_with(
            "spec.placement.clusterAffinities[0].overflowAffinities: Invalid value: [{"
        ),
        "{errors:?}"
    );
}

const NEEDS_INLINE: &str =
    "overflowAffinities can only be used together with the inline ClusterAffinity";
const NOT_UNIQUE: &str =
    "overflow affinity name must be unique and must not duplicate the primary group's affinityName";

#[test]
fn overflow_affinities_cases_count_and_name_their_errors() {
    let overflows = |names: &[&str]| -> Value {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| json!({"affinityName": name, "clusterNames": [format!("member{}", i + 2)]}))
            .collect()
    };
    let term = |inline: bool, names: &[&str]| -> Value {
        let mut term = json!({"affinityName": "primary"});
        if inline {
            term["clusterNames"] = json!(["member1"]);
        }
        if !names.is_empty() {
            term["overflowAffinities"] = overflows(names);
        }
        term
    };
    for (case, term, expected) in [
        ("no overflow", term(true, &[]), vec![]),
        (
            "valid overflow",
            term(true, &["overflow-1", "overflow-2"]),
            vec![],
        ),
        (
            "overflow without an inline affinity",
            term(false, &["overflow-1"]),
            vec![NEEDS_INLINE],
        ),
        (
            "repeated overflow names",
            term(true, &["overflow-1", "overflow-1"]),
            vec![NOT_UNIQUE],
        ),
        (
            "overflow named as the primary",
            term(true, &["primary"]),
            vec![NOT_UNIQUE],
        ),
        (
            "no inline affinity and repeated names",
            term(false, &["overflow-1", "overflow-1"]),
            vec![NEEDS_INLINE, NOT_UNIQUE],
        ),
    ] {
        // Aggregated scheduling, so that only the term's own rules can fail.
        let value = json!({"clusterAffinities": [term],
            "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}});
        let errors = placement_errors(&value);
        assert_eq!(errors.len(), expected.len(), "{case}: {errors:?}");
        for (error, expected) in errors.iter().zip(expected) {
            assert!(error.ends_with(expected), "{case}: {error}");
        }
    }
}
