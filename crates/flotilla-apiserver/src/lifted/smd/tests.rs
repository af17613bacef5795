//! Apply, ownership, removal and conflicts on list-maps, sets, atomic lists and nested lists.

use serde_json::{Value, json};

use super::fieldpath::Set;
use super::schema::Cursor;
use super::update::{self, ApplyError, Manager};

const TIME: &str = "2026-01-01T00:00:00Z";

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": containers}}}})
}

/// Applies `config` as `manager` to `live` with `managers`; the new object and entries.
fn apply(
    live: &Value,
    managers: Vec<Manager>,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<(Value, Vec<Manager>), ApplyError> {
    let kind = config["kind"].as_str().unwrap_or("Deployment").to_owned();
    let cursor = Cursor::builtin(Box::leak(kind.into_boxed_str()));
    update::apply(
        live, config, &cursor, managers, manager, "apps/v1", force, TIME,
    )
}

fn fields_of(managers: &[Manager], who: &str) -> Value {
    managers
        .iter()
        .find(|m| m.manager == who)
        .map(|m| m.set.to_fields_v1())
        .unwrap_or(Value::Null)
}

fn containers(object: &Value) -> &Value {
    &object["spec"]["template"]["spec"]["containers"]
}

#[test]
fn two_appliers_own_their_fields_of_one_container() {
    let empty = json!({});
    let a = deployment(json!([{"name": "app", "image": "app:1"}]));
    let (live, managers) = apply(&empty, vec![], &a, "alice", false).expect("alice applies");
    let b = deployment(
        json!([{"name": "app", "env": [{"name": "MODE", "value": "fast"}]},
        {"name": "sidecar", "image": "proxy:2"}]),
    );
    let (live, managers) = apply(&live, managers, &b, "bob", false).expect("bob applies");
    assert_eq!(
        *containers(&live),
        json!([{"name": "app", "image": "app:1", "env": [{"name": "MODE", "value": "fast"}]},
            {"name": "sidecar", "image": "proxy:2"}])
    );
    let item = |name: &str| format!("k:{{\"name\":\"{name}\"}}");
    let tree =
        |inner: Value| json!({"f:spec": {"f:template": {"f:spec": {"f:containers": inner}}}});
    assert_eq!(
        fields_of(&managers, "alice"),
        tree(json!({item("app"): {".": {}, "f:image": {}, "f:name": {}}}))
    );
    assert_eq!(
        fields_of(&managers, "bob"),
        tree(json!({
            item("app"): {".": {}, "f:env": {"k:{\"name\":\"MODE\"}": {".": {}, "f:name": {}, "f:value": {}}}, "f:name": {}},
            item("sidecar"): {".": {}, "f:image": {}, "f:name": {}},
        }))
    );
    // Alice drops the container: bob still owns it, so it stays, without alice's image.
    let a2 = deployment(json!([]));
    let (live, managers) = apply(&live, managers, &a2, "alice", false).expect("alice drops");
    assert_eq!(
        containers(&live)[0],
        json!({"name": "app", "env": [{"name": "MODE", "value": "fast"}]})
    );
    assert_eq!(fields_of(&managers, "alice"), Value::Null);
    // Bob drops the sidecar he alone owns: it goes.
    let b2 = deployment(json!([{"name": "app", "env": [{"name": "MODE", "value": "fast"}]}]));
    let (live, _) = apply(&live, managers, &b2, "bob", false).expect("bob drops");
    assert_eq!(containers(&live).as_array().map(Vec::len), Some(1));
}

#[test]
fn changing_a_field_another_applier_owns_conflicts_per_item_unless_forced() {
    let empty = json!({});
    let a =
        deployment(json!([{"name": "app", "image": "app:1"}, {"name": "log", "image": "log:1"}]));
    let (live, managers) = apply(&empty, vec![], &a, "alice", false).expect("alice applies");
    // Bob sets another item's field and a new field of alice's item: no conflict.
    let b = deployment(json!([{"name": "app", "imagePullPolicy": "Always"}]));
    let (live, managers) = apply(&live, managers, &b, "bob", false).expect("no conflict");
    // Bob changes alice's images: two conflicts, named per item.
    let b2 =
        deployment(json!([{"name": "app", "image": "app:2"}, {"name": "log", "image": "log:2"}]));
    let Err(ApplyError::Conflicts(conflicts)) = apply(&live, managers.clone(), &b2, "bob", false)
    else {
        panic!("expected conflicts");
    };
    assert_eq!(
        conflicts.message(),
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n\
         - .spec.template.spec.containers[name=\"app\"].image\n\
         - .spec.template.spec.containers[name=\"log\"].image"
    );
    // Setting the same value is shared ownership, not a conflict.
    let same = deployment(json!([{"name": "log", "image": "log:1"}]));
    let (_, shared) = apply(&live, managers.clone(), &same, "carol", false).expect("same value");
    assert!(fields_of(&shared, "alice").to_string().contains("log"));
    assert!(fields_of(&shared, "carol").to_string().contains("log"));
    // Forced: bob takes the images; alice keeps the rest of her items.
    let (live, managers) = apply(&live, managers, &b2, "bob", true).expect("forced");
    assert_eq!(containers(&live)[0]["image"], "app:2");
    let alice = fields_of(&managers, "alice").to_string();
    assert!(!alice.contains("f:image"), "{alice}");
    assert!(alice.contains("k:{\\\"name\\\":\\\"log\\\"}"), "{alice}");
}

#[test]
fn nested_ports_are_keyed_by_port_and_defaulted_protocol() {
    let empty = json!({});
    let a = deployment(
        json!([{"name": "app", "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}]}]),
    );
    let (live, managers) = apply(&empty, vec![], &a, "alice", false).expect("applies");
    let ports = fields_of(&managers, "alice")["f:spec"]["f:template"]["f:spec"]["f:containers"]
        ["k:{\"name\":\"app\"}"]["f:ports"]
        .clone();
    let keys: Vec<&String> = ports.as_object().expect("ports").keys().collect();
    assert_eq!(
        keys,
        [
            "k:{\"containerPort\":53,\"protocol\":\"UDP\"}",
            "k:{\"containerPort\":80,\"protocol\":\"TCP\"}"
        ]
    );
    // Dropping one port removes only that port.
    let a2 = deployment(json!([{"name": "app", "ports": [{"containerPort": 80}]}]));
    let (live, _) = apply(&live, managers, &a2, "alice", false).expect("drops a port");
    assert_eq!(
        containers(&live)[0]["ports"],
        json!([{"containerPort": 80}])
    );
    // An item without its key is refused.
    let bad = deployment(json!([{"image": "x"}]));
    let Err(ApplyError::Type(error)) = apply(&live, vec![], &bad, "bob", false) else {
        panic!("expected a type error");
    };
    assert!(
        error.to_string().contains("omits key field \"name\""),
        "{error}"
    );
}

#[test]
fn sets_are_owned_per_value_and_atomic_lists_whole() {
    let empty = json!({});
    let cm = |finalizers: Value, args: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "finalizers": finalizers},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "args": args}], "tolerations": [{"key": "a"}]}}}})
    };
    let a = cm(json!(["a.io/x"]), json!(["--one"]));
    let (live, managers) = apply(&empty, vec![], &a, "alice", false).expect("alice");
    let b = cm(json!(["b.io/y"]), json!(["--one"]));
    let (live, managers) = apply(&live, managers, &b, "bob", false).expect("bob");
    assert_eq!(live["metadata"]["finalizers"], json!(["a.io/x", "b.io/y"]));
    let alice = fields_of(&managers, "alice");
    assert_eq!(
        alice["f:metadata"]["f:finalizers"],
        json!({"v:\"a.io/x\"": {}})
    );
    // The atomic args and tolerations are members themselves, shared by both.
    let args =
        &alice["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"]["f:args"];
    assert_eq!(*args, json!({}));
    assert_eq!(
        alice["f:spec"]["f:template"]["f:spec"]["f:tolerations"],
        json!({})
    );
    // Changing an atomic list someone else owns is one conflict on the whole list.
    let b2 = cm(json!(["b.io/y"]), json!(["--two"]));
    let Err(ApplyError::Conflicts(conflicts)) = apply(&live, managers.clone(), &b2, "bob", false)
    else {
        panic!("expected a conflict");
    };
    assert_eq!(
        conflicts.message(),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.template.spec.containers[name=\"app\"].args"
    );
    // Alice drops her finalizer: bob's stays.
    let a2 = cm(json!([]), json!(["--one"]));
    let (live, _) = apply(&live, managers, &a2, "alice", false).expect("alice drops");
    assert_eq!(live["metadata"]["finalizers"], json!(["b.io/y"]));
}

