//! Karmada's classic multi-cluster Service flow (`multicluster.x-k8s.io` ServiceExport and
//! ServiceImport, `pkg/controllers/mcs`), three controllers with Karmada's names:
//!
//! - `serviceExport` (this module): once a ServiceExport reaches a Ready member (its Work
//!   applied), the member's ServiceExports and EndpointSlices are watched — by the controller
//!   manager for Push members, by the member's agent for a Pull one (`Context::handles`); every slice of an
//!   exported Service (not one Karmada wrote) is reported into the control plane as a suspended
//!   Work `karmada-es-<cluster>/<endpointslice work name>`, labelled with the Service
//!   (`endpointslice.karmada.io/namespace`, `…/name`) and `endpointslice.karmada.io/managed-by`
//!   including `ServiceExport`, held by the `endpointSlice` controller's finalizer. A slice or
//!   export that goes away takes its reports along (or only its share, when a
//!   MultiClusterService reports the same slice). The reporting itself is shared with
//!   `endpointsliceCollect` (`multicluster_service::collect`).
//! - `endpointSlice` (`endpoint_slice.rs`): each report becomes an EndpointSlice on the control
//!   plane, `imported-<cluster>-<slice>`, labelled
//!   `kubernetes.io/service-name: derived-<service>` and managed by
//!   `endpointslice-controller.karmada.io`.
//! - `serviceImport` (`service_import.rs`): a ClusterSetIP ServiceImport gets its derived
//!   Service `derived-<name>`. The interpreter names the derived Service and the imported
//!   slices as the ServiceImport's dependencies, so propagating the ServiceImport carries them.

pub mod api;
pub mod endpoint_slice;
pub mod service_import;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use flotilla_api::karmada::names::{cluster_name, execution_space_name, work_name};
use flotilla_api::karmada::{Cluster, Work};
use flotilla_member::MemberClients;
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::Api;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use tracing::{info, warn};

use self::api::ServiceExport;
use crate::manager::{Context, ControllerTask};
use crate::multicluster_service::collect::{
    MemberEvent, MemberWatch, SLICE_SERVICE_LABEL, SliceReporter, listed, managed_by_karmada,
    managers_of, not_ready, release_slice, report_slice, service_of, watch_member,
};
use crate::multicluster_service::work_holds;

/// The `--controllers` name.
pub const NAME: &str = "serviceExport";
/// Label on a reported slice's Work: the Service's namespace.
pub const SERVICE_NAMESPACE_LABEL: &str = "endpointslice.karmada.io/namespace";
/// Label on a reported slice's Work: the Service's name.
pub const SERVICE_NAME_LABEL: &str = "endpointslice.karmada.io/name";
/// The `endpointSlice` controller's finalizer on reported slices' Works.
pub const ENDPOINT_SLICE_FINALIZER: &str = "karmada.io/endpointslice-controller";
/// The kind, as the `endpointslice.karmada.io/managed-by` value.
pub const SERVICE_EXPORT_KIND: &str = "ServiceExport";

/// The ServiceExport flow's reports.
pub const REPORTER: SliceReporter = SliceReporter {
    manager: SERVICE_EXPORT_KIND,
    namespace_label: SERVICE_NAMESPACE_LABEL,
    name_label: SERVICE_NAME_LABEL,
    finalizer: ENDPOINT_SLICE_FINALIZER,
};

/// How often every watched cluster's reports are checked against its slices.
const RESYNC: std::time::Duration = std::time::Duration::from_secs(30);

/// `derived-<name>` (Karmada's `GenerateDerivedServiceName`).
pub fn derived_service_name(service: &str) -> String {
    format!("derived-{service}")
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// A cluster whose ServiceExport Work was applied: watch it.
    Cluster(String),
    /// A member ServiceExport (cluster, namespace, name).
    Export(String, String, String),
    /// A member EndpointSlice (cluster, namespace, name).
    Slice(String, String, String),
}

/// A member's two watches.
struct MemberWatches {
    exports: MemberWatch<ServiceExport>,
    slices: MemberWatch<EndpointSlice>,
}

struct Controller {
    context: Context,
    client: kube::Client,
    members: Arc<dyn MemberClients>,
    works: Store<Work>,
    clusters: Store<Cluster>,
    queue: WorkQueue<Key>,
    watches: Mutex<HashMap<String, MemberWatches>>,
}

/// Whether a Work holds a ServiceExport and was applied (Karmada's predicate and check).
fn applied_export(work: &Work) -> bool {
    !work.is_deleting()
        && work.is_applied()
        && work_holds(work, api::API_VERSION, SERVICE_EXPORT_KIND)
}

