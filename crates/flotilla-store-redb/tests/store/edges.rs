//! Inputs at the edges that the conformance suite does not cover.

use flotilla_store::{KeyRange, RangeRequest, Store};
use flotilla_store_redb::{RedbOptions, RedbStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reversed_range_is_empty_not_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("open");
    let a = store.create("/a".into(), "1".into()).await.expect("create");
    store.create("/b".into(), "1".into()).await.expect("create");
    for revision in [None, Some(a.mod_revision)] {
        let mut request = RangeRequest::new(KeyRange::between("/b", "/a"));
        request.revision = revision;
        let response = store.range(request).await.expect("range");
        assert!(response.kvs.is_empty() && response.count == 0 && !response.more);
        let mut request = RangeRequest::new(KeyRange::between("/a", "/a"));
        request.revision = revision;
        assert_eq!(store.range(request).await.expect("range").count, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_count_alike_now_and_in_the_past() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = RedbStore::open(dir.path(), RedbOptions::for_tests()).expect("open");
    for i in 0..5 {
        store
            .create(format!("/l/{i}").into(), "v".into())
            .await
            .expect("create");
    }
    let at = store.status().await.expect("status").revision;
    store
        .create("/l/9".into(), "v".into())
        .await
        .expect("create");
    for (revision, total) in [(None, 6), (Some(at), 5)] {
        let mut request = RangeRequest::prefix("/l/").with_limit(0);
        request.revision = revision;
        let none = store.range(request).await.expect("range");
        assert!(none.kvs.is_empty());
        assert_eq!((none.count, none.more), (total, true));
        let mut request = RangeRequest::prefix("/l/").with_limit(2);
        request.revision = revision;
        let two = store.range(request).await.expect("range");
        assert_eq!((two.kvs.len(), two.count, two.more), (2, total, true));
    }
}
