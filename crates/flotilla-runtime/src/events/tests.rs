//! The recorder against a small Events endpoint that records every request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::*;

/// (method, path, body) of each request.
type Requests = Arc<Mutex<Vec<(String, String, Value)>>>;

/// A client whose PATCHes answer 404 while `gone` is set (the Event expired).
fn client(requests: Requests, gone: Arc<AtomicBool>) -> Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let requests = requests.clone();
        let gone = gone.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await?.to_bytes();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let method = parts.method.to_string();
            requests
                .lock()
                .push((method.clone(), parts.uri.path().to_owned(), body.clone()));
            let (status, payload) = if method == "PATCH" && gone.load(Ordering::SeqCst) {
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "NotFound", "message": "gone", "code": 404});
                (404, status)
            } else if method == "POST" {
                (201, body)
            } else {
                let event = json!({"apiVersion": "v1", "kind": "Event",
                    "metadata": {"name": "x"}, "involvedObject": {}});
                (200, event)
            };
            let response = http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(
                    serde_json::to_vec(&payload).expect("json"),
                )))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
        }
    });
    Client::new(service, "default")
}

fn event(reason: &str, note: &str) -> Event {
    Event {
        type_: EventType::Normal,
        reason: reason.to_owned(),
        note: Some(note.to_owned()),
        action: "Test".to_owned(),
        secondary: None,
    }
}

fn deployment() -> ObjectReference {
    ObjectReference {
        api_version: Some("apps/v1".into()),
        kind: Some("Deployment".into()),
        namespace: Some("web".into()),
        name: Some("nginx".into()),
        uid: Some("u-1".into()),
        ..ObjectReference::default()
    }
}

#[tokio::test]
async fn writes_v1_events_and_counts_repeats() {
    let requests: Requests = Arc::default();
    let gone = Arc::new(AtomicBool::new(false));
    let recorder = Recorder::new(
        client(requests.clone(), gone.clone()),
        Reporter {
            controller: "binding-controller".into(),
            instance: None,
        },
    );
    let synced = event(
        "SyncWorkSucceed",
        "Sync work of web/nginx-deployment succeed.",
    );
    recorder
        .publish(&synced, &deployment())
        .await
        .expect("created");
    // A clone shares what was recorded: the repeat is a count, not a new Event.
    recorder
        .clone()
        .publish(&synced, &deployment())
        .await
        .expect("counted");
    recorder
        .publish(&event("AggregateStatusSucceed", "done"), &deployment())
        .await
        .expect("another reason is another Event");

    let seen = requests.lock().clone();
    let methods: Vec<(&str, &str)> = seen
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    let name = seen[0].2["metadata"]["name"].as_str().expect("a name");
    let patched = format!("/api/v1/namespaces/web/events/{name}");
    assert_eq!(
        methods,
        [
            ("POST", "/api/v1/namespaces/web/events"),
            ("PATCH", patched.as_str()),
            ("POST", "/api/v1/namespaces/web/events"),
        ]
    );
    let created = &seen[0].2;
    assert!(name.starts_with("nginx."), "{name}");
    assert!(
        u64::from_str_radix(&name["nginx.".len()..], 16).is_ok(),
        "client-go's <name>.<hex nanoseconds>: {name}"
    );
    assert_eq!(created["reason"], "SyncWorkSucceed");
    assert_eq!(
        created["message"],
        "Sync work of web/nginx-deployment succeed."
    );
    assert_eq!(created["type"], "Normal");
    assert_eq!(created["count"], 1);
    assert_eq!(created["source"]["component"], "binding-controller");
    assert_eq!(
        created["involvedObject"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "web",
            "name": "nginx", "uid": "u-1"})
    );
    assert_eq!(created["firstTimestamp"], created["lastTimestamp"]);
    assert_eq!(seen[1].2["count"], 2);
    assert!(seen[1].2["lastTimestamp"].is_string());

    // Expired in the meantime: recorded afresh.
    gone.store(true, Ordering::SeqCst);
    recorder
        .publish(&synced, &deployment())
        .await
        .expect("recreated");
    let seen = requests.lock().clone();
    let last: Vec<(&str, &str)> = seen[3..]
        .iter()
        .map(|(m, p, _)| (m.as_str(), p.as_str()))
        .collect();
    assert_eq!(
        last,
        [
            ("PATCH", patched.as_str()),
            ("POST", "/api/v1/namespaces/web/events")
        ]
    );
    assert_eq!(seen[4].2["count"], 1);
}

#[tokio::test]
async fn events_about_cluster_scoped_objects_go_to_default() {
    let requests: Requests = Arc::default();
    let recorder = Recorder::new(
        client(requests.clone(), Arc::default()),
        Reporter {
            controller: "cluster-resource-binding-controller".into(),
            instance: None,
        },
    );
    let reference = ObjectReference {
        api_version: Some("work.karmada.io/v1alpha2".into()),
        kind: Some("ClusterResourceBinding".into()),
        name: Some("admin-clusterrole".into()),
        ..ObjectReference::default()
    };
    recorder
        .publish(
            &Event {
                type_: EventType::Warning,
                ..event("SyncWorkFailed", "no")
            },
            &reference,
        )
        .await
        .expect("created");
    let seen = requests.lock().clone();
    assert_eq!(seen[0].1, "/api/v1/namespaces/default/events");
    assert_eq!(seen[0].2["type"], "Warning");
    assert_eq!(seen[0].2["metadata"]["namespace"], "default");
}
