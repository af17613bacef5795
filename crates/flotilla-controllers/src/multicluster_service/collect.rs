//! `endpointsliceCollect` (Karmada's `endpointslice-collect-controller`): for every provider
//! cluster holding a MultiClusterService marker Work, one watch of the member's EndpointSlices;
//! each slice of a Service some MultiClusterService exposes from that cluster is reported into
//! the control plane as a Work `karmada-es-<provider>/<endpointslice work name>` (dispatching
//! suspended: a record, the dispatch controller copies it to the consumers), labelled with the
//! MultiClusterService and `endpointslice.karmada.io/managed-by: MultiClusterService`, held by
//! the dispatch controller's finalizer. A slice that goes away in the member takes its Work
//! along. Slices Karmada itself wrote (managed by its dispatch or EndpointSlice controllers)
//! are never reported. The controller manager collects from Push providers, a Pull provider's
//! agent from its own cluster (`Context::handles`), as Karmada's controller manager and
//! karmada-agent split it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::names::{cluster_name, execution_space_name, work_name};
use flotilla_api::karmada::{
    Cluster, MCS_NAME_LABEL, MCS_NAMESPACE_LABEL, MULTI_CLUSTER_SERVICE_KIND, Work,
};
use flotilla_member::MemberClients;
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Shutdown, WorkQueue};
use futures::StreamExt as _;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event as WatchEvent};
use parking_lot::Mutex;
use serde_json::json;
use tracing::{info, warn};

use super::{GATE, delete_work, work_for, work_holds};
use crate::binding::works::ensure_work;
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "endpointsliceCollect";
/// Label on a reported slice's Work: which features report it (`.`-joined).
pub const WORK_MANAGED_BY_LABEL: &str = "endpointslice.karmada.io/managed-by";
/// The dispatch controller's finalizer on reported slices' Works.
pub const DISPATCH_FINALIZER: &str = "karmada.io/mcs-endpointslice-dispatch-controller";
/// `endpointslice.kubernetes.io/managed-by`.
pub const SLICE_MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// `kubernetes.io/service-name`.
pub const SLICE_SERVICE_LABEL: &str = "kubernetes.io/service-name";
/// Slices Karmada's dispatch controller writes into consumers.
pub const DISPATCHED_BY: &str = "endpointslice-dispatch-controller.karmada.io";
/// Slices Karmada's (ServiceImport) EndpointSlice controller writes.
pub const KARMADA_SLICE_CONTROLLER: &str = "endpointslice-controller.karmada.io";

/// The Service a slice belongs to (`kubernetes.io/service-name`; empty when unlabelled).
pub fn service_of(slice: &EndpointSlice) -> String {
    slice
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(SLICE_SERVICE_LABEL))
        .cloned()
        .unwrap_or_default()
}

/// Whether Karmada wrote the slice (then it is never reported back).
pub fn managed_by_karmada(slice: &EndpointSlice) -> bool {
    matches!(
        slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SLICE_MANAGED_BY_LABEL))
            .map(String::as_str),
        Some(DISPATCHED_BY | KARMADA_SLICE_CONTROLLER)
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// A marker Work (namespace, name).
    Marker(String, String),
    /// A member slice (cluster, namespace, name).
    Slice(String, String, String),
}

/// One member watch with its cache; the watch stops when this is dropped.
pub struct MemberWatch<K: kube::Resource + Clone + 'static>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    /// The member's objects.
    pub store: Store<K>,
    task: tokio::task::AbortHandle,
}

impl<K: kube::Resource + Clone + 'static> std::fmt::Debug for MemberWatch<K>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberWatch").finish_non_exhaustive()
    }
}

impl<K: kube::Resource + Clone + 'static> Drop for MemberWatch<K>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What a member watch tells its handler.
#[derive(Debug)]
pub enum MemberEvent<'a, K> {
    /// An object was created, changed or deleted, or was listed (the cache has taken it in:
    /// a list's objects are told once the whole list is in the cache).
    Changed(&'a K),
    /// The cache was (re)listed: objects deleted while the watch was down are gone from it
    /// without an event of their own.
    Relisted,
}

