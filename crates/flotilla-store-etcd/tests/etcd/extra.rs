//! Behaviour the conformance suite does not cover: prefixes, responses over gRPC's default size,
//! compactions made by others, and failures of the etcd process.

use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{KeyRange, RangeRequest, Store, StoreError};
use flotilla_store_etcd::testing::EtcdCluster;
use flotilla_store_etcd::{EtcdOptions, EtcdStore};
use futures::StreamExt;

async fn store_on(cluster: &EtcdCluster, prefix: &str) -> EtcdStore {
    EtcdStore::connect(EtcdOptions::new(cluster.endpoints()).with_prefix(prefix.to_owned()))
        .await
        .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefixes_confine_reads_writes_and_watches() {
    let cluster = EtcdCluster::start(1).await.expect("etcd");
    let a = store_on(&cluster, "/tenant-a").await;
    let b = store_on(&cluster, "/tenant-b").await;
    let whole = store_on(&cluster, "").await;
    let start = a.status().await.expect("status").revision;
    let mut watch_a = a.watch(KeyRange::all(), start).await.expect("watch");
    let created = a.create("/x".into(), "1".into()).await.expect("create");
    b.create("/x".into(), "2".into()).await.expect("create");
    assert_eq!(
        created.key,
        Bytes::from("/x"),
        "keys come back without the prefix"
    );
    let seen = a
        .range(RangeRequest::new(KeyRange::all()))
        .await
        .expect("range");
    assert_eq!(seen.kvs, vec![created.clone()]);
    let b_value = b.get(b"/x").await.expect("get").expect("b's key").value;
    assert_eq!(b_value, Bytes::from("2"));
    let raw = whole
        .range(RangeRequest::prefix("/tenant-"))
        .await
        .expect("range");
    let keys: Vec<_> = raw.kvs.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(
        keys,
        [Bytes::from("/tenant-a/x"), Bytes::from("/tenant-b/x")]
    );
    let event = watch_a.next().await.expect("event").expect("event");
    assert_eq!(event.kv, created);
    // b's write came later; a's watch must not see it.
    let quiet = tokio::time::timeout(Duration::from_millis(300), watch_a.next()).await;
    assert!(quiet.is_err(), "a's watch saw {quiet:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_larger_than_grpcs_default_message_size_is_read() {
    let cluster = EtcdCluster::start(1).await.expect("etcd");
    let store = store_on(&cluster, "").await;
    let big = Bytes::from(vec![b'v'; 1_500_000]);
    for i in 0..4 {
        store
            .create(format!("/big/{i}").into(), big.clone())
            .await
            .expect("create a 1.5 MB value");
    }
    let all = store
        .range(RangeRequest::prefix("/big/"))
        .await
        .expect("6 MB range");
    assert_eq!(all.count, 4);
    assert!(all.kvs.iter().all(|kv| kv.value == big));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_by_another_client_is_learned() {
    let cluster = EtcdCluster::start(1).await.expect("etcd");
    let store = store_on(&cluster, "").await;
    let mut last = store.create("/c".into(), "0".into()).await.expect("create");
    for i in 1..5 {
        last = store
            .update("/c".into(), i.to_string().into(), last.mod_revision)
            .await
            .expect("update");
    }
    let mut other = etcd_client::Client::connect(cluster.endpoints(), None)
        .await
        .expect("raw client");
    other
        .compact(last.mod_revision - 1, None)
        .await
        .expect("compact");
    let status = store.status().await.expect("status");
    assert_eq!(status.compacted_revision, last.mod_revision - 1);
    let error = store
        .range(RangeRequest::prefix("/c").at_revision(last.mod_revision - 3))
        .await
        .expect_err("read below the compaction");
    assert!(
        matches!(error, StoreError::Compacted { requested, compacted }
            if requested == last.mod_revision - 3 && compacted == last.mod_revision - 1),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_etcd_ends_watches_and_fails_requests_as_unavailable() {
    let mut cluster = EtcdCluster::start(1).await.expect("etcd");
    let store = EtcdStore::connect(
        EtcdOptions::new(cluster.endpoints()).with_request_timeout(Duration::from_secs(2)),
    )
    .await
    .expect("connect");
    let start = store.status().await.expect("status").revision;
    let mut watch = store.watch(KeyRange::all(), start).await.expect("watch");
    cluster.kill(0);
    match tokio::time::timeout(Duration::from_secs(30), watch.next()).await {
        Ok(Some(Err(error))) => assert!(error.is_retryable(), "{error:?}"),
        other => panic!("the watch did not fail with Unavailable: {other:?}"),
    }
    let error = store.get(b"/k").await.expect_err("read with etcd gone");
    assert!(error.is_retryable(), "{error:?}");
    let error = EtcdStore::connect(
        EtcdOptions::new(cluster.endpoints()).with_connect_timeout(Duration::from_secs(1)),
    )
    .await
    .expect_err("connect to a dead etcd");
    assert!(error.is_retryable(), "{error:?}");
}
