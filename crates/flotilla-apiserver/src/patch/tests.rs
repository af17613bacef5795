//! JSON patch and JSON merge patch: behaviour, error messages, and property tests.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{PatchError, json_patch, merge_patch, parse};

fn doc() -> Value {
    json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "spec": {"items": [1, 2]}})
}

#[test]
fn json_patch_applies_operations_in_order() {
    let patch = br#"[
        {"op": "test", "path": "/metadata/name", "value": "a"},
        {"op": "add", "path": "/spec/items/-", "value": 3},
        {"op": "replace", "path": "/metadata/labels/x", "value": "9"},
        {"op": "copy", "from": "/metadata/name", "path": "/spec/copied"},
        {"op": "move", "from": "/spec/copied", "path": "/spec/moved"}
    ]"#;
    let patched = json_patch(&doc(), patch).expect("patch applies");
    assert_eq!(patched["spec"], json!({"items": [1, 2, 3], "moved": "a"}));
    assert_eq!(patched["metadata"]["labels"]["x"], "9");
}

#[test]
fn json_patch_failures_name_the_operation_and_path() {
    let failed = json_patch(
        &doc(),
        br#"[{"op": "test", "path": "/metadata/name", "value": "b"}]"#,
    )
    .expect_err("test op fails");
    assert!(
        matches!(failed, PatchError::TestFailed { index: 0, .. }),
        "{failed:?}"
    );
    assert_eq!(failed.status_code(), 422);
    assert!(failed.to_string().contains("/metadata/name"), "{failed}");

    let missing = json_patch(
        &doc(),
        br#"[{"op": "add", "path": "/spec/a", "value": 1}, {"op": "remove", "path": "/nope/x"}]"#,
    )
    .expect_err("remove of a missing path fails");
    assert_eq!(
        missing.to_string(),
        "JSON patch operation 1 (remove): path \"/nope/x\" not found"
    );

    let bad_from = json_patch(
        &doc(),
        br#"[{"op": "move", "from": "/nope", "path": "/a"}]"#,
    )
    .expect_err("move from a missing path fails");
    assert!(bad_from.to_string().contains("\"/nope\""), "{bad_from}");
}

#[test]
fn json_patch_rejects_malformed_bodies() {
    let not_json = json_patch(&doc(), b"{").expect_err("not JSON");
    assert!(
        matches!(not_json, PatchError::InvalidJsonPatch(_)),
        "{not_json:?}"
    );
    assert_eq!(not_json.status_code(), 400);
    let unknown_op = json_patch(&doc(), br#"[{"op": "frobnicate", "path": "/a"}]"#);
    assert!(
        matches!(unknown_op, Err(PatchError::InvalidJsonPatch(_))),
        "{unknown_op:?}"
    );
    let op = json!({"op": "test", "path": "/metadata/name", "value": "a"});
    let too_many = serde_json::to_vec(&vec![op; super::MAX_JSON_PATCH_OPERATIONS + 1])
        .expect("a list of operations serializes");
    let error = json_patch(&doc(), &too_many).expect_err("over the limit");
    assert_eq!(error.status_code(), 413);
}

#[test]
fn json_patch_removing_dash_from_an_empty_list_is_an_error_not_a_panic() {
    let empty = json!({"items": []});
    let error = json_patch(&empty, br#"[{"op": "remove", "path": "/items/-"}]"#)
        .expect_err("nothing to remove");
    assert!(
        matches!(error, PatchError::PathNotFound { .. }),
        "{error:?}"
    );
    let moved = json_patch(
        &empty,
        br#"[{"op": "move", "from": "/items/-", "path": "/x"}]"#,
    );
    assert!(moved.is_err());
}

#[test]
fn merge_patch_merges_deletes_and_replaces_lists() {
    let patch = json!({"metadata": {"labels": {"x": null, "z": "3"}}, "spec": {"items": [7]}});
    let patched = merge_patch(&doc(), &patch).expect("patch applies");
    assert_eq!(
        patched,
        json!({"metadata": {"name": "a", "labels": {"y": "2", "z": "3"}}, "spec": {"items": [7]}})
    );
    let keys: Vec<&String> = patched["metadata"]["labels"]
        .as_object()
        .expect("labels is an object")
        .keys()
        .collect();
    assert_eq!(keys, ["y", "z"], "key order is kept, new keys appended");
}

#[test]
fn merge_patch_must_be_an_object() {
    let error = merge_patch(&doc(), &json!([1])).expect_err("a list is not a merge patch");
    assert_eq!(
        error.to_string(),
        "a merge patch must be a JSON object, got list"
    );
    assert_eq!(error.status_code(), 400);
}

#[test]
fn parse_reports_invalid_json() {
    let error = parse(b"{\"a\":").expect_err("truncated");
    assert!(
        error.to_string().starts_with("invalid patch JSON"),
        "{error}"
    );
}

// ---- properties ----

/// JSON without nulls, keys `a`..`d`.
pub(crate) fn arb_plain() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        "[a-c]{0,2}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

pub(crate) fn arb_plain_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[a-d]", arb_plain(), 0..4).prop_map(|m| m.into_iter().collect())
}

/// The RFC 7386 patch that turns `from` into `to` (neither may contain nulls).
fn diff(from: &Map<String, Value>, to: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = Map::new();
    for key in from.keys().filter(|k| !to.contains_key(*k)) {
        patch.insert(key.clone(), Value::Null);
    }
    for (key, target) in to {
        match (from.get(key), target) {
            (Some(Value::Object(a)), Value::Object(b)) => {
                let inner = diff(a, b);
                if !inner.is_empty() {
                    patch.insert(key.clone(), Value::Object(inner));
                }
            }
            (Some(current), _) if current == target => {}
            _ => {
                patch.insert(key.clone(), target.clone());
            }
        }
    }
    patch
}

proptest! {
    #[test]
    fn merge_patch_of_a_diff_reproduces_the_target(from in arb_plain_object(), to in arb_plain_object()) {
        let patch = Value::Object(diff(&from, &to));
        let patched = merge_patch(&Value::Object(from), &patch).expect("an object patch applies");
        prop_assert_eq!(patched, Value::Object(to));
    }

    #[test]
    fn empty_merge_patch_is_the_identity(doc in arb_plain_object()) {
        let doc = Value::Object(doc);
        prop_assert_eq!(merge_patch(&doc, &json!({})).expect("empty patch applies"), doc);
    }

    #[test]
    fn json_patch_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = json_patch(&doc(), &bytes);
    }

    #[test]
    fn json_patch_never_panics_on_arbitrary_operations(
        ops in prop::collection::vec(
            (
                prop::sample::select(vec!["add", "remove", "replace", "move", "copy", "test"]),
                "(/(metadata|labels|spec|items|x|-|0|1|~0|~1)){0,3}",
                "(/(metadata|spec|items|-|0)){0,3}",
                arb_plain(),
            ),
            0..6,
        )
    ) {
        let ops: Vec<Value> = ops
            .into_iter()
            .map(|(op, path, from, value)| json!({"op": op, "path": path, "from": from, "value": value}))
            .collect();
        let bytes = serde_json::to_vec(&ops).expect("operations serialize");
        let _ = json_patch(&doc(), &bytes);
        let _ = json_patch(&json!({"items": []}), &bytes);
    }
}
