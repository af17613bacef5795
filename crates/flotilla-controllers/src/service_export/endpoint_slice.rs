//! `endpointSlice` (Karmada's `endpointslice-controller`): every slice the ServiceExport flow
//! reported (a Work labelled `endpointslice.karmada.io/name`) becomes an EndpointSlice on the
//! control plane, in the slice's namespace, named `imported-<cluster>-<slice>`, labelled
//! `kubernetes.io/service-name: derived-<service>`,
//! `endpointslice.kubernetes.io/managed-by: endpointslice-controller.karmada.io` and with the
//! Work's permanent id, annotated with the Work's namespace and name. When the Work goes (or
//! is no longer the ServiceExport flow's), the slices carrying its permanent id are deleted and
//! the Work's finalizer `karmada.io/endpointslice-controller` released.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::karmada::Work;
use flotilla_api::karmada::names::cluster_name;
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{info, warn};

use super::{ENDPOINT_SLICE_FINALIZER, SERVICE_NAME_LABEL, derived_service_name};
use crate::manager::{Context, ControllerTask};
use crate::multicluster_service::collect::{
    KARMADA_SLICE_CONTROLLER, SLICE_MANAGED_BY_LABEL, SLICE_SERVICE_LABEL,
};

/// The `--controllers` name.
pub const NAME: &str = "endpointSlice";
/// Label on Works (set by the API server) and on the slices derived from them.
pub const WORK_PERMANENT_ID_LABEL: &str = "work.karmada.io/permanent-id";
/// Annotation on a derived slice: its Work's namespace.
pub const WORK_NAMESPACE_ANNOTATION: &str = "work.karmada.io/namespace";
/// Annotation on a derived slice: its Work's name.
pub const WORK_NAME_ANNOTATION: &str = "work.karmada.io/name";

/// `imported-<cluster>-<slice>` (Karmada's `GenerateEndpointSliceName`).
pub fn imported_slice_name(slice: &str, cluster: &str) -> String {
    format!("imported-{cluster}-{slice}")
}

/// Why a reported slice could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error("work {0} is not in an execution namespace")]
    NotExecutionSpace(String),
    #[error("decoding the EndpointSlice of work {work}: {source}")]
    Decode {
        work: String,
        #[source]
        source: serde_json::Error,
    },
}

/// The control plane's copy of `original` reported by `work` from `cluster` (Karmada's
/// `deriveEndpointSlice` plus its labels and annotations).
pub fn derive_slice(original: &EndpointSlice, cluster: &str, work: &Work) -> EndpointSlice {
    let labels = work.metadata.labels.clone().unwrap_or_default();
    let service = labels.get(SERVICE_NAME_LABEL).cloned().unwrap_or_default();
    let mut derived_labels = BTreeMap::new();
    derived_labels.insert(
        WORK_PERMANENT_ID_LABEL.to_owned(),
        labels
            .get(WORK_PERMANENT_ID_LABEL)
            .cloned()
            .unwrap_or_default(),
    );
    derived_labels.insert(
        SLICE_SERVICE_LABEL.to_owned(),
        derived_service_name(&service),
    );
    derived_labels.insert(
        SLICE_MANAGED_BY_LABEL.to_owned(),
        KARMADA_SLICE_CONTROLLER.to_owned(),
    );
    EndpointSlice {
        metadata: ObjectMeta {
            namespace: original.metadata.namespace.clone(),
            name: Some(imported_slice_name(
                original.metadata.name.as_deref().unwrap_or_default(),
                cluster,
            )),
            labels: Some(derived_labels),
            annotations: Some(
                [
                    (
                        WORK_NAMESPACE_ANNOTATION.to_owned(),
                        work.metadata.namespace.clone().unwrap_or_default(),
                    ),
                    (
                        WORK_NAME_ANNOTATION.to_owned(),
                        work.metadata.name.clone().unwrap_or_default(),
                    ),
                ]
                .into(),
            ),
            ..ObjectMeta::default()
        },
        address_type: original.address_type.clone(),
        endpoints: original.endpoints.clone(),
        ports: original.ports.clone(),
    }
}

/// Whether this controller cares about a Work.
fn concerned(work: &Work) -> bool {
    work.metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.get(SERVICE_NAME_LABEL).is_some_and(|v| !v.is_empty()))
        || holds_finalizer(work)
}

fn holds_finalizer(work: &Work) -> bool {
    work.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == ENDPOINT_SLICE_FINALIZER)
}

