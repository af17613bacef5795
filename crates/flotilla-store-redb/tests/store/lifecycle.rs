//! Restart, reopening after drop, and background compaction.

use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{KeyRange, RangeRequest, Retention, Store, StoreError};
use flotilla_store_redb::{RedbOptions, RedbStore};
use futures::StreamExt;

/// How long a test waits for something that must happen.
const PATIENCE: Duration = Duration::from_secs(20);

fn durable() -> RedbOptions {
    RedbOptions::default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_keys_revisions_and_compaction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (before, kvs, compacted_at, kept) = {
        let store = RedbStore::open(dir.path(), durable()).expect("open");
        assert_eq!(
            store.status().await.expect("status").revision,
            1,
            "fresh store"
        );
        let a = store
            .create("/r/a".into(), "1".into())
            .await
            .expect("create");
        let a = store
            .update("/r/a".into(), "2".into(), a.mod_revision)
            .await
            .expect("update");
        store
            .create("/r/b".into(), "1".into())
            .await
            .expect("create");
        let (_, deleted_at) = store.delete("/r/b".into(), None).await.expect("delete");
        let kept = store
            .create("/r/c".into(), "1".into())
            .await
            .expect("create");
        store.compact(deleted_at).await.expect("compact");
        // The newest revision is a delete: the counter must not fall back to the last put.
        let (_, last) = store.delete("/r/c".into(), None).await.expect("delete");
        let kvs = store
            .range(RangeRequest::prefix("/r/"))
            .await
            .expect("range");
        assert_eq!(kvs.kvs, vec![a]);
        assert_eq!(kvs.revision, last);
        (store.status().await.expect("status"), kvs, deleted_at, kept)
    };
    let store = RedbStore::open(dir.path(), durable()).expect("reopen");
    assert_eq!(store.status().await.expect("status"), before);
    assert_eq!(before.compacted_revision, compacted_at);
    let now = store
        .range(RangeRequest::prefix("/r/"))
        .await
        .expect("range");
    assert_eq!(now, kvs);
    // History above the compacted revision survived, below it is refused.
    let then = store
        .range(RangeRequest::prefix("/r/").at_revision(kept.mod_revision))
        .await
        .expect("range in the past");
    assert_eq!(then.kvs.len(), 2);
    let error = store
        .range(RangeRequest::prefix("/r/").at_revision(compacted_at - 1))
        .await
        .expect_err("below compaction");
    assert!(matches!(error, StoreError::Compacted { .. }), "{error:?}");
    // The counter continues: no revision is reused.
    let next = store
        .create("/r/d".into(), "1".into())
        .await
        .expect("create");
    assert_eq!(next.mod_revision, before.revision + 1);
    // A watch across the restart replays history written before it.
    let mut stream = store
        .watch(KeyRange::prefix("/r/"), kept.mod_revision)
        .await
        .expect("watch");
    let event = tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("event in time")
        .expect("stream open")
        .expect("event");
    assert_eq!(event.kv.key, Bytes::from("/r/c"));
    assert_eq!(event.revision(), before.revision);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_compaction_bounds_the_log_and_stops_with_the_store() {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = RedbOptions {
        retention: Retention {
            window: Duration::ZERO,
            revisions: 10,
        },
        compaction_period: Duration::from_millis(10),
        ..RedbOptions::for_tests()
    };
    let store = RedbStore::open(dir.path(), options).expect("open");
    let mut last = store
        .create("/b/k".into(), "0".into())
        .await
        .expect("create");
    for i in 1..100 {
        last = store
            .update("/b/k".into(), format!("{i}").into(), last.mod_revision)
            .await
            .expect("update");
    }
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let status = store.status().await.expect("status");
        if status.compacted_revision >= last.mod_revision - 10 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no background compaction within {PATIENCE:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let status = store.status().await.expect("status");
    assert!(
        status.compacted_revision <= last.mod_revision - 10,
        "keeps the retention"
    );
    assert_eq!(
        store.get(b"/b/k").await.expect("get").map(|kv| kv.value),
        Some(Bytes::from("99"))
    );
    // Dropping the store stops the compactor and closes the file: it opens again at once.
    drop(store);
    let again = RedbStore::open(dir.path(), options).expect("reopen right after drop");
    assert_eq!(
        again
            .get(b"/b/k")
            .await
            .expect("get")
            .map(|kv| kv.mod_revision),
        Some(last.mod_revision)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_watches_end_when_the_store_is_dropped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("open");
    let mut stream = store.watch(KeyRange::all(), 1).await.expect("watch");
    let live = store.watch(KeyRange::all(), 1).await.expect("watch");
    store.create("/w".into(), "1".into()).await.expect("create");
    let mut live = live;
    let event = tokio::time::timeout(PATIENCE, live.next())
        .await
        .expect("event in time");
    assert!(matches!(event, Some(Ok(_))), "{event:?}");
    drop(store);
    let item = tokio::time::timeout(PATIENCE, live.next())
        .await
        .expect("the live watch ends in time");
    assert!(
        matches!(item, Some(Err(StoreError::Unavailable { .. })) | None),
        "{item:?}"
    );
    let item = tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("the watch ends in time");
    assert!(
        matches!(item, Some(Err(StoreError::Unavailable { .. })) | None),
        "{item:?}"
    );
    let _again = RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("reopen");
}

#[tokio::test]
async fn a_page_cache_smaller_than_the_data_still_serves_every_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let options = RedbOptions {
        cache_bytes: 256 * 1024,
        ..RedbOptions::for_tests()
    };
    let store = RedbStore::open(dir.path(), options).expect("open");
    let value = |i: usize| Bytes::from(format!("{i:04}").repeat(1024));
    for i in 0..300 {
        store
            .create(format!("/big/{i:04}").into(), value(i))
            .await
            .expect("create");
    }
    for i in (0..300).rev() {
        let kv = store
            .get(format!("/big/{i:04}").as_bytes())
            .await
            .expect("get")
            .expect("present");
        assert_eq!(kv.value, value(i));
    }
}