/// Watches `api` of member `cluster` into a cache, telling `handle` of every change (it
/// returns `false` to stop the watch). Errors are retried after a second.
pub fn watch_member<K>(
    api: Api<K>,
    cluster: &str,
    handle: impl Fn(MemberEvent<'_, K>) -> bool + Send + 'static,
) -> MemberWatch<K>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
{
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher::watcher(api, watcher::Config::default()));
    let name = cluster.to_owned();
    let cache = reader.clone();
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let go_on = match event {
                Ok(WatchEvent::Apply(o) | WatchEvent::Delete(o)) => {
                    handle(MemberEvent::Changed(&o))
                }
                // A (re)list reaches the cache only when it is complete: its objects are told
                // then, so that a handler finds each of them in the cache.
                Ok(WatchEvent::InitApply(_) | WatchEvent::Init) => true,
                Ok(WatchEvent::InitDone) => {
                    let mut listed = cache.state();
                    listed.sort_by_key(|o| (o.meta().namespace.clone(), o.meta().name.clone()));
                    listed
                        .iter()
                        .all(|o| handle(MemberEvent::Changed(o.as_ref())))
                        && handle(MemberEvent::Relisted)
                }
                Err(error) => {
                    warn!(cluster = %name, %error, "member watch failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    true
                }
            };
            if !go_on {
                return;
            }
        }
    });
    MemberWatch {
        store: reader,
        task: task.abort_handle(),
    }
}

/// Waits (up to 30 seconds) for a member cache's first list.
pub async fn listed<K: kube::Resource + Clone + 'static>(
    store: &Store<K>,
    cluster: &str,
) -> Result<(), kube::Error>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    match tokio::time::timeout(Duration::from_secs(30), store.wait_until_ready()).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(not_ready(cluster)),
    }
}

/// A feature that reports member slices into the control plane as Works: its value in
/// `endpointslice.karmada.io/managed-by`, the labels naming the Service on the Work, and the
/// finalizer of the controller that consumes the reports.
#[derive(Debug, Clone, Copy)]
pub struct SliceReporter {
    /// The `managed-by` value (`MultiClusterService`, `ServiceExport`).
    pub manager: &'static str,
    /// Label naming the Service's namespace.
    pub namespace_label: &'static str,
    /// Label naming the Service.
    pub name_label: &'static str,
    /// Finalizer of the controller consuming the reports.
    pub finalizer: &'static str,
}

/// The MultiClusterService's reports.
pub const MCS_REPORTER: SliceReporter = SliceReporter {
    manager: MULTI_CLUSTER_SERVICE_KIND,
    namespace_label: MCS_NAMESPACE_LABEL,
    name_label: MCS_NAME_LABEL,
    finalizer: DISPATCH_FINALIZER,
};

/// The features named in a reported slice Work's `managed-by` label.
pub fn managers_of(work: &Work) -> BTreeSet<String> {
    work.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(WORK_MANAGED_BY_LABEL))
        .map(|v| {
            v.split('.')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the Work recording `slice` of `cluster` for `reporter` (Karmada's
/// `reportEndpointSlice`): suspended, labelled with the Service and the reporting features
/// (those already recorded kept), held by the consumer's finalizer.
pub async fn report_slice(
    client: &kube::Client,
    works: &Store<Work>,
    reporter: &SliceReporter,
    cluster: &str,
    slice: &EndpointSlice,
) -> Result<(), kube::Error> {
    let namespace = slice.metadata.namespace.clone().unwrap_or_default();
    let name = slice.metadata.name.clone().unwrap_or_default();
    let service = service_of(slice);
    let work_name = work_name("EndpointSlice", &name, &namespace);
    let space = execution_space_name(cluster);
    let stored = works.get(&ObjectRef::new(&work_name).within(&space));
    let mut managers = stored.as_deref().map(managers_of).unwrap_or_default();
    managers.insert(reporter.manager.to_owned());
    let meta = ObjectMeta {
        name: Some(work_name),
        namespace: Some(space),
        labels: Some(
            [
                (reporter.namespace_label.to_owned(), namespace),
                (reporter.name_label.to_owned(), service),
                (
                    WORK_MANAGED_BY_LABEL.to_owned(),
                    managers.into_iter().collect::<Vec<_>>().join("."),
                ),
            ]
            .into(),
        ),
        finalizers: Some(vec![reporter.finalizer.to_owned()]),
        ..ObjectMeta::default()
    };
    let mut manifest = serde_json::to_value(slice).map_err(kube::Error::SerdeError)?;
    manifest["apiVersion"] = "discovery.k8s.io/v1".into();
    manifest["kind"] = "EndpointSlice".into();
    let work = work_for(meta, manifest, true);
    ensure_work(client, work, stored.as_deref()).await?;
    Ok(())
}

struct Collect {
    context: Context,
    client: kube::Client,
    members: Arc<dyn MemberClients>,
    works: Store<Work>,
    clusters: Store<Cluster>,
    queue: WorkQueue<Key>,
    watches: Mutex<HashMap<String, MemberWatch<EndpointSlice>>>,
}

/// `CONTROLLERS` entry point: idles unless gate `MultiClusterService` is on.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move {
        if !context.options.gates.enabled(GATE) {
            shutdown.cancelled().await;
            return;
        }
        run(context, shutdown).await
    })
}

