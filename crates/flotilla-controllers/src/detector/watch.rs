//! One watch (with a store of compact templates) per propagatable kind, and the CRD watch that
//! triggers discovery again.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
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

/// The templates of one kind (compact JSON, without `metadata.managedFields`).
pub(super) type Templates = crate::compact::CompactObjects;

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
                        listed.insert(crate::compact::key_of(&object));
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
