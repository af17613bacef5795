use std::sync::Arc;

use bytes::Bytes;
use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::{Index, last_written};
use crate::cache::{CachedObject, Change, ChangeKind};

const TTL: SignedDuration = SignedDuration::from_secs(3600);

fn at(text: &str) -> Timestamp {
    text.parse().expect("timestamp")
}

fn change(kind: ChangeKind, name: &str, revision: i64, event: serde_json::Value) -> Change {
    let key = Bytes::from(format!("/registry/core/events/default/{name}"));
    let stored = Bytes::from(serde_json::to_vec(&event).expect("JSON"));
    Change {
        kind,
        revision,
        object: Arc::new(CachedObject::from_stored(key, &stored, revision).expect("object")),
        prev: None,
    }
}

fn event(created: &str, last: Option<&str>) -> serde_json::Value {
    let mut event = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default", "creationTimestamp": created}});
    if let Some(last) = last {
        event["lastTimestamp"] = last.into();
    }
    event
}

fn names(due: &[(Bytes, i64)]) -> Vec<String> {
    due.iter()
        .map(|(key, revision)| {
            let key = String::from_utf8_lossy(key);
            format!("{}@{revision}", key.rsplit('/').next().unwrap_or(""))
        })
        .collect()
}

#[test]
fn the_latest_write_time_counts() {
    let json = serde_json::to_vec(&json!({
        "metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"},
        "lastTimestamp": "2026-01-01T00:10:00Z",
        "eventTime": "2026-01-01T00:05:00.123456Z",
        "series": {"count": 2, "lastObservedTime": "2026-01-01T00:20:00.000001Z"},
    }))
    .expect("JSON");
    assert_eq!(last_written(&json), Some(at("2026-01-01T00:20:00.000001Z")));
    // Null and unparsable times are ignored; no time at all is `None`.
    let json = br#"{"metadata":{"creationTimestamp":"2026-01-01T00:00:00Z"},"lastTimestamp":null,"eventTime":"soon"}"#;
    assert_eq!(last_written(json), Some(at("2026-01-01T00:00:00Z")));
    assert_eq!(last_written(br#"{"metadata":{}}"#), None);
}

#[test]
fn events_come_due_in_expiry_order_and_a_later_write_postpones() {
    let now = at("2026-01-01T00:30:00Z");
    let mut index = Index::default();
    index.observe(
        &change(
            ChangeKind::Added,
            "a",
            5,
            event("2026-01-01T00:10:00Z", None),
        ),
        TTL,
        now,
    );
    index.observe(
        &change(
            ChangeKind::Added,
            "b",
            6,
            event("2026-01-01T00:00:00Z", None),
        ),
        TTL,
        now,
    );
    index.observe(
        &change(
            ChangeKind::Added,
            "c",
            7,
            event("2026-01-01T00:20:00Z", None),
        ),
        TTL,
        now,
    );
    assert!(index.take_due(at("2026-01-01T00:59:59Z"), 10).is_empty());
    // `a` is written again (counted again by its recorder) before it is due.
    let again = event("2026-01-01T00:10:00Z", Some("2026-01-01T00:25:00Z"));
    index.observe(&change(ChangeKind::Modified, "a", 8, again), TTL, now);
    assert_eq!(
        names(&index.take_due(at("2026-01-01T01:20:00Z"), 10)),
        ["b@6", "c@7"]
    );
    assert_eq!(
        names(&index.take_due(at("2026-01-01T01:20:00Z"), 10)),
        Vec::<String>::new()
    );
    assert_eq!(
        names(&index.take_due(at("2026-01-01T01:25:00Z"), 10)),
        ["a@8"]
    );
    assert_eq!(
        index.len(),
        3,
        "taken Events stay known until they are deleted"
    );
}

#[test]
fn a_deleted_event_is_forgotten_and_a_batch_is_bounded() {
    let now = at("2026-01-01T00:00:00Z");
    let mut index = Index::default();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let e = event("2026-01-01T00:00:00Z", None);
        index.observe(&change(ChangeKind::Added, name, i as i64 + 1, e), TTL, now);
    }
    let gone = event("2026-01-01T00:00:00Z", None);
    index.observe(&change(ChangeKind::Deleted, "b", 9, gone), TTL, now);
    assert_eq!(index.len(), 2);
    let later = at("2026-01-01T02:00:00Z");
    assert_eq!(names(&index.take_due(later, 1)), ["a@1"]);
    assert_eq!(names(&index.take_due(later, 1)), ["c@3"]);
    assert!(index.take_due(later, 1).is_empty());
}

#[test]
fn a_failed_deletion_is_retried_unless_the_event_changed() {
    let now = at("2026-01-01T00:00:00Z");
    let later = at("2026-01-01T02:00:00Z");
    let mut index = Index::default();
    let e = event("2026-01-01T00:00:00Z", None);
    index.observe(&change(ChangeKind::Added, "a", 1, e.clone()), TTL, now);
    index.observe(&change(ChangeKind::Added, "b", 2, e), TTL, now);
    let due = index.take_due(later, 10);
    assert_eq!(names(&due), ["a@1", "b@2"]);
    // `b` is written again (with a fresh time) while its deletion is under way.
    let fresh = event("2026-01-01T00:00:00Z", Some("2026-01-01T01:30:00Z"));
    index.observe(&change(ChangeKind::Modified, "b", 3, fresh), TTL, later);
    for (key, revision) in due {
        index.retry(key, revision);
    }
    assert_eq!(names(&index.take_due(later, 10)), ["a@1"]);
    assert_eq!(
        names(&index.take_due(at("2026-01-01T02:30:00Z"), 10)),
        ["b@3"]
    );
}

#[test]
fn a_time_ahead_of_the_server_counts_from_when_the_server_saw_the_write() {
    let now = at("2026-01-01T00:00:00Z");
    let mut index = Index::default();
    // A recorder whose clock runs a day ahead, and an Event without any time.
    let ahead = event("2026-01-01T00:00:00Z", Some("2026-01-02T00:00:00Z"));
    index.observe(&change(ChangeKind::Added, "ahead", 1, ahead), TTL, now);
    let timeless = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "t"}});
    index.observe(
        &change(ChangeKind::Added, "timeless", 2, timeless),
        TTL,
        now,
    );
    assert!(index.take_due(at("2026-01-01T00:59:59Z"), 10).is_empty());
    assert_eq!(
        names(&index.take_due(at("2026-01-01T01:00:00Z"), 10)),
        ["ahead@1", "timeless@2"]
    );
}
