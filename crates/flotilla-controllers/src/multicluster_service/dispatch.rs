//! `endpointsliceDispatch` (Karmada's `endpointslice-dispatch-controller`): every reported
//! EndpointSlice Work (`collect.rs`) is copied into each consumer cluster but its provider, as a
//! Work of the same name in the consumer's execution namespace whose slice is named
//! `<provider>-<slice>`, labelled `kubernetes.io/service-name: <service>` and
//! `endpointslice.kubernetes.io/managed-by: endpointslice-dispatch-controller.karmada.io`, and
//! annotated `endpointslice.karmada.io/provision-cluster: <provider>`. Consumers that left the
//! MultiClusterService lose their copies; a report that goes away (or stops being the
//! MultiClusterService's) takes its copies along, then releases its finalizer. Each dispatch
//! records `EndpointSliceDispatched` and `DispatchEndpointSliceSucceed` (or `…Failed`).

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::karmada::names::{cluster_name, execution_space_name};
use flotilla_api::karmada::{
    Cluster, MCS_ENDPOINT_SLICE_DISPATCHED, MCS_NAME_LABEL, MCS_NAMESPACE_LABEL,
    MultiClusterService, Work,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::{Value, json};
use tracing::{info, warn};

use super::collect::{
    DISPATCH_FINALIZER, DISPATCHED_BY, SLICE_MANAGED_BY_LABEL, SLICE_SERVICE_LABEL,
};
use super::{GATE, clusters_of, delete_work, set_condition, work_for, work_holds};
use crate::binding::render::EXECUTION_FINALIZER;
use crate::binding::works::ensure_work;
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "endpointsliceDispatch";
/// Annotation on a consumer's copy (Work and slice): the provider cluster.
pub const PROVISION_CLUSTER_ANNOTATION: &str = "endpointslice.karmada.io/provision-cluster";
/// Label Karmada's ServiceExport flow puts on reported slices' Works.
const SERVICE_NAME_LABEL: &str = "endpointslice.karmada.io/name";

type Key = (String, String);

struct Dispatch {
    client: kube::Client,
    recorder: Recorder,
    queue: WorkQueue<Key>,
    works: Store<Work>,
    services: Store<MultiClusterService>,
    clusters: Store<Cluster>,
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

/// A label of `work`, if set and not empty.
pub(super) fn label<'a>(work: &'a Work, key: &str) -> Option<&'a str> {
    work.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

fn provisioned(work: &Work) -> bool {
    work.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROVISION_CLUSTER_ANNOTATION))
        .is_some_and(|v| !v.is_empty())
}

fn key_of(work: &Work) -> Key {
    (
        work.metadata.namespace.clone().unwrap_or_default(),
        work.metadata.name.clone().unwrap_or_default(),
    )
}

