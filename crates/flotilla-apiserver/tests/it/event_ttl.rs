//! Events expire a TTL after they were last written (kube-apiserver's `--event-ttl`); nothing
//! else does.

use std::sync::Arc;
use std::time::Duration;

use flotilla_apiserver::{Builder, Clock, Running};
use flotilla_store::{MemoryStore, Store};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::support::{eventually, get, json as json_request, send, with_body};

const PATIENCE: Duration = Duration::from_secs(10);
const CORE: &str = "/api/v1/namespaces/default/events";
const V1: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

/// A clock the test moves by hand.
#[derive(Debug)]
struct ManualClock(Mutex<jiff::Timestamp>);

impl Clock for ManualClock {
    fn now(&self) -> jiff::Timestamp {
        *self.0.lock()
    }
}

impl ManualClock {
    fn advance_minutes(&self, minutes: i64) {
        let mut now = self.0.lock();
        *now = now
            .checked_add(jiff::SignedDuration::from_mins(minutes))
            .expect("in range");
    }
}

async fn control_plane(ttl: Duration) -> (Running, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock(Mutex::new(
        "2026-01-01T00:00:00Z".parse().expect("timestamp"),
    )));
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let running = Builder::new(store)
        .clock(clock.clone())
        .event_ttl(ttl)
        .start()
        .await
        .expect("API server starts");
    (running, clock)
}

fn core_event(name: &str, at: &str) -> Value {
    json!({
        "metadata": {"name": name},
        "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default"},
        "reason": "ScalingReplicaSet", "message": "Scaled up web", "type": "Normal",
        "source": {"component": "deployment-controller"},
        "firstTimestamp": at, "lastTimestamp": at, "count": 1,
    })
}

async fn create(cp: &Running, uri: &str, body: &Value) {
    let reply = send(cp, json_request("POST", uri, body)).await;
    assert_eq!(reply.status, 201, "{}", reply.body);
}

async fn event_names(cp: &Running) -> Vec<String> {
    let reply = send(cp, get(CORE)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test]
async fn events_expire_a_ttl_after_their_last_write_and_nothing_else_does() {
    let (cp, clock) = control_plane(Duration::from_secs(3600)).await;
    create(&cp, CORE, &core_event("old", "2026-01-01T00:00:00Z")).await;
    create(&cp, CORE, &core_event("renewed", "2026-01-01T00:00:00Z")).await;
    let v1 = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "scheduled"},
        "regarding": {"kind": "Pod", "name": "web-1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.io/scheduler",
        "reportingInstance": "scheduler-1", "action": "Binding", "reason": "Scheduled",
        "type": "Normal", "note": "Assigned web-1",
    });
    create(&cp, V1, &v1).await;
    let config_map = json!({"metadata": {"name": "keep"}, "data": {"a": "b"}});
    create(&cp, "/api/v1/namespaces/default/configmaps", &config_map).await;

    // Half an hour later `renewed` is counted again and `young` is recorded.
    clock.advance_minutes(30);
    let recount = json!({"lastTimestamp": "2026-01-01T00:30:00Z", "count": 2});
    let reply = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{CORE}/renewed"),
            "application/merge-patch+json",
            recount.to_string(),
        ),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    create(&cp, CORE, &core_event("young", "2026-01-01T00:30:00Z")).await;
    assert_eq!(
        event_names(&cp).await,
        ["old", "renewed", "scheduled", "young"]
    );

    // An hour and a minute after the start, the Events not written since are gone (through
    // both views), the others stay.
    clock.advance_minutes(31);
    eventually(PATIENCE, || async {
        event_names(&cp).await == ["renewed", "young"]
    })
    .await;
    let gone = send(&cp, get(&format!("{V1}/scheduled"))).await;
    assert_eq!(gone.status, 404, "{}", gone.body);

    // Another half hour: every Event is gone; the ConfigMap and the namespaces are not.
    clock.advance_minutes(30);
    eventually(PATIENCE, || async { event_names(&cp).await.is_empty() }).await;
    let kept = send(&cp, get("/api/v1/namespaces/default/configmaps/keep")).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    let default = send(&cp, get("/api/v1/namespaces/default")).await;
    assert_eq!(default.status, 200, "{}", default.body);
}

#[tokio::test]
async fn many_expired_events_go_in_batches() {
    let (cp, clock) = control_plane(Duration::from_secs(60)).await;
    // More than one transaction's worth (`events::ttl::BATCH`).
    for i in 0..250 {
        create(
            &cp,
            CORE,
            &core_event(&format!("e{i:03}"), "2026-01-01T00:00:00Z"),
        )
        .await;
    }
    clock.advance_minutes(2);
    eventually(PATIENCE, || async { event_names(&cp).await.is_empty() }).await;
}

#[tokio::test]
async fn events_written_before_a_restart_still_expire() {
    // The expiry index is rebuilt from the store (the watch cache keeps no Events).
    let clock = Arc::new(ManualClock(Mutex::new(
        "2026-01-01T00:00:00Z".parse().expect("timestamp"),
    )));
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let start = || {
        Builder::new(store.clone())
            .clock(clock.clone())
            .event_ttl(Duration::from_secs(3600))
            .start()
    };
    {
        let before = start().await.expect("API server starts");
        create(&before, CORE, &core_event("old", "2026-01-01T00:00:00Z")).await;
    }
    clock.advance_minutes(30);
    let cp = start().await.expect("API server restarts");
    create(&cp, CORE, &core_event("young", "2026-01-01T00:30:00Z")).await;
    assert_eq!(event_names(&cp).await, ["old", "young"]);
    clock.advance_minutes(31);
    eventually(PATIENCE, || async { event_names(&cp).await == ["young"] }).await;
}
