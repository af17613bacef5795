//! Watch streams over raw HTTP: initial state, resume from a version, selectors, 410 in-stream.

use std::time::Duration;

use futures::StreamExt;
use http::StatusCode;
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::support::*;

/// Opens a watch and returns a stream of parsed events.
pub(crate) async fn open(
    cp: &flotilla_apiserver::Running,
    uri: &str,
) -> (StatusCode, futures::stream::BoxStream<'static, Value>) {
    let mut request = get(uri);
    request
        .extensions_mut()
        .insert(flotilla_apiserver::Identity(Some(admin())));
    let response = cp
        .server
        .clone()
        .router()
        .oneshot(request)
        .await
        .expect("router");
    let status = response.status();
    let mut body = response.into_body().into_data_stream();
    let stream = async_stream_lines(move |tx| async move {
        let mut buffer = Vec::new();
        while let Some(Ok(chunk)) = body.next().await {
            buffer.extend_from_slice(&chunk);
            while let Some(pos) = buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buffer.drain(..=pos).collect();
                let value: Value =
                    serde_json::from_slice(&line).expect("each line is one JSON event");
                if tx.send(value).await.is_err() {
                    return;
                }
            }
        }
    });
    (status, stream)
}

fn async_stream_lines<F, Fut>(f: F) -> futures::stream::BoxStream<'static, Value>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Value>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(f(tx));
    tokio_stream::wrappers::ReceiverStream::new(rx).boxed()
}

pub(crate) async fn next(stream: &mut futures::stream::BoxStream<'static, Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("an event within 10 s")
        .expect("the stream is open")
}

#[tokio::test]
async fn watch_sends_initial_state_then_live_changes() {
    let cp = control_plane().await;
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "a"}}),
        ),
    )
    .await;
    let (status, mut events) = open(&cp, "/api/v1/namespaces/default/configmaps?watch=true").await;
    assert_eq!(status, StatusCode::OK);
    let first = next(&mut events).await;
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["metadata"]["name"], "a");
    assert_eq!(first["object"]["kind"], "ConfigMap");
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "b"}}),
        ),
    )
    .await;
    let added = next(&mut events).await;
    assert_eq!(
        (
            added["type"].as_str(),
            added["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("b"))
    );
    send(
        &cp,
        with_body(
            "DELETE",
            "/api/v1/namespaces/default/configmaps/a",
            "application/json",
            "",
        ),
    )
    .await;
    let deleted = next(&mut events).await;
    assert_eq!(deleted["type"], "DELETED");
    assert_eq!(deleted["object"]["metadata"]["name"], "a");
}

#[tokio::test]
async fn watch_from_a_resource_version_and_label_selector() {
    let cp = control_plane().await;
    let created = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "a", "labels": {"app": "x"}}}),
        ),
    )
    .await;
    let rv = created.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    let (_, mut events) = open(&cp, &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&labelSelector=app%3Dx&allowWatchBookmarks=true")).await;
    // Relabel out of the selection: the watcher sees a DELETED; back in: ADDED.
    send(
        &cp,
        with_body(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/a",
            "application/merge-patch+json",
            r#"{"metadata":{"labels":{"app":"y"}}}"#,
        ),
    )
    .await;
    let out = next(&mut events).await;
    assert_eq!(out["type"], "DELETED");
    send(
        &cp,
        with_body(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/a",
            "application/merge-patch+json",
            r#"{"metadata":{"labels":{"app":"x"}}}"#,
        ),
    )
    .await;
    let back = next(&mut events).await;
    assert_eq!(back["type"], "ADDED");
    assert!(
        back["object"]["metadata"]["resourceVersion"]
            .as_str()
            .expect("rv")
            .parse::<i64>()
            .expect("n")
            > rv.parse::<i64>().expect("n")
    );
}

