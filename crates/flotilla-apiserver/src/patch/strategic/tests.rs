//! Strategic merge patch: the patches kubectl sends, upstream's ordering cases, error paths, and
//! property tests.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{merge, supported};
use crate::patch::tests::{arb_plain, arb_plain_object};
use crate::patch::{GroupVersionKindRef, PatchError};

const POD: GroupVersionKindRef<'static> = GroupVersionKindRef {
    group: "",
    version: "v1",
    kind: "Pod",
};
const DEPLOYMENT: GroupVersionKindRef<'static> = GroupVersionKindRef {
    group: "apps",
    version: "v1",
    kind: "Deployment",
};
const CONFIG_MAP: GroupVersionKindRef<'static> = GroupVersionKindRef {
    group: "",
    version: "v1",
    kind: "ConfigMap",
};

fn apply(kind: GroupVersionKindRef<'_>, original: &Value, patch: Value) -> Value {
    match merge(&kind, original, &patch) {
        Ok(merged) => merged,
        Err(e) => panic!("patch {patch} failed: {e}"),
    }
}

fn apply_err(kind: GroupVersionKindRef<'_>, original: &Value, patch: Value) -> PatchError {
    match merge(&kind, original, &patch) {
        Ok(merged) => panic!("patch {patch} should fail, gave {merged}"),
        Err(e) => e,
    }
}

fn web_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "front"}},
        "spec": {
            "replicas": 2,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {
                        "name": "nginx",
                        "image": "nginx:1.25",
                        "args": ["-g", "daemon off;"],
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "env": [{"name": "A", "value": "1"}]
                    },
                    {"name": "sidecar", "image": "busybox"}
                ]}
            }
        }
    })
}

/// Applies `patch` under `spec.template.spec` of the web deployment.
fn patch_pod_spec(pod_spec_patch: Value) -> Value {
    let patch = json!({"spec": {"template": {"spec": pod_spec_patch}}});
    apply(DEPLOYMENT, &web_deployment(), patch)
}

fn containers(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"]
}

#[test]
fn image_change_with_set_element_order_keeps_everything_else() {
    let patched = patch_pod_spec(json!({
        "$setElementOrder/containers": [{"name": "nginx"}, {"name": "sidecar"}],
        "containers": [{"image": "nginx:1.27", "name": "nginx"}]
    }));
    let mut expected = web_deployment();
    expected["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.27");
    assert_eq!(patched, expected);
}

#[test]
fn added_env_var_merges_by_name() {
    let patched = patch_pod_spec(json!({
        "$setElementOrder/containers": [{"name": "nginx"}, {"name": "sidecar"}],
        "containers": [{
            "name": "nginx",
            "$setElementOrder/env": [{"name": "A"}, {"name": "B"}],
            "env": [{"name": "B", "value": "2"}]
        }]
    }));
    let env = &containers(&patched)[0]["env"];
    assert_eq!(
        env,
        &json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    );
    assert_eq!(containers(&patched)[0]["ports"][0]["containerPort"], 80);
}

#[test]
fn new_items_without_set_element_order_go_first_as_upstream() {
    let patched = patch_pod_spec(json!({
        "containers": [{"name": "nginx", "env": [{"name": "B", "value": "2"}]}]
    }));
    let names: Vec<&Value> = containers(&patched)[0]["env"]
        .as_array()
        .expect("env is a list")
        .iter()
        .map(|e| &e["name"])
        .collect();
    assert_eq!(names, [&json!("B"), &json!("A")]);
}

#[test]
fn patch_delete_removes_a_container() {
    let patched = patch_pod_spec(json!({
        "$setElementOrder/containers": [{"name": "nginx"}],
        "containers": [{"$patch": "delete", "name": "sidecar"}]
    }));
    let names: Vec<&Value> = containers(&patched)
        .as_array()
        .expect("containers is a list")
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names, [&json!("nginx")]);
    assert_eq!(
        containers(&patched)[0],
        web_deployment()["spec"]["template"]["spec"]["containers"][0]
    );
}

