//! A failed group commit (disk full) answers every caller of the group with an error, leaves
//! nothing of the group visible, and the writer carries on from the last committed state.

use std::sync::Arc;

use flotilla_store::{KeyRange, Op, RangeRequest, Store, StoreError, Txn};
use flotilla_store_redb::{FaultSwitch, RedbOptions, RedbStore};

const WRITERS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_commit_fails_the_whole_group_and_the_store_recovers() {
    let dir = tempfile::tempdir().expect("temp dir");
    let faults = FaultSwitch::new();
    let store = Arc::new(
        RedbStore::open_with_faults(dir.path(), RedbOptions::default(), faults.clone())
            .expect("open"),
    );
    let before = store
        .create("/f/before".into(), "1".into())
        .await
        .expect("create");
    let committed = store.status().await.expect("status");

    faults.set_disk_full(true);
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .txn(Txn::new().and_then([Op::put(format!("/f/lost/{writer}"), "x")]))
                .await
        }));
    }
    for task in tasks {
        let result = task.await.expect("writer");
        // The group that hit the full disk gets the commit error; groups after it, while
        // the file cannot be reopened, are told the store is unavailable (retryable).
        match result {
            Err(StoreError::Backend { message, .. }) => {
                assert!(message.contains("commit"), "{message}")
            }
            Err(StoreError::Unavailable { message, .. }) => {
                assert!(message.contains("reopen"), "{message}")
            }
            other => panic!("a write on a full disk must fail: {other:?}"),
        }
    }
    assert!(faults.failures() > 0, "the fault was hit");
    faults.set_disk_full(false);

    // Nothing of the failed groups is visible, and the revision did not move.
    assert_eq!(store.status().await.expect("status"), committed);
    let lost = store
        .range(RangeRequest::prefix("/f/lost/"))
        .await
        .expect("range");
    assert_eq!(lost.count, 0, "{lost:?}");

    // The writer continues from the last committed state.
    let after = store
        .create("/f/after".into(), "2".into())
        .await
        .expect("write after");
    assert_eq!(after.mod_revision, committed.revision + 1);
    let all = store
        .range(RangeRequest::new(KeyRange::prefix("/f/")))
        .await
        .expect("range");
    assert_eq!(all.kvs, vec![after.clone(), before.clone()]);
    assert!(store.stats().failed_commits > 0);
    drop(store);

    // And so does the file.
    let store = RedbStore::open(dir.path(), RedbOptions::default()).expect("reopen");
    let all = store
        .range(RangeRequest::new(KeyRange::prefix("/f/")))
        .await
        .expect("range");
    assert_eq!(all.kvs, vec![after, before]);
}
