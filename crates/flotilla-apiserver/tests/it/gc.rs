//! Garbage collection through ownerReferences, over HTTP: Deployment → ReplicaSet → Pods built
//! by hand, deleted with each propagation policy.

use std::time::Duration;

use flotilla_apiserver::Running;
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICASETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const PODS: &str = "/api/v1/namespaces/default/pods";
const PATIENCE: Duration = Duration::from_secs(10);

fn owner_ref(owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": block,
    })
}

async fn create(cp: &Running, collection: &str, body: Value) -> Value {
    let reply = send(cp, json("POST", collection, &body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body
}

async fn replica_set(cp: &Running, name: &str, owners: Vec<Value>) -> Value {
    let body = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name, "labels": {"app": "web"}, "ownerReferences": owners},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}
            }
        }
    });
    create(cp, REPLICASETS, body).await
}

async fn pod(cp: &Running, name: &str, owners: Vec<Value>, finalizers: &[&str]) -> Value {
    let body = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}, "ownerReferences": owners,
                     "finalizers": finalizers},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}
    });
    create(cp, PODS, body).await
}

/// Deployment `web` → ReplicaSet `web-1` → Pods `web-1-a`, `web-1-b` (the first holding
/// `hold_pod` as a finalizer, when given).
async fn chain(cp: &Running, hold_pod: Option<&str>) -> (Value, Value) {
    let deploy = create(cp, DEPLOYMENTS, deployment("web", 2)).await;
    let rs = replica_set(cp, "web-1", vec![owner_ref(&deploy, true)]).await;
    let held: Vec<&str> = hold_pod.into_iter().collect();
    pod(cp, "web-1-a", vec![owner_ref(&rs, true)], &held).await;
    pod(cp, "web-1-b", vec![owner_ref(&rs, true)], &[]).await;
    (deploy, rs)
}

async fn delete(cp: &Running, uri: &str, policy: &str) -> Value {
    let body = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy});
    let reply = send(cp, json("DELETE", uri, &body)).await;
    // 202: the object stays until its finalizers are done.
    assert!(
        [StatusCode::OK, StatusCode::ACCEPTED].contains(&reply.status),
        "{}",
        reply.body
    );
    reply.body
}

async fn status_of(cp: &Running, uri: &str) -> StatusCode {
    send(cp, get(uri)).await.status
}

async fn gone(cp: &Running, uri: &str) {
    eventually(PATIENCE, || async {
        status_of(cp, uri).await == StatusCode::NOT_FOUND
    })
    .await;
}

#[tokio::test]
async fn background_deletion_collects_the_whole_chain() {
    let cp = control_plane().await;
    chain(&cp, None).await;
    delete(&cp, &format!("{DEPLOYMENTS}/web"), "Background").await;
    assert_eq!(
        status_of(&cp, &format!("{DEPLOYMENTS}/web")).await,
        StatusCode::NOT_FOUND
    );
    gone(&cp, &format!("{REPLICASETS}/web-1")).await;
    gone(&cp, &format!("{PODS}/web-1-a")).await;
    gone(&cp, &format!("{PODS}/web-1-b")).await;
}

#[tokio::test]
async fn foreground_deletion_keeps_the_owner_until_blocking_dependents_are_gone() {
    let cp = control_plane().await;
    chain(&cp, Some("example.com/hold")).await;
    let deleting = delete(&cp, &format!("{DEPLOYMENTS}/web"), "Foreground").await;
    assert!(deleting["metadata"]["deletionTimestamp"].is_string());

    // The collector works down the chain: the ReplicaSet is deleted in the foreground too,
    // then its pods; the held pod stays, marked.
    let held = format!("{PODS}/web-1-a");
    eventually(PATIENCE, || async {
        send(&cp, get(&held)).await.body["metadata"]["deletionTimestamp"].is_string()
    })
    .await;
    gone(&cp, &format!("{PODS}/web-1-b")).await;
    for uri in [format!("{DEPLOYMENTS}/web"), format!("{REPLICASETS}/web-1")] {
        let owner = send(&cp, get(&uri)).await;
        assert_eq!(
            owner.status,
            StatusCode::OK,
            "{uri} waits for its dependents"
        );
        assert!(owner.body["metadata"]["deletionTimestamp"].is_string());
        assert_eq!(
            owner.body["metadata"]["finalizers"],
            json!(["foregroundDeletion"])
        );
    }

    // Releasing the pod lets every owner go in turn.
    let release = with_body(
        "PATCH",
        &held,
        "application/merge-patch+json",
        r#"{"metadata":{"finalizers":null}}"#,
    );
    let released = send(&cp, release).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    gone(&cp, &held).await;
    gone(&cp, &format!("{REPLICASETS}/web-1")).await;
    gone(&cp, &format!("{DEPLOYMENTS}/web")).await;
}

