//! The in-memory backend: multi-version history per key plus a change log, under one lock.
//! For tests and simulated member clusters; nothing survives the process.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use parking_lot::RwLock;

use crate::watch::{Batch, EventLog, WatchHub};
use crate::{
    Event, EventKind, KeyRange, KeyValue, Op, OpResult, RangeRequest, RangeResponse, Revision,
    Store, StoreError, StoreLimits, StoreStatus, Txn, TxnResponse, WatchStream,
};

/// An in-memory [`Store`].
#[derive(Debug, Clone)]
pub struct MemoryStore {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    state: RwLock<State>,
    hub: WatchHub,
    limits: StoreLimits,
}

#[derive(Debug)]
struct State {
    revision: Revision,
    compacted: Revision,
    /// Every key's versions, oldest first; `None` marks a deletion at that revision.
    history: BTreeMap<Bytes, Vec<(Revision, Option<KeyValue>)>>,
    /// Every revision's events since the compacted revision, in order.
    log: VecDeque<Batch>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::with_limits(StoreLimits::default())
    }

    pub fn with_limits(limits: StoreLimits) -> Self {
        MemoryStore {
            shared: Arc::new(Shared {
                state: RwLock::new(State {
                    revision: 1,
                    compacted: 0,
                    history: BTreeMap::new(),
                    log: VecDeque::new(),
                }),
                hub: WatchHub::new(4096),
                limits,
            }),
        }
    }
}

impl State {
    fn at(&self, key: &[u8], revision: Revision) -> Option<&KeyValue> {
        let versions = self.history.get(key)?;
        let index = versions.partition_point(|(r, _)| *r <= revision);
        versions[..index].last()?.1.as_ref()
    }

    fn current(&self, key: &[u8]) -> Option<&KeyValue> {
        self.history.get(key)?.last()?.1.as_ref()
    }

    fn check_readable(&self, revision: Revision) -> Result<(), StoreError> {
        if revision > self.revision {
            return Err(StoreError::FutureRevision {
                requested: revision,
                current: self.revision,
            });
        }
        if revision < self.compacted {
            return Err(StoreError::Compacted {
                requested: revision,
                compacted: self.compacted,
            });
        }
        Ok(())
    }
}

impl EventLog for Shared {
    fn read_after(&self, after: Revision, max: usize) -> Result<Vec<Batch>, StoreError> {
        let state = self.state.read();
        if after + 1 < state.compacted {
            return Err(StoreError::Compacted {
                requested: after + 1,
                compacted: state.compacted,
            });
        }
        let start = state.log.partition_point(|batch| batch.revision <= after);
        Ok(state.log.range(start..).take(max).cloned().collect())
    }
}

#[async_trait]
impl Store for MemoryStore {
    fn volatile(&self) -> bool {
        true
    }

    async fn status(&self) -> Result<StoreStatus, StoreError> {
        let state = self.shared.state.read();
        Ok(StoreStatus {
            revision: state.revision,
            compacted_revision: state.compacted,
        })
    }

    async fn range(&self, request: RangeRequest) -> Result<RangeResponse, StoreError> {
        let state = self.shared.state.read();
        let revision = request.revision.unwrap_or(state.revision);
        state.check_readable(revision)?;
        if request
            .range
            .end
            .as_ref()
            .is_some_and(|end| *end <= request.range.start)
        {
            return Ok(RangeResponse {
                kvs: Vec::new(),
                more: false,
                count: 0,
                revision,
            });
        }
        let upper = match &request.range.end {
            Some(end) => Bound::Excluded(end.clone()),
            None => Bound::Unbounded,
        };
        let lower = Bound::Included(request.range.start.clone());
        let limit = request.limit.unwrap_or(usize::MAX);
        let mut kvs = Vec::new();
        let mut count = 0;
        for (key, _) in state.history.range((lower, upper)) {
            if let Some(kv) = state.at(key, revision) {
                count += 1;
                if kvs.len() < limit {
                    kvs.push(kv.clone());
                }
            }
        }
        Ok(RangeResponse {
            more: count > kvs.len(),
            kvs,
            count,
            revision,
        })
    }

