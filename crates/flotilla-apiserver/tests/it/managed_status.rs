//! Managed fields kube-apiserver keeps apart: status and scale subresource writes are entries of
//! their own (`subresource: status`, `subresource: scale`), and the first apply to an object without managed fields finds its
//! fields owned by `before-first-apply`.

use serde_json::{Value, json};

use crate::support::*;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// (manager, operation, subresource, top-level fields owned) of each entry, sorted.
fn entries(object: &Value) -> Vec<(String, String, String, Vec<String>)> {
    let mut entries: Vec<_> = object["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| {
            let fields = m["fieldsV1"]
                .as_object()
                .map(|f| f.keys().cloned().collect())
                .unwrap_or_default();
            (
                m["manager"].as_str().unwrap_or("").to_owned(),
                m["operation"].as_str().unwrap_or("").to_owned(),
                m["subresource"].as_str().unwrap_or("").to_owned(),
                fields,
            )
        })
        .collect();
    entries.sort();
    entries
}

#[tokio::test]
async fn status_writes_are_recorded_as_status_subresource_entries() {
    let cp = control_plane().await;
    let created = send(
        &cp,
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldManager=creator"),
            &deployment("web", 2),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);

    let mut object = created.body.clone();
    object["status"] = json!({"replicas": 2, "readyReplicas": 1});
    let updated = send(
        &cp,
        json(
            "PUT",
            &format!("{DEPLOYMENTS}/web/status?fieldManager=rollout"),
            &object,
        ),
    )
    .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    let status_fields = |e: &[(String, String, String, Vec<String>)], manager: &str| {
        e.iter()
            .find(|(m, _, sub, _)| m == manager && sub == "status")
            .map(|(_, op, _, fields)| (op.clone(), fields.clone()))
    };
    let after_put = entries(&updated.body);
    assert_eq!(
        status_fields(&after_put, "rollout"),
        Some(("Update".to_owned(), vec!["f:status".to_owned()]))
    );

    // The same manager writing the main resource gets a separate entry.
    let patched = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/web?fieldManager=rollout"),
            "application/merge-patch+json",
            json!({"spec": {"replicas": 3}}).to_string(),
        ),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let after_patch = entries(&patched.body);
    assert!(
        after_patch.contains(&(
            "rollout".to_owned(),
            "Update".to_owned(),
            String::new(),
            vec!["f:spec".to_owned()]
        )),
        "{after_patch:?}"
    );
    assert_eq!(
        status_fields(&after_patch, "rollout"),
        Some(("Update".to_owned(), vec!["f:status".to_owned()]))
    );

    // A server-side apply of status is the status subresource's Apply entry.
    let applied = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/web/status?fieldManager=status-applier&force=true"),
            "application/apply-patch+yaml",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                   "status": {"readyReplicas": 2}})
            .to_string(),
        ),
    )
    .await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(applied.body["status"]["readyReplicas"], 2);
    assert_eq!(
        status_fields(&entries(&applied.body), "status-applier"),
        Some(("Apply".to_owned(), vec!["f:status".to_owned()]))
    );
}

#[tokio::test]
async fn the_first_apply_to_an_untracked_object_conflicts_with_before_first_apply() {
    let cp = control_plane().await;
    let registry = cp.server.registry();
    let info = registry
        .catalog()
        .get("apps", "v1", "deployments")
        .expect("deployments are built in");
    // Written without a field manager: no managed fields, as objects from before server-side
    // apply.
    let created = registry
        .create(
            &info,
            Some("default"),
            deployment("web", 2),
            &flotilla_apiserver::registry::WriteOptions::default(),
        )
        .await
        .expect("create");
    assert!(created["metadata"].get("managedFields").is_none());

    let apply = |force: bool| {
        with_body(
            "PATCH",
            &format!(
                "{DEPLOYMENTS}/web?fieldManager=team{}",
                if force { "&force=true" } else { "" }
            ),
            "application/apply-patch+yaml",
            deployment("web", 5).to_string(),
        )
    };
    let refused = send(&cp, apply(false)).await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using apps/v1: .spec.replicas"
    );
    let forced = send(&cp, apply(true)).await;
    assert_eq!(forced.status, 200, "{}", forced.body);
    assert_eq!(forced.body["spec"]["replicas"], 5);
    let managers: Vec<String> = entries(&forced.body)
        .into_iter()
        .map(|(manager, operation, _, _)| format!("{manager}/{operation}"))
        .collect();
    assert_eq!(managers, ["before-first-apply/Update", "team/Apply"]);
}

/// The `f:spec` fields an entry owns, by manager and subresource.
fn spec_fields(object: &Value, manager: &str, subresource: &str) -> Option<Vec<String>> {
    object["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|m| m["manager"] == manager && m["subresource"].as_str().unwrap_or("") == subresource)
        .map(|m| {
            m["fieldsV1"]["f:spec"]
                .as_object()
                .map(|f| f.keys().cloned().collect())
                .unwrap_or_default()
        })
}

#[tokio::test]
async fn scale_writes_are_recorded_as_scale_subresource_entries_owning_replicas() {
    let cp = control_plane().await;
    let created = send(
        &cp,
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldManager=creator"),
            &deployment("web", 2),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let creator = spec_fields(&created.body, "creator", "").expect("creator entry");
    assert!(creator.contains(&"f:replicas".to_owned()), "{creator:?}");

    let scaled = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/web/scale?fieldManager=scaler"),
            "application/merge-patch+json",
            json!({"spec": {"replicas": 5}}).to_string(),
        ),
    )
    .await;
    assert_eq!(scaled.status, 200, "{}", scaled.body);
    assert_eq!(scaled.body["spec"]["replicas"], 5);

    let object = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await.body;
    let entry = object["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .find(|m| m["manager"] == "scaler")
        .expect("scaler entry")
        .clone();
    assert_eq!(entry["operation"], "Update");
    assert_eq!(entry["subresource"], "scale");
    assert_eq!(entry["apiVersion"], "apps/v1");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}}),
        "the scale writer owns the replicas only"
    );
    // The creator lost the replicas to the scaler and kept the rest of its spec.
    let creator = spec_fields(&object, "creator", "").expect("creator entry");
    assert!(!creator.contains(&"f:replicas".to_owned()), "{creator:?}");
    assert!(creator.contains(&"f:template".to_owned()), "{creator:?}");

    // A scale to the same replicas changes nothing, managed fields included.
    let again = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/web/scale?fieldManager=other"),
            "application/merge-patch+json",
            json!({"spec": {"replicas": 5}}).to_string(),
        ),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let after = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await.body;
    assert_eq!(
        after["metadata"]["resourceVersion"],
        object["metadata"]["resourceVersion"]
    );
    assert_eq!(spec_fields(&after, "other", "scale"), None);
}