struct Controller {
    client: kube::Client,
    works: Store<Work>,
    queue: WorkQueue<(String, String)>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let works = context.informers.all::<Work>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        works: works.store(),
        queue: WorkQueue::named("endpointslice-controller"),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&works, move |event: WatchEvent<&Work>| {
        if let WatchEvent::Apply(work) | WatchEvent::InitApply(work) = event
            && concerned(work)
        {
            me.queue.add((
                work.metadata.namespace.clone().unwrap_or_default(),
                work.metadata.name.clone().unwrap_or_default(),
            ));
        }
    });
    if !until_ready(&shutdown, works.wait_until_ready()).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        2,
        move |key| {
            let me = me.clone();
            async move { me.reconcile(&key.0, &key.1).await }
        },
        |key, error: &ImportError| {
            warn!(namespace = %key.0, name = %key.1, %error, "importing EndpointSlices failed")
        },
    );
    info!("endpointslice controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    async fn reconcile(&self, namespace: &str, name: &str) -> Result<(), ImportError> {
        let Some(work) = self.works.get(&ObjectRef::new(name).within(namespace)) else {
            return Ok(());
        };
        let exported = work
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.get(SERVICE_NAME_LABEL).is_some_and(|v| !v.is_empty()));
        if work.is_deleting() || !exported {
            if !holds_finalizer(&work) {
                return Ok(());
            }
            self.delete_slices(&work).await?;
            return self.release(&work).await;
        }
        let cluster = cluster_name(namespace)
            .map_err(|_| ImportError::NotExecutionSpace(format!("{namespace}/{name}")))?;
        for manifest in work.spec.workload.values() {
            let original: EndpointSlice =
                serde_json::from_value(manifest).map_err(|source| ImportError::Decode {
                    work: format!("{namespace}/{name}"),
                    source,
                })?;
            let desired = derive_slice(&original, cluster, &work);
            self.create_or_update(desired).await?;
        }
        Ok(())
    }

    /// Karmada's `CreateOrUpdateEndpointSlice`: address type, endpoints, labels and ports.
    async fn create_or_update(&self, desired: EndpointSlice) -> Result<(), kube::Error> {
        let namespace = desired.metadata.namespace.clone().unwrap_or_default();
        let name = desired.metadata.name.clone().unwrap_or_default();
        let api = Api::<EndpointSlice>::namespaced(self.client.clone(), &namespace);
        match api.get_opt(&name).await? {
            None => {
                api.create(&PostParams::default(), &desired).await?;
                info!(%namespace, %name, "created imported EndpointSlice");
                Ok(())
            }
            Some(existing) => {
                let mut updated = existing.clone();
                updated.address_type = desired.address_type;
                updated.endpoints = desired.endpoints;
                updated.ports = desired.ports;
                updated.metadata.labels = desired.metadata.labels;
                if updated == existing {
                    return Ok(());
                }
                api.replace(&name, &PostParams::default(), &updated).await?;
                Ok(())
            }
        }
    }

    /// Deletes the control plane's slices derived from `work` (by its permanent id, and by the
    /// names its manifests derive to).
    async fn delete_slices(&self, work: &Work) -> Result<(), ImportError> {
        let id = work
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(WORK_PERMANENT_ID_LABEL))
            .filter(|id| !id.is_empty());
        let mut doomed: Vec<(String, String)> = Vec::new();
        if let Some(id) = id {
            let listed = Api::<EndpointSlice>::all(self.client.clone())
                .list(&ListParams::default().labels(&format!("{WORK_PERMANENT_ID_LABEL}={id}")))
                .await?;
            for slice in listed.items {
                doomed.push((
                    slice.metadata.namespace.unwrap_or_default(),
                    slice.metadata.name.unwrap_or_default(),
                ));
            }
        }
        let namespace = work.metadata.namespace.as_deref().unwrap_or_default();
        if let Ok(cluster) = cluster_name(namespace) {
            for manifest in work.spec.workload.values() {
                let slice_namespace = manifest
                    .pointer("/metadata/namespace")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                let slice_name = manifest
                    .pointer("/metadata/name")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                let pair = (
                    slice_namespace.to_owned(),
                    imported_slice_name(slice_name, cluster),
                );
                if !slice_name.is_empty() && !doomed.contains(&pair) {
                    doomed.push(pair);
                }
            }
        }
        for (namespace, name) in doomed {
            match Api::<EndpointSlice>::namespaced(self.client.clone(), &namespace)
                .delete(&name, &DeleteParams::default())
                .await
            {
                Ok(_) => info!(%namespace, %name, "deleted imported EndpointSlice"),
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(())
    }

    /// Removes the finalizer from the Work.
    async fn release(&self, work: &Work) -> Result<(), ImportError> {
        let finalizers: Vec<&String> = work
            .metadata
            .finalizers
            .iter()
            .flatten()
            .filter(|f| *f != ENDPOINT_SLICE_FINALIZER)
            .collect();
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": work.metadata.resource_version,
        }});
        let namespace = work.metadata.namespace.as_deref().unwrap_or_default();
        let name = work.metadata.name.as_deref().unwrap_or_default();
        match Api::<Work>::namespaced(self.client.clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error.into()),
        }
    }
}
