//! Karmada's ResourceInterpreterWebhookConfiguration cases
//! (`pkg/webhook/configuration/validating_test.go`, `helper_test.go`). Karmada checks that its
//! aggregated message contains the expected text; the full messages are asserted where they are
//! short.

use serde_json::{Value, json};

use super::*;

/// A valid webhook with `extra`'s fields added or replaced.
fn hook(extra: Value) -> Value {
    let mut hook = json!({
        "name": "workloads.karmada.io",
        "clientConfig": {"service": {"namespace": "default", "name": "svc", "path": "/interpreter"}},
        "interpreterContextVersions": ["v1alpha1"],
    });
    for (key, value) in extra.as_object().expect("an object") {
        hook[key] = value.clone();
    }
    hook
}

fn errors(hooks: Value) -> Vec<String> {
    messages(&validate(
        Kind::ResourceInterpreterWebhookConfiguration,
        &json!({"metadata": {"name": "examples"}, "webhooks": hooks}),
        None,
    ))
}

fn hook_errors(extra: Value) -> Vec<String> {
    errors(json!([hook(extra)]))
}

fn rule(operations: Value, groups: Value, versions: Value, kinds: Value) -> Value {
    json!({"rules": [{"operations": operations, "apiGroups": groups, "apiVersions": versions, "kinds": kinds}]})
}

fn assert_contains(errors: &[String], expected: &str, case: &str) {
    assert!(
        errors.iter().any(|e| e.contains(expected)),
        "{case}: {errors:?} lacks {expected:?}"
    );
}

#[test]
fn a_webhook_with_a_service_and_no_port_is_admitted() {
    // TestValidateWebhook, last case: the port defaults to 443.
    assert_eq!(hook_errors(json!({})), Vec::<String>::new());
    let full = rule(
        json!(["InterpretReplica", "Retain"]),
        json!(["apps"]),
        json!(["v1"]),
        json!(["Deployment"]),
    );
    assert_eq!(hook_errors(full), Vec::<String>::new());
}

#[test]
fn rule_operations_are_required_known_and_wildcard_alone() {
    // TestHasWildcardOperation, TestValidateRuleWithOperations
    let ok = |operations: Value| rule(operations, json!(["*"]), json!(["*"]), json!(["*"]));
    assert_eq!(hook_errors(ok(json!(["*"]))), Vec::<String>::new());
    assert_eq!(
        hook_errors(ok(json!(["InterpretReplica"]))),
        Vec::<String>::new()
    );
    assert_eq!(
        hook_errors(ok(json!([]))),
        ["webhooks[0].rules[0].operations: Required value"]
    );
    assert_eq!(
        hook_errors(ok(json!(["*", "InterpretReplica"]))),
        [
            r#"webhooks[0].rules[0].operations: Invalid value: ["*","InterpretReplica"]: if '*' is present, must not specify other operations"#
        ]
    );
    assert_eq!(
        hook_errors(ok(json!(["notsupported"]))),
        [
            r#"webhooks[0].rules[0].operations[0]: Unsupported value: "notsupported": supported values: "*", "AggregateStatus", "InterpretComponent", "InterpretDependency", "InterpretHealth", "InterpretReplica", "InterpretStatus", "Retain", "ReviseReplica""#
        ]
    );
    // "not validated rule": a rule with only an empty group.
    assert_contains(
        &hook_errors(rule(json!(["*"]), json!([""]), json!([]), json!([]))),
        "apiVersions: Required value",
        "not validated rule",
    );
}

#[test]
fn rule_groups_versions_and_kinds_are_required_and_wildcard_alone() {
    // configuration/helper_test.go: TestHasWildcard, TestValidateRule
    let ops = json!(["*"]);
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "groups required",
            rule(ops.clone(), json!([]), json!(["v1"]), json!(["Pod"])),
            "webhooks[0].rules[0].apiGroups: Required value",
        ),
        (
            "groups: * and others",
            rule(
                ops.clone(),
                json!(["*", "apps"]),
                json!(["v1"]),
                json!(["Pod"]),
            ),
            r#"webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups"#,
        ),
        (
            "versions required",
            rule(ops.clone(), json!([""]), json!([]), json!(["Pod"])),
            "webhooks[0].rules[0].apiVersions: Required value",
        ),
        (
            "versions: * and others",
            rule(ops.clone(), json!([""]), json!(["*", "v1"]), json!(["Pod"])),
            r#"webhooks[0].rules[0].apiVersions: Invalid value: ["*","v1"]: if '*' is present, must not specify other API versions"#,
        ),
        (
            "empty version",
            rule(ops.clone(), json!([""]), json!([""]), json!(["Pod"])),
            "webhooks[0].rules[0].apiVersions[0]: Required value",
        ),
        (
            "kinds required",
            rule(ops.clone(), json!([""]), json!(["v1"]), json!([])),
            "webhooks[0].rules[0].kinds: Required value",
        ),
        (
            "kinds: * and others",
            rule(ops.clone(), json!([""]), json!(["v1"]), json!(["*", "Pod"])),
            r#"webhooks[0].rules[0].kinds: Invalid value: ["*","Pod"]: if '*' is present, must not specify other kinds"#,
        ),
        (
            "empty kind",
            rule(ops, json!([""]), json!(["v1"]), json!([""])),
            "webhooks[0].rules[0].kinds[0]: Required value",
        ),
    ];
    for (name, extra, expected) in cases {
        assert_eq!(hook_errors(extra), [expected], "{name}");
    }
}

