use serde_json::json;

use super::*;
use crate::catalog::Catalog;

fn info(group: &str, plural: &str) -> std::sync::Arc<ResourceInfo> {
    let catalog = Catalog::with_builtins();
    catalog
        .resources(group, "v1")
        .into_iter()
        .find(|i| i.plural == plural)
        .expect("built-in resource")
}

#[test]
fn a_create_gives_its_manager_every_field_with_dots_on_added_maps() {
    let cm = info("", "configmaps");
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}});
    record_update(&cm, None, &mut object, "alice", "t0");
    let entries = object["metadata"]["managedFields"]
        .as_array()
        .expect("entries");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["manager"], "alice");
    assert_eq!(entries[0]["operation"], "Update");
    assert_eq!(entries[0]["time"], "t0");
    // As kube-apiserver records `kubectl create configmap a --from-literal=k=v` (labels added
    // and data added are members of their own: `.`).
    assert_eq!(
        serde_json::to_string(&entries[0]["fieldsV1"]).expect("JSON"),
        r#"{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}"#
    );
    let mut bare = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b",
        "managedFields": [{"manager": "sent-by-the-client"}]}});
    record_update(&cm, None, &mut bare, "alice", "t0");
    assert!(bare["metadata"].get("managedFields").is_none());
}

#[test]
fn a_created_deployment_owns_containers_by_name() {
    let deployments = info("apps", "deployments");
    let mut object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx",
                    "ports": [{"containerPort": 80}], "resources": {}}]}}}});
    record_update(&deployments, None, &mut object, "kubectl-create", "t0");
    assert_eq!(
        object["metadata"]["managedFields"][0]["fieldsV1"],
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                        ".": {}, "f:image": {}, "f:name": {},
                        // A list added inside an added item is itself added: `.`.
                        "f:ports": {".": {}, "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                            ".": {}, "f:containerPort": {}}},
                        "f:resources": {},
                    }}},
                },
            },
        })
    );
}

#[test]
fn an_update_takes_changed_fields_from_other_managers() {
    let deployments = info("apps", "deployments");
    let mut old = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "a"}, "spec": {"replicas": 2, "paused": false}});
    record_update(&deployments, None, &mut old, "alice", "t0");
    let mut new = old.clone();
    new["spec"]["replicas"] = 5.into();
    record_update(&deployments, Some(&old), &mut new, "bob", "t1");
    let entries = new["metadata"]["managedFields"]
        .as_array()
        .expect("entries");
    let fields = |who: &str| {
        entries
            .iter()
            .find(|e| e["manager"] == who)
            .map(|e| e["fieldsV1"].clone())
            .expect("entry")
    };
    assert_eq!(fields("alice"), json!({"f:spec": {"f:paused": {}}}));
    assert_eq!(fields("bob"), json!({"f:spec": {"f:replicas": {}}}));
    // Entries in kube's order: operation, then time.
    assert_eq!(entries[0]["manager"], "alice");
}

#[test]
fn unchanged_managers_are_written_back_as_stored_and_changed_ones_encoded_anew() {
    let deployments = info("apps", "deployments");
    let mut v1 = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "a", "labels": {"x": "1"}},
        "spec": {"replicas": 2, "paused": false}});
    record_update(&deployments, None, &mut v1, "alice", "t0");
    let mut v2 = v1.clone();
    v2["metadata"]["annotations"] = json!({"note": "b"});
    record_update(&deployments, Some(&v1), &mut v2, "bob", "t1");
    // Carol changes alice's replicas: alice's entry shrinks, bob's stays as stored.
    let mut v3 = v2.clone();
    v3["spec"]["replicas"] = 5.into();
    v3["metadata"]["labels"]["y"] = "2".into();
    record_update(&deployments, Some(&v2), &mut v3, "carol", "t2");
    let entries = |object: &Value| object["metadata"]["managedFields"].clone();
    let by = |object: &Value, who: &str| {
        entries(object)
            .as_array()
            .and_then(|e| e.iter().find(|e| e["manager"] == who).cloned())
            .expect("entry")
    };
    assert_eq!(by(&v3, "bob"), by(&v2, "bob"));
    assert_eq!(
        by(&v3, "alice")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:x": {}}}, "f:spec": {"f:paused": {}}})
    );
    assert_eq!(
        by(&v3, "carol")["fieldsV1"],
        json!({"f:metadata": {"f:labels": {"f:y": {}}}, "f:spec": {"f:replicas": {}}})
    );
    // What a full decode and encode of every entry gives, in the same place in metadata.
    assert_eq!(entries(&v3), update::encode(&update::parse(&entries(&v3))));
    let keys = |object: &Value| {
        object["metadata"]
            .as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(keys(&v3), keys(&v2));
    // managedFields sent changed in the request: the stored entries are used, as before.
    let mut v4 = v3.clone();
    v4["metadata"]["managedFields"] = json!([]);
    v4["spec"]["paused"] = true.into();
    record_update(&deployments, Some(&v3), &mut v4, "dave", "t3");
    assert!(
        by(&v4, "alice")["fieldsV1"]["f:spec"]
            .get("f:paused")
            .is_none()
    );
    assert_eq!(by(&v4, "bob"), by(&v2, "bob"));
}

