//! An event recorder that writes the same `events.k8s.io/v1` Events as kube-runtime's
//! [`kube::runtime::events::Recorder`] (same names, fields and series), in constant time per
//! event.
//!
//! kube-runtime's recorder keeps every event it wrote for six minutes so that a repeat (same
//! type, action, reason, reporter, regarding and related object) becomes a `series` patch of
//! the first one instead of a new Event. It drops expired entries by walking the whole cache
//! under a write lock on every publish: a controller that records an event per object (the
//! scheduler records two per binding) pays time proportional to everything it recorded in the
//! last six minutes for every event, quadratic over a burst. This recorder gives every publish
//! the same outcome — an entry older than the window counts as absent — but looks up only the
//! entry it needs and sweeps expired entries at most once per [`SWEEP_PERIOD`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Reporter};

/// How long a written event is remembered as the start of a series (kube-runtime's window).
pub const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);

/// How often expired entries are swept out of memory. Lookups ignore expired entries whenever
/// the sweep last ran, so this bounds memory, not behaviour.
pub const SWEEP_PERIOD: Duration = Duration::from_secs(30);

/// The identity of a series: what kube-runtime's recorder compares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    warning: bool,
    action: String,
    reason: String,
    regarding: ReferenceKey,
    related: Option<ReferenceKey>,
}

/// The fields of an [`ObjectReference`] that identify the object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ReferenceKey {
    api_version: Option<String>,
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    uid: Option<String>,
    field_path: Option<String>,
    resource_version: Option<String>,
}

impl ReferenceKey {
    fn of(reference: &ObjectReference) -> Self {
        ReferenceKey {
            api_version: reference.api_version.clone(),
            kind: reference.kind.clone(),
            namespace: reference.namespace.clone(),
            name: reference.name.clone(),
            uid: reference.uid.clone(),
            field_path: reference.field_path.clone(),
            resource_version: reference.resource_version.clone(),
        }
    }
}

#[derive(Debug, Default)]
struct Cache {
    events: HashMap<SeriesKey, K8sEvent>,
    /// When expired entries were last swept out.
    swept: Option<Timestamp>,
}

/// When `event` was last observed (its series' last time, else its event time).
fn last_seen(event: &K8sEvent) -> Option<Timestamp> {
    match (&event.series, &event.event_time) {
        (Some(series), _) => Some(series.last_observed_time.0),
        (None, Some(time)) => Some(time.0),
        (None, None) => None,
    }
}

fn live(event: &K8sEvent, now: Timestamp) -> bool {
    last_seen(event).is_none_or(|seen| seen + SERIES_WINDOW > now)
}

/// Publishes events attached to objects; cheap to clone (clones share the series cache).
#[derive(Clone)]
pub struct Recorder {
    client: kube::Client,
    reporter: Reporter,
    cache: Arc<Mutex<Cache>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("reporter", &self.reporter)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    pub fn new(client: kube::Client, reporter: Reporter) -> Self {
        Recorder {
            client,
            reporter,
            cache: Arc::default(),
        }
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records `event` about `reference`: a new Event in the reference's namespace (`default`
    /// for cluster-scoped objects), or, when the same event was recorded within
    /// [`SERIES_WINDOW`], a merge patch counting it in that Event's `series`.
    pub async fn publish(
        &self,
        event: &Event,
        reference: &ObjectReference,
    ) -> Result<(), kube::Error> {
        self.publish_at(event, reference, Timestamp::now()).await
    }

    async fn publish_at(
        &self,
        event: &Event,
        reference: &ObjectReference,
        now: Timestamp,
    ) -> Result<(), kube::Error> {
        let key = SeriesKey {
            warning: event.type_ == EventType::Warning,
            action: event.action.clone(),
            reason: event.reason.clone(),
            regarding: ReferenceKey::of(reference),
            related: event.secondary.as_ref().map(ReferenceKey::of),
        };
        let object = {
            let mut cache = self.cache();
            let due = cache.swept.is_none_or(|swept| swept + SWEEP_PERIOD <= now);
            if due {
                cache.events.retain(|_, e| live(e, now));
                cache.swept = Some(now);
            }
            match cache.events.get(&key).filter(|e| live(e, now)) {
                Some(previous) => {
                    let count = previous.series.as_ref().map_or(2, |s| s.count + 1);
                    let mut object = previous.clone();
                    object.series = Some(EventSeries {
                        count,
                        last_observed_time: MicroTime(now),
                    });
                    object
                }
                None => self.new_event(event, reference, now),
            }
        };
        let namespace = reference.namespace.as_deref().unwrap_or("default");
        let api = Api::<K8sEvent>::namespaced(self.client.clone(), namespace);
        if object.series.is_some() {
            let name = object.metadata.name.clone().unwrap_or_default();
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&object))
                .await?;
        } else {
            api.create(&PostParams::default(), &object).await?;
        }
        self.cache().events.insert(key, object);
        Ok(())
    }

    /// The Event kube-runtime's recorder creates: named `<object>.<nanoseconds in hex>`.
    fn new_event(&self, event: &Event, reference: &ObjectReference, now: Timestamp) -> K8sEvent {
        let controller = &self.reporter.controller;
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(reference.clone()),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: reference.namespace.clone(),
                name: Some(format!(
                    "{}.{:x}",
                    reference.name.as_ref().unwrap_or(controller),
                    now.as_nanosecond()
                )),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| controller.clone()),
            ),
            type_: Some(
                match event.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            related: event.secondary.clone(),
            ..K8sEvent::default()
        }
    }

    /// How many events are remembered (expired ones included until the next sweep).
    pub fn remembered(&self) -> usize {
        self.cache().events.len()
    }
}

#[cfg(test)]
mod tests;