#[test]
fn interpreter_context_versions_must_include_v1alpha1_once() {
    // TestIsAcceptedExploreReviewVersions, TestValidateExploreReviewVersions
    let versions = |list: Value| hook_errors(json!({"interpreterContextVersions": list}));
    assert_eq!(
        versions(json!([])),
        ["webhooks[0].interpreterContextVersions: Required value: must specify one of v1alpha1"]
    );
    assert_eq!(
        versions(json!(["v1", "v1"])),
        [
            "webhooks[0].interpreterContextVersions[1]: Invalid value: \"v1\": duplicate version",
            r#"webhooks[0].interpreterContextVersions: Invalid value: ["v1","v1"]: must include at least one of v1alpha1"#,
        ]
    );
    assert_contains(
        &versions(json!(["test", "test"])),
        "must include at least one of v1alpha1",
        "invalid versions",
    );
    assert_contains(
        &versions(json!(["a b"])),
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        "not a DNS-1035 label",
    );
    assert_contains(
        &versions(json!([""])),
        "must include at least one of v1alpha1",
        "empty version",
    );
    assert_eq!(versions(json!(["v1", "v1alpha1"])), Vec::<String>::new());
}

#[test]
fn webhook_names_timeouts_and_client_configs_follow_karmada() {
    // TestValidateWebhook
    assert_eq!(
        hook_errors(json!({"name": ""})),
        ["webhooks[0].name: Required value"]
    );
    assert_eq!(
        hook_errors(json!({"name": "workloads"})),
        [
            "webhooks[0].name: Invalid value: \"workloads\": should be a domain with at least two segments separated by dots"
        ]
    );
    assert_eq!(
        hook_errors(json!({"name": "workloads.karmada.io."})),
        Vec::<String>::new()
    );
    assert_contains(
        &hook_errors(rule(json!([]), json!(["*"]), json!(["*"]), json!(["*"]))),
        "operations: Required value",
        "invalid rules",
    );
    assert_eq!(
        hook_errors(json!({"timeoutSeconds": 60})),
        [
            "webhooks[0].timeoutSeconds: Invalid value: 60: the timeout value must be between 1 and 30 seconds"
        ]
    );
    assert_eq!(
        hook_errors(json!({"clientConfig": {}})),
        ["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]
    );
    assert_eq!(
        hook_errors(
            json!({"clientConfig": {"url": "https://a.example", "service": {"namespace": "n", "name": "s"}}})
        ),
        ["webhooks[0].clientConfig: Required value: exactly one of url or service is required"]
    );
    assert_eq!(
        hook_errors(json!({"clientConfig": {"url": ""}})),
        [
            "webhooks[0].clientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            "webhooks[0].clientConfig.url: Invalid value: \"\": host must be specified; desired format: https://host[/path]",
        ]
    );
    assert_eq!(
        hook_errors(json!({"clientConfig": {"url": "https://u@hook.example:8443/p?q=1#f"}})),
        [
            "webhooks[0].clientConfig.url: Invalid value: \"u\": user information is not permitted in the URL",
            "webhooks[0].clientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL",
            "webhooks[0].clientConfig.url: Invalid value: \"q=1\": query parameters are not permitted in the URL",
        ]
    );
    assert_eq!(
        hook_errors(json!({"clientConfig": {"url": "https://127.0.0.1:8443/interpreter"}})),
        Vec::<String>::new()
    );
}

#[test]
fn webhook_services_need_a_name_a_port_and_a_clean_path() {
    // TestValidateWebhook "ClientConfig: invalid service", and the service rules it relies on.
    let service = |service: Value| hook_errors(json!({"clientConfig": {"service": service}}));
    assert_eq!(
        service(json!({"namespace": "default", "name": "", "port": 8080, "path": ""})),
        ["webhooks[0].clientConfig.service.name: Required value"]
    );
    assert_eq!(
        service(json!({"namespace": "default", "name": "svc", "port": 0})),
        [
            "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"
        ]
    );
    let path = |path: &str| service(json!({"namespace": "default", "name": "svc", "path": path}));
    assert!(path("/").is_empty());
    assert!(path("/a/b.c/").is_empty());
    assert_eq!(
        path("//"),
        [
            "webhooks[0].clientConfig.service.path: Invalid value: \"//\": segment[0] may not be empty"
        ]
    );
    assert_eq!(
        path("a//B"),
        [
            "webhooks[0].clientConfig.service.path: Invalid value: \"a//B\": must start with a '/'",
            // The first byte is dropped whatever it is: the segments are "", "" and "B".
            "webhooks[0].clientConfig.service.path: Invalid value: \"a//B\": segment[0] may not be empty",
            "webhooks[0].clientConfig.service.path: Invalid value: \"a//B\": segment[1] may not be empty",
            "webhooks[0].clientConfig.service.path: Invalid value: \"a//B\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ]
    );
}

#[test]
fn webhook_names_must_be_unique() {
    assert_eq!(
        errors(json!([hook(json!({})), hook(json!({}))])),
        ["webhooks[1].name: Duplicate value: \"workloads.karmada.io\""]
    );
}