#[test]
fn list_merge_keeps_live_order_and_places_new_items_after_their_neighbours() {
    let live = deployment(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
    let config = deployment(json!([{"name": "b"}, {"name": "x"}, {"name": "c"}]));
    let merged =
        super::typed::merge(&live, &config, &Cursor::builtin("Deployment")).expect("merge");
    let names: Vec<&str> = containers(&merged)
        .as_array()
        .expect("list")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["a", "b", "x", "c"]);
}

#[test]
fn fields_v1_round_trips_with_dots_keys_and_values() {
    let fields = json!({"f:metadata": {"f:finalizers": {".": {}, "v:\"x\"": {}}},
        "f:spec": {"f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}}}}});
    let set = Set::from_fields_v1(&fields);
    assert_eq!(set.to_fields_v1(), fields);
    assert_eq!(
        serde_json::to_string(&set.to_fields_v1()).expect("JSON"),
        serde_json::to_string(&fields).expect("JSON")
    );
}

#[test]
fn an_update_after_an_apply_takes_only_what_it_changed() {
    let empty = json!({});
    let a = deployment(json!([{"name": "app", "image": "app:1"}]));
    let (live, managers) = apply(&empty, vec![], &a, "alice", false).expect("alice");
    let mut edited = live.clone();
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = "app:9".into();
    let managers = update::update(
        &live,
        &edited,
        &Cursor::builtin("Deployment"),
        managers,
        "kubectl-edit",
        "apps/v1",
        TIME,
    )
    .expect("update");
    let edit = fields_of(&managers, "kubectl-edit");
    assert_eq!(
        edit,
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {"f:image": {}}}}}}})
    );
    let alice = fields_of(&managers, "alice").to_string();
    assert!(!alice.contains("f:image"), "{alice}");
    // Alice re-applying her image now conflicts with the updater, named with its version.
    let Err(ApplyError::Conflicts(conflicts)) = apply(&edited, managers, &a, "alice", false) else {
        panic!("expected a conflict");
    };
    assert_eq!(
        conflicts.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: .spec.template.spec.containers[name=\"app\"].image"
    );
}

