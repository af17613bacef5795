//! Concurrent writers share commits (fsyncs).

use std::sync::Arc;

use flotilla_store::{KeyRange, Op, RangeRequest, Store, Txn};
use flotilla_store_redb::{RedbOptions, RedbStore};

const WRITERS: usize = 64;
const WRITES: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_are_committed_in_fewer_commits_than_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(RedbStore::open(dir.path(), RedbOptions::default()).expect("open"));
    let start = store.status().await.expect("status").revision;
    let mut tasks = Vec::new();
    for writer in 0..WRITERS {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut revisions = Vec::new();
            for i in 0..WRITES {
                let response =
                    store
                        .txn(Txn::new().and_then([Op::put(
                            format!("/g/{writer}"),
                            format!("{i}").into_bytes(),
                        )]))
                        .await
                        .expect("put");
                revisions.push(response.revision);
            }
            revisions
        }));
    }
    let mut revisions = Vec::new();
    for task in tasks {
        revisions.extend(task.await.expect("writer"));
    }
    revisions.sort_unstable();
    let expected: Vec<i64> = (start + 1..=start + (WRITERS * WRITES) as i64).collect();
    assert_eq!(
        revisions, expected,
        "every write got its own revision, none lost"
    );
    let stats = store.stats();
    assert_eq!(stats.writes, (WRITERS * WRITES) as u64);
    assert!(
        stats.commits < stats.writes,
        "{} writes took {} commits: no fsync was shared",
        stats.writes,
        stats.commits
    );
    let all = store
        .range(RangeRequest::new(KeyRange::prefix("/g/")))
        .await
        .expect("range");
    assert_eq!(all.count, WRITERS);
    assert!(
        all.kvs
            .iter()
            .all(|kv| kv.value == format!("{}", WRITES - 1))
    );
}
