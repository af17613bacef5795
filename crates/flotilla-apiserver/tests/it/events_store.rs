//! Events have no watch cache (as in kube-apiserver): lists, watches from the beginning and
//! namespace deletion read them from the store, and a restarted server sees the Events written
//! before it.

use serde_json::json;

use crate::events::{CORE, V1, core_event, names};
use crate::support::*;
use crate::watch::{next, open};

/// Names of a list's items, sorted as served.
fn item_names(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.body);
    names(&reply.body)
}

#[tokio::test]
async fn events_are_served_from_the_store_not_the_watch_cache() {
    // Events written before a restart: the new server's watch cache never holds them, yet
    // lists, watches, selectors, paging and namespace deletion all see them.
    let store: std::sync::Arc<dyn flotilla_store::Store> =
        std::sync::Arc::new(flotilla_store::MemoryStore::new());
    {
        let before = flotilla_apiserver::Builder::new(store.clone())
            .start()
            .await
            .expect("API server starts");
        for (name, about) in [("a", "web"), ("b", "db")] {
            let reply = send(&before, json("POST", CORE, &core_event(name, about))).await;
            assert_eq!(reply.status, 201, "{}", reply.body);
        }
        let team = json!({"metadata": {"name": "team"}});
        let reply = send(&before, json("POST", "/api/v1/namespaces", &team)).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let mut in_team = core_event("c", "job");
        in_team["involvedObject"]["namespace"] = json!("team");
        let reply = send(
            &before,
            json("POST", "/api/v1/namespaces/team/events", &in_team),
        )
        .await;
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let cp = flotilla_apiserver::Builder::new(store.clone())
        .start()
        .await
        .expect("API server restarts");
    let cache = cp.server.registry().cache();
    assert!(
        cache.list(b"/registry/core/events/", None).0.is_empty(),
        "the watch cache keeps no Events"
    );
    assert!(
        !cache.list(b"/registry/core/namespaces/", None).0.is_empty(),
        "other resources are cached"
    );

    // Lists (both views, selected, paged, at the list's own version).
    let listed = send(&cp, get(CORE)).await;
    assert_eq!(item_names(&listed), ["a", "b"]);
    let rv = listed.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("a list's resourceVersion")
        .to_owned();
    let all = send(&cp, get("/api/v1/events")).await;
    assert_eq!(item_names(&all), ["a", "b", "c"]);
    let selected = send(&cp, get(&format!("{V1}?fieldSelector=regarding.name%3Ddb"))).await;
    assert_eq!(item_names(&selected), ["b"]);
    let page = send(&cp, get(&format!("{CORE}?limit=1"))).await;
    assert_eq!(item_names(&page), ["a"]);
    let token = page.body["metadata"]["continue"]
        .as_str()
        .expect("a continue token")
        .to_owned();
    let rest = send(&cp, get(&format!("{CORE}?limit=1&continue={token}"))).await;
    assert_eq!(item_names(&rest), ["b"]);
    let not_older = send(
        &cp,
        get(&format!(
            "{CORE}?resourceVersion={rv}&resourceVersionMatch=NotOlderThan"
        )),
    )
    .await;
    assert_eq!(item_names(&not_older), ["a", "b"]);
    let future = send(&cp, get(&format!("{CORE}?resourceVersion=999999"))).await;
    assert_eq!(future.status, 504, "{}", future.body);

    // A watch from the start sends the stored Events, then live changes.
    let (status, mut from_start) = open(&cp, &format!("{CORE}?watch=true")).await;
    assert_eq!(status, 200);
    for name in ["a", "b"] {
        let added = next(&mut from_start).await;
        assert_eq!(added["type"], "ADDED");
        assert_eq!(added["object"]["metadata"]["name"], name);
    }
    // A selected watch resuming at the list's version: an Event leaving the selection is
    // deleted for it, and added when it comes back (the previous state comes from the store).
    let (_, mut selected) = open(
        &cp,
        &format!("{CORE}?watch=true&resourceVersion={rv}&fieldSelector=reason%3DScalingReplicaSet"),
    )
    .await;
    let patch = |reason: &str| {
        with_body(
            "PATCH",
            &format!("{CORE}/b"),
            "application/merge-patch+json",
            json!({"reason": reason}).to_string(),
        )
    };
    let reply = send(&cp, patch("Killing")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let left = next(&mut selected).await;
    assert_eq!(left["type"], "DELETED", "{left}");
    assert_eq!(left["object"]["metadata"]["name"], "b");
    let modified = next(&mut from_start).await;
    assert_eq!(modified["type"], "MODIFIED", "{modified}");
    assert_eq!(modified["object"]["reason"], "Killing");
    let reply = send(&cp, patch("ScalingReplicaSet")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let back = next(&mut selected).await;
    assert_eq!(back["type"], "ADDED", "{back}");
    let reply = send(&cp, json("DELETE", &format!("{CORE}/a"), &json!({}))).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let deleted = loop {
        let event = next(&mut from_start).await;
        if event["type"] == "DELETED" {
            break event;
        }
    };
    assert_eq!(deleted["object"]["metadata"]["name"], "a");

    // Deleting a namespace deletes its stored Events before the namespace goes.
    let reply = send(&cp, json("DELETE", "/api/v1/namespaces/team", &json!({}))).await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    eventually(std::time::Duration::from_secs(10), || async {
        send(&cp, get("/api/v1/namespaces/team")).await.status == 404
    })
    .await;
    let key = bytes::Bytes::from_static(b"/registry/core/events/team/c");
    assert!(store.get(&key).await.expect("store read").is_none());
}
