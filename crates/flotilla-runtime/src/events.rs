//! An event recorder writing `v1` Events, the API `kubectl describe` and `kubectl get events`
//! read, with client-go's legacy counting (kube-runtime's recorder writes `events.k8s.io/v1`
//! ones, which the API server also serves under `v1`, but as a series rather than a count).
//! Same shape as kube-runtime's `Recorder`, so controllers switch by changing an import.
//!
//! Behaviour follows client-go's legacy recorder (kubernetes/client-go, tools/record/event.go
//! and events_cache.go, v0.33): an Event is named `<object name>.<nanoseconds in hex>`, lives in
//! the object's namespace (`default` for cluster-scoped objects), and a repeat of the same
//! (object, type, reason, message) increments `count` and `lastTimestamp` instead of creating
//! another Event.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Client, Resource as _};

pub use kube::runtime::events::{Event, EventType, Reporter};

/// How many distinct recent events are remembered for counting repeats (client-go keeps an
/// LRU of 4096).
const REMEMBERED: usize = 4096;

/// Identity of a repeatable event: the object (kind, namespace, name, uid), type, reason, note.
type Key = (String, String, String, String, &'static str, String, String);

/// The Event written for a key: its name, namespace and count so far.
type Recorded = (String, String, i32);

/// Publishes `v1` Events for one reporting controller; clones share the memory of repeats.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    /// Key → (Event name, namespace, count) of the Events this recorder wrote.
    seen: Arc<Mutex<HashMap<Key, Recorded>>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("controller", &self.reporter.controller)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    pub fn new(client: Client, reporter: Reporter) -> Recorder {
        Recorder {
            client,
            reporter,
            seen: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Records an event of `type_` and `reason` about `reference` with `note` (its action is
    /// `action`). A failure is logged, not returned: an Event is never worth failing the
    /// reconcile that reports it.
    pub async fn note(
        &self,
        reference: &ObjectReference,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: action.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.publish(&event, reference).await {
            tracing::debug!(%error, reason, "publishing an event failed");
        }
    }

    /// Records `event` about `reference`: a new Event, or the repeat of one already recorded.
    pub async fn publish(
        &self,
        event: &Event,
        reference: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let type_ = match event.type_ {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        };
        let note = event.note.clone().unwrap_or_default();
        let key: Key = (
            reference.kind.clone().unwrap_or_default(),
            reference.namespace.clone().unwrap_or_default(),
            reference.name.clone().unwrap_or_default(),
            reference.uid.clone().unwrap_or_default(),
            type_,
            event.reason.clone(),
            note.clone(),
        );
        let now = jiff::Timestamp::now();
        let repeat = self
            .seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        if let Some((name, namespace, count)) = repeat {
            let patch = serde_json::json!({
                "count": count + 1,
                "lastTimestamp": Time(now),
            });
            let request = kube::core::Request::new(CoreEvent::url_path(&(), Some(&namespace)))
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .map_err(kube::Error::BuildRequest)?;
            match crate::write::send(&self.client, request, "patch").await {
                Ok(_) => {
                    self.remember(key, name, namespace, count + 1);
                    return Ok(());
                }
                // Expired or deleted: record it afresh.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        let namespace = reference
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        let name = format!(
            "{}.{:x}",
            reference.name.as_deref().unwrap_or_default(),
            now.as_nanosecond()
        );
        let core = CoreEvent {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            involved_object: reference.clone(),
            reason: Some(event.reason.clone()),
            message: Some(note),
            type_: Some(type_.to_owned()),
            action: Some(event.action.clone()),
            source: Some(EventSource {
                component: Some(self.reporter.controller.clone()),
                host: None,
            }),
            reporting_component: Some(self.reporter.controller.clone()),
            reporting_instance: self.reporter.instance.clone(),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            event_time: None::<MicroTime>,
            count: Some(1),
            related: event.secondary.clone(),
            series: None,
        };
        let body = serde_json::to_vec(&core).map_err(kube::Error::SerdeError)?;
        let request = kube::core::Request::new(CoreEvent::url_path(&(), Some(&namespace)))
            .create(&PostParams::default(), body)
            .map_err(kube::Error::BuildRequest)?;
        // The answer (the stored Event) is not decoded: nothing here reads it.
        crate::write::send(&self.client, request, "create").await?;
        self.remember(key, name, namespace, 1);
        Ok(())
    }

    fn remember(&self, key: Key, name: String, namespace: String, count: i32) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.len() >= REMEMBERED && !seen.contains_key(&key) {
            seen.clear();
        }
        seen.insert(key, (name, namespace, count));
    }
}

#[cfg(test)]
mod tests;
