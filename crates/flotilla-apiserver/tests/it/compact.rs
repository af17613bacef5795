//! `Builder::compact_storage`: objects stored compressed against each other (what simulated
//! clusters use) are served exactly as plain storage serves them, through every read path:
//! get, list with label and field selectors, watches with a filter objects move in and out of,
//! write responses, deletes and garbage collection.

use std::sync::Arc;

use async_trait::async_trait;
use flotilla_apiserver::{Builder, Running};
use flotilla_store::{
    KeyRange, MemoryStore, RangeRequest, RangeResponse, Revision, Store, StoreError, StoreStatus,
    Txn, TxnResponse, WatchStream,
};
use serde_json::{Value, json};

use crate::support::*;
use crate::watch::{next, open};

const PODS: &str = "/api/v1/namespaces/default/pods";

async fn server(compact: bool) -> (Running, Arc<dyn Store>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let builder = Builder::new(store.clone());
    let builder = if compact {
        builder.compact_storage()
    } else {
        builder
    };
    (builder.start().await.expect("API server starts"), store)
}

/// The first byte of what the store holds for pod `name` (`{` for plain JSON).
async fn stored_first_byte(store: &Arc<dyn Store>, name: &str) -> u8 {
    let key = format!("/registry/core/pods/default/{name}");
    let kv = store.get(key.as_bytes()).await.expect("store read");
    kv.expect("stored").value[0]
}

fn pod(i: usize) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": format!("web-{i}"),
            "labels": {"app": if i.is_multiple_of(2) { "web" } else { "db" }, "pod-template-hash": "68bf9f694d"},
        },
        "spec": {
            "nodeName": format!("node-{}", i % 3),
            "containers": [{"name": "nginx", "image": "nginx:1.25"}],
        },
    })
}