fn is_marker(work: &Work) -> bool {
    work_holds(
        work,
        "networking.karmada.io/v1alpha1",
        MULTI_CLUSTER_SERVICE_KIND,
    )
}

async fn run(context: Context, shutdown: Shutdown) {
    // In the agent only its execution namespace is readable (and of interest).
    let works = context.member_works();
    let clusters = context.informers.all::<Cluster>();
    let this = Arc::new(Collect {
        context: context.clone(),
        client: context.client.clone(),
        members: context.members.clone(),
        works: works.store(),
        clusters: clusters.store(),
        queue: WorkQueue::named("endpointslice-collect-controller"),
        watches: Mutex::new(HashMap::new()),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&works, move |event: WatchEvent<&Work>| {
        if let WatchEvent::Apply(work) | WatchEvent::InitApply(work) = event
            && is_marker(work)
        {
            me.queue.add(Key::Marker(
                work.metadata.namespace.clone().unwrap_or_default(),
                work.metadata.name.clone().unwrap_or_default(),
            ));
        }
    });
    let me = this.clone();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| {
        // A cluster that went away (or stopped being Ready) loses its watch.
        let gone = match event {
            WatchEvent::Delete(c) => Some(c.name().to_owned()),
            WatchEvent::Apply(c) if !crate::execution::is_ready(c) => Some(c.name().to_owned()),
            _ => None,
        };
        if let Some(cluster) = gone {
            me.watches.lock().remove(&cluster);
        }
    });
    let ready = async {
        works.wait_until_ready().await;
        clusters.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        3,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(key).await }
        },
        |key, error: &kube::Error| warn!(?key, %error, "collecting EndpointSlices failed"),
    );
    info!("endpointslice collect controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
    this.watches.lock().clear();
}

/// The error of a member that is not Ready (or did not answer in time).
pub fn not_ready(cluster: &str) -> kube::Error {
    kube::Error::Api(
        kube::core::Status::failure(
            &format!("cluster({cluster}) not ready"),
            "ServiceUnavailable",
        )
        .with_code(503)
        .boxed(),
    )
}

impl Collect {
    async fn reconcile(self: &Arc<Self>, key: Key) -> Result<(), kube::Error> {
        match key {
            Key::Marker(namespace, name) => self.marker(&namespace, &name).await,
            Key::Slice(cluster, namespace, name) => self.slice(&cluster, &namespace, &name).await,
        }
    }

    /// A marker Work: make sure its cluster's slices are watched, and report the Service's.
    async fn marker(self: &Arc<Self>, namespace: &str, name: &str) -> Result<(), kube::Error> {
        let Some(work) = self.works.get(&ObjectRef::new(name).within(namespace)) else {
            return Ok(());
        };
        if work.is_deleting() || !is_marker(&work) {
            return Ok(());
        }
        let Ok(cluster) = cluster_name(namespace) else {
            return Ok(());
        };
        // Another process's provider (a Pull cluster's agent, or the controller manager for a
        // Push one) reports its slices; an unknown cluster may be one not yet seen.
        match self.clusters.get(&ObjectRef::new(cluster)) {
            Some(provider) if !self.context.handles(&provider) => return Ok(()),
            Some(_) => {}
            None => return Err(not_ready(cluster)),
        }
        let store = self.watch(cluster).await?;
        let labels = work.metadata.labels.clone().unwrap_or_default();
        let service_namespace = labels.get(MCS_NAMESPACE_LABEL).cloned().unwrap_or_default();
        let service = labels.get(MCS_NAME_LABEL).cloned().unwrap_or_default();
        for slice in store.state() {
            let slice_labels = slice.metadata.labels.clone().unwrap_or_default();
            if slice.metadata.namespace.as_deref() != Some(service_namespace.as_str())
                || slice_labels.get(SLICE_SERVICE_LABEL) != Some(&service)
                || managed_by_karmada(&slice)
            {
                continue;
            }
            self.report(cluster, &slice).await?;
        }
        Ok(())
    }

