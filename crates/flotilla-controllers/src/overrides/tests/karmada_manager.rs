//! The override manager cases of Karmada's unit tests, restated against Flotilla: which
//! policies and rules apply to a resource for a cluster and in what order, what is recorded as
//! applied, and fieldOverrider on JSON and YAML documents.

use flotilla_api::karmada::{ClusterOverridePolicy, OverridePolicyShadow};
use serde_json::{Value, json};

use super::*;

/// Karmada's `NewDeployment(namespace, name)` (what the selectors and overriders look at).
fn karmada_deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.19.0",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}}})
}

fn cop(name: &str, spec: Value) -> ClusterOverridePolicy {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("cop")
}

fn configmap(key: &str, text: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "test1", "namespace": "default"}, "data": {key: text}})
}

fn shadow(name: &str, overriders: Value) -> OverridePolicyShadow {
    OverridePolicyShadow {
        policy_name: name.to_owned(),
        overriders: super::overriders(overriders),
    }
}

/// Adds `testAddLabel` and `testAddAnnotation`.
fn add_label_and_annotation() -> Value {
    json!({
        "labelsOverrider": [{"operator": "add", "value": {"testAddLabel": "testAddLabel"}}],
        "annotationsOverrider": [
            {"operator": "add", "value": {"testAddAnnotation": "testAddAnnotation"}}]})
}

fn assert_label_and_annotation_added(object: &Value) {
    assert_eq!(
        object["metadata"]["labels"],
        json!({"testLabel": "testLabel", "testAddLabel": "testAddLabel"})
    );
    assert_eq!(
        object["metadata"]["annotations"],
        json!({"testAnnotation": "testAnnotation", "testAddAnnotation": "testAddAnnotation"})
    );
}

#[test]
fn an_override_policy_applies_to_a_namespaced_object_and_is_recorded() {
    let mut object = karmada_deployment("test1");
    object["metadata"]["labels"] = json!({"testLabel": "testLabel"});
    object["metadata"]["annotations"] = json!({"testAnnotation": "testAnnotation"});
    let policy = op(
        "test1",
        json!({
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "namespace": "default", "name": "test1"}],
            "overrideRules": [{"targetCluster": {"clusterNames": ["test1"]},
                "overriders": add_label_and_annotation()}]}),
    );
    let applied = apply_overrides(
        &mut object,
        &cluster("test1"),
        [],
        [PolicyRef::from(&policy)],
    )
    .expect("applies");
    assert_eq!(
        applied,
        AppliedOverrides {
            cluster: vec![],
            namespaced: vec![shadow("test1", add_label_and_annotation())],
        }
    );
    assert_label_and_annotation_added(&object);
}

#[test]
fn a_cluster_override_policy_applies_to_a_cluster_scoped_object_and_is_recorded() {
    let mut object = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "test2", "labels": {"testLabel": "testLabel"},
            "annotations": {"testAnnotation": "testAnnotation"}}});
    let policy = cop(
        "test2",
        json!({
            "resourceSelectors": [{"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole", "name": "test2"}],
            "overrideRules": [{"targetCluster": {"clusterNames": ["test2"]},
                "overriders": add_label_and_annotation()}]}),
    );
    // An OverridePolicy never applies to a cluster-scoped object.
    let namespaced = op(
        "ignored",
        json!({"overrideRules": [{"overriders": {"labelsOverrider": [
            {"operator": "add", "value": {"other": "x"}}]}}]}),
    );
    let applied = apply_overrides(
        &mut object,
        &cluster("test2"),
        [PolicyRef::from(&policy)],
        [PolicyRef::from(&namespaced)],
    )
    .expect("applies");
    assert_eq!(
        applied,
        AppliedOverrides {
            cluster: vec![shadow("test2", add_label_and_annotation())],
            namespaced: vec![],
        }
    );
    assert_label_and_annotation_added(&object);
}

fn annotations_plaintext(text: &str) -> Value {
    json!({"plaintext": [{"path": "/metadata/annotations", "operator": "add", "value": text}]})
}

/// The overriders of each matching policy and rule, in the order they are applied.
fn matched(object: &Value, policies: &[PolicyRef<'_>], cluster_name: &str) -> Vec<(String, Value)> {
    matching_policies(object, policies.iter().copied())
        .into_iter()
        .flat_map(|policy| overriders_for(policy, &cluster(cluster_name)))
        .map(|shadow| {
            let overriders = serde_json::to_value(&shadow.overriders).expect("json");
            (shadow.policy_name, overriders)
        })
        .collect()
}

#[test]
fn matching_rules_come_in_implicit_priority_order_then_rule_order() {
    let object = karmada_deployment("test");
    let overriders1 = annotations_plaintext("foo: bar");
    let overriders2 = annotations_plaintext("aaa: bbb");
    let overriders3 = annotations_plaintext("hello: world");
    // Selected by name (namespace left open): applied after the match-all policy.
    let policy1 = op(
        "overridePolicy1",
        json!({
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "test"}],
            "overrideRules": [
                {"targetCluster": {"clusterNames": ["cluster1", "cluster2"]},
                    "overriders": overriders1},
                {"targetCluster": {"clusterNames": ["cluster2"]}, "overriders": overriders2}]}),
    );
    let policy2 = op(
        "overridePolicy2",
        json!({"overrideRules": [{"targetCluster": {"clusterNames": ["cluster1", "cluster2"]},
            "overriders": overriders3}]}),
    );
    let policy3 = op(
        "overridePolicy3",
        json!({"resourceSelectors": [],
            "overrideRules": [{"targetCluster": {"clusterNames": ["cluster1", "cluster2"]},
                "overriders": overriders3}]}),
    );
    let both = [&policy1, &policy2].map(PolicyRef::from);
    let name = |s: &str| s.to_owned();

    assert_eq!(
        matched(&object, &both, "cluster1"),
        [
            (name("overridePolicy2"), overriders3.clone()),
            (name("overridePolicy1"), overriders1.clone()),
        ]
    );
    assert_eq!(
        matched(&object, &both, "cluster2"),
        [
            (name("overridePolicy2"), overriders3.clone()),
            (name("overridePolicy1"), overriders1),
            (name("overridePolicy1"), overriders2),
        ]
    );
    // An empty selector list matches everything.
    assert_eq!(
        matched(&object, &[PolicyRef::from(&policy3)], "cluster2"),
        [(name("overridePolicy3"), overriders3.clone())]
    );

    // The deprecated `targetCluster` + `overriders` pair is one rule.
    let old = cop(
        "oldOverridePolicy",
        json!({"targetCluster": {"clusterNames": ["cluster1"]}, "overriders": overriders3}),
    );
    assert_eq!(
        matched(&object, &[PolicyRef::from(&old)], "cluster1"),
        [(name("oldOverridePolicy"), overriders3)]
    );
    assert_eq!(matched(&object, &[PolicyRef::from(&old)], "cluster2"), []);
}