#[test]
fn manager_names_come_from_the_user_agent() {
    assert_eq!(
        manager_from_user_agent("kubectl.1.33/v1.33.1 (linux/amd64) kubernetes/abc"),
        "kubectl.1.33"
    );
    assert_eq!(manager_from_user_agent(""), "unknown");
}

/// The one-walk create encoding is the general update algorithm against the zero object.
#[test]
fn the_create_fast_path_matches_the_general_comparison() {
    let objects = [
        (
            "apps",
            "deployments",
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a/b"],
                "managedFields": [{"manager": "client"}]},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "paused": null,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [
                        {"name": "b", "image": "b", "args": ["x"], "env": [{"name": "E", "value": "1"}],
                         "resources": {"requests": {"cpu": "1"}}, "ports": [{"containerPort": 81}, {"containerPort": 80, "protocol": "UDP"}]},
                        {"name": "a", "image": "a", "resources": {}}],
                        "tolerations": [], "volumes": [], "nodeSelector": {}}}},
            "status": {"replicas": 1}}),
        ),
        (
            "",
            "configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {"z": "1", "a": "2"}}, "data": {"k": "v"}, "immutable": false}),
        ),
        (
            "",
            "pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always"}}),
        ),
        (
            "",
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}),
        ),
    ];
    for (group, plural, object) in objects {
        let info = info(group, plural);
        let mut fast = object.clone();
        record_update(&info, None, &mut fast, "m", "t");
        let zero = zero_object(&info, &object);
        let general = update::update(
            zero,
            &object,
            &cursor(&info),
            Vec::new(),
            "m",
            &info.api_version(),
            "t",
        )
        .expect("update");
        let general = update::encode(&general);
        let fast = fast["metadata"]
            .get("managedFields")
            .cloned()
            .unwrap_or(json!([]));
        assert_eq!(
            serde_json::to_string(&fast).expect("JSON"),
            serde_json::to_string(&general).expect("JSON"),
            "{plural}"
        );
    }
}

/// A status write's shortcut ([`record_status_update`]: only `status` compared, entries that own
/// nothing in it kept unparsed) records exactly what the general update does, entry order
/// included.
#[test]
fn a_status_write_records_what_the_general_update_records() {
    let deployments = info("apps", "deployments");
    let mut stored = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "d", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}}});
    record_update(&deployments, None, &mut stored, "kubectl", "t2");
    // A controller that owns part of the status, through the status subresource.
    let old = stored.clone();
    stored["status"] = json!({"replicas": 2, "readyReplicas": 1,
        "conditions": [{"type": "Available", "status": "False"}]});
    record_update_in(
        &deployments,
        Some(&old),
        &mut stored,
        "ctrl-a",
        "t3",
        Some("status"),
    );
    // Entries that own nothing in status: an applier, and an updater at another version
    // (both kept as stored, in their places).
    let entries = stored["metadata"]["managedFields"]
        .as_array_mut()
        .expect("entries");
    entries.insert(
        0,
        json!({"manager": "old-client", "operation": "Update", "apiVersion": "apps/v1beta2",
            "time": "t1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:note": {}}}}}),
    );
    entries.insert(
        0,
        json!({"manager": "argocd", "operation": "Apply", "apiVersion": "apps/v1",
            "time": "t5", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}}}),
    );
    stored["metadata"]["annotations"] = json!({"note": "x"});
    let status_changes: Vec<(&str, Value)> = vec![
        // Taken from ctrl-a.
        (
            "modify",
            json!({"replicas": 2, "readyReplicas": 2,
            "conditions": [{"type": "Available", "status": "True"}]}),
        ),
        // A new field: ctrl-a keeps what it had.
        (
            "add",
            json!({"replicas": 2, "readyReplicas": 1, "availableReplicas": 1,
            "conditions": [{"type": "Available", "status": "False"}]}),
        ),
        // Removed fields leave ctrl-a.
        ("remove", json!({"replicas": 2})),
        ("status removed", Value::Null),
        ("unchanged", stored["status"].clone()),
    ];
    for writer in ["ctrl-b", "ctrl-a"] {
        for (case, status) in &status_changes {
            let mut general = stored.clone();
            match status {
                Value::Null => {
                    general.as_object_mut().expect("object").remove("status");
                }
                status => general["status"] = status.clone(),
            }
            let mut fast = general.clone();
            record_update_in(
                &deployments,
                Some(&stored),
                &mut general,
                writer,
                "t9",
                Some("status"),
            );
            record_status_update(&deployments, &stored, &mut fast, writer, "t9");
            assert_eq!(
                serde_json::to_string(&fast["metadata"]["managedFields"]).expect("JSON"),
                serde_json::to_string(&general["metadata"]["managedFields"]).expect("JSON"),
                "{writer}: {case}"
            );
        }
    }
    // The writer's entry is new and last in time; the kept ones stay where they were.
    let mut fast = stored.clone();
    fast["status"]["readyReplicas"] = json!(2);
    record_status_update(&deployments, &stored, &mut fast, "ctrl-b", "t9");
    let managers: Vec<&str> = fast["metadata"]["managedFields"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["manager"].as_str().expect("manager"))
        .collect();
    assert_eq!(
        managers,
        ["argocd", "old-client", "kubectl", "ctrl-a", "ctrl-b"]
    );
}