#[tokio::test]
async fn too_old_resource_version_is_an_in_stream_410() {
    let store: std::sync::Arc<dyn flotilla_store::Store> =
        std::sync::Arc::new(flotilla_store::MemoryStore::new());
    let cp = flotilla_apiserver::Builder::new(store)
        .cache_window(3)
        .start()
        .await
        .expect("start");
    for i in 0..10 {
        send(
            &cp,
            json(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                &json!({"metadata": {"name": format!("c{i}")}}),
            ),
        )
        .await;
    }
    let (status, mut events) = open(
        &cp,
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "expired watches still answer 200");
    let error = next(&mut events).await;
    assert_eq!(error["type"], "ERROR");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
}

#[tokio::test(start_paused = true)]
async fn changes_older_than_the_window_age_expire_resumes_from_before_them() {
    let store: std::sync::Arc<dyn flotilla_store::Store> =
        std::sync::Arc::new(flotilla_store::MemoryStore::new());
    let cp = flotilla_apiserver::Builder::new(store)
        .cache_window(1_000)
        .cache_window_age(std::time::Duration::from_secs(10))
        .start()
        .await
        .expect("start");
    let create = |name: &str| {
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": name}}),
        )
    };
    let first = send(&cp, create("early")).await;
    let early = first.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    // Within the age, a watch resumes from the first change.
    let (_, mut events) = open(
        &cp,
        &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={early}"),
    )
    .await;
    send(&cp, create("second")).await;
    let event = next(&mut events).await;
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "second");
    drop(events);

    // 11 s later, the next write pushes both earlier changes out of the window.
    tokio::time::advance(std::time::Duration::from_secs(11)).await;
    send(&cp, create("late")).await;
    // The objects themselves stay listed (a consistent list also waits for the cache to apply
    // the write).
    let list = send(&cp, get("/api/v1/namespaces/default/configmaps")).await;
    assert_eq!(list.body["items"].as_array().map(Vec::len), Some(3));
    let (_, mut events) = open(
        &cp,
        &format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={early}"),
    )
    .await;
    let error = next(&mut events).await;
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["code"], 410);
}

#[tokio::test]
async fn send_initial_events_ends_with_a_bookmark() {
    let cp = control_plane().await;
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "a"}}),
        ),
    )
    .await;
    let (_, mut events) = open(&cp, "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true").await;
    assert_eq!(next(&mut events).await["type"], "ADDED");
    let bookmark = next(&mut events).await;
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(
        bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
}

/// A watch that times out ends with a bookmark at the newest version it handled (changes the
/// watch does not show included, other writers' too), so that the client resumes from there and not from its last
/// event, which may have left the window meanwhile.
#[tokio::test]
async fn a_watch_that_times_out_ends_with_a_bookmark_at_the_newest_version() {
    let cp = control_plane().await;
    let (_, mut events) = open(
        &cp,
        "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=1",
    )
    .await;
    // A change elsewhere: not shown to this watch, but its version is the newest.
    let other = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/kube-system/configmaps",
            &json!({"metadata": {"name": "elsewhere"}}),
        ),
    )
    .await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
    let newest = other.body["metadata"]["resourceVersion"].clone();
    let bookmark = next(&mut events).await;
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    let version = |v: &Value| v.as_str().and_then(|v| v.parse::<i64>().ok());
    let at = version(&bookmark["object"]["metadata"]["resourceVersion"]).expect("a version");
    assert!(
        at >= version(&newest).expect("a version"),
        "{bookmark} is at least {newest}"
    );
    assert!(
        tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("the stream ends")
            .is_none()
    );
    // Without bookmarks allowed, it just ends.
    let (_, mut events) = open(
        &cp,
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
    )
    .await;
    assert!(
        tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .expect("the stream ends")
            .is_none()
    );
}

