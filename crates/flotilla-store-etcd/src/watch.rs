//! One etcd watch as a store [`WatchStream`]: etcd replays history from the start revision and
//! then follows live writes, in revision order, with the previous key-values attached.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use etcd_client::WatchOptions;
use etcd_client::proto::{PbEvent, PbWatchResponse};
use flotilla_store::{Event, EventKind, KeyValue, Revision, StoreError, WatchStream};

use crate::convert::key_value;
use crate::error::{call, classify};
use crate::keys::Namespace;
use crate::pool::Pool;

/// etcd's event type codes (`mvccpb.Event.EventType`).
const PUT: i32 = 0;
const DELETE: i32 = 1;

/// Opens a watch of `[key, range_end)` for revisions after `after` and waits until etcd has
/// created it, so that connection problems surface here rather than as the first item.
pub(crate) async fn open(
    pool: &Pool,
    ns: Namespace,
    (key, range_end): (Vec<u8>, Vec<u8>),
    after: Revision,
    timeout: Duration,
    compacted: Arc<AtomicI64>,
) -> Result<WatchStream, StoreError> {
    let options = WatchOptions::new()
        .with_range(range_end)
        .with_start_revision(after + 1)
        .with_prev_key();
    let start = |mut client: etcd_client::WatchClient| {
        let (key, options) = (key.clone(), options.clone());
        async move { client.watch(key, Some(options)).await }
    };
    let mut stream = pool
        .watch("watch", timeout, start)
        .await
        .map_err(|f| f.into_store_error("watch"))?;
    let mut watcher = Watcher {
        ns,
        last: after,
        pending: VecDeque::new(),
        failed: None,
        done: false,
        compacted,
    };
    loop {
        let response = call("watch", timeout, stream.message())
            .await
            .map_err(|f| f.into_store_error("watch"))?;
        let Some(response) = response else {
            return Err(closed());
        };
        let created = response.0.created;
        watcher.take(response.0);
        if watcher.pending.is_empty()
            && let Some(error) = watcher.failed.take()
        {
            return Err(error);
        }
        if created || !watcher.pending.is_empty() || watcher.failed.is_some() {
            break;
        }
    }
    Ok(Box::pin(futures::stream::unfold(
        (stream, watcher),
        |(mut stream, mut watcher)| async move {
            let item = loop {
                if let Some(event) = watcher.pending.pop_front() {
                    break Ok(event);
                }
                if watcher.done {
                    return None;
                }
                if let Some(error) = watcher.failed.take() {
                    watcher.done = true;
                    break Err(error);
                }
                match stream.message().await {
                    Ok(Some(response)) => watcher.take(response.0),
                    Ok(None) => watcher.failed = Some(closed()),
                    Err(error) => {
                        watcher.failed = Some(classify("watch", error).into_store_error("watch"));
                    }
                }
            };
            Some((item, (stream, watcher)))
        },
    )))
}

fn closed() -> StoreError {
    StoreError::Unavailable {
        message: "etcd closed the watch stream".into(),
        source: None,
    }
}

struct Watcher {
    ns: Namespace,
    /// The revision of the last event taken.
    last: Revision,
    pending: VecDeque<Event>,
    /// The error that ends the stream once `pending` is drained.
    failed: Option<StoreError>,
    /// The error went out: the stream is over.
    done: bool,
    /// The store's knowledge of the compacted revision, raised by compaction cancels.
    compacted: Arc<AtomicI64>,
}

impl Watcher {
    fn take(&mut self, response: PbWatchResponse) {
        for event in response.events {
            match self.event(event) {
                Ok(event) => {
                    self.last = event.revision();
                    self.pending.push_back(event);
                }
                Err(error) => {
                    self.failed = Some(error);
                    return;
                }
            }
        }
        if response.canceled {
            self.failed = Some(if response.compact_revision > 0 {
                self.compacted
                    .fetch_max(response.compact_revision, Ordering::Relaxed);
                StoreError::Compacted {
                    requested: self.last + 1,
                    compacted: response.compact_revision,
                }
            } else {
                StoreError::Unavailable {
                    message: format!("etcd canceled the watch: {}", response.cancel_reason),
                    source: None,
                }
            });
        }
    }

    fn event(&self, event: PbEvent) -> Result<Event, StoreError> {
        let kv = event.kv.ok_or_else(|| StoreError::Backend {
            message: "etcd sent a watch event without a key-value".into(),
            source: None,
        })?;
        let prev = event
            .prev_kv
            .map(|prev| key_value(&self.ns, prev))
            .transpose()?;
        match event.r#type {
            PUT => Ok(Event {
                kind: EventKind::Put,
                kv: key_value(&self.ns, kv)?,
                prev,
            }),
            DELETE => Ok(Event {
                kind: EventKind::Delete,
                kv: KeyValue::tombstone(self.ns.strip(kv.key)?, kv.mod_revision),
                prev,
            }),
            other => Err(StoreError::Backend {
                message: format!("etcd sent a watch event of unknown type {other}"),
                source: None,
            }),
        }
    }
}
