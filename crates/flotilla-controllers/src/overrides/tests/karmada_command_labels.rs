//! The `commandOverrider`/`argsOverrider` and `labelsOverrider`/`annotationsOverrider` cases
//! of Karmada's `overridemanager` unit tests, restated against Flotilla.

use serde_json::{Value, json};

use super::*;

const IMAGE_FOR_COMMANDS: &str = "fictional.registry.example/imagename:v1.0.0";

/// A workload of `kind` whose containers are `containers` (Karmada's fixtures).
fn workload(kind: &str, containers: Value) -> Value {
    let mut object = json!({"apiVersion": if kind == "Pod" { "v1" } else { "apps/v1" },
        "kind": kind, "metadata": {"name": "nginx", "labels": {"app": "nginx"}}});
    if kind == "Pod" {
        object["spec"] = json!({ "containers": containers });
    } else {
        object["spec"] = json!({"replicas": 1,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": containers}}});
    }
    object
}

fn containers(object: &Value) -> &Value {
    if object["kind"] == "Pod" {
        &object["spec"]["containers"]
    } else {
        &object["spec"]["template"]["spec"]["containers"]
    }
}

/// Applies one command (`field` = "command") or args overrider for container `nginx`.
fn run(object: &mut Value, field: &str, operator: &str, value: &[&str]) {
    let key = if field == "command" {
        "commandOverrider"
    } else {
        "argsOverrider"
    };
    apply_overriders(
        object,
        &overriders(json!({
            key: [{"containerName": "nginx", "operator": operator, "value": value}]})),
    )
    .expect("applies");
}

#[test]
fn command_add_appends_and_remove_drops_equal_entries_for_every_kind() {
    let cases = [
        (
            "Deployment",
            "add",
            vec!["&& echo 'hello karmada'"],
            vec!["nginx", "-v", "-t", "&& echo 'hello karmada'"],
        ),
        ("Deployment", "remove", vec!["-t"], vec!["nginx", "-v"]),
        // Removing nothing writes the command back unchanged.
        ("Deployment", "remove", vec![], vec!["nginx", "-v", "-t"]),
        (
            "Pod",
            "add",
            vec!["echo 'hello karmada'"],
            vec!["nginx", "-v", "-t", "echo 'hello karmada'"],
        ),
        (
            "StatefulSet",
            "add",
            vec!["echo 'hello karmada'"],
            vec!["nginx", "-v", "-t", "echo 'hello karmada'"],
        ),
        ("ReplicaSet", "remove", vec!["-t"], vec!["nginx", "-v"]),
        ("DaemonSet", "remove", vec!["-t"], vec!["nginx", "-v"]),
    ];
    for (kind, operator, value, expected) in cases {
        let mut object = workload(
            kind,
            json!([{"name": "nginx", "image": IMAGE_FOR_COMMANDS,
                "command": ["nginx", "-v", "-t"]}]),
        );
        run(&mut object, "command", operator, &value);
        assert_eq!(
            containers(&object)[0]["command"],
            json!(expected),
            "{kind} {operator} {value:?}"
        );
    }
}

#[test]
fn command_overrider_only_touches_the_named_container() {
    for (operator, value, expected) in [
        (
            "add",
            "echo 'hello karmada'",
            json!(["nginx", "-v", "-t", "echo 'hello karmada'"]),
        ),
        ("remove", "-t", json!(["nginx", "-v"])),
    ] {
        let mut object = workload(
            "Deployment",
            json!([{"name": "nginx", "command": ["nginx", "-v", "-t"]},
                {"name": "nginx1", "command": ["nginx", "-v", "-t"]}]),
        );
        run(&mut object, "command", operator, &[value]);
        assert_eq!(containers(&object)[0]["command"], expected, "{operator}");
        assert_eq!(
            containers(&object)[1]["command"],
            json!(["nginx", "-v", "-t"]),
            "{operator}"
        );
    }
}

#[test]
fn args_add_and_remove_and_absent_args_are_created() {
    let args_container =
        json!([{"name": "nginx", "image": "nginx", "args": ["nginx", "-v", "-t"]}]);
    let mut object = workload("Deployment", args_container.clone());
    run(&mut object, "args", "add", &["&& echo 'hello karmada'"]);
    assert_eq!(
        containers(&object)[0]["args"],
        json!(["nginx", "-v", "-t", "&& echo 'hello karmada'"])
    );

    let mut object = workload("Deployment", args_container);
    run(&mut object, "args", "remove", &["-t"]);
    assert_eq!(containers(&object)[0]["args"], json!(["nginx", "-v"]));

    // A container with a command but no args gets the added args.
    let mut object = workload(
        "Deployment",
        json!([{"name": "nginx", "image": "nginx", "command": ["nginx", "-v", "-t"]}]),
    );
    run(&mut object, "args", "add", &["-t"]);
    assert_eq!(containers(&object)[0]["args"], json!(["-t"]));
    assert_eq!(
        containers(&object)[0]["command"],
        json!(["nginx", "-v", "-t"])
    );
}

/// Karmada's `NewDeployment("default", "test")` with `metadata.<field>` set to `map` (absent
/// when `None`).
fn deployment_with(field: &str, map: Option<Value>) -> Value {
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "test", "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.19.0"}]}}}});
    if let Some(map) = map {
        object["metadata"][field] = map;
    }
    object
}

