use flotilla_api::karmada::{Cluster, ClusterOverridePolicy, ImageOverrider, OverridePolicy};
use serde_json::{Value, json};

use super::*;

mod karmada_command_labels;
mod karmada_image;
mod karmada_manager;

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

const DIGEST: &str = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c";

fn parts(image: &str) -> (String, String, String, String) {
    let p = ImageComponents::parse(image).expect("valid reference");
    (p.registry, p.repository, p.tag, p.digest)
}

fn owned(parts: [&str; 4]) -> (String, String, String, String) {
    let [a, b, c, d] = parts.map(str::to_owned);
    (a, b, c, d)
}

#[test]
fn images_are_parsed_into_registry_repository_and_tag() {
    assert_eq!(
        parts("docker.io/library/nginx:1.25"),
        owned(["docker.io", "library/nginx", "1.25", ""])
    );
    assert_eq!(parts("library/nginx"), owned(["", "library/nginx", "", ""]));
    assert_eq!(parts("pause"), owned(["", "pause", "", ""]));
    assert_eq!(
        parts("10.10.10.10:10443/subpath/imagename"),
        owned(["10.10.10.10:10443", "subpath/imagename", "", ""])
    );
    assert_eq!(
        parts("[::1]:5000/app:v1"),
        owned(["[::1]:5000", "app", "v1", ""])
    );
    assert_eq!(
        parts("my-registry/team/app:v1"),
        owned(["", "my-registry/team/app", "v1", ""])
    );
    let image = format!("localhost:5000/app@{DIGEST}");
    assert_eq!(parts(&image), owned(["localhost:5000", "app", "", DIGEST]));
    let parsed = ImageComponents::parse(&image).expect("valid");
    assert_eq!(parsed.to_string(), image);
}

#[test]
fn a_reference_with_tag_and_digest_keeps_only_the_tag() {
    let image = format!("nginx:1.25@{DIGEST}");
    assert_eq!(parts(&image), owned(["", "nginx", "1.25", ""]));
    let tag: ImageOverrider =
        serde_json::from_value(json!({"component": "Tag", "operator": "replace", "value": "v2"}))
            .expect("overrider");
    assert_eq!(
        image::override_image(&image, &tag).expect("overrides"),
        "nginx:v2"
    );
    let registry: ImageOverrider = serde_json::from_value(
        json!({"component": "Registry", "operator": "replace", "value": "mirror.example.com"}),
    )
    .expect("overrider");
    assert_eq!(
        image::override_image(&image, &registry).expect("overrides"),
        "mirror.example.com/nginx:1.25"
    );
}

#[test]
fn invalid_image_references_are_errors() {
    let cases = [
        ("", ReferenceError::NameEmpty),
        ("Nginx:1.0", ReferenceError::NameContainsUppercase),
        (
            "docker.io/Library/nginx",
            ReferenceError::NameContainsUppercase,
        ),
        ("nginx:", ReferenceError::InvalidFormat),
        ("nginx:v1+build", ReferenceError::InvalidFormat),
        ("nginx..x", ReferenceError::InvalidFormat),
        ("-nginx", ReferenceError::InvalidFormat),
        (
            "app@sha256:0123456789abcdef0123456789abcdef",
            ReferenceError::DigestInvalidLength,
        ),
        (
            "app@md5:0123456789abcdef0123456789abcdef",
            ReferenceError::DigestUnsupported,
        ),
        (
            "app@sha256:DBCC1C35AC38DF41FD2F5E4130B32FFDB93EBAE8B3DBE638C23575912276FC9C",
            ReferenceError::DigestInvalidFormat,
        ),
    ];
    for (image, expected) in cases {
        assert_eq!(ImageComponents::parse(image), Err(expected), "{image:?}");
    }
    let long = format!("example.com/{}", "a".repeat(256));
    assert_eq!(
        ImageComponents::parse(&long),
        Err(ReferenceError::NameTooLong)
    );
    assert!(ImageComponents::parse(&format!("example.com/{}", "a".repeat(255))).is_ok());

    let mut object = deployment();
    object["spec"]["template"]["spec"]["containers"][1]["image"] = json!("Envoy:v1");
    let before = object.clone();
    let policy = op(
        "mirror",
        json!({"overrideRules": [{"overriders": {"imageOverrider": [
            {"component": "Registry", "operator": "replace", "value": "mirror.example.com"}]}}]}),
    );
    let error = apply_overrides(
        &mut object,
        &cluster("member1"),
        [],
        [PolicyRef::from(&policy)],
    )
    .expect_err("an invalid image fails the override");
    assert_eq!(
        error.to_string(),
        "policy mirror: failed to parse image value(Envoy:v1), error: repository name must be lowercase"
    );
    assert_eq!(object, before);
}