/// The reply with what differs between two servers by construction (uids, times) blanked.
fn normalized(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, member) in map.iter_mut() {
                    match key.as_str() {
                        "uid" | "creationTimestamp" | "time" | "deletionTimestamp" => {
                            *member = json!("-")
                        }
                        _ => walk(member),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

/// One script of writes and reads; every reply and watch event, in order.
async fn script(cp: &Running) -> Vec<Value> {
    let mut seen = Vec::new();
    let mut record = |reply: Reply| {
        seen.push(json!({"status": reply.status.as_u16(), "body": normalized(reply.body)}));
    };
    for i in 0..24 {
        let reply = send(cp, json("POST", PODS, &pod(i))).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        record(reply);
    }
    let (status, mut running) = open(
        cp,
        &format!("{PODS}?watch=true&fieldSelector=status.phase%3DRunning"),
    )
    .await;
    assert_eq!(status, 200);
    let (status, mut web) = open(cp, &format!("{PODS}?watch=true&labelSelector=app%3Dweb")).await;
    assert_eq!(status, 200);
    let mut events = Vec::new();
    for _ in 0..12 {
        // The label watch starts with the twelve `web` pods.
        events.push(normalized(next(&mut web).await));
    }
    // Status writes move pods into the `Running` selection and out again.
    for (i, phase) in [(4, "Running"), (5, "Running"), (4, "Succeeded")] {
        let mut current = send(cp, get(&format!("{PODS}/web-{i}"))).await.body;
        current["status"] = json!({"phase": phase, "podIP": format!("10.0.0.{i}")});
        let reply = send(cp, json("PUT", &format!("{PODS}/web-{i}/status"), &current)).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        record(reply);
        events.push(normalized(next(&mut running).await));
    }
    // A merge patch of status alone (its spec goes through as the stored bytes) moves web-9 in;
    // the same patch again changes nothing.
    for _ in 0..2 {
        let reply = send(
            cp,
            with_body(
                "PATCH",
                &format!("{PODS}/web-9/status"),
                "application/merge-patch+json",
                json!({"status": {"phase": "Running", "podIP": "10.0.0.9"}}).to_string(),
            ),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["spec"]["containers"][0]["image"], "nginx:1.25");
        record(reply);
    }
    events.push(normalized(next(&mut running).await));
    // The `web` watch saw web-4's two status writes.
    for _ in 0..2 {
        events.push(normalized(next(&mut web).await));
    }
    // A label patch moves web-6 out of the `web` watch (a DELETED event) and web-7 into it.
    for (i, app) in [(6, "db"), (7, "web")] {
        let reply = send(
            cp,
            with_body(
                "PATCH",
                &format!("{PODS}/web-{i}"),
                "application/merge-patch+json",
                json!({"metadata": {"labels": {"app": app}}}).to_string(),
            ),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        record(reply);
        events.push(normalized(next(&mut web).await));
    }
    for uri in [
        format!("{PODS}/web-5"),
        format!("{PODS}/web-9"),
        format!("{PODS}?labelSelector=app%3Dweb"),
        format!("{PODS}?fieldSelector=spec.nodeName%3Dnode-1"),
        format!("{PODS}?fieldSelector=status.phase%3DRunning"),
        format!("{PODS}?limit=5"),
    ] {
        record(send(cp, get(&uri)).await);
    }
    record(send(cp, json("DELETE", &format!("{PODS}/web-8"), &json!({}))).await);
    events.push(normalized(next(&mut web).await));
    record(send(cp, get(&format!("{PODS}/web-8"))).await);
    seen.push(Value::Array(events));
    seen
}

#[tokio::test]
async fn compact_storage_serves_exactly_what_plain_storage_serves() {
    let (plain_server, plain_store) = server(false).await;
    let plain = script(&plain_server).await;
    let (compact_server, compact_store) = server(true).await;
    let compact = script(&compact_server).await;
    // The two servers did store differently.
    assert_eq!(stored_first_byte(&plain_store, "web-3").await, b'{');
    assert_eq!(stored_first_byte(&compact_store, "web-3").await, 0xFF);
    assert_eq!(plain.len(), compact.len());
    for (plain, compact) in plain.iter().zip(&compact) {
        assert_eq!(plain, compact);
    }
    // The script saw what it meant to: pods moving into and out of both selections.
    let events = compact.last().and_then(Value::as_array).expect("events");
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        &kinds[12..],
        [
            "ADDED", "ADDED", "DELETED", "ADDED", "MODIFIED", "MODIFIED", "DELETED", "ADDED",
            "DELETED"
        ]
    );
}

#[tokio::test]
async fn owners_and_dependents_in_compact_storage_are_collected() {
    let (cp, _) = server(true).await;
    let owner = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner"}}),
        ),
    )
    .await;
    assert_eq!(owner.status, 201);
    let mut dependent = pod(1);
    dependent["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
        "uid": owner.body["metadata"]["uid"],
    }]);
    assert_eq!(send(&cp, json("POST", PODS, &dependent)).await.status, 201);
    let reply = send(
        &cp,
        json(
            "DELETE",
            "/api/v1/namespaces/default/configmaps/owner",
            &json!({}),
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    eventually(std::time::Duration::from_secs(10), || async {
        send(&cp, get(&format!("{PODS}/web-1"))).await.status == 404
    })
    .await;
}

/// A store whose contents outlive the process (as redb's and etcd's do).
#[derive(Debug)]
struct Durable(MemoryStore);

#[async_trait]
impl Store for Durable {
    async fn status(&self) -> Result<StoreStatus, StoreError> {
        self.0.status().await
    }
    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, StoreError> {
        self.0.range(request).await
    }
    async fn txn(&self, txn: Txn) -> Result<TxnResponse, StoreError> {
        self.0.txn(txn).await
    }
    async fn watch(&self, range: KeyRange, after: Revision) -> Result<WatchStream, StoreError> {
        self.0.watch(range, after).await
    }
    async fn compact(&self, revision: Revision) -> Result<(), StoreError> {
        self.0.compact(revision).await
    }
}

#[tokio::test]
async fn compact_storage_is_refused_on_a_durable_store() {
    let store: Arc<dyn Store> = Arc::new(Durable(MemoryStore::new()));
    let error = Builder::new(store)
        .compact_storage()
        .start()
        .await
        .expect_err("a durable store cannot hold the compact form");
    assert!(
        error.message.contains("compact storage"),
        "{}",
        error.message
    );
}
