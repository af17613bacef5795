//! Karmada's ResourceBinding and ClusterResourceBinding webhook cases
//! (`pkg/webhook/resourcebinding/{mutating,validating}_test.go`,
//! `pkg/webhook/clusterresourcebinding/mutating_test.go`). The FederatedResourceQuota part of
//! the validating webhook is tested with the API server (`registry/quota.rs`).

use serde_json::{Value, json};

use super::*;

const ID: &str = "11111111-2222-3333-4444-555555555555";

fn pod_binding(namespace: Option<&str>, name: &str) -> Value {
    let mut metadata = json!({"name": name});
    if let Some(namespace) = namespace {
        metadata["namespace"] = namespace.into();
    }
    json!({"metadata": metadata, "spec": {
        "resource": {"apiVersion": "v1", "kind": "Pod", "namespace": "test-namespace", "name": "test-pod"},
        "clusters": [{"name": "member1", "replicas": 1}],
    }})
}

#[test]
fn binding_creates_get_a_permanent_id_and_nothing_else_from_the_webhook() {
    for (kind, namespace, label) in [
        (
            Kind::ResourceBinding,
            Some("test-namespace"),
            RB_PERMANENT_ID,
        ),
        (Kind::ClusterResourceBinding, None, CRB_PERMANENT_ID),
    ] {
        let input = pod_binding(namespace, "test-binding");
        let output = defaulted(kind, input.clone());
        assert_eq!(output["metadata"]["labels"], json!({label: ID}), "{kind:?}");
        assert_eq!(output["spec"]["resource"], input["spec"]["resource"]);
        assert_eq!(output["spec"]["clusters"], input["spec"]["clusters"]);
        // Besides the label, only the CRD's schema default.
        let mut expected = input;
        expected["metadata"]["labels"] = json!({label: ID});
        expected["spec"]["conflictResolution"] = "Abort".into();
        assert_eq!(output, expected, "{kind:?}");
    }
}

#[test]
fn binding_permanent_ids_are_kept_unless_empty() {
    let mut kept = pod_binding(Some("ns"), "b");
    kept["metadata"]["labels"] = json!({RB_PERMANENT_ID: "given"});
    let kept = defaulted(Kind::ResourceBinding, kept);
    assert_eq!(kept["metadata"]["labels"][RB_PERMANENT_ID], "given");
    let mut empty = pod_binding(None, "b");
    empty["metadata"]["labels"] = json!({CRB_PERMANENT_ID: "", "app": "x"});
    let empty = defaulted(Kind::ClusterResourceBinding, empty);
    assert_eq!(
        empty["metadata"]["labels"],
        json!({CRB_PERMANENT_ID: ID, "app": "x"})
    );
}

fn rb_errors(object: &Value, components_gate: bool) -> Vec<String> {
    messages(&validate_with(
        Kind::ResourceBinding,
        object,
        None,
        WebhookOptions {
            multiple_pod_templates_scheduling: components_gate,
            ..WebhookOptions::default()
        },
    ))
}

fn with_dependencies(value: &str) -> Value {
    let mut binding = pod_binding(Some("default"), "rb");
    binding["metadata"]["annotations"] = json!({"resourcebinding.karmada.io/dependencies": value});
    defaulted(Kind::ResourceBinding, binding)
}

#[test]
fn binding_dependencies_annotation_must_decode() {
    let valid =
        r#"[{"apiVersion":"v1","kind":"ConfigMap","namespace":"default","name":"my-config"}]"#;
    assert!(rb_errors(&with_dependencies(valid), false).is_empty());
    assert!(
        rb_errors(
            &defaulted(Kind::ResourceBinding, pod_binding(Some("default"), "rb")),
            false
        )
        .is_empty()
    );
    assert_eq!(
        rb_errors(&with_dependencies("invalid-json-string"), false),
        [
            "metadata.annotations.resourcebinding.karmada.io/dependencies: Invalid value: \"invalid-json-string\": annotation value must be a valid JSON"
        ]
    );
    // JSON that is not a list of references does not decode either (Go's json.Unmarshal).
    for bad in [r#"{"kind":"ConfigMap"}"#, r#"[{"name":1}]"#, r#"["x"]"#] {
        assert_eq!(rb_errors(&with_dependencies(bad), false).len(), 1, "{bad}");
    }
    for good in [
        "null",
        "[]",
        r#"[null, {"labelSelector": {"matchLabels": {"a": "b"}}, "extra": 1}]"#,
    ] {
        assert!(
            rb_errors(&with_dependencies(good), false).is_empty(),
            "{good}"
        );
    }
}

#[test]
fn cluster_bindings_have_no_validating_webhook() {
    let mut binding = pod_binding(None, "crb");
    binding["metadata"]["annotations"] =
        json!({"resourcebinding.karmada.io/dependencies": "invalid-json-string"});
    binding["spec"]["components"] = json!([{"name": "", "replicas": 0}]);
    let binding = defaulted(Kind::ClusterResourceBinding, binding);
    let errors = validate_with(
        Kind::ClusterResourceBinding,
        &binding,
        None,
        WebhookOptions {
            multiple_pod_templates_scheduling: true,
            ..WebhookOptions::default()
        },
    );
    assert!(errors.is_empty(), "{errors:?}");
}

/// A binding with components named `names`, as a Go client sends them (an empty name is `""`).
fn with_components(names: &[&str]) -> Value {
    let mut binding = pod_binding(Some("comp-ns"), "rb");
    binding["spec"]["components"] = names
        .iter()
        .map(|name| json!({"name": name, "replicas": 0}))
        .collect();
    defaulted(Kind::ResourceBinding, binding)
}

#[test]
fn component_names_are_checked_with_the_multiple_pod_templates_gate() {
    for ok in [&[][..], &["foo"], &["foo", "bar"]] {
        assert!(rb_errors(&with_components(ok), true).is_empty(), "{ok:?}");
    }
    assert_eq!(
        rb_errors(&with_components(&[""]), true),
        ["spec.components[0].name: Invalid value: \"\": component names must be non-empty"]
    );
    // Karmada reports every offending component; its test checks the first.
    assert_eq!(
        rb_errors(&with_components(&["foo", "", ""]), true),
        [
            "spec.components[1].name: Invalid value: \"\": component names must be non-empty",
            "spec.components[2].name: Invalid value: \"\": component names must be non-empty",
        ]
    );
    assert_eq!(
        rb_errors(&with_components(&["foo", "foo"]), true),
        ["spec.components[1].name: Invalid value: \"foo\": component names must be unique"]
    );
    // Without the gate, Karmada does not look at components.
    assert!(rb_errors(&with_components(&["", "foo", "foo"]), false).is_empty());
}
