//! Watches: replay, live follow, filters, compaction, concurrency, restarts.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;

use crate::{Event, EventKind, KeyRange, Revision, Store, StoreError, WatchStream};

/// How long a case waits for an event that must come.
const PATIENCE: Duration = Duration::from_secs(20);

/// The next event of a watch, failing the case if none comes in time.
pub async fn next_event(stream: &mut WatchStream) -> Event {
    match tokio::time::timeout(PATIENCE, stream.next()).await {
        Ok(Some(Ok(event))) => event,
        Ok(Some(Err(error))) => panic!("watch failed: {error}"),
        Ok(None) => panic!("watch ended"),
        Err(_) => panic!("no watch event within {PATIENCE:?}"),
    }
}

/// Asserts that no event arrives for a short while.
async fn assert_quiet(stream: &mut WatchStream) {
    if let Ok(item) = tokio::time::timeout(Duration::from_millis(200), stream.next()).await {
        panic!("unexpected watch item: {item:?}");
    }
}

pub async fn watch_replays_then_follows_live_writes(store: Arc<dyn Store>) {
    let start = store.status().await.expect("status").revision;
    let created = store
        .create("/w/a".into(), "1".into())
        .await
        .expect("create");
    let updated = store
        .update("/w/a".into(), "2".into(), created.mod_revision)
        .await
        .expect("update");
    let mut stream = store
        .watch(KeyRange::prefix("/w/"), start)
        .await
        .expect("watch");
    let event = next_event(&mut stream).await;
    assert_eq!(event.kind, EventKind::Put);
    assert_eq!(event.kv, created);
    assert_eq!(event.prev, None, "a creation has no previous value");
    let event = next_event(&mut stream).await;
    assert_eq!(event.kv, updated);
    assert_eq!(event.prev, Some(created));
    // Now live.
    let (prev, deleted_at) = store.delete("/w/a".into(), None).await.expect("delete");
    let event = next_event(&mut stream).await;
    assert_eq!(event.kind, EventKind::Delete);
    assert_eq!(event.kv.key, Bytes::from("/w/a"));
    assert_eq!(event.kv.mod_revision, deleted_at);
    assert_eq!(event.prev, Some(prev));
    let again = store
        .create("/w/b".into(), "x".into())
        .await
        .expect("create");
    assert_eq!(next_event(&mut stream).await.kv, again);
    // A watch from the latest revision sees only what comes next.
    let mut later = store
        .watch(KeyRange::prefix("/w/"), again.mod_revision)
        .await
        .expect("watch");
    assert_quiet(&mut later).await;
    let last = store
        .update("/w/b".into(), "y".into(), again.mod_revision)
        .await
        .expect("update");
    assert_eq!(next_event(&mut later).await.kv, last);
}

pub async fn watch_filters_by_prefix(store: Arc<dyn Store>) {
    let start = store.status().await.expect("status").revision;
    let mut stream = store
        .watch(KeyRange::prefix("/f/in/"), start)
        .await
        .expect("watch");
    store
        .create("/f/out".into(), "x".into())
        .await
        .expect("create");
    store
        .create("/f/in".into(), "x".into())
        .await
        .expect("create");
    let inside = store
        .create("/f/in/a".into(), "x".into())
        .await
        .expect("create");
    store
        .create("/f/inx".into(), "x".into())
        .await
        .expect("create");
    assert_eq!(next_event(&mut stream).await.kv, inside);
    assert_quiet(&mut stream).await;
    let mut one = store
        .watch(KeyRange::key("/f/out"), start)
        .await
        .expect("watch");
    assert_eq!(next_event(&mut one).await.kv.key, Bytes::from("/f/out"));
    assert_quiet(&mut one).await;
}