/// Whether a Work is a slice report of the ServiceExport flow.
fn reported_by_export(work: &Work) -> bool {
    managers_of(work).contains(SERVICE_EXPORT_KIND)
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    // In the agent only its execution namespace is readable (and of interest).
    let works = context.member_works();
    let clusters = context.informers.all::<Cluster>();
    let this = Arc::new(Controller {
        context: context.clone(),
        client: context.client.clone(),
        members: context.members.clone(),
        works: works.store(),
        clusters: clusters.store(),
        queue: WorkQueue::named("service-export-controller"),
        watches: Mutex::new(HashMap::new()),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&works, move |event: WatchEvent<&Work>| {
        if let WatchEvent::Apply(work) | WatchEvent::InitApply(work) = event
            && applied_export(work)
            && let Ok(cluster) = cluster_name(work.metadata.namespace.as_deref().unwrap_or(""))
            && !me.watches.lock().contains_key(cluster)
        {
            // Once watched, the member's own events (and relists) drive everything.
            me.queue.add(Key::Cluster(cluster.to_owned()));
        }
    });
    let me = this.clone();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| {
        // A cluster that went away (or stopped being Ready) loses its watches; they start
        // again from its ServiceExport Works once it is back.
        match event {
            WatchEvent::Delete(c) => {
                me.watches.lock().remove(c.name());
            }
            WatchEvent::Apply(c) if !crate::execution::is_ready(c) => {
                me.watches.lock().remove(c.name());
            }
            WatchEvent::Apply(c)
                if me.context.handles(c) && !me.watches.lock().contains_key(c.name()) =>
            {
                let space = execution_space_name(c.name());
                // `find` walks the cache under its lock (this runs for every status write of
                // every cluster not watched yet: no copy of the 30,000 Works of a burst).
                let exported = me.works.find(|w| {
                    w.metadata.namespace.as_deref() == Some(space.as_str()) && applied_export(w)
                });
                if exported.is_some() {
                    me.queue.add(Key::Cluster(c.name().to_owned()));
                }
            }
            _ => {}
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
        |key, error: &kube::Error| warn!(?key, %error, "syncing ServiceExport slices failed"),
    );
    // A safety net for what events alone may leave behind (a report written again from a slice
    // that was going away while its export was checked): every watched cluster's reports are
    // checked against its slices now and then.
    let me = this.clone();
    tasks.spawn(async move {
        loop {
            tokio::time::sleep(RESYNC).await;
            let clusters: Vec<String> = me.watches.lock().keys().cloned().collect();
            for cluster in clusters {
                me.queue.add(Key::Cluster(cluster));
            }
        }
    });
    info!("service export controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
    this.watches.lock().clear();
}

impl Controller {
    async fn reconcile(self: &Arc<Self>, key: Key) -> Result<(), kube::Error> {
        match key {
            Key::Cluster(cluster) => self.cluster(&cluster).await,
            Key::Export(cluster, namespace, name) => self.export(&cluster, &namespace, &name).await,
            Key::Slice(cluster, namespace, name) => self.slice(&cluster, &namespace, &name).await,
        }
    }

    /// The member's watches, started when absent (once Ready; only the clusters this process
    /// serves: Push ones in the controller manager, its own in the agent).
    async fn cluster(self: &Arc<Self>, cluster: &str) -> Result<(), kube::Error> {
        let Some(object) = self.clusters.get(&ObjectRef::new(cluster)) else {
            return Ok(());
        };
        if !self.context.handles(&object) {
            return Ok(());
        }
        if !crate::execution::is_ready(&object) {
            return Err(not_ready(cluster));
        }
        let (exports, slices) = self.watch(cluster).await?;
        listed(&exports, cluster).await?;
        listed(&slices, cluster).await?;
        // Reports whose export went away while nobody watched (a restart) are checked again.
        let space = execution_space_name(cluster);
        let reported: BTreeSet<(String, String)> = self
            .works
            .state()
            .iter()
            .filter(|w| w.metadata.namespace.as_deref() == Some(space.as_str()))
            .filter(|w| reported_by_export(w))
            .filter_map(|w| {
                let labels = w.metadata.labels.as_ref()?;
                Some((
                    labels.get(SERVICE_NAMESPACE_LABEL)?.clone(),
                    labels.get(SERVICE_NAME_LABEL)?.clone(),
                ))
            })
            .collect();
        for (namespace, name) in reported {
            self.queue
                .add(Key::Export(cluster.to_owned(), namespace, name));
        }
        Ok(())
    }

    /// Starts (when absent) the member's ServiceExport and EndpointSlice watches.
    async fn watch(
        self: &Arc<Self>,
        cluster: &str,
    ) -> Result<(Store<ServiceExport>, Store<EndpointSlice>), kube::Error> {
        if let Some(w) = self.watches.lock().get(cluster) {
            return Ok((w.exports.store.clone(), w.slices.store.clone()));
        }
        let client = self
            .members
            .client(cluster)
            .await
            .map_err(|_| not_ready(cluster))?;
        let exports = watch_member(
            Api::<ServiceExport>::all(client.clone()),
            cluster,
            self.handler(cluster, Key::Export),
        );
        let slices = watch_member(
            Api::<EndpointSlice>::all(client),
            cluster,
            self.handler(cluster, Key::Slice),
        );
        let mut watches = self.watches.lock();
        let entry = watches
            .entry(cluster.to_owned())
            .or_insert(MemberWatches { exports, slices });
        Ok((entry.exports.store.clone(), entry.slices.store.clone()))
    }

    /// A member watch's handler: each object changed is queued as `key(cluster, namespace,
    /// name)`; a relist queues the cluster, whose reports are all checked again (objects
    /// deleted while the watch was down have no event of their own).
    fn handler<K: kube::Resource>(
        self: &Arc<Self>,
        cluster: &str,
        key: fn(String, String, String) -> Key,
    ) -> impl Fn(MemberEvent<'_, K>) -> bool + Send + 'static {
        let me = Arc::downgrade(self);
        let cluster = cluster.to_owned();
        move |event| {
            let Some(me) = me.upgrade() else {
                return false;
            };
            match event {
                MemberEvent::Changed(object) => me.queue.add(key(
                    cluster.clone(),
                    object.meta().namespace.clone().unwrap_or_default(),
                    object.meta().name.clone().unwrap_or_default(),
                )),
                MemberEvent::Relisted => me.queue.add(Key::Cluster(cluster.clone())),
            }
            true
        }
    }

    fn stores(&self, cluster: &str) -> Option<(Store<ServiceExport>, Store<EndpointSlice>)> {
        self.watches
            .lock()
            .get(cluster)
            .map(|w| (w.exports.store.clone(), w.slices.store.clone()))
    }

    /// The reports of this flow in `cluster` for Service `namespace/name`.
    fn reports(&self, cluster: &str, namespace: &str, name: &str) -> Vec<Arc<Work>> {
        let space = execution_space_name(cluster);
        self.works
            .state()
            .into_iter()
            .filter(|w| w.metadata.namespace.as_deref() == Some(space.as_str()))
            .filter(|w| {
                let labels = w.metadata.labels.as_ref();
                labels
                    .and_then(|l| l.get(SERVICE_NAMESPACE_LABEL))
                    .map(String::as_str)
                    == Some(namespace)
                    && labels
                        .and_then(|l| l.get(SERVICE_NAME_LABEL))
                        .map(String::as_str)
                        == Some(name)
            })
            .filter(|w| reported_by_export(w))
            .collect()
    }

    /// A member ServiceExport changed: its Service's slices are reported and reports of slices
    /// gone are withdrawn; when it is gone, all its reports are (Karmada's
    /// `handleServiceExportEvent`).
    async fn export(&self, cluster: &str, namespace: &str, name: &str) -> Result<(), kube::Error> {
        let Some((exports, slices)) = self.stores(cluster) else {
            return Ok(());
        };
        let exported = exports
            .get(&ObjectRef::new(name).within(namespace))
            .is_some_and(|e| e.metadata.deletion_timestamp.is_none());
        let mut current = BTreeSet::new();
        if exported {
            for slice in slices.state() {
                if !exported_slice(&slice, namespace, name) {
                    continue;
                }
                let slice_name = slice.metadata.name.clone().unwrap_or_default();
                // Gone meanwhile (its own event withdraws the report): not written again.
                if slices
                    .get(&ObjectRef::new(&slice_name).within(namespace))
                    .is_none()
                {
                    continue;
                }
                current.insert(work_name("EndpointSlice", &slice_name, namespace));
                report_slice(&self.client, &self.works, &REPORTER, cluster, &slice).await?;
            }
        }
        for work in self.reports(cluster, namespace, name) {
            if !current.contains(work.metadata.name.as_deref().unwrap_or("")) {
                release_slice(&self.client, &work, &REPORTER).await?;
            }
        }
        Ok(())
    }

    /// A member slice changed or went away (Karmada's `handleEndpointSliceEvent`).
    async fn slice(&self, cluster: &str, namespace: &str, name: &str) -> Result<(), kube::Error> {
        let Some((exports, slices)) = self.stores(cluster) else {
            return Ok(());
        };
        let space = execution_space_name(cluster);
        let report = self
            .works
            .get(&ObjectRef::new(&work_name("EndpointSlice", name, namespace)).within(&space));
        let slice = slices.get(&ObjectRef::new(name).within(namespace));
        let Some(slice) = slice else {
            if let Some(work) = report.filter(|w| reported_by_export(w)) {
                release_slice(&self.client, &work, &REPORTER).await?;
            }
            return Ok(());
        };
        if managed_by_karmada(&slice) {
            return Ok(());
        }
        let service = service_of(&slice);
        let exported = !service.is_empty()
            && exports
                .get(&ObjectRef::new(&service).within(namespace))
                .is_some_and(|e| e.metadata.deletion_timestamp.is_none());
        if exported {
            report_slice(&self.client, &self.works, &REPORTER, cluster, &slice).await
        } else if let Some(work) = report.filter(|w| reported_by_export(w)) {
            // The slice left the exported Service.
            release_slice(&self.client, &work, &REPORTER).await
        } else {
            Ok(())
        }
    }
}

/// Whether `slice` belongs to Service `namespace/service` and was not written by Karmada.
fn exported_slice(slice: &EndpointSlice, namespace: &str, service: &str) -> bool {
    slice.metadata.namespace.as_deref() == Some(namespace)
        && slice
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(SLICE_SERVICE_LABEL))
            .map(String::as_str)
            == Some(service)
        && !managed_by_karmada(slice)
}

#[cfg(test)]
mod tests;
