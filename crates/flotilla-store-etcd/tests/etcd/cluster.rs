//! A 3-member etcd cluster on loopback loses its leader to SIGKILL while writers run through one
//! store configured with all three endpoints: writes go on (after retries on `Unavailable`) and
//! every acknowledged write is there at the end.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{KeyValue, RangeRequest, Revision, Store, StoreError};
use flotilla_store_etcd::testing::EtcdCluster;
use flotilla_store_etcd::{EtcdOptions, EtcdStore};
use parking_lot::Mutex;
use tokio::time::Instant;

const WRITERS: usize = 4;
/// How long the cluster may take to reach each milestone.
const PATIENCE: Duration = Duration::from_secs(90);

#[derive(Default)]
struct Log {
    /// Every acknowledged write: key → (value, revision).
    acked: Mutex<BTreeMap<Bytes, (Bytes, Revision)>>,
    count: AtomicUsize,
    retries: AtomicUsize,
    stop: AtomicBool,
}

/// Creates `/ha/<writer>/<n>` for n = 0, 1, … until told to stop. A create that failed with
/// `Unavailable` may have been applied, so after one the writer retries, and an `AlreadyExists`
/// then means the earlier attempt went through, if the stored value is the one it wrote.
async fn writer(store: Arc<EtcdStore>, log: Arc<Log>, writer: usize) {
    let mut n = 0;
    while !log.stop.load(Ordering::Relaxed) {
        let key = Bytes::from(format!("/ha/{writer}/{n:06}"));
        let value = Bytes::from(format!("writer {writer} write {n}"));
        let mut uncertain = false;
        let kv: KeyValue = loop {
            match store.create(key.clone(), value.clone()).await {
                Ok(kv) => break kv,
                Err(error) if error.is_retryable() => {
                    uncertain = true;
                    log.retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(StoreError::AlreadyExists { .. }) if uncertain => match store.get(&key).await {
                    Ok(Some(kv)) if kv.value == value => break kv,
                    Ok(other) => panic!("{key:?} holds {other:?}, not what was written"),
                    Err(error) if error.is_retryable() => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(error) => panic!("reading back {key:?}: {error}"),
                },
                Err(error) => panic!("create {key:?}: {error}"),
            }
        };
        log.acked.lock().insert(key, (value, kv.mod_revision));
        log.count.fetch_add(1, Ordering::Relaxed);
        n += 1;
    }
}

async fn wait_for_acks(log: &Log, at_least: usize, what: &str) {
    let deadline = Instant::now() + PATIENCE;
    while log.count.load(Ordering::Relaxed) < at_least {
        assert!(
            Instant::now() < deadline,
            "{what}: only {} of {at_least} writes acknowledged within {PATIENCE:?}",
            log.count.load(Ordering::Relaxed)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_survive_the_leader_being_killed() {
    let mut cluster = EtcdCluster::start(3).await.expect("3-member etcd cluster");
    let store = Arc::new(
        EtcdStore::connect(
            EtcdOptions::new(cluster.endpoints()).with_request_timeout(Duration::from_secs(3)),
        )
        .await
        .expect("connect"),
    );
    let log = Arc::new(Log::default());
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| tokio::spawn(writer(store.clone(), log.clone(), w)))
        .collect();

    wait_for_acks(&log, 200, "before the kill").await;
    let leader = cluster.leader().await.expect("the cluster has a leader");
    cluster.kill(leader);
    let at_kill = log.count.load(Ordering::Relaxed);
    wait_for_acks(&log, at_kill + 300, "after the leader was killed").await;
    let survivor = cluster.leader().await.expect("a new leader");
    assert_ne!(survivor, leader, "the killed member cannot lead");

    log.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.expect("writer");
    }
    let acked = log.acked.lock().clone();
    let stored = store
        .range(RangeRequest::prefix("/ha/"))
        .await
        .expect("range");
    let stored: BTreeMap<_, _> = stored
        .kvs
        .into_iter()
        .map(|kv| (kv.key, (kv.value, kv.mod_revision)))
        .collect();
    assert_eq!(
        stored, acked,
        "every acknowledged write is stored, and nothing else"
    );
    let mut revisions: Vec<_> = acked.values().map(|(_, revision)| *revision).collect();
    revisions.sort_unstable();
    revisions.dedup();
    assert_eq!(revisions.len(), acked.len(), "one revision per write");
    eprintln!(
        "{} writes acknowledged ({} after the kill of member {leader}), {} retries",
        acked.len(),
        acked.len() - at_kill,
        log.retries.load(Ordering::Relaxed)
    );
}
