//! Karmada's resource deletion protection: an object labelled
//! `resourcetemplate.karmada.io/deletion-protected: Always` cannot be deleted, by anyone, until
//! the label goes or changes (Karmada's e2e `resource_deletion_protection_test.go`).

use std::sync::Arc;
use std::time::Duration;

use flotilla_apiserver::{Builder, Running};
use flotilla_store::{MemoryStore, Store};
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const LABEL: &str = "resourcetemplate.karmada.io/deletion-protected";
const DENIED: &str = "admission webhook \"resourcedeletionprotection.karmada.io\" denied the request: This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected";

async fn create(cp: &Running, collection: &str, body: Value) {
    let reply = send(cp, json("POST", collection, &body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

async fn label(cp: &Running, uri: &str, value: Value) {
    let reply = send(
        cp,
        merge(uri, json!({"metadata": {"labels": {LABEL: value}}})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

async fn delete(cp: &Running, uri: &str) -> Reply {
    send(cp, json("DELETE", uri, &json!({}))).await
}

#[tokio::test]
async fn a_protected_object_is_refused_until_the_label_goes() {
    let cp = control_plane().await;
    create(
        &cp,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "shop"}}),
    )
    .await;
    let collection = "/apis/apps/v1/namespaces/shop/deployments";
    let uri = "/apis/apps/v1/namespaces/shop/deployments/web";
    create(&cp, collection, deployment("web", 1)).await;

    label(&cp, uri, json!("Always")).await;
    let refused = delete(&cp, uri).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Forbidden");
    assert_eq!(refused.body["message"], DENIED);
    assert_eq!(
        send(&cp, get(uri)).await.status,
        StatusCode::OK,
        "still there"
    );
    // Deleting the collection refuses it too.
    let collection_delete = delete(&cp, collection).await;
    assert_eq!(
        collection_delete.status,
        StatusCode::FORBIDDEN,
        "{}",
        collection_delete.body
    );
    assert_eq!(
        send(&cp, get(uri)).await.status,
        StatusCode::OK,
        "still there"
    );

    // Only `Always` protects.
    label(&cp, uri, json!("Never")).await;
    assert_eq!(delete(&cp, uri).await.status, StatusCode::OK);
    assert_eq!(send(&cp, get(uri)).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_namespace_holding_a_protected_object_stays_terminating() {
    let cp = control_plane().await;
    create(
        &cp,
        "/api/v1/namespaces",
        json!({"metadata": {"name": "kept"}}),
    )
    .await;
    let uri = "/apis/apps/v1/namespaces/kept/deployments/web";
    create(
        &cp,
        "/apis/apps/v1/namespaces/kept/deployments",
        deployment("web", 1),
    )
    .await;

    // A protected namespace is refused at once.
    label(&cp, "/api/v1/namespaces/kept", json!("Always")).await;
    let refused = delete(&cp, "/api/v1/namespaces/kept").await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(refused.body["message"], DENIED);

    // An unprotected namespace holding a protected Deployment: accepted, but it cannot empty.
    label(&cp, "/api/v1/namespaces/kept", Value::Null).await;
    label(&cp, uri, json!("Always")).await;
    // Accepted (202: not gone yet), as kube-apiserver answers a delete left to finalizers.
    assert_eq!(
        delete(&cp, "/api/v1/namespaces/kept").await.status,
        StatusCode::ACCEPTED
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let namespace = send(&cp, get("/api/v1/namespaces/kept")).await;
    assert_eq!(namespace.status, StatusCode::OK, "the namespace stays");
    assert_eq!(namespace.body["status"]["phase"], "Terminating");
    assert_eq!(
        send(&cp, get(uri)).await.status,
        StatusCode::OK,
        "so does the Deployment"
    );

    // The label goes: the namespace empties and is gone.
    label(&cp, uri, Value::Null).await;
    eventually(Duration::from_secs(20), || async {
        send(&cp, get("/api/v1/namespaces/kept")).await.status == StatusCode::NOT_FOUND
    })
    .await;
}

#[tokio::test]
async fn a_protected_cluster_is_forbidden_by_its_registry() {
    let cp = control_plane().await;
    create(
        &cp,
        "/apis/cluster.karmada.io/v1alpha1/clusters",
        json!({"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "member1", "labels": {LABEL: "Always"}},
            "spec": {"syncMode": "Push", "apiEndpoint": "https://member1.example:6443"}}),
    )
    .await;
    let refused = delete(&cp, "/apis/cluster.karmada.io/v1alpha1/clusters/member1").await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(
        refused.body["message"],
        "clusters.cluster.karmada.io \"member1\" is forbidden: This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected"
    );
}

#[tokio::test]
async fn a_member_api_server_does_not_protect() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let member = Builder::new(store)
        .without_deletion_protection()
        .start()
        .await
        .expect("API server starts");
    let mut protected = deployment("web", 1);
    protected["metadata"]["labels"] = json!({LABEL: "Always"});
    create(
        &member,
        "/apis/apps/v1/namespaces/default/deployments",
        protected,
    )
    .await;
    let reply = delete(&member, "/apis/apps/v1/namespaces/default/deployments/web").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}