#[test]
fn patch_replace_makes_the_patch_the_whole_list() {
    let patched = patch_pod_spec(json!({
        "containers": [{"$patch": "replace"}, {"name": "only", "image": "alpine"}]
    }));
    assert_eq!(
        containers(&patched),
        &json!([{"name": "only", "image": "alpine"}])
    );
}

#[test]
fn patch_replace_and_delete_on_maps() {
    let original = web_deployment();
    let replaced = apply(
        DEPLOYMENT,
        &original,
        json!({"metadata": {"labels": {"$patch": "replace", "new": "x"}}}),
    );
    assert_eq!(replaced["metadata"]["labels"], json!({"new": "x"}));
    let deleted = apply(
        DEPLOYMENT,
        &original,
        json!({"metadata": {"labels": {"$patch": "delete"}}}),
    );
    assert_eq!(deleted["metadata"]["labels"], json!({}));
    let merged = apply(
        DEPLOYMENT,
        &original,
        json!({"metadata": {"labels": {"$patch": "merge", "new": "x"}}}),
    );
    assert_eq!(
        merged["metadata"]["labels"],
        json!({"app": "web", "tier": "front", "new": "x"})
    );
}

#[test]
fn null_removes_a_label() {
    let patched = apply(
        DEPLOYMENT,
        &web_deployment(),
        json!({"metadata": {"labels": {"tier": null}}}),
    );
    assert_eq!(patched["metadata"]["labels"], json!({"app": "web"}));
}

#[test]
fn delete_from_primitive_list_removes_a_finalizer() {
    let original = json!({"metadata": {"name": "c", "finalizers": ["a", "b", "c"]}});
    let patched = apply(
        CONFIG_MAP,
        &original,
        json!({"metadata": {
            "$setElementOrder/finalizers": ["a", "c"],
            "$deleteFromPrimitiveList/finalizers": ["b"]
        }}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["a", "c"]));
    let absent = apply(
        CONFIG_MAP,
        &json!({"metadata": {"name": "c"}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
    );
    assert_eq!(absent, json!({"metadata": {"name": "c"}}));
}

#[test]
fn finalizers_merge_as_a_set() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let patched = apply(
        CONFIG_MAP,
        &original,
        json!({"metadata": {"$setElementOrder/finalizers": ["a", "b", "c"], "finalizers": ["b", "c"]}}),
    );
    assert_eq!(patched["metadata"]["finalizers"], json!(["a", "b", "c"]));
}

#[test]
fn retain_keys_switches_rolling_update_to_recreate() {
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let patched = apply(DEPLOYMENT, &web_deployment(), patch);
    assert_eq!(patched["spec"]["strategy"], json!({"type": "Recreate"}));

    let without = json!({"spec": {"strategy": {"type": "Recreate"}}});
    let kept = apply(DEPLOYMENT, &web_deployment(), without);
    assert_eq!(kept["spec"]["strategy"]["rollingUpdate"]["maxSurge"], 1);
}

#[test]
fn retain_keys_must_list_every_patched_field() {
    let patch =
        json!({"spec": {"strategy": {"$retainKeys": ["rollingUpdate"], "type": "Recreate"}}});
    let error = apply_err(DEPLOYMENT, &web_deployment(), patch);
    assert!(
        matches!(error, PatchError::InvalidDirective { .. }),
        "{error:?}"
    );
    assert_eq!(error.status_code(), 400);
    assert!(error.to_string().contains("spec.strategy"), "{error}");
}

#[test]
fn service_ports_merge_by_port() {
    let service = json!({"spec": {"ports": [
        {"name": "http", "port": 80, "targetPort": 8080},
        {"name": "https", "port": 443}
    ]}});
    let patch = json!({"spec": {
        "$setElementOrder/ports": [{"port": 80}, {"port": 443}],
        "ports": [{"port": 80, "targetPort": 9090}]
    }});
    let patched = apply(
        GroupVersionKindRef::new("", "v1", "Service"),
        &service,
        patch,
    );
    assert_eq!(
        patched["spec"]["ports"],
        json!([{"name": "http", "port": 80, "targetPort": 9090}, {"name": "https", "port": 443}])
    );
}

#[test]
fn lists_without_merge_key_are_replaced() {
    let patched = patch_pod_spec(json!({
        "containers": [{"name": "nginx", "args": ["--debug"]}]
    }));
    assert_eq!(containers(&patched)[0]["args"], json!(["--debug"]));
    let tolerations = apply(
        POD,
        &json!({"spec": {"tolerations": [{"key": "a"}]}}),
        json!({"spec": {"tolerations": [{"key": "b"}]}}),
    );
    assert_eq!(tolerations["spec"]["tolerations"], json!([{"key": "b"}]));
}

#[test]
fn pod_template_in_a_cron_job_merges_containers() {
    let cron_job = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "job", "image": "v1", "env": [{"name": "A", "value": "1"}]},
        {"name": "helper", "image": "h"}
    ]}}}}}});
    let patch = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "job", "image": "v2", "env": [{"name": "A", "value": "2"}]}]
    }}}}}});
    let patched = apply(
        GroupVersionKindRef::new("batch", "v1", "CronJob"),
        &cron_job,
        patch,
    );
    let containers = &patched["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"];
    assert_eq!(
        containers,
        &json!([
            {"name": "job", "image": "v2", "env": [{"name": "A", "value": "2"}]},
            {"name": "helper", "image": "h"}
        ])
    );
}