pub async fn watch_refuses_future_and_compacted_revisions(store: Arc<dyn Store>) {
    let first = store
        .create("/x/a".into(), "1".into())
        .await
        .expect("create");
    let mut last = first.clone();
    for value in ["2", "3", "4"] {
        last = store
            .update("/x/a".into(), value.to_owned().into(), last.mod_revision)
            .await
            .expect("update");
    }
    let error = match store
        .watch(KeyRange::prefix("/x/"), last.mod_revision + 5)
        .await
    {
        Ok(_) => panic!("a watch from a future revision started"),
        Err(error) => error,
    };
    assert!(
        matches!(error, StoreError::FutureRevision { .. }),
        "{error:?}"
    );
    store.compact(last.mod_revision - 1).await.expect("compact");
    let error = match store
        .watch(KeyRange::prefix("/x/"), first.mod_revision)
        .await
    {
        Ok(mut stream) => match tokio::time::timeout(PATIENCE, stream.next()).await {
            Ok(Some(Err(error))) => error,
            other => panic!("a watch below the compacted revision delivered {other:?}"),
        },
        Err(error) => error,
    };
    assert!(matches!(error, StoreError::Compacted { .. }), "{error:?}");
    // From the revision just before the compacted one, the history is still whole.
    let mut stream = store
        .watch(KeyRange::prefix("/x/"), last.mod_revision - 2)
        .await
        .expect("watch at the compaction edge");
    let event = next_event(&mut stream).await;
    assert_eq!(event.revision(), last.mod_revision - 1);
    assert_eq!(next_event(&mut stream).await.kv, last);
}

const WRITERS: usize = 4;
const WRITES_PER_WRITER: usize = 150;

/// Runs `WRITERS` concurrent writers and returns every revision they were acknowledged at.
async fn write_storm(store: Arc<dyn Store>, prefix: &str) -> Vec<Revision> {
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let store = store.clone();
        let prefix = prefix.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut revisions = Vec::new();
            for i in 0..WRITES_PER_WRITER {
                let key = format!("{prefix}{writer}/{}", i % 7);
                let kv = match store.get(key.as_bytes()).await.expect("get") {
                    Some(kv) => store
                        .update(key.into(), format!("{i}").into(), kv.mod_revision)
                        .await
                        .expect("update"),
                    None => store
                        .create(key.into(), format!("{i}").into())
                        .await
                        .expect("create"),
                };
                revisions.push(kv.mod_revision);
            }
            revisions
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.expect("writer"));
    }
    all.sort_unstable();
    all
}

pub async fn watch_sees_every_write_of_concurrent_writers(store: Arc<dyn Store>) {
    let start = store.status().await.expect("status").revision;
    let mut stream = store
        .watch(KeyRange::prefix("/s/"), start)
        .await
        .expect("watch");
    let revisions = write_storm(store.clone(), "/s/").await;
    let mut seen = Vec::new();
    let mut last = start;
    while seen.len() < revisions.len() {
        let event = next_event(&mut stream).await;
        assert!(event.revision() > last, "revisions strictly increase");
        last = event.revision();
        seen.push(event.revision());
    }
    assert_eq!(
        seen, revisions,
        "every acknowledged write seen once, in order"
    );
    assert_quiet(&mut stream).await;
}

pub async fn watch_restart_from_last_seen_loses_and_duplicates_nothing(store: Arc<dyn Store>) {
    let start = store.status().await.expect("status").revision;
    let shared = store;
    let revisions = {
        let storm = tokio::spawn(write_storm(shared.clone(), "/t/"));
        let mut seen: Vec<Revision> = Vec::new();
        let mut from = start;
        // Restart the watch every 37 events while the writers run.
        while seen.len() < WRITERS * WRITES_PER_WRITER {
            let mut stream = shared
                .watch(KeyRange::prefix("/t/"), from)
                .await
                .expect("watch");
            for _ in 0..37 {
                if seen.len() == WRITERS * WRITES_PER_WRITER {
                    break;
                }
                let event = next_event(&mut stream).await;
                seen.push(event.revision());
                from = event.revision();
            }
        }
        let written = storm.await.expect("storm");
        assert_eq!(seen, written, "no event lost or duplicated across restarts");
        written
    };
    assert_eq!(revisions.len(), WRITERS * WRITES_PER_WRITER);
}

/// Folds events into the state they describe (key → value), for comparing with a range.
pub fn apply_events(state: &mut BTreeMap<Bytes, Bytes>, events: &[Event]) {
    for event in events {
        match event.kind {
            EventKind::Put => {
                state.insert(event.kv.key.clone(), event.kv.value.clone());
            }
            EventKind::Delete => {
                state.remove(&event.kv.key);
            }
        }
    }
}