    /// The member's slices, watched from now on (started on first use; waits for the list).
    async fn watch(self: &Arc<Self>, cluster: &str) -> Result<Store<EndpointSlice>, kube::Error> {
        let ready = self
            .clusters
            .get(&ObjectRef::new(cluster))
            .is_some_and(|c| crate::execution::is_ready(&c));
        if !ready {
            return Err(not_ready(cluster));
        }
        let existing = self.watches.lock().get(cluster).map(|w| w.store.clone());
        let store = match existing {
            Some(store) => store,
            None => {
                let client = self
                    .members
                    .client(cluster)
                    .await
                    .map_err(|_| not_ready(cluster))?;
                let me = Arc::downgrade(self);
                let name = cluster.to_owned();
                let watch = watch_member(
                    Api::<EndpointSlice>::all(client),
                    cluster,
                    move |event: MemberEvent<'_, EndpointSlice>| {
                        let Some(me) = me.upgrade() else {
                            return false;
                        };
                        // A relist finds what the markers want again when they next change.
                        let MemberEvent::Changed(slice) = event else {
                            return true;
                        };
                        me.queue.add(Key::Slice(
                            name.clone(),
                            slice.metadata.namespace.clone().unwrap_or_default(),
                            slice.metadata.name.clone().unwrap_or_default(),
                        ));
                        true
                    },
                );
                let mut watches = self.watches.lock();
                watches
                    .entry(cluster.to_owned())
                    .or_insert(watch)
                    .store
                    .clone()
            }
        };
        listed(&store, cluster).await?;
        Ok(store)
    }

    /// A member slice changed or went away.
    async fn slice(&self, cluster: &str, namespace: &str, name: &str) -> Result<(), kube::Error> {
        let store = self.watches.lock().get(cluster).map(|w| w.store.clone());
        let Some(store) = store else {
            return Ok(());
        };
        let Some(slice) = store.get(&ObjectRef::new(name).within(namespace)) else {
            let work = self.works.get(
                &ObjectRef::new(&work_name("EndpointSlice", name, namespace))
                    .within(&execution_space_name(cluster)),
            );
            if let Some(work) = work {
                release_reported_slice(&self.client, &work).await?;
            }
            return Ok(());
        };
        if managed_by_karmada(&slice) {
            return Ok(());
        }
        let service = service_of(&slice);
        let space = execution_space_name(cluster);
        let label = super::dispatch::label;
        let exposed = self.works.find(|work| {
            work.metadata.namespace.as_deref() == Some(space.as_str())
                && label(work, MCS_NAMESPACE_LABEL) == Some(namespace)
                && label(work, MCS_NAME_LABEL) == Some(service.as_str())
                && is_marker(work)
        });
        if exposed.is_none() {
            return Ok(());
        }
        self.report(cluster, &slice).await
    }

    /// Writes the Work recording `slice` of `cluster`.
    async fn report(&self, cluster: &str, slice: &EndpointSlice) -> Result<(), kube::Error> {
        report_slice(&self.client, &self.works, &MCS_REPORTER, cluster, slice).await
    }
}

/// A reported slice's Work no longer reported by MultiClusterService (Karmada's
/// `cleanProviderClustersEndpointSliceWork`).
pub async fn release_reported_slice(client: &kube::Client, work: &Work) -> Result<(), kube::Error> {
    release_slice(client, work, &MCS_REPORTER).await
}

/// A reported slice's Work no longer reported by `reporter`: kept for the other features that
/// report it (the reporter's labels and `managed-by` value dropped, written against the
/// Work's `resourceVersion`), else deleted.
pub async fn release_slice(
    client: &kube::Client,
    work: &Work,
    reporter: &SliceReporter,
) -> Result<(), kube::Error> {
    let mut managers = managers_of(work);
    managers.remove(reporter.manager);
    if managers.is_empty() {
        return delete_work(client, work).await;
    }
    let namespace = work.metadata.namespace.as_deref().unwrap_or_default();
    let name = work.metadata.name.as_deref().unwrap_or_default();
    let patch = json!({"metadata": {
        "resourceVersion": work.metadata.resource_version,
        "labels": {
            reporter.name_label: null,
            reporter.namespace_label: null,
            WORK_MANAGED_BY_LABEL: managers.into_iter().collect::<Vec<_>>().join("."),
        },
    }});
    match Api::<Work>::namespaced(client.clone(), namespace)
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

/// The reported slices of the cluster of `marker` for its MultiClusterService are released
/// (Karmada's `cleanProviderEndpointSliceWork`).
pub async fn release_reported_slices(
    client: &kube::Client,
    works: &Store<Work>,
    marker: &Work,
) -> Result<(), kube::Error> {
    let labels = marker.metadata.labels.clone().unwrap_or_default();
    for work in works.state() {
        let these = work.metadata.labels.clone().unwrap_or_default();
        if work.metadata.namespace != marker.metadata.namespace
            || these.get(MCS_NAME_LABEL) != labels.get(MCS_NAME_LABEL)
            || these.get(MCS_NAMESPACE_LABEL) != labels.get(MCS_NAMESPACE_LABEL)
            || !work_holds(&work, "discovery.k8s.io/v1", "EndpointSlice")
            || work
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(super::dispatch::PROVISION_CLUSTER_ANNOTATION))
        {
            continue;
        }
        release_reported_slice(client, &work).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
