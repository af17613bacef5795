use flotilla_api::karmada::{Cluster, ClusterOverridePolicy, OverridePolicy};
use serde_json::{Value, json};

use super::*;

fn cluster(name: &str) -> Cluster {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"env": "prod"}}}))
        .expect("cluster")
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [
            {"name": "web", "image": "docker.io/library/nginx:1.25", "command": ["nginx"]},
            {"name": "sidecar", "image": "envoy:v1"}]}}}})
}

fn overriders(value: Value) -> Overriders {
    serde_json::from_value(value).expect("overriders")
}

#[test]
fn images_are_parsed_into_registry_repository_and_tag() {
    let parts = ImageComponents::parse("docker.io/library/nginx:1.25");
    assert_eq!(
        (
            parts.registry.as_str(),
            parts.repository.as_str(),
            parts.tag.as_str()
        ),
        ("docker.io", "library/nginx", "1.25")
    );
    let parts = ImageComponents::parse("library/nginx");
    assert_eq!(
        (parts.registry.as_str(), parts.repository.as_str()),
        ("", "library/nginx")
    );
    let parts =
        ImageComponents::parse("localhost:5000/app@sha256:0123456789abcdef0123456789abcdef");
    assert_eq!(parts.registry, "localhost:5000");
    assert_eq!(parts.digest, "sha256:0123456789abcdef0123456789abcdef");
    assert_eq!(
        parts.to_string(),
        "localhost:5000/app@sha256:0123456789abcdef0123456789abcdef"
    );
}

#[test]
fn image_overrider_changes_every_container_or_the_predicate_path() {
    let mut object = deployment();
    apply_overriders(
        &mut object,
        &overriders(json!({"imageOverrider": [
            {"component": "Registry", "operator": "replace", "value": "registry.cn.example.com"},
            {"component": "Tag", "operator": "add", "value": "-cn"}]})),
    )
    .expect("applies");
    let containers = &object["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers[0]["image"],
        "registry.cn.example.com/library/nginx:1.25-cn"
    );
    assert_eq!(
        containers[1]["image"],
        "registry.cn.example.com/envoy:v1-cn"
    );

    let mut object = deployment();
    apply_overriders(
        &mut object,
        &overriders(json!({"imageOverrider": [{
            "predicate": {"path": "/spec/template/spec/containers/1/image"},
            "component": "Repository", "operator": "replace", "value": "istio/proxyv2"}]})),
    )
    .expect("applies");
    let containers = &object["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0]["image"], "docker.io/library/nginx:1.25");
    assert_eq!(containers[1]["image"], "istio/proxyv2:v1");
}

#[test]
fn command_and_args_overriders_add_and_remove_entries() {
    let mut object = deployment();
    apply_overriders(
        &mut object,
        &overriders(json!({
            "commandOverrider": [{"containerName": "web", "operator": "add", "value": ["-g", "daemon off;"]}],
            "argsOverrider": [{"containerName": "sidecar", "operator": "add", "value": ["--log=debug"]}]})),
    )
    .expect("applies");
    let containers = &object["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers[0]["command"],
        json!(["nginx", "-g", "daemon off;"])
    );
    assert_eq!(containers[1]["args"], json!(["--log=debug"]));
    apply_overriders(
        &mut object,
        &overriders(json!({"commandOverrider": [
            {"containerName": "web", "operator": "remove", "value": ["-g"]}]})),
    )
    .expect("applies");
    assert_eq!(
        object["spec"]["template"]["spec"]["containers"][0]["command"],
        json!(["nginx", "daemon off;"])
    );
}

#[test]
fn labels_overrider_adds_and_only_touches_existing_keys_on_remove_and_replace() {
    let mut object = deployment();
    apply_overriders(
        &mut object,
        &overriders(json!({
            "labelsOverrider": [
                {"operator": "add", "value": {"tier": "frontend"}},
                {"operator": "replace", "value": {"app": "web2", "missing": "x"}},
                {"operator": "remove", "value": {"gone": ""}}],
            "annotationsOverrider": [{"operator": "add", "value": {"example.com/owner": "team-a"}}]})),
    )
    .expect("applies");
    assert_eq!(
        object["metadata"]["labels"],
        json!({"app": "web2", "tier": "frontend"})
    );
    assert_eq!(
        object["metadata"]["annotations"],
        json!({"example.com/owner": "team-a"})
    );
}

#[test]
fn field_overrider_patches_json_and_yaml_held_in_strings() {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default"},
        "data": {"config.json": "{\"level\":\"info\",\"port\":80}", "config.yaml": "level: info\nport: 80\n"}});
    apply_overriders(
        &mut object,
        &overriders(json!({"fieldOverrider": [
            {"fieldPath": "/data/config.json",
             "json": [{"subPath": "/level", "operator": "replace", "value": "debug"}]},
            {"fieldPath": "/data/config.yaml",
             "yaml": [{"subPath": "/port", "operator": "replace", "value": 8080}]}]})),
    )
    .expect("applies");
    assert_eq!(
        object["data"]["config.json"],
        "{\"level\":\"debug\",\"port\":80}"
    );
    let yaml: Value = yaml_serde::from_str(object["data"]["config.yaml"].as_str().expect("string"))
        .expect("yaml");
    assert_eq!(yaml, json!({"level": "info", "port": 8080}));
}