#[test]
fn tag_values_that_are_neither_a_tag_nor_a_digest_change_nothing() {
    let image = "fictional.registry.example/imagename:v1.0.0";
    let run = |operator: &str, value: &str| {
        let overrider: ImageOverrider = serde_json::from_value(
            json!({"component": "Tag", "operator": operator, "value": value}),
        )
        .expect("overrider");
        image::override_image(image, &overrider).expect("overrides")
    };
    // `v1.0.0sha256:…` is neither a tag nor a digest.
    assert_eq!(run("add", DIGEST), image);
    assert_eq!(
        run("replace", DIGEST),
        format!("fictional.registry.example/imagename@{DIGEST}")
    );
    assert_eq!(run("replace", "v1+build"), image);
    assert_eq!(run("replace", ""), image);
    assert_eq!(run("add", "+build"), image);
    assert_eq!(run("replace", &"v".repeat(129)), image);
    assert_eq!(
        run("add", "-cn"),
        "fictional.registry.example/imagename:v1.0.0-cn"
    );
    assert_eq!(run("remove", ""), "fictional.registry.example/imagename");
    let digested = format!("fictional.registry.example/imagename@{DIGEST}");
    let overrider: ImageOverrider =
        serde_json::from_value(json!({"component": "Tag", "operator": "replace", "value": "v2"}))
            .expect("overrider");
    assert_eq!(
        image::override_image(&digested, &overrider).expect("overrides"),
        "fictional.registry.example/imagename:v2"
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
fn removing_from_absent_command_or_args_writes_an_empty_list() {
    let mut object = deployment();
    apply_overriders(
        &mut object,
        &overriders(json!({
            "commandOverrider": [{"containerName": "sidecar", "operator": "remove", "value": ["x"]}],
            "argsOverrider": [{"containerName": "web", "operator": "remove", "value": ["y"]}]})),
    )
    .expect("applies");
    let containers = &object["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[1]["command"], json!([]));
    assert_eq!(containers[0]["args"], json!([]));
    assert_eq!(containers[0]["command"], json!(["nginx"]));
    assert!(containers[1].get("args").is_none());
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

#[test]
fn the_annotation_is_written_as_go_encodes_karmadas_types() {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "default"},
        "data": {"old": "x", "config.json": "{\"level\":\"info\",\"port\":80}"}});
    let policy = op(
        "p",
        json!({"overrideRules": [{"overriders": {
            "plaintext": [{"path": "/data/old", "operator": "remove"}],
            "labelsOverrider": [{"operator": "add", "value": {"team": "a&b"}}],
            "annotationsOverrider": [{"operator": "remove", "value": {}}],
            "fieldOverrider": [{"fieldPath": "/data/config.json", "json": [
                {"subPath": "/level", "operator": "replace",
                 "value": {"z": 2.0, "big": 1e21, "a": "<x>"}},
                {"subPath": "/port", "operator": "remove"}]}]}}]}),
    );
    let applied = apply_overrides(
        &mut object,
        &cluster("member1"),
        [],
        [PolicyRef::from(&policy)],
    )
    .expect("applies");
    assert_eq!(object["metadata"]["labels"]["team"], "a&b");
    let [_, (key, value)] = applied.annotations();
    assert_eq!(key, "policy.karmada.io/applied-overrides");
    assert_eq!(
        value.as_deref(),
        Some(concat!(
            r#"[{"policyName":"p","overriders":{"#,
            r#""plaintext":[{"path":"/data/old","operator":"remove","value":null}],"#,
            r#""labelsOverrider":[{"operator":"add","value":{"team":"a\u0026b"}}],"#,
            r#""annotationsOverrider":[{"operator":"remove","value":{}}],"#,
            r#""fieldOverrider":[{"fieldPath":"/data/config.json","json":["#,
            r#"{"subPath":"/level","operator":"replace","value":{"a":"\u003cx\u003e","big":1e+21,"z":2}},"#,
            r#"{"subPath":"/port","operator":"remove","value":null}]}]}}]"#
        ))
    );
}

#[test]
fn go_float_notation() {
    let cases = [
        (1.0, "1"),
        (-0.5, "-0.5"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (1.25e-10, "1.25e-10"),
        (u64::MAX as f64, "18446744073709552000"),
    ];
    for (value, expected) in cases {
        assert_eq!(go_json::go_float(value), expected, "{value}");
    }
}

#[test]
fn a_policy_without_overriders_is_still_recorded() {
    let selected = op(
        "p",
        json!({"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}]}),
    );
    let elsewhere = op("q", json!({"targetCluster": {"clusterNames": ["member2"]}}));
    let mut object = deployment();
    let applied = apply_overrides(
        &mut object,
        &cluster("member1"),
        [],
        [&selected, &elsewhere].map(PolicyRef::from),
    )
    .expect("applies");
    assert_eq!(object, deployment());
    let [(_, cluster_value), (_, value)] = applied.annotations();
    assert_eq!(cluster_value, None);
    assert_eq!(
        value.as_deref(),
        Some(r#"[{"policyName":"p","overriders":{}}]"#)
    );
}