    async fn txn(&self, txn: Txn) -> Result<TxnResponse, StoreError> {
        self.shared.limits.check_txn(&txn)?;
        let mut state = self.shared.state.write();
        let succeeded = txn
            .compares
            .iter()
            .all(|compare| compare.evaluate(state.current(&compare.key)));
        let ops = if succeeded { txn.success } else { txn.failure };
        let revision = state.revision + 1;
        let mut results = Vec::with_capacity(ops.len());
        let mut events = Vec::new();
        for op in ops {
            match op {
                Op::Get { key } => results.push(OpResult::Get(state.current(&key).cloned())),
                Op::Put { key, value } => {
                    let prev = state.current(&key).cloned();
                    let kv = KeyValue {
                        key: key.clone(),
                        value,
                        create_revision: prev.as_ref().map_or(revision, |p| p.create_revision),
                        mod_revision: revision,
                        version: prev.as_ref().map_or(1, |p| p.version + 1),
                    };
                    state
                        .history
                        .entry(key)
                        .or_default()
                        .push((revision, Some(kv.clone())));
                    events.push(Event {
                        kind: EventKind::Put,
                        kv: kv.clone(),
                        prev: prev.clone(),
                    });
                    results.push(OpResult::Put { kv, prev });
                }
                Op::Delete { key } => {
                    let prev = state.current(&key).cloned();
                    if prev.is_some() {
                        state
                            .history
                            .entry(key.clone())
                            .or_default()
                            .push((revision, None));
                        events.push(Event {
                            kind: EventKind::Delete,
                            kv: KeyValue::tombstone(key, revision),
                            prev: prev.clone(),
                        });
                    }
                    results.push(OpResult::Delete { prev });
                }
            }
        }
        if !events.is_empty() {
            state.revision = revision;
            let batch = Batch {
                revision,
                events: events.into(),
            };
            state.log.push_back(batch.clone());
            // Published under the write lock, so batches go out in revision order.
            self.shared.hub.publish(batch);
        }
        Ok(TxnResponse {
            succeeded,
            revision: state.revision,
            results,
        })
    }

    async fn watch(&self, range: KeyRange, after: Revision) -> Result<WatchStream, StoreError> {
        {
            let state = self.shared.state.read();
            if after > state.revision {
                return Err(StoreError::FutureRevision {
                    requested: after,
                    current: state.revision,
                });
            }
            if after + 1 < state.compacted {
                return Err(StoreError::Compacted {
                    requested: after + 1,
                    compacted: state.compacted,
                });
            }
        }
        let log: Arc<dyn EventLog> = self.shared.clone();
        Ok(self.shared.hub.watch(log, range, after))
    }

    async fn compact(&self, revision: Revision) -> Result<(), StoreError> {
        let mut state = self.shared.state.write();
        if revision > state.revision {
            return Err(StoreError::FutureRevision {
                requested: revision,
                current: state.revision,
            });
        }
        if revision <= state.compacted {
            return Ok(());
        }
        state.history.retain(|_, versions| {
            // Keep the version visible at `revision` (if live) and everything after it.
            let visible = versions.partition_point(|(r, _)| *r <= revision);
            let keep_from = match versions[..visible].last() {
                Some((_, Some(_))) => visible - 1,
                _ => visible,
            };
            versions.drain(..keep_from);
            // Most keys are down to one version: give back what their history grew to.
            if versions.capacity() > 2 * versions.len() {
                versions.shrink_to_fit();
            }
            !versions.is_empty()
        });
        while state
            .log
            .front()
            .is_some_and(|batch| batch.revision < revision)
        {
            state.log.pop_front();
        }
        if state.log.capacity() > 2 * state.log.len().max(1024) {
            state.log.shrink_to_fit();
        }
        state.compacted = revision;
        Ok(())
    }
}