#[test]
fn plaintext_runs_last_and_a_missing_path_is_an_error() {
    let mut object = deployment();
    apply_overriders(
        &mut object,
        &overriders(json!({
            "plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": 7}],
            "labelsOverrider": [{"operator": "add", "value": {"tier": "x"}}]})),
    )
    .expect("applies");
    assert_eq!(object["spec"]["replicas"], 7);
    let before = deployment();
    let mut object = before.clone();
    let error = apply_overriders(
        &mut object,
        &overriders(
            json!({"plaintext": [{"path": "/spec/missing/field", "operator": "replace", "value": 1}]}),
        ),
    );
    assert!(error.is_err());
    assert_eq!(object, before, "a failed patch leaves the object unchanged");
}

fn op(name: &str, value: Value) -> OverridePolicy {
    let mut policy: OverridePolicy = serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": "default"}, "spec": value}),
    )
    .expect("policy");
    policy.metadata.name = Some(name.to_owned());
    policy
}

#[test]
fn cluster_policies_apply_first_and_more_specific_policies_win() {
    let replicas = |n: i64| json!({"plaintext": [{"path": "/spec/replicas", "operator": "replace", "value": n}]});
    let cop: ClusterOverridePolicy = serde_json::from_value(json!({
        "metadata": {"name": "global"},
        "spec": {"overrideRules": [{"overriders": replicas(1)}]}}))
    .expect("cop");
    let by_name = op(
        "a-by-name",
        json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "default"}],
        "overrideRules": [{"overriders": replicas(3)}]}),
    );
    let by_label = op(
        "b-by-label",
        json!({
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
            "labelSelector": {"matchLabels": {"app": "web"}}}],
        "overrideRules": [{"overriders": replicas(2)}]}),
    );
    let elsewhere = op(
        "c-other-cluster",
        json!({
        "overrideRules": [{"targetCluster": {"clusterNames": ["member2"]}, "overriders": replicas(9)}]}),
    );
    let mut object = deployment();
    let applied = apply_overrides(
        &mut object,
        &cluster("member1"),
        [PolicyRef::from(&cop)],
        [&elsewhere, &by_name, &by_label].map(PolicyRef::from),
    )
    .expect("applies");
    assert_eq!(
        object["spec"]["replicas"], 3,
        "the name-selected policy is applied last"
    );
    let names: Vec<&str> = applied
        .namespaced
        .iter()
        .map(|s| s.policy_name.as_str())
        .collect();
    assert_eq!(
        names,
        ["a-by-name", "b-by-label"],
        "recorded sorted by name"
    );
    assert_eq!(applied.cluster.len(), 1);
    let [(cluster_key, cluster_value), (key, value)] = applied.annotations();
    assert_eq!(cluster_key, "policy.karmada.io/applied-cluster-overrides");
    assert_eq!(
        cluster_value.as_deref(),
        Some(
            r#"[{"policyName":"global","overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":1}]}}]"#
        )
    );
    assert_eq!(key, "policy.karmada.io/applied-overrides");
    assert!(value.is_some());
}