#[test]
fn owner_references_merge_by_uid_and_conditions_by_type() {
    let original = json!({
        "metadata": {"ownerReferences": [{"uid": "u1", "name": "a"}]},
        "status": {"conditions": [
            {"type": "Available", "status": "True"},
            {"type": "Progressing", "status": "True"}
        ]}
    });
    let patch = json!({
        "metadata": {"ownerReferences": [{"uid": "u2", "name": "b"}]},
        "status": {"conditions": [{"type": "Available", "status": "False"}]}
    });
    let patched = apply(DEPLOYMENT, &original, patch);
    assert_eq!(
        patched["metadata"]["ownerReferences"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    assert_eq!(
        patched["status"]["conditions"],
        json!([{"type": "Available", "status": "False"}, {"type": "Progressing", "status": "True"}])
    );
}

#[test]
fn pdb_selector_is_replaced_not_merged() {
    let pdb = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}}});
    let patch = json!({"spec": {"selector": {"matchExpressions": []}}});
    let patched = apply(
        GroupVersionKindRef::new("policy", "v1", "PodDisruptionBudget"),
        &pdb,
        patch,
    );
    assert_eq!(patched["spec"]["selector"], json!({"matchExpressions": []}));
}

#[test]
fn merge_keys_compare_numbers_by_value() {
    let pod = json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}});
    let patch = json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80.0, "name": "http"}]}]}});
    let patched = apply(POD, &pod, patch);
    assert_eq!(
        patched["spec"]["containers"][0]["ports"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

// ---- ordering, after the cases of upstream patch_test.go ("preserve order") ----

fn env_pod(env: Value) -> Value {
    json!({"spec": {"containers": [{"name": "c", "env": env}]}})
}

fn env_names(pod: &Value) -> Vec<String> {
    pod["spec"]["containers"][0]["env"]
        .as_array()
        .expect("env is a list")
        .iter()
        .map(|e| {
            e["name"]
                .as_str()
                .expect("env names are strings")
                .to_string()
        })
        .collect()
}

fn env_order_patch(order: &[&str], env: Option<Value>) -> Value {
    let order: Vec<Value> = order.iter().map(|n| json!({"name": n})).collect();
    let mut container = json!({"name": "c", "$setElementOrder/env": order});
    if let Some(env) = env {
        container["env"] = env;
    }
    json!({"spec": {"containers": [container]}})
}

#[test]
fn set_element_order_keeps_server_only_items_near_their_neighbours() {
    let live = env_pod(json!([
        {"name": "1", "other": "a"}, {"name": "2"}, {"name": "7"}, {"name": "9"},
        {"name": "8"}, {"name": "3"}, {"name": "4"}
    ]));
    let patched = apply(POD, &live, env_order_patch(&["2", "1", "4", "3"], None));
    assert_eq!(env_names(&patched), ["2", "1", "7", "9", "8", "4", "3"]);
    assert_eq!(patched["spec"]["containers"][0]["env"][1]["other"], "a");
}

#[test]
fn set_element_order_places_a_new_item() {
    let live = env_pod(json!([{"name": "1", "other": "a"}, {"name": "2", "value": "2"}]));
    let patch = env_order_patch(&["3", "1", "2"], Some(json!([{"name": "3", "value": "3"}])));
    let patched = apply(POD, &live, patch);
    assert_eq!(env_names(&patched), ["3", "1", "2"]);
}

#[test]
fn set_element_order_must_agree_with_the_patch_list() {
    let live = env_pod(json!([{"name": "1"}, {"name": "2"}]));
    let patch = env_order_patch(&["1", "2"], Some(json!([{"name": "2"}, {"name": "1"}])));
    let error = apply_err(POD, &live, patch);
    assert!(
        matches!(error, PatchError::SetElementOrderMismatch { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("spec.containers[name=c].env"),
        "{error}"
    );
}

#[test]
fn primitive_list_cases_from_upstream() {
    let finalizers = |list: Value| json!({"metadata": {"finalizers": list}});
    let cases = [
        // $setElementOrder may name items the list does not have.
        (
            json!(["1", "3"]),
            json!({"$setElementOrder/finalizers": ["3", "2", "1"]}),
            json!(["3", "1"]),
        ),
        // Deleting an absent item adds nothing.
        (
            json!(["1", "2"]),
            json!({"$deleteFromPrimitiveList/finalizers": ["3"]}),
            json!(["1", "2"]),
        ),
        // A null list stays null.
        (
            Value::Null,
            json!({"$deleteFromPrimitiveList/finalizers": ["3"]}),
            Value::Null,
        ),
    ];
    for (live, patch, expected) in cases {
        let patched = apply(CONFIG_MAP, &finalizers(live), json!({"metadata": patch}));
        assert_eq!(patched, finalizers(expected), "patch {patch}");
    }
    let mismatch = json!({"metadata": {
        "$setElementOrder/finalizers": ["1", "2", "3"],
        "finalizers": ["3", "1"]
    }});
    let error = apply_err(CONFIG_MAP, &finalizers(json!(["1", "3", "2"])), mismatch);
    assert!(
        matches!(error, PatchError::SetElementOrderMismatch { .. }),
        "{error:?}"
    );
}

// ---- errors ----

#[test]
fn errors_name_the_path() {
    let missing_key = apply_err(
        POD,
        &env_pod(json!([])),
        json!({"spec": {"containers": [{"image": "x"}]}}),
    );
    assert_eq!(
        missing_key.to_string(),
        "list item at spec.containers has no merge key \"name\""
    );
    assert_eq!(missing_key.status_code(), 422);

    let bad_directive = apply_err(
        POD,
        &env_pod(json!([])),
        json!({"spec": {"$patch": "explode"}}),
    );
    assert!(
        bad_directive.to_string().contains("at spec:"),
        "{bad_directive}"
    );

    let mixed = apply_err(
        POD,
        &json!({"metadata": {"finalizers": ["a"]}}),
        json!({"metadata": {"finalizers": [{"a": 1}]}}),
    );
    assert!(
        matches!(mixed, PatchError::TypeMismatch { .. }),
        "{mixed:?}"
    );
    assert!(mixed.to_string().contains("metadata.finalizers"), "{mixed}");
}

#[test]
fn custom_resources_are_unsupported() {
    assert!(supported("apps", "v1", "Deployment"));
    assert!(supported("", "v1", "ConfigMap"));
    assert!(!supported(
        "policy.karmada.io",
        "v1alpha1",
        "PropagationPolicy"
    ));
    assert!(!supported("apps", "v1beta1", "Deployment"));
    let kind = GroupVersionKindRef::new("example.com", "v1", "Widget");
    let error = apply_err(kind, &json!({}), json!({}));
    assert_eq!(error.status_code(), 415);
    assert!(
        error.to_string().contains("example.com/v1, Kind=Widget"),
        "{error}"
    );
}

#[test]
fn patch_must_be_an_object() {
    let error = apply_err(POD, &json!({}), json!([1]));
    assert!(matches!(error, PatchError::NotAnObject { .. }), "{error:?}");
}

#[test]
fn directives_never_reach_the_stored_object() {
    let patched = apply(
        POD,
        &json!({"spec": {}}),
        json!({"spec": {"containers": [{
            "name": "new",
            "$setElementOrder/env": [{"name": "A"}],
            "env": [{"name": "A", "value": null}]
        }]}}),
    );
    assert_eq!(
        patched,
        json!({"spec": {"containers": [{"name": "new", "env": [{"name": "A"}]}]}})
    );
}

// ---- properties ----

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "$patch", "$retainKeys", "$setElementOrder/containers", "$setElementOrder/finalizers",
            "$deleteFromPrimitiveList/finalizers", "$setElementOrder/env", "metadata", "finalizers",
            "spec", "template", "containers", "env", "ports", "name", "containerPort", "strategy",
        ])
        .prop_map(str::to_string),
        1 => "[a-c]{1,2}",
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..300).prop_map(Value::from),
        prop::sample::select(vec!["replace", "delete", "merge", "name", "a", "b"])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((arb_key(), inner), 0..5)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

fn arb_object() -> impl Strategy<Value = Value> {
    prop::collection::vec((arb_key(), arb_json()), 0..5)
        .prop_map(|fields| Value::Object(fields.into_iter().collect()))
}

/// A patch of plain keys whose maps may hold `null` (delete) but whose lists hold none (upstream
/// drops nulls inside replaced lists' objects; a merge patch keeps them).
fn arb_untagged_patch() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        1 => Just(Value::Null),
        3 => arb_plain(),
        1 => prop::collection::btree_map("[a-d]", prop::option::of(arb_plain()), 0..4).prop_map(
            |m| Value::Object(m.into_iter().map(|(k, v)| (k, v.unwrap_or(Value::Null))).collect())
        ),
    ];
    prop::collection::btree_map("[a-d]", value, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

proptest! {
    #[test]
    fn empty_patch_is_the_identity(original in arb_object()) {
        prop_assert_eq!(apply(DEPLOYMENT, &original, json!({})), original.clone());
        prop_assert_eq!(apply(CONFIG_MAP, &original, json!({})), original);
    }

    #[test]
    fn arbitrary_patches_never_panic(original in arb_object(), patch in arb_json()) {
        for kind in [DEPLOYMENT, POD, CONFIG_MAP] {
            let _ = merge(&kind, &original, &patch);
        }
    }

    #[test]
    fn untagged_fields_patch_like_a_merge_patch(original in arb_plain_object(), patch in arb_untagged_patch()) {
        // Without directives or tagged lists in play, strategic merge is RFC 7386.
        let original = Value::Object(original);
        let strategic = merge(&CONFIG_MAP, &original, &patch);
        let merged = crate::patch::merge_patch(&original, &patch);
        prop_assert_eq!(strategic.ok(), merged.ok());
    }
}
