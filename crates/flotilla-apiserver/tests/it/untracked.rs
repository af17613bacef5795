//! `Builder::untracked_writer`: a user whose writes are not recorded in managedFields (what the
//! simulated clusters use for their own control loops), while everyone else's are.

use std::sync::Arc;

use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::{Builder, Running};
use flotilla_store::{MemoryStore, Store};
use serde_json::{Value, json};

use crate::support::*;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn server() -> Running {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Builder::new(store)
        .untracked_writer("loops")
        .start()
        .await
        .expect("API server starts")
}

fn loops() -> Option<UserInfo> {
    Some(UserInfo {
        name: "loops".into(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        ..Default::default()
    })
}

/// `manager/operation[/subresource]` of every entry, sorted.
fn managers(object: &Value) -> Vec<String> {
    let mut managers: Vec<String> = object["metadata"]["managedFields"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|m| {
            let mut name = format!(
                "{}/{}",
                m["manager"].as_str().unwrap_or(""),
                m["operation"].as_str().unwrap_or("")
            );
            if let Some(sub) = m["subresource"].as_str() {
                name.push('/');
                name.push_str(sub);
            }
            name
        })
        .collect();
    managers.sort();
    managers
}

/// Merge-patches `web`'s replicas as `user` with field manager `ctrl`; the write must succeed.
async fn scale_web(cp: &Running, user: Option<UserInfo>, replicas: i64) -> Reply {
    let reply = send_as(
        cp,
        user,
        merge(
            &format!("{DEPLOYMENTS}/web?fieldManager=ctrl"),
            json!({"spec": {"replicas": replicas}}),
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["spec"]["replicas"], replicas);
    reply
}

#[tokio::test]
async fn an_untracked_writer_owns_nothing_and_others_stay_tracked() {
    let cp = server().await;
    let created = send_as(
        &cp,
        loops(),
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldManager=ctrl"),
            &deployment("web", 2),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert!(
        created.body["metadata"].get("managedFields").is_none(),
        "{}",
        created.body
    );

    // Status and spec writes by the untracked writer: still no managed fields.
    let status = send_as(
        &cp,
        loops(),
        merge(
            &format!("{DEPLOYMENTS}/web/status?fieldManager=ctrl"),
            json!({"status": {"replicas": 2}}),
        ),
    )
    .await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(status.body["status"]["replicas"], 2);
    assert!(
        status.body["metadata"].get("managedFields").is_none(),
        "{}",
        status.body
    );

    // A user's apply: the object had no managed fields, so its fields are before-first-apply's.
    let applied = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/web?fieldManager=team&force=true"),
            "application/apply-patch+yaml",
            deployment("web", 3).to_string(),
        ),
    )
    .await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(
        managers(&applied.body),
        ["before-first-apply/Update", "team/Apply"]
    );
    let owns_replicas = |object: &Value, manager: &str| {
        object["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .any(|m| m["manager"] == manager && m["fieldsV1"]["f:spec"].get("f:replicas").is_some())
    };
    assert!(owns_replicas(&applied.body, "team"));

    // The untracked writer changes the applied field: the applier loses it, nobody gains it.
    let scaled = scale_web(&cp, loops(), 7).await;
    assert_eq!(
        managers(&scaled.body),
        ["before-first-apply/Update", "team/Apply"]
    );
    assert!(!owns_replicas(&scaled.body, "team"), "{}", scaled.body);

    // The same write by a tracked user records its manager.
    let tracked = scale_web(&cp, Some(admin()), 8).await;
    assert_eq!(
        managers(&tracked.body),
        ["before-first-apply/Update", "ctrl/Update", "team/Apply"]
    );
    assert!(owns_replicas(&tracked.body, "ctrl"));

    // An entry the untracked writer's manager name already has (here: a tracked user's writes
    // under the same name) is left as it was.
    let again = scale_web(&cp, loops(), 9).await;
    assert_eq!(
        managers(&again.body),
        ["before-first-apply/Update", "ctrl/Update", "team/Apply"]
    );
    assert!(owns_replicas(&again.body, "ctrl"));
}

#[tokio::test]
async fn writes_of_other_users_on_a_server_with_an_untracked_writer_are_recorded() {
    let cp = server().await;
    let created = send(
        &cp,
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldManager=ctrl"),
            &deployment("web", 2),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(managers(&created.body), ["ctrl/Update"]);
}

/// Status writes by the untracked writer: entries that own nothing in `status` stay exactly as
/// they were; an entry that owns a status field loses the fields the writer changed.
#[tokio::test]
async fn untracked_status_writes_take_status_fields_from_their_owners_only() {
    let cp = server().await;
    let created = send_as(
        &cp,
        Some(admin()),
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldManager=creator"),
            &deployment("web", 2),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let entries = created.body["metadata"]["managedFields"].clone();
    assert_eq!(managers(&created.body), ["creator/Update"]);

    let status = send_as(
        &cp,
        loops(),
        merge(
            &format!("{DEPLOYMENTS}/web/status?fieldManager=ctrl"),
            json!({"status": {"replicas": 2, "readyReplicas": 1}}),
        ),
    )
    .await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(status.body["metadata"]["managedFields"], entries);
    // The entries went through that write as bytes: what is served and stored is the same
    // object, resourceVersion included, and a write that changes nothing stores nothing.
    let read = send_as(&cp, Some(admin()), get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(read.body, status.body);
    let again = send_as(
        &cp,
        loops(),
        merge(
            &format!("{DEPLOYMENTS}/web/status?fieldManager=ctrl"),
            json!({"status": {"readyReplicas": 1}}),
        ),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body, status.body);

    // Entries the untracked writer sends along are not taken: the stored ones stay.
    let sent = send_as(
        &cp,
        loops(),
        merge(
            &format!("{DEPLOYMENTS}/web/status?fieldManager=ctrl"),
            json!({"metadata": {"managedFields": [{"manager": "forged", "operation": "Update",
                "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:paused": {}}}}]},
                "status": {"availableReplicas": 1}}),
        ),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert_eq!(sent.body["status"]["availableReplicas"], 1);
    assert_eq!(sent.body["metadata"]["managedFields"], entries);
    let read = send_as(&cp, Some(admin()), get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(read.body["metadata"]["managedFields"], entries);

    // A tracked user writes status: it owns what it wrote.
    let tracked = send_as(
        &cp,
        Some(admin()),
        merge(
            &format!("{DEPLOYMENTS}/web/status?fieldManager=reporter"),
            json!({"status": {"replicas": 3, "readyReplicas": 2}}),
        ),
    )
    .await;
    assert_eq!(tracked.status, 200, "{}", tracked.body);
    assert_eq!(
        managers(&tracked.body),
        ["creator/Update", "reporter/Update/status"]
    );
    let reporter_owns = |object: &Value, field: &str| {
        object["metadata"]["managedFields"]
            .as_array()
            .expect("managedFields")
            .iter()
            .any(|m| m["manager"] == "reporter" && m["fieldsV1"]["f:status"].get(field).is_some())
    };
    assert!(reporter_owns(&tracked.body, "f:readyReplicas"));

    // The untracked writer changes one of them: the reporter loses that one only.
    let taken = send_as(
        &cp,
        loops(),
        merge(
            &format!("{DEPLOYMENTS}/web/status?fieldManager=ctrl"),
            json!({"status": {"readyReplicas": 3}}),
        ),
    )
    .await;
    assert_eq!(taken.status, 200, "{}", taken.body);
    assert_eq!(
        managers(&taken.body),
        ["creator/Update", "reporter/Update/status"]
    );
    assert!(
        !reporter_owns(&taken.body, "f:readyReplicas"),
        "{}",
        taken.body
    );
    assert!(reporter_owns(&taken.body, "f:replicas"), "{}", taken.body);
}
