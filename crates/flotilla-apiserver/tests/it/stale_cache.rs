//! Writes that start from the watch cache's copy of an object (kube-apiserver's cached
//! existing object) while that copy lags behind the store: the store has the last word.
//!
//! Another writer (a second API server on the same store, here the store itself) changes an
//! object; before this server's cache has seen it, a patch or update arrives. The tests run on
//! one thread and the cache's feeder cannot run until the test awaits something that waits,
//! so each checks first that the cache really is behind.

use std::sync::Arc;

use bytes::Bytes;
use flotilla_apiserver::{Builder, Running};
use flotilla_store::{MemoryStore, Store};
use serde_json::{Value, json};

use crate::support::*;

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const KEY: &[u8] = b"/registry/core/configmaps/default/c";

async fn setup() -> (Running, Arc<dyn Store>, i64) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let cp = Builder::new(store.clone()).start().await.expect("starts");
    let created = send(
        &cp,
        json(
            "POST",
            CONFIGMAPS,
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "c", "labels": {"a": "1"}}, "data": {"k": "v"}}),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let revision = rv(&created.body);
    eventually(std::time::Duration::from_secs(5), || {
        let cached = cp.server.registry().cache().get(KEY);
        async move { cached.is_some_and(|c| c.revision == revision) }
    })
    .await;
    (cp, store, revision)
}

fn rv(object: &Value) -> i64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|rv| rv.parse().ok())
        .expect("resourceVersion")
}

/// Another writer's change, straight into the store: `edit` of the stored object. Returns
/// its revision, after checking the cache has not seen it.
async fn change_behind_the_cache(
    cp: &Running,
    store: &Arc<dyn Store>,
    edit: impl FnOnce(&mut Value),
) -> i64 {
    let current = store.get(KEY).await.expect("read").expect("stored");
    let mut object: Value = serde_json::from_slice(&current.value).expect("JSON");
    edit(&mut object);
    let written = store
        .update(
            Bytes::from_static(KEY),
            serde_json::to_vec(&object).expect("encode").into(),
            current.mod_revision,
        )
        .await
        .expect("written");
    let cached = cp.server.registry().cache().get(KEY).expect("cached");
    assert!(
        cached.revision < written.mod_revision,
        "the cache must still hold the older copy for this test to mean anything"
    );
    written.mod_revision
}

async fn stored(store: &Arc<dyn Store>) -> Value {
    let kv = store.get(KEY).await.expect("read").expect("stored");
    serde_json::from_slice(&kv.value).expect("JSON")
}

fn merge_patch(body: &Value) -> http::Request<axum::body::Body> {
    with_body(
        "PATCH",
        &format!("{CONFIGMAPS}/c"),
        "application/merge-patch+json",
        body.to_string(),
    )
}

#[tokio::test]
async fn a_patch_keeps_a_change_the_cache_has_not_seen() {
    let (cp, store, _) = setup().await;
    let theirs =
        change_behind_the_cache(&cp, &store, |o| o["metadata"]["labels"]["b"] = json!("2")).await;
    let reply = send(
        &cp,
        merge_patch(&json!({"metadata": {"labels": {"c": "3"}}})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body["metadata"]["labels"],
        json!({"a": "1", "b": "2", "c": "3"})
    );
    assert!(rv(&reply.body) > theirs);
    assert_eq!(
        stored(&store).await["metadata"]["labels"],
        json!({"a": "1", "b": "2", "c": "3"})
    );
}

#[tokio::test]
async fn a_patch_that_changes_nothing_in_the_cached_copy_still_writes_the_stores() {
    let (cp, store, _) = setup().await;
    // The store now says a=2; the cache still says a=1, which the patch asks for.
    let theirs =
        change_behind_the_cache(&cp, &store, |o| o["metadata"]["labels"]["a"] = json!("2")).await;
    let reply = send(
        &cp,
        merge_patch(&json!({"metadata": {"labels": {"a": "1"}}})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["metadata"]["labels"], json!({"a": "1"}));
    assert!(rv(&reply.body) > theirs, "written, not answered as a no-op");
    assert_eq!(
        stored(&store).await["metadata"]["labels"],
        json!({"a": "1"})
    );
}

#[tokio::test]
async fn a_patch_whose_precondition_is_the_stores_version_succeeds() {
    let (cp, store, _) = setup().await;
    let theirs = change_behind_the_cache(&cp, &store, |o| o["data"]["k"] = json!("w")).await;
    let reply = send(
        &cp,
        merge_patch(&json!({"metadata": {"resourceVersion": theirs.to_string(),
            "labels": {"c": "3"}}})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["data"], json!({"k": "w"}));
    assert_eq!(
        reply.body["metadata"]["labels"],
        json!({"a": "1", "c": "3"})
    );
}

#[tokio::test]
async fn a_patch_whose_precondition_is_the_cached_version_conflicts() {
    let (cp, store, cached) = setup().await;
    change_behind_the_cache(&cp, &store, |o| o["data"]["k"] = json!("w")).await;
    let reply = send(
        &cp,
        merge_patch(&json!({"metadata": {"resourceVersion": cached.to_string(),
            "labels": {"c": "3"}}})),
    )
    .await;
    assert_eq!(reply.status, 409, "{}", reply.body);
    assert_eq!(reply.body["reason"], "Conflict");
    assert_eq!(stored(&store).await["data"], json!({"k": "w"}));
}

#[tokio::test]
async fn an_update_from_the_version_the_cache_still_holds_conflicts() {
    let (cp, store, cached) = setup().await;
    change_behind_the_cache(&cp, &store, |o| o["data"]["k"] = json!("w")).await;
    // Read at `cached`, unchanged (as the cache holds it): not a no-op, a stale write.
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "resourceVersion": cached.to_string(), "labels": {"a": "1"}},
        "data": {"k": "v"}});
    let reply = send(&cp, json("PUT", &format!("{CONFIGMAPS}/c"), &body)).await;
    assert_eq!(reply.status, 409, "{}", reply.body);
    assert_eq!(stored(&store).await["data"], json!({"k": "w"}));
}

#[tokio::test]
async fn an_update_from_the_current_version_succeeds() {
    let (cp, store, cached) = setup().await;
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "resourceVersion": cached.to_string(), "labels": {"a": "1"}},
        "data": {"k": "x"}});
    let reply = send(&cp, json("PUT", &format!("{CONFIGMAPS}/c"), &body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(rv(&reply.body) > cached);
    assert_eq!(stored(&store).await["data"], json!({"k": "x"}));
}
