//! The scheduler's watches: ResourceBindings and ClusterResourceBindings (queued when their
//! generation changes; a relist once the store holds it), and Clusters (the snapshot is rebuilt,
//! bindings queued or retried as [`Scheduler::cluster_seen`] says).

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use flotilla_api::karmada::Cluster;
use flotilla_runtime::{Priority, Shutdown};
use futures::StreamExt;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector;
use kube::runtime::watcher::{self, Event as WatchEvent};
use tracing::warn;

use super::{BindingKey, Cached, ClusterShape, Scheduler, lock};
use crate::decide::affected_by_cluster;

impl Scheduler {
    pub(super) async fn watch_bindings<K>(
        self: Arc<Self>,
        api: Api<K>,
        writer: reflector::store::Writer<K>,
        key_of: fn(&K) -> BindingKey,
        slim: fn(&mut K),
        healthy: fn(&K) -> std::collections::BTreeSet<String>,
    ) where
        K: kube::Resource<DynamicType = ()>
            + Clone
            + std::fmt::Debug
            + serde::de::DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        // The scheduler never reads managed fields, owner references or the per-cluster
        // aggregated status: the cache keeps bindings without them (three managed-fields
        // entries with their field trees and a status document per target cluster on a
        // scheduled, applied binding; ~40 % of a cached binding).
        // Gate SchedulingOvercommitProtection: a cluster turning Healthy releases the binding's
        // footprint there (read before the aggregated status is dropped).
        let me = self.clone();
        let watch = watcher::watcher(api, watcher::Config::default()).modify(move |object| {
            if me.config.overcommit_protection {
                me.observe_health(&key_of(object), healthy(object));
            }
            let meta = object.meta_mut();
            meta.managed_fields = None;
            meta.owner_references = None;
            slim(object);
        });
        let stream = reflector::reflector(writer, watch).default_backoff();
        let mut stream = std::pin::pin!(stream);
        // A (re)list is queued when it is complete: the reflector's store serves what it held
        // before until then, and a worker must read what was listed (a watch that fell out of
        // the server's window missed changes). Bindings the list did not have were deleted
        // meanwhile.
        let mut listed: Vec<(BindingKey, i64)> = Vec::new();
        let cluster_scoped = K::kind(&()) == "ClusterResourceBinding";
        while let Some(event) = stream.next().await {
            match event {
                Ok(WatchEvent::Apply(object)) => self.binding_seen(
                    key_of(&object),
                    object.meta().generation.unwrap_or(0),
                    false,
                ),
                Ok(WatchEvent::InitApply(object)) => {
                    listed.push((key_of(&object), object.meta().generation.unwrap_or(0)));
                }
                Ok(WatchEvent::Delete(object)) => self.binding_gone(&key_of(&object)),
                Ok(WatchEvent::Init) => listed.clear(),
                Ok(WatchEvent::InitDone) => {
                    let present: HashSet<&BindingKey> = listed.iter().map(|(k, _)| k).collect();
                    let gone: Vec<BindingKey> = lock(&self.generations)
                        .keys()
                        .filter(|k| {
                            matches!(k, BindingKey::Cluster { .. }) == cluster_scoped
                                && !present.contains(k)
                        })
                        .cloned()
                        .collect();
                    for key in &gone {
                        self.binding_gone(key);
                    }
                    for (key, generation) in std::mem::take(&mut listed) {
                        self.binding_seen(key, generation, true);
                    }
                }
                Err(error) => warn!(%error, "watching bindings"),
            }
        }
    }

    fn binding_gone(&self, key: &BindingKey) {
        self.forget_assumed(key);
        lock(&self.generations).remove(key);
        lock(&self.unschedulable).remove(key);
        self.queue.forget(key);
    }

    fn binding_seen(&self, key: BindingKey, generation: i64, initial: bool) {
        let previous = lock(&self.generations).insert(key.clone(), generation);
        // Status-only updates (same generation) never queue a binding.
        if previous == Some(generation) {
            return;
        }
        let event = if previous.is_none() {
            "BindingAdd"
        } else {
            "BindingUpdate"
        };
        self.metrics.incoming(event);
        let priority = if initial {
            Priority::Low
        } else {
            Priority::High
        };
        self.queue.add_with(key, priority);
        self.update_pending();
    }

    pub(super) async fn watch_clusters(
        self: Arc<Self>,
        writer: reflector::store::Writer<Cluster>,
        shutdown: Shutdown,
    ) {
        let api = Api::<Cluster>::all(self.client.clone());
        let stream =
            reflector::reflector(writer, watcher::watcher(api, watcher::Config::default()))
                .default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut listed = false;
        while let Some(event) = stream.next().await {
            match &event {
                Ok(WatchEvent::Init) => listed = false,
                Ok(WatchEvent::InitDone) => listed = true,
                _ => {}
            }
            match event {
                Ok(WatchEvent::Apply(cluster)) => self.cluster_seen(&cluster, true),
                Ok(WatchEvent::InitApply(cluster)) => self.cluster_seen(&cluster, false),
                Ok(WatchEvent::Delete(cluster)) => {
                    lock(&self.cluster_shapes).remove(cluster.name());
                    self.invalidate_snapshot();
                }
                Ok(WatchEvent::Init | WatchEvent::InitDone) => self.invalidate_snapshot(),
                Err(error) => warn!(%error, "watching clusters"),
            }
            if let Some(members) = &self.config.members
                && listed
            {
                let clusters: Vec<Cluster> = self
                    .clusters
                    .state()
                    .iter()
                    .map(|c| (**c).clone())
                    .collect();
                members.sync(&clusters, &shutdown);
            }
        }
    }

    /// A cluster changed. A new cluster, a spec or label change, or the start of its deletion
    /// queues the bindings it concerns before or after the change (Karmada's
    /// `enqueueAffectedBindings`; Karmada ignores additions, Flotilla treats them as a change);
    /// any change retries the bindings that lacked capacity (beyond Karmada).
    fn cluster_seen(&self, cluster: &Cluster, live: bool) {
        self.invalidate_snapshot();
        let shape = ClusterShape {
            generation: cluster.metadata.generation,
            labels: cluster.metadata.labels.clone(),
            deleting: cluster.is_deleting(),
        };
        let previous = lock(&self.cluster_shapes).insert(
            cluster.name().to_owned(),
            (shape.clone(), Arc::new(cluster.clone())),
        );
        if !live {
            return;
        }
        let mut keys: BTreeSet<BindingKey> = lock(&self.unschedulable).iter().cloned().collect();
        match previous {
            Some((old_shape, _)) if old_shape == shape => {}
            previous => {
                let old = previous.map(|(_, old)| old);
                keys.extend(self.affected_bindings(old.as_deref(), cluster));
            }
        }
        for key in keys {
            self.metrics.incoming("ClusterChanged");
            self.queue.add(key);
        }
        self.update_pending();
    }

    /// Our bindings a change of a cluster (`old` before, `new` after) concerns.
    fn affected_bindings(&self, old: Option<&Cluster>, new: &Cluster) -> Vec<BindingKey> {
        let concerned = |cached: &Cached| {
            let binding = cached.view();
            let generation = binding.metadata.generation.unwrap_or(0);
            self.is_ours(&binding)
                && old.into_iter().chain([new]).any(|cluster| {
                    affected_by_cluster(generation, binding.spec, binding.status, cluster)
                })
        };
        let mut keys = Vec::new();
        for binding in self.bindings.state() {
            let key = BindingKey::Namespaced {
                namespace: binding.metadata.namespace.clone().unwrap_or_default(),
                name: binding.metadata.name.clone().unwrap_or_default(),
            };
            if concerned(&Cached::Namespaced(binding)) {
                keys.push(key);
            }
        }
        for binding in self.cluster_bindings.state() {
            let key = BindingKey::Cluster {
                name: binding.metadata.name.clone().unwrap_or_default(),
            };
            if concerned(&Cached::Cluster(binding)) {
                keys.push(key);
            }
        }
        keys
    }
}
