//! Property tests: the store against a model, and watches against the model's history.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::{Fixture, next_event};
use crate::{KeyRange, KeyValue, Op, OpResult, RangeRequest, Revision, Store, StoreError, Txn};

/// Makes a fresh fixture for each property case.
pub type MakeFixture<'a> = &'a dyn Fn() -> Pin<Box<dyn Future<Output = Fixture>>>;

#[derive(Debug, Clone)]
enum Action {
    Create(usize, u8),
    Update {
        key: usize,
        value: u8,
        stale: bool,
    },
    Delete {
        key: usize,
        stale: bool,
    },
    /// One transaction writing two keys (or one key once, when they are the same).
    PutPair(usize, usize, u8),
}

const KEYS: usize = 5;

fn key(index: usize) -> Bytes {
    Bytes::from(format!("/m/{index}"))
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (0..KEYS, any::<u8>()).prop_map(|(k, v)| Action::Create(k, v)),
        (0..KEYS, any::<u8>(), any::<bool>()).prop_map(|(key, value, stale)| Action::Update {
            key,
            value,
            stale
        }),
        (0..KEYS, any::<bool>()).prop_map(|(key, stale)| Action::Delete { key, stale }),
        (0..KEYS, 0..KEYS, any::<u8>()).prop_map(|(a, b, v)| Action::PutPair(a, b, v)),
    ]
}

/// What the store should hold: current key-values, and the state after every revision.
#[derive(Debug, Default)]
struct Model {
    revision: Revision,
    current: BTreeMap<Bytes, KeyValue>,
    history: Vec<(Revision, BTreeMap<Bytes, KeyValue>)>,
    /// Every change: (revision, key, value after; `None` for a delete).
    events: Vec<(Revision, Bytes, Option<Bytes>)>,
}

impl Model {
    fn put(&mut self, key: Bytes, value: Bytes, revision: Revision) -> KeyValue {
        let prev = self.current.get(&key);
        let kv = KeyValue {
            key: key.clone(),
            value: value.clone(),
            create_revision: prev.map_or(revision, |p| p.create_revision),
            mod_revision: revision,
            version: prev.map_or(1, |p| p.version + 1),
        };
        self.current.insert(key.clone(), kv.clone());
        self.events.push((revision, key, Some(value)));
        kv
    }

    fn delete(&mut self, key: &Bytes, revision: Revision) {
        self.current.remove(key);
        self.events.push((revision, key.clone(), None));
    }