/// A control plane whose watchers may lag only `buffer` changes behind the live feed and whose
/// window keeps `window` recent changes.
async fn tight_control_plane(buffer: usize, window: usize) -> flotilla_apiserver::Running {
    let store: std::sync::Arc<dyn flotilla_store::Store> =
        std::sync::Arc::new(flotilla_store::MemoryStore::new());
    flotilla_apiserver::Builder::new(store)
        .watch_buffer(buffer)
        .cache_window(window)
        .start()
        .await
        .expect("API server starts")
}

async fn create_configmaps(cp: &flotilla_apiserver::Running, count: usize) {
    for i in 0..count {
        let reply = send(
            cp,
            json(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                &json!({"metadata": {"name": format!("cm-{i:04}")}}),
            ),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    }
}

#[tokio::test]
async fn a_slow_watcher_catches_up_from_the_window_without_losing_events() {
    // The watcher reads nothing while 400 changes happen: far more than the 4 it may lag
    // behind the live feed, fewer than the window keeps.
    let cp = tight_control_plane(4, 100_000).await;
    let (status, mut events) = open(&cp, "/api/v1/namespaces/default/configmaps?watch=true").await;
    assert_eq!(status, StatusCode::OK);
    create_configmaps(&cp, 400).await;
    for i in 0..400 {
        let event = next(&mut events).await;
        assert_eq!(event["type"], "ADDED", "event {i}: {event}");
        assert_eq!(event["object"]["metadata"]["name"], format!("cm-{i:04}"));
    }
    // And it is live again afterwards.
    create_configmaps_named(&cp, "after").await;
    let event = next(&mut events).await;
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["metadata"]["name"], "after");
}

#[tokio::test]
async fn a_watcher_that_fell_out_of_the_window_gets_410() {
    let cp = tight_control_plane(4, 16).await;
    let (status, mut events) = open(&cp, "/api/v1/namespaces/default/configmaps?watch=true").await;
    assert_eq!(status, StatusCode::OK);
    create_configmaps(&cp, 400).await;
    let mut names = Vec::new();
    let error = loop {
        let event = next(&mut events).await;
        if event["type"] != "ADDED" {
            break event;
        }
        names.push(event["object"]["metadata"]["name"].clone());
    };
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    // What it did get before the 410 is a gap-free prefix.
    for (i, name) in names.iter().enumerate() {
        assert_eq!(*name, format!("cm-{i:04}"));
    }
    assert!(names.len() < 400);
}

async fn create_configmaps_named(cp: &flotilla_apiserver::Running, name: &str) {
    let reply = send(
        cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": name}}),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
}

#[tokio::test]
async fn the_window_keeps_at_most_its_bytes_of_changes() {
    // Room for a few ConfigMaps' changes, not for ten: a watch from the first is expired, a
    // watch from the last still resumes and sees the next.
    let store: std::sync::Arc<dyn flotilla_store::Store> =
        std::sync::Arc::new(flotilla_store::MemoryStore::new());
    let cp = flotilla_apiserver::Builder::new(store)
        .cache_window(100_000)
        .cache_window_bytes(50_000)
        .start()
        .await
        .expect("start");
    let mut versions = Vec::new();
    for i in 0..10 {
        let reply = send(
            &cp,
            json(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                &json!({"metadata": {"name": format!("c{i}")}, "data": {"k": "v".repeat(10_000)}}),
            ),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
        versions.push(
            reply.body["metadata"]["resourceVersion"]
                .as_str()
                .expect("a resourceVersion")
                .to_owned(),
        );
    }
    let (_, mut events) = open(
        &cp,
        &format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={}",
            versions[0]
        ),
    )
    .await;
    let error = next(&mut events).await;
    assert_eq!(error["type"], "ERROR", "{error}");
    assert_eq!(error["object"]["code"], 410);
    let (_, mut events) = open(
        &cp,
        &format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={}",
            versions[9]
        ),
    )
    .await;
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "c10"}}),
        ),
    )
    .await;
    let event = next(&mut events).await;
    assert_eq!(event["type"], "ADDED", "{event}");
    assert_eq!(event["object"]["metadata"]["name"], "c10");
}