#[tokio::test]
async fn orphan_deletion_releases_dependents_then_removes_the_owner() {
    let cp = control_plane().await;
    let (_, rs) = chain(&cp, None).await;
    delete(&cp, &format!("{DEPLOYMENTS}/web"), "Orphan").await;
    gone(&cp, &format!("{DEPLOYMENTS}/web")).await;

    let kept = send(&cp, get(&format!("{REPLICASETS}/web-1"))).await;
    assert_eq!(kept.status, StatusCode::OK);
    assert!(kept.body["metadata"].get("ownerReferences").is_none());
    assert!(kept.body["metadata"].get("deletionTimestamp").is_none());
    let pod = send(&cp, get(&format!("{PODS}/web-1-a"))).await;
    assert_eq!(pod.status, StatusCode::OK);
    assert_eq!(
        pod.body["metadata"]["ownerReferences"],
        json!([owner_ref(&rs, true)])
    );
}

#[tokio::test]
async fn a_dependent_with_a_live_owner_survives_and_loses_the_dangling_reference() {
    let cp = control_plane().await;
    let a = replica_set(&cp, "a", vec![]).await;
    let b = replica_set(&cp, "b", vec![]).await;
    // Only one reference may be the controller.
    let mut to_b = owner_ref(&b, true);
    to_b["controller"] = false.into();
    pod(&cp, "shared", vec![owner_ref(&a, false), to_b], &[]).await;
    delete(&cp, &format!("{REPLICASETS}/b"), "Background").await;

    let shared = format!("{PODS}/shared");
    eventually(PATIENCE, || async {
        send(&cp, get(&shared)).await.body["metadata"]["ownerReferences"]
            == json!([owner_ref(&a, false)])
    })
    .await;
    assert_eq!(status_of(&cp, &shared).await, StatusCode::OK);

    // Once the last owner goes, so does the pod.
    delete(&cp, &format!("{REPLICASETS}/a"), "Background").await;
    gone(&cp, &shared).await;
}

#[tokio::test]
async fn references_to_missing_or_other_namespace_owners_are_dangling() {
    let cp = control_plane().await;
    let deploy = create(&cp, DEPLOYMENTS, deployment("web", 1)).await;
    // A cluster-scoped owner is valid for a namespaced dependent.
    let node_owner = create(
        &cp,
        "/api/v1/nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
    )
    .await;
    pod(&cp, "of-node", vec![owner_ref(&node_owner, false)], &[]).await;
    let missing = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "ghost",
                         "uid": "00000000-0000-0000-0000-000000000000"});
    pod(&cp, "orphaned-at-birth", vec![missing], &[]).await;
    create(
        &cp,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}),
    )
    .await;
    // The uid is right, but a namespaced owner is only looked for in the dependent's namespace.
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "elsewhere", "ownerReferences": [owner_ref(&deploy, false)]}});
    create(&cp, "/api/v1/namespaces/other/configmaps", body).await;

    gone(&cp, &format!("{PODS}/orphaned-at-birth")).await;
    gone(&cp, "/api/v1/namespaces/other/configmaps/elsewhere").await;
    assert_eq!(
        status_of(&cp, &format!("{PODS}/of-node")).await,
        StatusCode::OK
    );
    delete(&cp, "/api/v1/nodes/n1", "Background").await;
    gone(&cp, &format!("{PODS}/of-node")).await;
}
