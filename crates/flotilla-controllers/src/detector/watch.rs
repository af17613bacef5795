//! One watch (with a store of compact templates) per propagatable kind, and the CRD watch that
//! triggers discovery again.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use parking_lot::RwLock;
use tracing::warn;

use super::Detector;
use crate::resources::ServedKind;

/// A watched kind.
#[derive(Debug)]
pub(super) struct KindWatch {
    pub served: ServedKind,
    pub store: Templates,
    pub task: tokio::task::JoinHandle<()>,
}

/// The templates of one kind, each kept as its compact JSON without `metadata.managedFields`.
///
/// The detector holds every object of every propagatable kind. Parsed into a `DynamicObject` a
/// Deployment costs ~19 KB (a `serde_json::Value` tree is about ten times its JSON); as bytes it
/// costs its JSON, ~1 KB. A template is parsed again only when it is reconciled, which reads and
/// writes far more than that.
#[derive(Debug, Clone, Default)]
pub(super) struct Templates {
    by_name: Arc<RwLock<ByName>>,
}

/// Compact templates by `(namespace, name)`.
type ByName = HashMap<(String, String), Box<[u8]>>;

/// `(namespace, name)` of an object; empty namespace for cluster-scoped ones.
fn key_of(object: &DynamicObject) -> (String, String) {
    (
        object.metadata.namespace.clone().unwrap_or_default(),
        object.metadata.name.clone().unwrap_or_default(),
    )
}

/// The stored form of `object`.
fn compact(object: &DynamicObject) -> Option<Box<[u8]>> {
    if object.metadata.managed_fields.is_none() {
        return serde_json::to_vec(object).ok().map(Vec::into_boxed_slice);
    }
    let mut slim = object.clone();
    slim.metadata.managed_fields = None;
    serde_json::to_vec(&slim).ok().map(Vec::into_boxed_slice)
}

impl Templates {
    fn insert_into(map: &mut ByName, object: &DynamicObject) {
        match compact(object) {
            Some(bytes) => {
                map.insert(key_of(object), bytes);
            }
            None => warn!(name = ?object.metadata.name, "template does not serialize; not cached"),
        }
    }

    fn apply(&self, object: &DynamicObject) {
        Self::insert_into(&mut self.by_name.write(), object);
    }

    fn delete(&self, object: &DynamicObject) {
        self.by_name.write().remove(&key_of(object));
    }

    /// Drops every template not in `keep`, returning them (parsed).
    fn retain(&self, keep: &HashSet<(String, String)>) -> Vec<DynamicObject> {
        let mut gone = Vec::new();
        self.by_name.write().retain(|key, bytes| {
            if keep.contains(key) {
                return true;
            }
            match serde_json::from_slice(bytes) {
                Ok(object) => gone.push(object),
                Err(error) => warn!(%error, namespace = %key.0, name = %key.1, "cached template does not parse"),
            }
            false
        });
        gone
    }

    /// The template `namespace/name`, parsed.
    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<DynamicObject>> {
        let by_name = self.by_name.read();
        let bytes = by_name.get(&(namespace.to_owned(), name.to_owned()))?;
        match serde_json::from_slice(bytes) {
            Ok(object) => Some(Arc::new(object)),
            Err(error) => {
                warn!(%error, namespace, name, "cached template does not parse");
                None
            }
        }
    }

    /// `(namespace, name)` of every template, sorted.
    pub fn keys(&self) -> Vec<(String, String)> {
        let mut keys: Vec<_> = self.by_name.read().keys().cloned().collect();
        keys.sort_unstable();
        keys
    }
}

impl KindWatch {
    pub fn start(detector: Arc<Detector>, served: ServedKind) -> Self {
        let store = Templates::default();
        let templates = store.clone();
        let api: Api<DynamicObject> = Api::all_with(detector.client.clone(), &served.resource);
        let api_version = served.resource.api_version.clone();
        let kind = served.resource.kind.clone();
        let task = tokio::spawn(async move {
            let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
            let mut stream = std::pin::pin!(stream);
            // A (re)list updates the store object by object, before the object is queued (a
            // worker reads the store: it must find what was listed, not what the store held
            // before the watch broke); objects the list did not have were deleted while the
            // watch was down and go when it is complete.
            let mut listed = HashSet::new();
            while let Some(event) = stream.next().await {
                match event {
                    Ok(Event::Apply(object)) => {
                        templates.apply(&object);
                        detector.template_seen(&object, &api_version, &kind, false)
                    }
                    Ok(Event::InitApply(object)) => {
                        templates.apply(&object);
                        listed.insert(key_of(&object));
                        detector.template_seen(&object, &api_version, &kind, true)
                    }
                    Ok(Event::Delete(object)) => {
                        templates.delete(&object);
                        detector.template_gone(&object, &api_version, &kind)
                    }
                    Ok(Event::Init) => listed.clear(),
                    Ok(Event::InitDone) => {
                        for object in templates.retain(&std::mem::take(&mut listed)) {
                            detector.template_gone(&object, &api_version, &kind);
                        }
                    }
                    Err(error) => warn!(%error, %api_version, %kind, "watching templates"),
                }
            }
        });
        Self {
            served,
            store,
            task,
        }
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<DynamicObject>> {
        self.store.get(namespace, name)
    }
}

impl Detector {
    /// Re-runs discovery whenever a CRD is created, changed or deleted. A new CRD's kinds can
    /// reach discovery a moment after the CRD itself: discovery is retried (a few times, with a
    /// growing pause) until every served version of the CRD is watched.
    pub(super) async fn watch_crds(self: Arc<Self>) {
        let api = Api::<CustomResourceDefinition>::all(self.client.clone());
        let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        // CRDs listed when the watch (re)starts may be newer than the last discovery.
        let mut listed = Vec::new();
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Apply(crd)) => self.ensure_watched(&served_kinds(&crd)).await,
                Ok(Event::Delete(_)) => self.rediscover().await,
                Ok(Event::Init) => listed.clear(),
                Ok(Event::InitApply(crd)) => listed.extend(served_kinds(&crd)),
                Ok(Event::InitDone) => self.ensure_watched(&std::mem::take(&mut listed)).await,
                Err(error) => warn!(%error, "watching CustomResourceDefinitions"),
            }
        }
    }

    /// Runs discovery until every kind of `wanted` is watched (a few tries, growing pause).
    async fn ensure_watched(self: &Arc<Self>, wanted: &[(String, String)]) {
        let mut pause = Duration::from_millis(50);
        for attempt in 0..8 {
            let watched = {
                let kinds = self.kinds.lock();
                wanted.iter().all(|k| kinds.contains_key(k))
            };
            if watched && attempt > 0 {
                return;
            }
            if attempt > 0 {
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            self.rediscover().await;
        }
    }
}

/// `(apiVersion, kind)` of every served version of `crd`.
fn served_kinds(crd: &CustomResourceDefinition) -> Vec<(String, String)> {
    if crd.metadata.deletion_timestamp.is_some() {
        return Vec::new();
    }
    crd.spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| {
            (
                format!("{}/{}", crd.spec.group, v.name),
                crd.spec.names.kind.clone(),
            )
        })
        .collect()
}
