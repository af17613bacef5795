//! Karmada's taint cases: the ClusterTaintPolicy webhook
//! (`pkg/webhook/clustertaintpolicy/validating_test.go`) and the Cluster taint rules of the
//! aggregated API server (`pkg/util/lifted/validateclustertaints_test.go`).

use serde_json::{Value, json};

use super::*;

fn policy(taints: Value) -> Value {
    json!({"metadata": {"name": "policy1"}, "spec": {"taints": taints}})
}

fn policy_errors(taints: Value, allow_no_execute: bool) -> Vec<String> {
    messages(&validate_with(
        Kind::ClusterTaintPolicy,
        &policy(taints),
        None,
        WebhookOptions {
            allow_no_execute_taint_policy: allow_no_execute,
            ..Default::default()
        },
    ))
}

fn duplicate(index: usize, key: &str, effect: &str) -> String {
    format!(
        "spec.taints[{index}]: Duplicate value: \"Duplicate taint with the same key({key}) and effect({effect}) is not allowed\""
    )
}

#[test]
fn taint_policy_refuses_repeated_key_and_effect_pairs_once_per_first_occurrence() {
    // TestValidatePolicyTaints
    let cases: Vec<(&str, Value, bool, Vec<String>)> = vec![
        (
            "non-repeating pairs",
            json!([{"key": "key1", "effect": "NoSchedule"}, {"key": "key2", "effect": "PreferNoSchedule"}]),
            true,
            vec![],
        ),
        (
            "a repeated pair, values ignored",
            json!([{"key": "key1", "effect": "NoSchedule"}, {"key": "key1", "effect": "NoSchedule", "value": "value1"}]),
            true,
            vec![duplicate(0, "key1", "NoSchedule")],
        ),
        (
            "a repeated pair apart",
            json!([
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key2", "effect": "PreferNoSchedule"},
                {"key": "key1", "effect": "NoSchedule"},
            ]),
            true,
            vec![duplicate(0, "key1", "NoSchedule")],
        ),
        (
            "several repeated pairs",
            json!([
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key2", "effect": "SelectiveNoSchedule", "value": "value1"},
                {"key": "key1", "effect": "NoSchedule"},
                {"key": "key3", "effect": "NoExecute"},
                {"key": "key2", "effect": "SelectiveNoSchedule"},
            ]),
            true,
            vec![
                duplicate(0, "key1", "NoSchedule"),
                duplicate(1, "key2", "SelectiveNoSchedule"),
            ],
        ),
        (
            "NoExecute without the flag",
            json!([{"key": "key1", "effect": "NoExecute"}]),
            false,
            vec!["spec.taints[0]: Forbidden: Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by administrators through command-line flags".into()],
        ),
    ];
    for (name, taints, allow, expected) in cases {
        assert_eq!(policy_errors(taints, allow), expected, "{name}");
    }
}

#[test]
fn taint_policy_webhook_admits_distinct_taints_and_denies_repeats() {
    // TestHandle ("Decoding failed" is Go decoder plumbing, not reproduced).
    assert!(
        policy_errors(
            json!([{"key": "key1", "effect": "NoSchedule"}, {"key": "key2", "effect": "PreferNoSchedule"}]),
            false,
        )
        .is_empty()
    );
    let denied = policy_errors(
        json!([
            {"key": "key1", "effect": "NoSchedule"},
            {"key": "key2", "effect": "PreferNoSchedule"},
            {"key": "key1", "effect": "NoSchedule"},
        ]),
        false,
    );
    assert_eq!(denied, [duplicate(0, "key1", "NoSchedule")]);
}

fn cluster_taint_errors(taints: Value) -> Vec<String> {
    messages(&validate(
        Kind::Cluster,
        &json!({"metadata": {"name": "m1"}, "spec": {"syncMode": "Push", "taints": taints}}),
        None,
    ))
}

#[test]
fn cluster_taint_effects_are_no_schedule_or_no_execute_and_required() {
    // TestValidateClusterTaintEffect. Its `allowEmpty: true` case exercises a parameter
    // `ValidateClusterTaints` never sets, so it has no counterpart here.
    let effect =
        |effect: &str| cluster_taint_errors(json!([{"key": "k", "value": "v", "effect": effect}]));
    assert!(effect("NoSchedule").is_empty());
    assert!(effect("NoExecute").is_empty());
    assert_eq!(
        effect("InvalidEffect"),
        [
            "spec.taints[0].effect: Unsupported value: \"InvalidEffect\": supported values: \"NoSchedule\", \"NoExecute\""
        ]
    );
    assert_eq!(effect(""), ["spec.taints[0].effect: Required value"]);
}

#[test]
fn cluster_taints_check_key_value_effect_and_uniqueness() {
    // TestValidateClusterTaints (Karmada counts the errors).
    let cases: Vec<(&str, Value, usize)> = vec![
        (
            "valid taints",
            json!([
                {"key": "key1", "value": "value1", "effect": "NoSchedule"},
                {"key": "key2", "value": "value2", "effect": "NoExecute"},
            ]),
            0,
        ),
        (
            "invalid key",
            json!([{"key": "invalid key", "value": "value1", "effect": "NoSchedule"}]),
            1,
        ),
        (
            "invalid value",
            json!([{"key": "key1", "value": "invalid value!", "effect": "NoSchedule"}]),
            1,
        ),
        (
            "invalid effect",
            json!([{"key": "key1", "value": "value1", "effect": "InvalidEffect"}]),
            1,
        ),
        (
            "duplicate taints",
            json!([
                {"key": "key1", "value": "value1", "effect": "NoSchedule"},
                {"key": "key1", "value": "value2", "effect": "NoSchedule"},
            ]),
            1,
        ),
        (
            "multiple errors",
            json!([
                {"key": "invalid key", "value": "invalid value!", "effect": "InvalidEffect"},
                {"key": "key1", "value": "value1", "effect": "NoSchedule"},
                {"key": "key1", "value": "value2", "effect": "NoSchedule"},
            ]),
            4,
        ),
        (
            "empty effect",
            json!([{"key": "key1", "value": "value1", "effect": ""}]),
            1,
        ),
    ];
    for (name, taints, count) in cases {
        let errors = cluster_taint_errors(taints);
        assert_eq!(errors.len(), count, "{name}: {errors:?}");
    }
}

#[test]
fn cluster_taint_messages_use_karmadas_apimachinery_wording() {
    // Karmada's aggregated API server builds on apimachinery v0.36: lengths in bytes.
    let long = "a".repeat(64);
    assert_eq!(
        cluster_taint_errors(json!([{"key": long, "value": long, "effect": "NoSchedule"}])),
        [
            format!(
                "spec.taints[0].key: Invalid value: \"{long}\": name part must be no more than 63 bytes"
            ),
            format!(
                "spec.taints[0].value: Invalid value: \"{long}\": must be no more than 63 bytes"
            ),
        ]
    );
}

#[test]
fn quota_resource_names_use_the_webhooks_apimachinery_wording() {
    let long = format!("example.com/{}", "a".repeat(64));
    let errors = messages(&validate(
        Kind::FederatedResourceQuota,
        &json!({"metadata": {"name": "q", "namespace": "default"},
            "spec": {"overall": {long.clone(): "1", "a/b/c": "1"}}}),
        None,
    ));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "spec.overall[a/b/c]: Invalid value: \"a/b/c\": a valid label key must consist of"
        ),
        "{errors:?}"
    );
    assert_eq!(
        errors[1],
        format!(
            "spec.overall[{long}]: Invalid value: \"{long}\": name part must be no more than 63 bytes"
        )
    );
}