#[test]
fn subtracting_in_place_is_the_difference() {
    let sets = [
        json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}, "f:spec": {"f:replicas": {}}}),
        json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {}}),
        json!({"f:spec": {".": {}, "f:replicas": {}, "f:template": {"f:spec": {
            "f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}}}}}}}),
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {}}}}}}),
        json!({"f:status": {"f:conditions": {}}}),
        json!({}),
    ]
    .map(|fields| Set::from_fields_v1(&fields));
    for a in &sets {
        for b in &sets {
            let mut subtracted = a.clone();
            subtracted.subtract(b);
            assert_eq!(subtracted, a.difference(b), "{a:?} - {b:?}");
        }
    }
}

#[test]
fn a_comparison_still_refuses_an_unkeyed_item_in_an_unchanged_part() {
    let cursor = Cursor::builtin("Deployment");
    let old = deployment(json!([{"image": "nginx"}]));
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(2);
    let error = super::typed::compare(&old, &new, &cursor).expect_err("no key");
    assert_eq!(error.path, ".spec.template.spec.containers");
    // Unchanged and keyed: skipped, and the change is found.
    let old = deployment(json!([{"name": "c", "image": "nginx"}]));
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(2);
    let comparison = super::typed::compare(&old, &new, &cursor).expect("keyed");
    assert!(comparison.added.has(&[
        super::fieldpath::PathElement::Field("spec".into()),
        super::fieldpath::PathElement::Field("replicas".into()),
    ]));
    assert!(comparison.modified.is_empty() && comparison.removed.is_empty());
}
