use http::HeaderMap;
use serde_json::{Value, json};

use super::*;
use crate::catalog::Catalog;

fn deployment_schema() -> &'static Value {
    crate::openapi::schemas::cached("apps", "v1", "Deployment").expect("Deployment has a schema")
}

fn messages(findings: &[Finding]) -> Vec<String> {
    findings.iter().map(Finding::to_string).collect()
}

const DEPLOYMENT: &str = r#"{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "web", "labels": {"app": "web", "anything.example/x": "y"}},
  "spec": {
    "replicas": 2,
    "selector": {"matchLabels": {"app": "web"}},
    "template": {
      "metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]}
    }
  }
}"#;

#[test]
fn a_valid_deployment_has_no_findings() {
    let (value, findings) = decode_json(DEPLOYMENT.as_bytes(), Some(deployment_schema())).unwrap();
    assert_eq!(messages(&findings), Vec::<String>::new());
    assert_eq!(value["metadata"]["labels"]["anything.example/x"], "y");
    assert_eq!(
        value["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"],
        "1"
    );
}

#[test]
fn duplicate_keys_are_reported_with_kube_paths() {
    let body = br#"{"spec": {"replicas": 1, "replicas": 3, "list": [{"name": "a"}, {"name": "b", "name": "c"}]}}"#;
    let (value, findings) = decode_json(body, None).unwrap();
    assert_eq!(
        messages(&findings),
        vec![
            r#"duplicate field "spec.replicas""#,
            r#"duplicate field "spec.list[1].name""#
        ]
    );
    assert_eq!(value["spec"]["replicas"], 3, "the last duplicate wins");
    assert_eq!(value["spec"]["list"][1]["name"], "c");
}

/// A repeated member is reported before what its second value holds, and keeps the first
/// one's place.
#[test]
fn a_repeat_is_reported_before_its_contents() {
    let body = br#"{"spec": {"paused": true}, "kind": "Deployment", "spec": {"replicas": 2, "bogus": 1, "replicas": 3}}"#;
    let (value, findings) = decode_json(body, Some(deployment_schema())).unwrap();
    assert_eq!(
        messages(&findings),
        vec![
            r#"duplicate field "spec""#,
            r#"unknown field "spec.bogus""#,
            r#"duplicate field "spec.replicas""#
        ]
    );
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["spec", "kind"]);
    assert_eq!(value["spec"], json!({"replicas": 3}));
}

