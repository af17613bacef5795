use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use parking_lot::Mutex;
use serde_json::Value;

use super::*;

/// What the fake API server received: method, path and JSON body.
type Requests = Arc<Mutex<Vec<(String, String, Value)>>>;

/// A client whose server answers every write with the body it was sent.
fn client(requests: Requests) -> kube::Client {
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let requests = requests.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect().await?.to_bytes();
            let value: Value = serde_json::from_slice(&body)?;
            requests.lock().push((
                parts.method.to_string(),
                parts.uri.path().to_owned(),
                value.clone(),
            ));
            let status = if parts.method == http::Method::POST {
                201
            } else {
                200
            };
            let response = http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(serde_json::to_vec(&value)?)))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
        }
    });
    kube::Client::new(service, "default")
}

fn recorder(requests: &Requests) -> Recorder {
    Recorder::new(
        client(requests.clone()),
        Reporter {
            controller: "karmada-scheduler".into(),
            instance: None,
        },
    )
}

fn binding(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("work.karmada.io/v1alpha2".into()),
        kind: Some("ResourceBinding".into()),
        namespace: Some("apps".into()),
        name: Some(name.into()),
        uid: Some(format!("uid-{name}")),
        ..ObjectReference::default()
    }
}

fn scheduled(note: &str) -> Event {
    Event {
        type_: EventType::Normal,
        reason: "ScheduleBindingSucceed".into(),
        note: Some(note.into()),
        action: "Schedule".into(),
        secondary: None,
    }
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).expect("valid time")
}

#[tokio::test]
async fn a_first_event_is_created_as_kube_runtime_names_and_fills_it() {
    let requests = Requests::default();
    let recorder = recorder(&requests);
    recorder
        .publish_at(&scheduled("Result: {m1:2}"), &binding("web"), at(0))
        .await
        .expect("published");
    let requests = requests.lock();
    let [(method, path, body)] = requests.as_slice() else {
        panic!("one request expected, got {requests:?}");
    };
    assert_eq!(method, "POST");
    assert_eq!(path, "/apis/events.k8s.io/v1/namespaces/apps/events");
    assert_eq!(
        body["metadata"]["name"],
        format!("web.{:x}", at(0).as_nanosecond())
    );
    assert_eq!(body["metadata"]["namespace"], "apps");
    assert_eq!(body["reason"], "ScheduleBindingSucceed");
    assert_eq!(body["note"], "Result: {m1:2}");
    assert_eq!(body["action"], "Schedule");
    assert_eq!(body["type"], "Normal");
    assert_eq!(body["reportingController"], "karmada-scheduler");
    assert_eq!(body["reportingInstance"], "karmada-scheduler");
    assert_eq!(body["regarding"]["name"], "web");
    assert_eq!(body["regarding"]["uid"], "uid-web");
    assert!(body.get("series").is_none());
}

#[tokio::test]
async fn a_repeat_within_the_window_counts_in_the_series_of_the_first() {
    let requests = Requests::default();
    let recorder = recorder(&requests);
    recorder
        .publish_at(&scheduled("first"), &binding("web"), at(0))
        .await
        .expect("published");
    recorder
        .publish_at(&scheduled("second"), &binding("web"), at(60))
        .await
        .expect("published");
    recorder
        .publish_at(&scheduled("third"), &binding("web"), at(400))
        .await
        .expect("published");
    let requests = requests.lock();
    let name = format!("web.{:x}", at(0).as_nanosecond());
    assert_eq!(requests.len(), 3);
    for (i, (method, path, body)) in requests[1..].iter().enumerate() {
        assert_eq!(method, "PATCH");
        assert_eq!(
            path,
            &format!("/apis/events.k8s.io/v1/namespaces/apps/events/{name}")
        );
        assert_eq!(body["series"]["count"], i as i64 + 2);
        // kube-runtime keeps the first event's text.
        assert_eq!(body["note"], "first");
    }
    // The third came 340 s after the second: the series, not the first event, keeps it alive.
    assert_eq!(
        requests[2].2["series"]["lastObservedTime"],
        serde_json::to_value(MicroTime(at(400))).expect("time")
    );
}

#[tokio::test]
async fn other_objects_reasons_and_expired_events_start_new_events() {
    let requests = Requests::default();
    let recorder = recorder(&requests);
    let failed = Event {
        type_: EventType::Warning,
        reason: "ScheduleBindingFailed".into(),
        ..scheduled("no fit")
    };
    for (event, object, time) in [
        (scheduled("a"), "web", 0),
        (scheduled("a"), "api", 1),
        (failed, "web", 2),
        // Six minutes after the first `web` success: expired, although nothing swept it yet.
        (scheduled("b"), "web", 360),
    ] {
        recorder
            .publish_at(&event, &binding(object), at(time))
            .await
            .expect("published");
    }
    let requests = requests.lock();
    let methods: Vec<&str> = requests.iter().map(|(m, _, _)| m.as_str()).collect();
    assert_eq!(methods, ["POST", "POST", "POST", "POST"]);
    assert_eq!(requests[3].2["note"], "b");
}

#[tokio::test]
async fn cluster_scoped_objects_get_their_events_in_default() {
    let requests = Requests::default();
    let recorder = recorder(&requests);
    let reference = ObjectReference {
        namespace: None,
        kind: Some("ClusterResourceBinding".into()),
        ..binding("everywhere")
    };
    recorder
        .publish_at(&scheduled("x"), &reference, at(0))
        .await
        .expect("published");
    let requests = requests.lock();
    assert_eq!(
        requests[0].1,
        "/apis/events.k8s.io/v1/namespaces/default/events"
    );
    assert!(requests[0].2["metadata"].get("namespace").is_none());
}

#[tokio::test]
async fn expired_events_are_forgotten_by_the_periodic_sweep() {
    let requests = Requests::default();
    let recorder = recorder(&requests);
    for i in 0..100 {
        recorder
            .publish_at(&scheduled("a"), &binding(&format!("b{i}")), at(i))
            .await
            .expect("published");
    }
    assert_eq!(recorder.remembered(), 100);
    // 400 s later the first 41 (published at 0..=40 s) are older than six minutes.
    recorder
        .publish_at(&scheduled("a"), &binding("late"), at(400))
        .await
        .expect("published");
    assert_eq!(recorder.remembered(), 100 - 41 + 1);
}