/// Applies one OverridePolicy for cluster `test1` selecting ConfigMap `test1` with a
/// fieldOverrider at `/data/<key>`.
fn field_override(key: &str, text: &str, field_overrider: Value) -> (Value, AppliedOverrides) {
    let mut object = configmap(key, text);
    let policy = op(
        "test1",
        json!({
            "resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap",
                "namespace": "default", "name": "test1"}],
            "overrideRules": [{"targetCluster": {"clusterNames": ["test1"]},
                "overriders": {"fieldOverrider": [field_overrider]}}]}),
    );
    let applied = apply_overrides(
        &mut object,
        &cluster("test1"),
        [],
        [PolicyRef::from(&policy)],
    )
    .expect("applies");
    (object["data"].clone(), applied)
}

#[test]
fn field_overrider_replaces_a_value_in_a_yaml_document() {
    let overrider = json!({"fieldPath": "/data/test.yaml",
        "yaml": [{"subPath": "/key/key1", "operator": "replace", "value": "updated_value"}]});
    let (data, applied) =
        field_override("test.yaml", "\nkey: \n  key1: value\n", overrider.clone());
    assert_eq!(data, json!({"test.yaml": "key:\n  key1: updated_value\n"}));
    assert_eq!(
        applied.namespaced,
        [shadow("test1", json!({ "fieldOverrider": [overrider] }))]
    );
    assert!(applied.cluster.is_empty());
}

#[test]
fn field_overrider_replaces_a_value_in_a_json_document() {
    let overrider = json!({"fieldPath": "/data/test.json",
        "json": [{"subPath": "/key/key1", "operator": "replace", "value": "updated_value"}]});
    let (data, applied) = field_override(
        "test.json",
        r#"{"key":{"key1":"value"}}"#,
        overrider.clone(),
    );
    assert_eq!(
        data,
        json!({"test.json": r#"{"key":{"key1":"updated_value"}}"#})
    );
    assert_eq!(
        applied.namespaced,
        [shadow("test1", json!({ "fieldOverrider": [overrider] }))]
    );
}

// Beyond Karmada's cases (one key per level): what its JSON patch library and YAML writer do
// with larger documents.

#[test]
fn field_overrider_keeps_a_json_documents_key_order_and_escapes_as_go_does() {
    let overrider = json!({"fieldPath": "/data/test.json", "json": [
        {"subPath": "/b", "operator": "remove"},
        {"subPath": "/c/y", "operator": "replace", "value": "<new>"},
        {"subPath": "/a0", "operator": "add", "value": {"z": 1, "m": [true]}}]});
    let (data, _) = field_override(
        "test.json",
        r#"{"z": 1, "b": 2, "c": {"y": "old", "x": "&"}, "a": 0.5}"#,
        overrider,
    );
    // Removal keeps the other keys in place, added keys go last, added values have their keys
    // sorted (as the API server stores the policy).
    assert_eq!(
        data["test.json"],
        r#"{"z":1,"c":{"y":"\u003cnew\u003e","x":"\u0026"},"a":0.5,"a0":{"m":[true],"z":1}}"#
    );
}

#[test]
fn field_overrider_leaves_an_empty_json_document_empty() {
    let overrider = json!({"fieldPath": "/data/test.json",
        "json": [{"subPath": "/key", "operator": "add", "value": 1}]});
    let (data, applied) = field_override("test.json", "", overrider);
    assert_eq!(data, json!({"test.json": ""}));
    assert_eq!(applied.namespaced.len(), 1);
}

#[test]
fn field_overrider_writes_yaml_keys_in_go_yamls_order() {
    let overrider = json!({"fieldPath": "/data/test.yaml",
        "yaml": [{"subPath": "/item10", "operator": "replace", "value": "x"}]});
    let (data, _) = field_override(
        "test.yaml",
        "item10: a\nitem2: b\nName: c\n_meta: d\nv01: e\nv1: f\n",
        overrider,
    );
    assert_eq!(
        data["test.yaml"],
        "_meta: d\nName: c\nitem2: b\nitem10: x\nv1: f\nv01: e\n"
    );
}