#[test]
fn top_level_arrays_start_paths_with_an_index() {
    let (_, findings) =
        decode_json(br#"[{"op": "add"}, {"path": "/a", "path": "/b"}]"#, None).unwrap();
    assert_eq!(messages(&findings), vec![r#"duplicate field "[1].path""#]);
}

#[test]
fn typos_are_unknown_fields_and_dropped() {
    let body = DEPLOYMENT
        .replace(r#""replicas": 2"#, r#""replicass": 2"#)
        .replace(r#""image": "nginx""#, r#""imagee": "nginx""#)
        .replace(r#""name": "web","#, r#""name": "web", "lables": {},"#);
    let (value, findings) = decode_json(body.as_bytes(), Some(deployment_schema())).unwrap();
    assert_eq!(
        messages(&findings),
        vec![
            r#"unknown field "metadata.lables""#,
            r#"unknown field "spec.replicass""#,
            r#"unknown field "spec.template.spec.containers[0].imagee""#,
        ]
    );
    assert!(value["spec"].get("replicass").is_none());
    assert!(value["metadata"].get("lables").is_none());
    assert_eq!(
        value["metadata"]["labels"]["app"], "web",
        "map entries are not fields"
    );
}

/// The body and expected message of kube's test/integration/apiserver/field_validation_test.go.
#[test]
fn findings_match_kube_apiservers_strict_decoding_of_a_typed_body() {
    let body = r#"{
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "dupename", "name": "x", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
        "spec": {
            "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2",
            "paused": true, "paused": false,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
                "name": "nginx", "image": "nginx:latest", "unknownNested": "val1",
                "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}
        }
    }"#;
    let (_, findings) = decode_json(body.as_bytes(), Some(deployment_schema())).unwrap();
    assert_eq!(
        strict_message(&findings),
        r#"strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy""#
    );
}

#[test]
fn preserve_unknown_fields_and_additional_properties_are_respected() {
    let schema = json!({"type": "object", "properties": {
        "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"typed": {"type": "object", "properties": {"a": {}}}}},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {}}}},
        "free": {"type": "object"},
    }});
    let body = br#"{"open": {"x": 1, "typed": {"a": 1, "b": 2}}, "map": {"k": {"v": 1, "w": 2}}, "free": {"z": 1}}"#;
    let (value, findings) = decode_json(body, Some(&schema)).unwrap();
    assert_eq!(
        messages(&findings),
        vec![
            r#"unknown field "open.typed.b""#,
            r#"unknown field "map.k.w""#
        ]
    );
    assert_eq!(value["open"]["x"], 1);
    assert_eq!(value["free"]["z"], 1);
}

#[test]
fn yaml_reports_duplicates_then_sorted_unknown_fields() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  name: b\nspec:\n  zzz: 1\n  replicas: 1\n  aaa: 2\n";
    let (value, findings) = decode_yaml(text, Some(deployment_schema())).unwrap();
    assert_eq!(
        messages(&findings),
        vec![
            r#"duplicate field "metadata.name""#,
            r#"unknown field "spec.aaa""#,
            r#"unknown field "spec.zzz""#,
        ]
    );
    assert_eq!(value["metadata"]["name"], "b");
    assert!(value["spec"].get("zzz").is_none());
}

#[test]
fn strip_unknown_reports_in_sorted_depth_first_order() {
    let mut object: Value = serde_json::from_str(DEPLOYMENT).unwrap();
    object["spec"]["unknown1"] = json!("x");
    object["spec"]["template"]["spec"]["containers"][0]["unknownNested"] = json!("y");
    let findings = strip_unknown(&mut object, deployment_schema());
    assert_eq!(
        messages(&findings),
        vec![
            r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
            r#"unknown field "spec.unknown1""#,
        ]
    );
    assert!(object["spec"].get("unknown1").is_none());
}

/// Every served kind's unknown fields are checked, as kube-apiserver checks them (built-in kinds
/// by their Go types, Karmada's by their CRD schemas), but CustomResourceDefinition itself,
/// whose own validation names what it refuses.
#[test]
fn every_kind_is_checked_against_a_schema() {
    let catalog = Catalog::with_builtins();
    let unchecked: Vec<String> = catalog
        .all()
        .into_iter()
        .filter(|info| for_resource(info).is_none())
        .map(|info| format!("{}/{} {}", info.group, info.version, info.kind))
        .collect();
    assert_eq!(
        unchecked,
        ["apiextensions.k8s.io/v1 CustomResourceDefinition"]
    );
    let deployments = catalog.get("apps", "v1", "deployments").unwrap();
    assert!(
        std::ptr::eq(
            for_resource(&deployments).unwrap(),
            for_resource(&deployments).unwrap()
        ),
        "schemas are computed once"
    );
}

#[test]
fn strict_errors_are_worded_like_kube_apiserver() {
    let catalog = Catalog::with_builtins();
    let deployments = catalog.get("apps", "v1", "deployments").unwrap();
    let error = decode_error(&deployments, &[Finding::unknown("spec.replicass")]);
    assert_eq!((error.code, error.reason), (400, "BadRequest"));
    assert_eq!(
        error.message,
        r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass""#
    );
    let error = patch_error(&json!({"spec": {"x": 1}}), &[Finding::unknown("spec.x")]);
    assert_eq!((error.code, error.reason), (422, "Invalid"));
    assert_eq!(
        error.message,
        r#" "" is invalid: patch: Invalid value: "{\"spec\":{\"x\":1}}": strict decoding error: unknown field "spec.x""#
    );
    let mut json_patch = Finding::unknown("[0].foo");
    json_patch.in_json_patch = true;
    assert_eq!(
        json_patch.to_string(),
        r#"json patch unknown field "[0].foo""#
    );
}

#[test]
fn resolve_follows_the_directive() {
    let findings = [Finding::duplicate("spec.replicas")];
    let strict = |_: &[Finding]| ApiError::bad_request("strict");
    assert_eq!(
        resolve(FieldValidation::Ignore, &findings, strict).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        resolve(FieldValidation::Warn, &findings, strict).unwrap(),
        vec![r#"duplicate field "spec.replicas""#]
    );
    assert!(resolve(FieldValidation::Strict, &findings, strict).is_err());
    assert!(
        resolve(FieldValidation::Strict, &[], strict)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn warning_headers_are_quoted_deduplicated_and_truncated() {
    assert_eq!(
        warning_header(r#"unknown field "spec.foo""#),
        r#"299 - "unknown field \"spec.foo\"""#
    );
    let mut headers = HeaderMap::new();
    add_warning_headers(&mut headers, &["a".into(), "a".into(), "b".into()]);
    let values: Vec<_> = headers
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    assert_eq!(values, vec![r#"299 - "a""#, r#"299 - "b""#]);

    let long: Vec<String> = (0..40)
        .map(|i| format!("{i:03}{}", "x".repeat(297)))
        .collect();
    let mut headers = HeaderMap::new();
    add_warning_headers(&mut headers, &long);
    let values: Vec<_> = headers.get_all("warning").iter().collect();
    assert_eq!(values.len(), 16, "4 KiB of 256-character warnings");
    assert_eq!(values[0].len(), "299 - \"\"".len() + 256);
}

#[test]
fn go_quote_escapes_like_strconv_quote() {
    assert_eq!(go_quote("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
}

#[test]
fn objects_read_back_from_the_server_have_no_unknown_fields() {
    // What kubectl edit and replace send: server-set metadata, managedFields, status.
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "default", "uid": "u", "resourceVersion": "7",
            "generation": 1, "creationTimestamp": "2025-01-01T00:00:00Z",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1",
                "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u"}]
        },
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{
                "name": "c", "image": "i", "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
                "resources": {"requests": {"cpu": "100m", "nvidia.com/gpu": 1}}}]}}},
        "status": {"replicas": 1, "conditions": [{"type": "Available", "status": "True",
            "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
    });
    let (_, findings) =
        decode_json(body.to_string().as_bytes(), Some(deployment_schema())).unwrap();
    assert_eq!(messages(&findings), Vec::<String>::new());
}

/// A merge or strategic patch of a stored (already stripped) object is walked only where the
/// patch wrote: the same findings in the same order as the whole walk, and the same object.
#[test]
fn a_patched_object_is_stripped_where_the_patch_wrote() {
    let stored: Value = serde_json::from_str(DEPLOYMENT).unwrap();
    let patches = [
        json!({"status": {"replicas": 2, "readyReplicass": 1, "conditions": [{"type": "Available", "statuss": "True"}]}}),
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}, "foo": 1}, "bar": {"baz": 1}}),
        json!({"metadata": {"labels": {"new": "label"}, "labelz": {}}, "spec": {"replicas": null}}),
        json!({"spec": {"$setElementOrder/x": [], "paused": true, "strategy": {"$patch": "replace", "type": "Recreate", "typo": 1}}}),
        json!({"spec": "not an object"}),
    ];
    for patch in patches {
        let mut merged = stored.clone();
        json_patch::merge(&mut merged, &patch);
        let mut whole = merged.clone();
        let expected = strip_unknown(&mut whole, deployment_schema());
        let findings = schema::strip_unknown_patched(&mut merged, deployment_schema(), &patch);
        assert_eq!(messages(&findings), messages(&expected), "{patch}");
        assert_eq!(merged, whole, "{patch}");
    }
    // The guide matters: unknown fields the patch did not write are not looked for.
    let mut unclean = stored.clone();
    unclean["spec"]["replicass"] = json!(3);
    let findings =
        schema::strip_unknown_patched(&mut unclean, deployment_schema(), &json!({"status": {}}));
    assert!(findings.is_empty());
    assert_eq!(unclean["spec"]["replicass"], 3);
}

/// The read-only look that spares clean objects the reporting walk agrees with it: nothing in a
/// clean object, and an unknown field found at any depth (in list items too).
#[test]
fn the_quick_look_finds_what_the_walk_reports() {
    let clean: Value = serde_json::from_str(DEPLOYMENT).unwrap();
    assert!(!schema::has_unknown(&clean, deployment_schema()));
    let mut copy = clean.clone();
    assert!(strip_unknown(&mut copy, deployment_schema()).is_empty());
    assert_eq!(copy, clean);
    for (pointer, key) in [
        ("", "extra"),
        ("/spec", "replicass"),
        ("/spec/template/spec/containers/0", "imagee"),
    ] {
        let mut unclean = clean.clone();
        unclean
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .expect("an object there")
            .insert(key.into(), json!(1));
        assert!(schema::has_unknown(&unclean, deployment_schema()), "{key}");
        assert!(schema::has_unknown_patched(
            &unclean,
            deployment_schema(),
            &unclean.clone()
        ));
        assert_eq!(strip_unknown(&mut unclean, deployment_schema()).len(), 1);
        assert_eq!(unclean, clean);
    }
}

/// Values their field's type cannot hold are found as Go's typed decoding finds them: the
/// first one, named by a path without list indices; `null`, IntOrString and Quantity fields,
/// and fields without a schema take anything.
#[test]
fn values_of_the_wrong_type_are_found_as_go_finds_them() {
    let check = |body: &str| {
        let (_, _, mismatch) =
            decode::decode_json_checked(body.as_bytes(), Some(deployment_schema())).unwrap();
        let value: Value = serde_json::from_str(body).unwrap();
        // The decoder and the walk over a decoded (YAML) body agree.
        assert_eq!(schema::type_mismatch(&value, deployment_schema()), mismatch);
        mismatch.map(|m| m.message("Deployment"))
    };
    assert_eq!(check(DEPLOYMENT), None);
    assert_eq!(
        check(r#"{"spec": {"replicas": "three", "paused": "yes"}}"#).as_deref(),
        Some(
            "json: cannot unmarshal string into Go struct field Deployment.spec.replicas of type int32"
        )
    );
    assert_eq!(
        check(r#"{"spec": {"replicas": 2.5}}"#).as_deref(),
        Some(
            "json: cannot unmarshal number 2.5 into Go struct field Deployment.spec.replicas of type int32"
        )
    );
    assert_eq!(
        check(r#"{"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": 7}]}}}}"#)
            .as_deref(),
        Some(
            "json: cannot unmarshal number into Go struct field Deployment.spec.template.spec.containers.name of type string"
        )
    );
    assert_eq!(
        check(r#"{"metadata": {"labels": {"version": 1}}}"#).as_deref(),
        Some(
            "json: cannot unmarshal number into Go struct field Deployment.metadata.labels of type string"
        )
    );
    assert_eq!(
        check(r#"{"spec": {"template": {"spec": {"containers": "x"}}}}"#).as_deref(),
        Some(
            "json: cannot unmarshal string into Go struct field Deployment.spec.template.spec.containers of type array"
        )
    );
    // What Go takes: null anywhere, numbers or strings for IntOrString and Quantity.
    assert_eq!(
        check(
            r#"{"spec": {"replicas": null, "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}},
                "template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}}}}"#
        ),
        None
    );
}