    fn commit(&mut self, revision: Revision) {
        self.revision = revision;
        self.history.push((revision, self.current.clone()));
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

async fn run_actions(store: &dyn Store, actions: &[Action]) -> Model {
    let mut model = Model {
        revision: store.status().await.expect("status").revision,
        ..Model::default()
    };
    model.history.push((model.revision, BTreeMap::new()));
    for action in actions {
        let next = model.revision + 1;
        match *action {
            Action::Create(k, v) => {
                let result = store.create(key(k), Bytes::from(vec![v])).await;
                if model.current.contains_key(&key(k)) {
                    assert!(
                        matches!(result, Err(StoreError::AlreadyExists { .. })),
                        "{result:?}"
                    );
                } else {
                    let expected = model.put(key(k), Bytes::from(vec![v]), next);
                    assert_eq!(result.expect("create"), expected);
                    model.commit(next);
                }
            }
            Action::Update {
                key: k,
                value,
                stale,
            } => {
                let current = model.current.get(&key(k)).cloned();
                let expected_rev = match (&current, stale) {
                    (Some(kv), false) => kv.mod_revision,
                    (Some(kv), true) => kv.mod_revision - 1,
                    (None, false) => 0,
                    (None, true) => next + 7,
                };
                let result = store
                    .update(key(k), Bytes::from(vec![value]), expected_rev)
                    .await;
                match (current, stale) {
                    (_, false) => {
                        let expected = model.put(key(k), Bytes::from(vec![value]), next);
                        assert_eq!(result.expect("update"), expected);
                        model.commit(next);
                    }
                    (Some(kv), true) => assert!(
                        matches!(result, Err(StoreError::Conflict { current, .. }) if current == kv.mod_revision),
                        "a stale CAS must fail with the current revision: {result:?}"
                    ),
                    (None, true) => assert!(
                        matches!(result, Err(StoreError::NotFound { .. })),
                        "{result:?}"
                    ),
                }
            }
            Action::Delete { key: k, stale } => {
                let current = model.current.get(&key(k)).cloned();
                let expected_rev = current
                    .as_ref()
                    .map(|kv| kv.mod_revision - i64::from(stale));
                let result = store.delete(key(k), expected_rev).await;
                match (current, stale) {
                    (Some(kv), false) => {
                        assert_eq!(result.expect("delete"), (kv, next));
                        model.delete(&key(k), next);
                        model.commit(next);
                    }
                    (Some(_), true) => assert!(
                        matches!(result, Err(StoreError::Conflict { .. })),
                        "{result:?}"
                    ),
                    (None, _) => assert!(
                        matches!(result, Err(StoreError::NotFound { .. })),
                        "{result:?}"
                    ),
                }
            }
            Action::PutPair(a, b, v) => {
                let mut ops = vec![Op::put(key(a), Bytes::from(vec![v]))];
                if a != b {
                    ops.push(Op::put(key(b), Bytes::from(vec![v.wrapping_add(1)])));
                }
                let response = store.txn(Txn::new().and_then(ops)).await.expect("txn");
                assert!(response.succeeded);
                assert_eq!(response.revision, next);
                let first = model.put(key(a), Bytes::from(vec![v]), next);
                assert!(matches!(&response.results[0], OpResult::Put { kv, .. } if *kv == first));
                if a != b {
                    model.put(key(b), Bytes::from(vec![v.wrapping_add(1)]), next);
                }
                model.commit(next);
            }
        }
        let status = store.status().await.expect("status");
        assert_eq!(
            status.revision, model.revision,
            "revision moves only on writes, by one"
        );
    }
    model
}

/// Any sequence of creates, CAS updates and deletes (fresh or stale) and multi-key
/// transactions leaves the store as the model says, revisions strictly increase, stale CAS
/// never writes, and every past revision reads back as it was.
pub fn prop_store_matches_model(make: MakeFixture<'_>, cases: u32) {
    let runtime = runtime();
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    runner
        .run(&proptest::collection::vec(action(), 1..40), |actions| {
            runtime.block_on(async {
                let fixture = make().await;
                let store = &*fixture.store;
                let model = run_actions(store, &actions).await;
                let now = store
                    .range(RangeRequest::prefix("/m/"))
                    .await
                    .expect("range");
                assert_eq!(now.kvs, model.current.values().cloned().collect::<Vec<_>>());
                let mut last = Revision::MIN;
                for (revision, state) in &model.history {
                    assert!(*revision > last, "revisions strictly increase");
                    last = *revision;
                    let then = store
                        .range(RangeRequest::prefix("/m/").at_revision(*revision))
                        .await
                        .expect("range in the past");
                    assert_eq!(then.kvs, state.values().cloned().collect::<Vec<_>>());
                }
            });
            Ok(())
        })
        .expect("store matches the model");
}

/// A watch from any revision R delivers exactly the model's events after R, in order.
pub fn prop_watch_from_any_revision_sees_exactly_later_events(make: MakeFixture<'_>, cases: u32) {
    let runtime = runtime();
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    runner
        .run(
            &(
                proptest::collection::vec(action(), 1..40),
                proptest::collection::vec(0.0f64..=1.0, 1..4),
            ),
            |(actions, starts)| {
                runtime.block_on(async {
                    let fixture = make().await;
                    let store = &*fixture.store;
                    let model = run_actions(store, &actions).await;
                    let first = model.history[0].0;
                    for fraction in &starts {
                        let after = first + ((model.revision - first) as f64 * fraction) as i64;
                        let expected: Vec<_> = model
                            .events
                            .iter()
                            .filter(|(revision, _, _)| *revision > after)
                            .cloned()
                            .collect();
                        let mut stream = store
                            .watch(KeyRange::prefix("/m/"), after)
                            .await
                            .expect("watch");
                        let mut seen = Vec::new();
                        while seen.len() < expected.len() {
                            let event = next_event(&mut stream).await;
                            let value = match event.kind {
                                crate::EventKind::Put => Some(event.kv.value.clone()),
                                crate::EventKind::Delete => None,
                            };
                            seen.push((event.revision(), event.kv.key.clone(), value));
                        }
                        assert_eq!(seen, expected, "watch after {after}");
                    }
                });
                Ok(())
            },
        )
        .expect("watch matches the model's history");
}