async fn run(context: Context, shutdown: Shutdown) {
    let works = context.informers.all::<Work>();
    let services = context.informers.all::<MultiClusterService>();
    let clusters = context.informers.all::<Cluster>();
    let this = Arc::new(Dispatch {
        client: context.client.clone(),
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: "endpointslice-dispatch-controller".into(),
                instance: None,
            },
        ),
        queue: WorkQueue::named("endpointslice-dispatch-controller"),
        works: works.store(),
        services: services.store(),
        clusters: clusters.store(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&works, move |event: WatchEvent<&Work>| {
        let work = match event {
            WatchEvent::Apply(w) | WatchEvent::InitApply(w) | WatchEvent::Delete(w) => w,
            WatchEvent::Init | WatchEvent::InitDone => return,
        };
        let named = label(work, MCS_NAME_LABEL).is_some()
            || (matches!(event, WatchEvent::Apply(_)) && label(work, SERVICE_NAME_LABEL).is_some());
        if named && !provisioned(work) {
            me.queue.add(key_of(work));
        }
    });
    let me = this.clone();
    tasks.subscribe(&services, move |event: WatchEvent<&MultiClusterService>| {
        if let WatchEvent::Apply(m) | WatchEvent::InitApply(m) | WatchEvent::Delete(m) = event {
            me.requeue_reports(
                m.metadata.namespace.as_deref().unwrap_or_default(),
                m.metadata.name.as_deref().unwrap_or_default(),
            );
        }
    });
    let me = this.clone();
    let mut readiness = super::ClusterReadiness::default();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| {
        if !readiness.changed(&event) {
            return;
        }
        if let WatchEvent::Apply(cluster) | WatchEvent::Delete(cluster) = event {
            for mcs in me.services.state() {
                if clusters_of(&mcs.spec.consumer_clusters, &me.clusters).contains(cluster.name()) {
                    me.requeue_reports(
                        mcs.metadata.namespace.as_deref().unwrap_or_default(),
                        mcs.metadata.name.as_deref().unwrap_or_default(),
                    );
                }
            }
        }
    });
    let ready = async {
        works.wait_until_ready().await;
        services.wait_until_ready().await;
        clusters.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        2,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(&key).await }
        },
        |key, error: &kube::Error| {
            warn!(namespace = %key.0, name = %key.1, %error, "dispatching EndpointSlices failed")
        },
    );
    info!("endpointslice dispatch controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Dispatch {
    /// Queues the reports (not the copies) of a MultiClusterService.
    fn requeue_reports(&self, namespace: &str, name: &str) {
        for work in self.works.state() {
            if label(&work, MCS_NAME_LABEL) == Some(name)
                && label(&work, MCS_NAMESPACE_LABEL) == Some(namespace)
                && !provisioned(&work)
            {
                self.queue.add(key_of(&work));
            }
        }
    }

    async fn reconcile(&self, (namespace, name): &Key) -> Result<(), kube::Error> {
        let Some(work) = self.works.get(&ObjectRef::new(name).within(namespace)) else {
            return Ok(());
        };
        if !work_holds(&work, "discovery.k8s.io/v1", "EndpointSlice") {
            return Ok(());
        }
        let Some(mcs_name) = label(&work, MCS_NAME_LABEL).map(str::to_owned) else {
            return self.clean_up(&work).await;
        };
        if work.is_deleting() {
            return self.clean_up(&work).await;
        }
        let mcs_namespace = label(&work, MCS_NAMESPACE_LABEL)
            .unwrap_or_default()
            .to_owned();
        let Some(mcs) = self
            .services
            .get(&ObjectRef::new(&mcs_name).within(&mcs_namespace))
        else {
            return Ok(());
        };
        let result = self.dispatch(&work, &mcs).await;
        let reference = mcs.object_ref(&());
        match &result {
            Ok(()) => {
                set_condition(
                    &self.client,
                    &mcs,
                    MCS_ENDPOINT_SLICE_DISPATCHED,
                    true,
                    "EndpointSliceDispatchedSucceed",
                    "EndpointSlice are dispatched successfully",
                )
                .await?;
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        "DispatchEndpointSliceSucceed",
                        "DispatchEndpointSlice",
                        "EndpointSlice are dispatched successfully".into(),
                    )
                    .await;
            }
            Err(error) => {
                let message = flotilla_runtime::errors::describe(error);
                set_condition(
                    &self.client,
                    &mcs,
                    MCS_ENDPOINT_SLICE_DISPATCHED,
                    false,
                    "EndpointSliceDispatchedFailed",
                    &message,
                )
                .await?;
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        "DispatchEndpointSliceFailed",
                        "DispatchEndpointSlice",
                        message,
                    )
                    .await;
            }
        }
        result
    }

    async fn dispatch(&self, work: &Work, mcs: &MultiClusterService) -> Result<(), kube::Error> {
        let consumers = clusters_of(&mcs.spec.consumer_clusters, &self.clusters);
        let mcs_name = mcs.metadata.name.clone().unwrap_or_default();
        let mcs_namespace = mcs.metadata.namespace.clone().unwrap_or_default();
        // Copies in clusters that are no longer consumers go.
        for copy in self.works.state() {
            if label(&copy, MCS_NAME_LABEL) != Some(mcs_name.as_str())
                || label(&copy, MCS_NAMESPACE_LABEL) != Some(mcs_namespace.as_str())
                || !provisioned(&copy)
            {
                continue;
            }
            let Ok(cluster) = cluster_name(copy.metadata.namespace.as_deref().unwrap_or_default())
            else {
                continue;
            };
            if !consumers.contains(cluster) {
                delete_work(&self.client, &copy).await?;
            }
        }
        let Ok(provider) = cluster_name(work.metadata.namespace.as_deref().unwrap_or_default())
        else {
            return Ok(());
        };
        let Some(mut slice) = work.spec.workload.values().into_iter().next() else {
            return Ok(());
        };
        let reference = mcs.object_ref(&());
        let slice_name = slice["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        slice["metadata"]["name"] = format!("{provider}-{slice_name}").into();
        slice["metadata"]["labels"] = json!({
            SLICE_SERVICE_LABEL: mcs_name,
            SLICE_MANAGED_BY_LABEL: DISPATCHED_BY,
        });
        slice["metadata"]["annotations"] = json!({PROVISION_CLUSTER_ANNOTATION: provider});
        for consumer in &consumers {
            if consumer == provider {
                continue;
            }
            if let Some((reason, message)) =
                super::unusable(&self.clusters, consumer, "Consumer", "EndpointSlice")
            {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        reason,
                        "DispatchEndpointSlice",
                        message,
                    )
                    .await;
                continue;
            }
            let meta = ObjectMeta {
                name: work.metadata.name.clone(),
                namespace: Some(execution_space_name(consumer)),
                finalizers: Some(vec![EXECUTION_FINALIZER.to_owned()]),
                annotations: Some(
                    [(PROVISION_CLUSTER_ANNOTATION.to_owned(), provider.to_owned())].into(),
                ),
                labels: Some(BTreeMap::from([
                    (MCS_NAME_LABEL.to_owned(), mcs_name.clone()),
                    (MCS_NAMESPACE_LABEL.to_owned(), mcs_namespace.clone()),
                ])),
                ..ObjectMeta::default()
            };
            let copy = work_for(meta, slice.clone(), false);
            let stored = self.works.get(
                &ObjectRef::new(copy.metadata.name.as_deref().unwrap_or_default())
                    .within(copy.metadata.namespace.as_deref().unwrap_or_default()),
            );
            ensure_work(&self.client, copy, stored.as_deref()).await?;
        }
        Ok(())
    }

    /// The report's copies go, then its finalizer (Karmada's
    /// `cleanupEndpointSliceFromConsumerClusters`).
    async fn clean_up(&self, work: &Work) -> Result<(), kube::Error> {
        let Ok(provider) = cluster_name(work.metadata.namespace.as_deref().unwrap_or_default())
        else {
            return Ok(());
        };
        for copy in self.works.state() {
            let from = copy
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(PROVISION_CLUSTER_ANNOTATION));
            if copy.metadata.name == work.metadata.name
                && from.map(String::as_str) == Some(provider)
            {
                delete_work(&self.client, &copy).await?;
            }
        }
        let finalizers = work.metadata.finalizers.clone().unwrap_or_default();
        if finalizers.iter().any(|f| f == DISPATCH_FINALIZER) {
            let kept: Vec<&String> = finalizers
                .iter()
                .filter(|f| *f != DISPATCH_FINALIZER)
                .collect();
            let patch: Value = json!({"metadata": {
                "finalizers": kept,
                "resourceVersion": work.metadata.resource_version,
            }});
            match Api::<Work>::namespaced(
                self.client.clone(),
                work.metadata.namespace.as_deref().unwrap_or_default(),
            )
            .patch(
                work.metadata.name.as_deref().unwrap_or_default(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}
