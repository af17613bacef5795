//! What compaction leaves in the tables, seen from inside.

use bytes::Bytes;
use flotilla_store::{KeyRange, Op, RangeRequest, Store, Txn};
use redb::ReadableTableMetadata;

use super::*;
use crate::tables::LOG;

/// Rows in the history, values and log tables.
fn rows(store: &RedbStore) -> (u64, u64, u64) {
    let (rtx, _) = store.inner.shared.begin_read().expect("read");
    let count = |name: &str, len: Result<u64, redb::StorageError>| len.expect(name);
    let history = count("history", rtx.open_table(HISTORY).expect("history").len());
    let values = count("values", rtx.open_table(VALUES).expect("values").len());
    let log = count("log", rtx.open_table(LOG).expect("log").len());
    (history, values, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_drops_superseded_versions_and_old_log_entries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("open");
    for i in 0..50 {
        let put = Txn::new().and_then([Op::put("/k", format!("{i}"))]);
        store.txn(put).await.expect("put");
    }
    store.create("/d".into(), "x".into()).await.expect("create");
    let (_, deleted_at) = store.delete("/d".into(), None).await.expect("delete");
    assert_eq!(rows(&store), (52, 51, 52));
    store.compact(deleted_at).await.expect("compact");
    // /k keeps its live version; /d keeps the put its delete event names, and the tombstone.
    assert_eq!(rows(&store), (3, 2, 1));
    let k = store.get(b"/k").await.expect("get").expect("/k");
    assert_eq!(k.value, Bytes::from("49"));
    assert_eq!(k.version, 50);
    let next = store
        .txn(Txn::new().and_then([Op::put("/k", "50")]))
        .await
        .expect("put");
    store.compact(next.revision).await.expect("compact");
    // /d is gone entirely; /k keeps the version the event at the compacted revision replaced.
    assert_eq!(rows(&store), (2, 2, 1));
    let all = store
        .range(RangeRequest::new(KeyRange::all()).at_revision(next.revision))
        .await
        .expect("range");
    assert_eq!(all.kvs.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_of_more_than_a_chunk_finishes_and_answers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("open"));
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..1300 {
                    let put =
                        Txn::new().and_then([Op::put(format!("/c/{writer}/{}", i % 10), "v")]);
                    store.txn(put).await.expect("put");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.expect("writer");
    }
    let status = store.status().await.expect("status");
    assert!(status.revision > 5000);
    store.compact(status.revision).await.expect("compact");
    assert_eq!(
        store.status().await.expect("status").compacted_revision,
        status.revision
    );
    // One live version per key (40), plus the version the event at the compacted revision
    // replaced.
    assert_eq!(rows(&store), (41, 41, 1));
}
