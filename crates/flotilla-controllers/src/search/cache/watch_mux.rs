//! One proxy watch over several members: each member's replay then live changes, filtered,
//! annotated and given the multi-cluster version after them, merged into one stream that ends
//! as a whole when any source ends.

use std::sync::Arc;

use flotilla_api::selector::field::FieldSelector;
use flotilla_api::selector::label::LabelSelector;
use tokio::sync::{broadcast, mpsc, watch};

use super::super::version::MultiVersion;
use super::member::{Change, ResourceCache};
use super::{Event, annotated, fields_match, labels_match, served};
use serde_json::Value;

/// Sends one member's replay, then its live changes, to a proxy watch; whatever ends it (the
/// client went away, the cache was dropped, the client fell behind, another member's source
/// ended) ends the whole watch.
pub(super) async fn forward(
    cache: Arc<ResourceCache>,
    replay: Vec<Arc<Change>>,
    mut live: broadcast::Receiver<Arc<Change>>,
    sender: mpsc::Sender<Event>,
    filter: Arc<Filter>,
    version: Arc<parking_lot::Mutex<MultiVersion>>,
    stop: Arc<watch::Sender<bool>>,
) {
    let mut stopped = stop.subscribe();
    'feed: {
        for change in replay {
            if let Some(event) = filter.event(&cache, &change, &version)
                && sender.send(event).await.is_err()
            {
                break 'feed;
            }
        }
        loop {
            tokio::select! {
                received = live.recv() => match received {
                    Ok(change) => {
                        if let Some(event) = filter.event(&cache, &change, &version)
                            && sender.send(event).await.is_err()
                        {
                            break 'feed;
                        }
                    }
                    Err(_) => break 'feed,
                },
                _ = stopped.changed() => break 'feed,
                _ = sender.closed() => break 'feed,
            }
        }
    }
    stop.send_replace(true);
}

pub(super) struct Filter {
    pub(super) namespace: Option<String>,
    pub(super) labels: Option<LabelSelector>,
    pub(super) fields: Option<FieldSelector>,
}

impl Filter {
    pub(super) fn event(
        &self,
        cache: &ResourceCache,
        change: &Change,
        version: &parking_lot::Mutex<MultiVersion>,
    ) -> Option<Event> {
        if !served(cache, &change.object.namespace, self.namespace.as_deref())
            || !labels_match(&self.labels, &change.object.labels)
            || !fields_match(&self.fields, &change.object, cache.resource.namespaced)
        {
            return None;
        }
        let mut object = annotated(&change.object, &cache.cluster);
        let encoded = {
            let mut version = version.lock();
            version.set(
                &cache.cluster,
                object["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| change.rv.to_string()),
            );
            version.encode()
        };
        object["metadata"]["resourceVersion"] = Value::String(encoded);
        Some(Event {
            type_: change.type_.as_str(),
            object,
        })
    }
}
