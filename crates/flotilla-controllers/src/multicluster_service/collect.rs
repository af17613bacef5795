//! `endpointsliceCollect` (Karmada's `endpointslice-collect-controller`): for every provider
//! cluster holding a MultiClusterService marker Work, one watch of the member's EndpointSlices;
//! each slice of a Service some MultiClusterService exposes from that cluster is reported into
//! the control plane as a Work `karmada-es-<provider>/<endpointslice work name>` (dispatching
//! suspended: a record, the dispatch controller copies it to the consumers), labelled with the
//! MultiClusterService and `endpointslice.karmada.io/managed-by: MultiClusterService`, held by
//! the dispatch controller's finalizer. A slice that goes away in the member takes its Work
//! along. Slices Karmada itself wrote (managed by its dispatch or EndpointSlice controllers)
//! are never reported.

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

struct MemberSlices {
    store: Store<EndpointSlice>,
    task: tokio::task::AbortHandle,
}

impl Drop for MemberSlices {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Collect {
    client: kube::Client,
    members: Arc<dyn MemberClients>,
    works: Store<Work>,
    clusters: Store<Cluster>,
    queue: WorkQueue<Key>,
    watches: Mutex<HashMap<String, MemberSlices>>,
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
    let works = context.informers.all::<Work>();
    let clusters = context.informers.all::<Cluster>();
    let this = Arc::new(Collect {
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

fn not_ready(cluster: &str) -> kube::Error {
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
                let (reader, writer) = reflector::store();
                let stream = reflector::reflector(
                    writer,
                    watcher::watcher(
                        Api::<EndpointSlice>::all(client),
                        watcher::Config::default(),
                    ),
                );
                let me = Arc::downgrade(self);
                let name = cluster.to_owned();
                let task = tokio::spawn(async move {
                    let mut stream = std::pin::pin!(stream);
                    while let Some(event) = stream.next().await {
                        let Some(me) = me.upgrade() else {
                            return;
                        };
                        let slice = match event {
                            Ok(
                                WatchEvent::Apply(s)
                                | WatchEvent::InitApply(s)
                                | WatchEvent::Delete(s),
                            ) => s,
                            Ok(_) => continue,
                            Err(error) => {
                                warn!(cluster = %name, %error, "EndpointSlice watch failed; retrying");
                                tokio::time::sleep(Duration::from_secs(1)).await;
                                continue;
                            }
                        };
                        me.queue.add(Key::Slice(
                            name.clone(),
                            slice.metadata.namespace.clone().unwrap_or_default(),
                            slice.metadata.name.clone().unwrap_or_default(),
                        ));
                    }
                });
                let mut watches = self.watches.lock();
                let entry = watches.entry(cluster.to_owned()).or_insert(MemberSlices {
                    store: reader,
                    task: task.abort_handle(),
                });
                entry.store.clone()
            }
        };
        if tokio::time::timeout(Duration::from_secs(30), store.wait_until_ready())
            .await
            .is_err()
        {
            return Err(not_ready(cluster));
        }
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
        let service = slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SLICE_SERVICE_LABEL))
            .cloned()
            .unwrap_or_default();
        let space = execution_space_name(cluster);
        let exposed = self.works.state().iter().any(|work| {
            let labels = work.metadata.labels.clone().unwrap_or_default();
            work.metadata.namespace.as_deref() == Some(space.as_str())
                && labels.get(MCS_NAMESPACE_LABEL).map(String::as_str) == Some(namespace)
                && labels.get(MCS_NAME_LABEL) == Some(&service)
                && is_marker(work)
        });
        if !exposed {
            return Ok(());
        }
        self.report(cluster, &slice).await
    }

    /// Writes the Work recording `slice` of `cluster` (Karmada's `reportEndpointSlice`).
    async fn report(&self, cluster: &str, slice: &EndpointSlice) -> Result<(), kube::Error> {
        let namespace = slice.metadata.namespace.clone().unwrap_or_default();
        let name = slice.metadata.name.clone().unwrap_or_default();
        let service = slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SLICE_SERVICE_LABEL))
            .cloned()
            .unwrap_or_default();
        let work_name = work_name("EndpointSlice", &name, &namespace);
        let space = execution_space_name(cluster);
        let stored = self.works.get(&ObjectRef::new(&work_name).within(&space));
        let mut managers: BTreeSet<String> = stored
            .as_ref()
            .and_then(|w| w.metadata.labels.as_ref())
            .and_then(|l| l.get(WORK_MANAGED_BY_LABEL))
            .map(|v| {
                v.split('.')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        managers.insert(MULTI_CLUSTER_SERVICE_KIND.to_owned());
        let meta = ObjectMeta {
            name: Some(work_name),
            namespace: Some(space),
            labels: Some(
                [
                    (MCS_NAMESPACE_LABEL.to_owned(), namespace),
                    (MCS_NAME_LABEL.to_owned(), service),
                    (
                        WORK_MANAGED_BY_LABEL.to_owned(),
                        managers.into_iter().collect::<Vec<_>>().join("."),
                    ),
                ]
                .into(),
            ),
            finalizers: Some(vec![DISPATCH_FINALIZER.to_owned()]),
            ..ObjectMeta::default()
        };
        let mut manifest = serde_json::to_value(slice).expect("an EndpointSlice serializes");
        manifest["apiVersion"] = "discovery.k8s.io/v1".into();
        manifest["kind"] = "EndpointSlice".into();
        let work = work_for(meta, manifest, true);
        ensure_work(&self.client, work, stored.as_deref()).await?;
        Ok(())
    }
}

/// A reported slice's Work no longer reported by MultiClusterService: others keep it (the
/// MultiClusterService labels dropped), else it is deleted (Karmada's
/// `cleanProviderClustersEndpointSliceWork`).
pub async fn release_reported_slice(client: &kube::Client, work: &Work) -> Result<(), kube::Error> {
    let managers: Vec<String> = work
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(WORK_MANAGED_BY_LABEL))
        .map(|v| {
            v.split('.')
                .filter(|s| !s.is_empty() && *s != MULTI_CLUSTER_SERVICE_KIND)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if managers.is_empty() {
        return delete_work(client, work).await;
    }
    let namespace = work.metadata.namespace.as_deref().unwrap_or_default();
    let name = work.metadata.name.as_deref().unwrap_or_default();
    let patch = json!({"metadata": {"labels": {
        MCS_NAME_LABEL: null,
        MCS_NAMESPACE_LABEL: null,
        WORK_MANAGED_BY_LABEL: managers.join("."),
    }}});
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