/// One labels (`field` = "labels") or annotations overrider; the resulting map (`None` when
/// the object has none).
fn label_case(field: &str, start: Option<Value>, operator: &str, value: Value) -> Option<Value> {
    let mut object = deployment_with(field, start);
    let key = format!("{field}Overrider");
    apply_overriders(
        &mut object,
        &overriders(json!({ key: [{"operator": operator, "value": value}] })),
    )
    .expect("applies");
    object["metadata"].get(field).cloned()
}

#[test]
fn labels_and_annotations_overriders_follow_karmadas_cases() {
    let foo_bar = || Some(json!({"foo": "foo", "bar": "bar"}));
    for field in ["labels", "annotations"] {
        let cases = [
            // Adding to an object without the map creates it.
            (
                None,
                "add",
                json!({"test2": "test2"}),
                json!({"test2": "test2"}),
            ),
            (
                foo_bar(),
                "replace",
                json!({"foo": "exist", "non-exist": "non-exist"}),
                json!({"foo": "exist", "bar": "bar"}),
            ),
            (
                foo_bar(),
                "add",
                json!({"test": "test"}),
                json!({"test": "test", "foo": "foo", "bar": "bar"}),
            ),
            (
                foo_bar(),
                "remove",
                json!({"foo": "foo", "non-exist": "non-exist"}),
                json!({"bar": "bar"}),
            ),
        ];
        for (start, operator, value, expected) in cases {
            assert_eq!(
                label_case(field, start, operator, value.clone()),
                Some(expected),
                "{field} {operator} {value}"
            );
        }
    }
}

#[test]
fn annotations_overriders_that_match_nothing_leave_the_map_and_keys_with_slashes_work() {
    let foo_bar = || Some(json!({"foo": "foo", "bar": "bar"}));
    let unchanged = [
        ("remove", json!({})),
        ("replace", json!({"test": "test"})),
        ("remove", json!({"test": "test"})),
    ];
    for (operator, value) in unchanged {
        assert_eq!(
            label_case("annotations", foo_bar(), operator, value.clone()),
            foo_bar(),
            "{operator} {value}"
        );
    }

    let composed = json!({"testannotation/projectId": "c-m-lfx9lk92:p-v86cf"});
    assert_eq!(
        label_case("annotations", foo_bar(), "add", composed.clone()),
        Some(
            json!({"foo": "foo", "bar": "bar", "testannotation/projectId": "c-m-lfx9lk92:p-v86cf"})
        )
    );
    let start = json!({"testannotation/projectId": "c-m-lfx9lk92:p-v86cf", "foo": "foo"});
    assert_eq!(
        label_case("annotations", Some(start), "remove", composed),
        Some(json!({"foo": "foo"}))
    );
}
