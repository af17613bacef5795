//! Karmada's MultiClusterService with exposure type `CrossCluster` (feature gate
//! `MultiClusterService`, alpha): a Service reaches pods in other clusters. Three controllers,
//! with Karmada's names and behaviour (`pkg/controllers/multiclusterservice`):
//!
//! - `multiclusterservice` (this module): claims the Service (label
//!   `resourcetemplate.karmada.io/claimed-by: MultiClusterService`, so no PropagationPolicy takes
//!   it) and writes its ResourceBinding itself, placed on the provider and consumer clusters
//!   (empty lists: every cluster), conflict resolution `Overwrite`; and writes a Work holding the
//!   MultiClusterService (dispatching suspended: a marker, never applied) into each provider
//!   cluster's execution namespace. Records `ServiceApplied` and `SyncServiceSucceed`/`Failed`;
//!   names missing providers with `ClusterNotFound`. Deleting the MultiClusterService (its
//!   finalizer) or dropping `CrossCluster` undoes all of it.
//! - `endpointsliceCollect` (`collect.rs`): for each provider with a marker Work, watches the
//!   member's EndpointSlices and reports those of the Service into the control plane as Works
//!   (suspended: only a record) in the provider's execution namespace.
//! - `endpointsliceDispatch` (`dispatch.rs`): copies each reported slice into every consumer
//!   cluster other than its provider, named `<provider>-<slice>`, managed by
//!   `endpointslice-dispatch-controller.karmada.io`; records `EndpointSliceDispatched` and
//!   `DispatchEndpointSliceSucceed`.

pub mod collect;
pub mod dispatch;
mod service;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use flotilla_api::karmada::names::{cluster_name, execution_space_name, work_name};
use flotilla_api::karmada::{
    Cluster, MCS_NAME_LABEL, MCS_NAMESPACE_LABEL, MCS_PERMANENT_ID_LABEL, MCS_SERVICE_APPLIED,
    MULTI_CLUSTER_SERVICE_KIND, MultiClusterService, ResourceBinding, Work, WorkSpec,
    WorkloadTemplate,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use kube::Resource as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::{Value, json};
use tracing::{info, warn};

use crate::binding::render::MANAGED_LABEL;
use crate::binding::works::ensure_work;
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "multiclusterservice";
/// The gate all three controllers need.
pub const GATE: &str = "MultiClusterService";
/// The MultiClusterService's finalizer.
pub const MCS_FINALIZER: &str = "karmada.io/multiclusterservice-controller";
/// Who propagates a template instead of a policy.
pub const CLAIMED_BY_LABEL: &str = "resourcetemplate.karmada.io/claimed-by";
/// Label on a binding a controller (not a policy) manages.
pub const BINDING_MANAGED_BY_LABEL: &str = "binding.karmada.io/managed-by";
/// The binding controller's finalizer.
pub const BINDING_FINALIZER: &str = "karmada.io/binding-controller";
/// Labels and annotations a policy claim leaves on a template.
const POLICY_LABELS: &[&str] = &[
    "propagationpolicy.karmada.io/permanent-id",
    "clusterpropagationpolicy.karmada.io/permanent-id",
];
const POLICY_ANNOTATIONS: &[&str] = &[
    "propagationpolicy.karmada.io/name",
    "propagationpolicy.karmada.io/namespace",
    "clusterpropagationpolicy.karmada.io/name",
];

/// Why a sync failed (recorded on the MultiClusterService, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum McsError {
    #[error("services {name:?} not found")]
    ServiceNotFound { name: String },
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Api(#[from] kube::Error),
}

/// The cluster names of a selector list, or every cluster when it is empty (Karmada's
/// `GetProviderClusters` / `GetConsumerClusters`).
pub fn clusters_of(
    selected: &[flotilla_api::karmada::ClusterSelector],
    clusters: &Store<Cluster>,
) -> BTreeSet<String> {
    if selected.is_empty() {
        clusters
            .state()
            .iter()
            .map(|c| c.name().to_owned())
            .collect()
    } else {
        selected.iter().map(|c| c.name.clone()).collect()
    }
}

/// Whether a Work's (first) manifest is of `kind`.
pub fn work_holds(work: &Work, api_version: &str, kind: &str) -> bool {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct TypeMeta {
        #[serde(default)]
        api_version: String,
        #[serde(default)]
        kind: String,
    }
    // Most Works hold something else: their text does not even name the kind.
    work.spec.workload.manifests.iter().any(|m| {
        m.json().contains(kind)
            && m.parse::<TypeMeta>()
                .is_ok_and(|t| t.kind == kind && t.api_version == api_version)
    })
}

/// A Work as Karmada's `CreateOrUpdateWork` writes one: the manifest marked as Karmada's
/// (`karmada.io/managed`, the Work's name and namespace, the template's uid).
pub fn work_for(meta: ObjectMeta, mut manifest: Value, suspend_dispatching: bool) -> Work {
    if let Some(object) = manifest.get_mut("metadata").and_then(Value::as_object_mut) {
        let uid = object
            .get("uid")
            .cloned()
            .unwrap_or(Value::String(String::new()));
        let labels = object
            .entry("labels")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("labels are an object");
        labels.insert(MANAGED_LABEL.into(), "true".into());
        let annotations = object
            .entry("annotations")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("annotations are an object");
        annotations.insert("resourcetemplate.karmada.io/uid".into(), uid);
        annotations.insert(
            "work.karmada.io/name".into(),
            meta.name.clone().unwrap_or_default().into(),
        );
        annotations.insert(
            "work.karmada.io/namespace".into(),
            meta.namespace.clone().unwrap_or_default().into(),
        );
    }
    Work {
        metadata: meta,
        spec: WorkSpec {
            workload: WorkloadTemplate {
                manifests: vec![manifest.into()],
            },
            suspend_dispatching: suspend_dispatching.then_some(true),
            ..WorkSpec::default()
        },
        ..Work::default()
    }
}

/// Sets condition `condition` in the MultiClusterService's status (the transition time kept
/// when the status does not change) through the status subresource.
pub async fn set_condition(
    client: &kube::Client,
    mcs: &MultiClusterService,
    type_: &str,
    ok: bool,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    let status = if ok { "True" } else { "False" };
    let mut conditions = mcs
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(existing)
            if existing.status == status
                && existing.reason == reason
                && existing.message == message =>
        {
            return Ok(());
        }
        Some(existing) => {
            if existing.status != status {
                existing.last_transition_time = Time(jiff::Timestamp::now());
            }
            existing.status = status.into();
            existing.reason = reason.into();
            existing.message = message.into();
        }
        None => conditions.push(Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: message.into(),
            last_transition_time: Time(jiff::Timestamp::now()),
            observed_generation: None,
        }),
    }
    let namespace = mcs.metadata.namespace.as_deref().unwrap_or_default();
    let name = mcs.metadata.name.as_deref().unwrap_or_default();
    match Api::<MultiClusterService>::namespaced(client.clone(), namespace)
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": conditions}})),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

type Key = (String, String);

struct Controller {
    client: kube::Client,
    recorder: Recorder,
    queue: WorkQueue<Key>,
    services: Store<MultiClusterService>,
    templates: Store<Service>,
    clusters: Store<Cluster>,
    works: Store<Work>,
    bindings: Store<ResourceBinding>,
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

fn key_of<K: kube::Resource>(object: &K) -> Key {
    (
        object.meta().namespace.clone().unwrap_or_default(),
        object.meta().name.clone().unwrap_or_default(),
    )
}

async fn run(context: Context, shutdown: Shutdown) {
    let mcs = context.informers.all::<MultiClusterService>();
    let services = context.informers.all::<Service>();
    let clusters = context.informers.all::<Cluster>();
    let works = context.informers.all::<Work>();
    let bindings = context.informers.all::<ResourceBinding>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: "multiclusterservice-controller".into(),
                instance: None,
            },
        ),
        queue: WorkQueue::named("multiclusterservice-controller"),
        services: mcs.store(),
        templates: services.store(),
        clusters: clusters.store(),
        works: works.store(),
        bindings: bindings.store(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    let mut seen: BTreeMap<Key, (bool, Value)> = BTreeMap::new();
    tasks.subscribe(
        &mcs,
        move |event: WatchEvent<&MultiClusterService>| match event {
            WatchEvent::Apply(m) | WatchEvent::InitApply(m) => {
                let key = key_of(m);
                // What Karmada's predicate compares: annotations, spec, being deleted.
                let observed = (
                    m.metadata.deletion_timestamp.is_some(),
                    json!([m.metadata.annotations, m.spec]),
                );
                let was_cross = seen.get(&key).is_some_and(|(_, v)| {
                    v[1]["types"]
                        .as_array()
                        .is_some_and(|t| t.iter().any(|t| t == "CrossCluster"))
                });
                if seen.get(&key) == Some(&observed) {
                    return;
                }
                seen.insert(key.clone(), observed);
                if m.cross_cluster() || was_cross {
                    me.queue.add(key);
                }
            }
            WatchEvent::Delete(m) => {
                seen.remove(&key_of(m));
            }
            WatchEvent::Init | WatchEvent::InitDone => {}
        },
    );
    let me = this.clone();
    let mut service_seen: BTreeMap<Key, Value> = BTreeMap::new();
    tasks.subscribe(&services, move |event: WatchEvent<&Service>| {
        let (service, deleted) = match event {
            WatchEvent::Apply(s) | WatchEvent::InitApply(s) => (s, false),
            WatchEvent::Delete(s) => (s, true),
            WatchEvent::Init | WatchEvent::InitDone => return,
        };
        let key = key_of(service);
        if deleted {
            service_seen.remove(&key);
        } else {
            let observed = json!([
                service.metadata.labels,
                service.metadata.annotations,
                service.spec
            ]);
            if service_seen.get(&key) == Some(&observed) {
                return;
            }
            service_seen.insert(key.clone(), observed);
        }
        let cross = me
            .services
            .get(&ObjectRef::new(&key.1).within(&key.0))
            .is_some_and(|m| m.cross_cluster());
        if cross {
            me.queue.add(key);
        }
    });
    let me = this.clone();
    let mut readiness = ClusterReadiness::default();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| {
        if readiness.changed(&event) {
            for m in me.services.state() {
                if m.cross_cluster() {
                    me.queue.add(key_of(&*m));
                }
            }
        }
    });
    let ready = async {
        mcs.wait_until_ready().await;
        services.wait_until_ready().await;
        clusters.wait_until_ready().await;
        works.wait_until_ready().await;
        bindings.wait_until_ready().await;
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
        |key, error: &McsError| {
            warn!(namespace = %key.0, name = %key.1, %error, "syncing the MultiClusterService failed")
        },
    );
    info!("multiclusterservice controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    /// A warning Event on the MultiClusterService.
    async fn warn(
        &self,
        reference: &k8s_openapi::api::core::v1::ObjectReference,
        reason: &str,
        message: String,
    ) {
        self.recorder
            .note(
                reference,
                EventType::Warning,
                reason,
                "SyncService",
                message,
            )
            .await;
    }

    async fn reconcile(&self, (namespace, name): &Key) -> Result<(), McsError> {
        let Some(mcs) = self.services.get(&ObjectRef::new(name).within(namespace)) else {
            return Ok(());
        };
        if mcs.metadata.deletion_timestamp.is_some() {
            return self.delete(&mcs).await;
        }
        let result = self.sync(&mcs).await;
        let reference = mcs.object_ref(&());
        match &result {
            Ok(()) => {
                set_condition(
                    &self.client,
                    &mcs,
                    MCS_SERVICE_APPLIED,
                    true,
                    "ServiceAppliedSucceed",
                    "Service is propagated to target clusters.",
                )
                .await?;
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        "SyncServiceSucceed",
                        "SyncService",
                        "Service is propagated to target clusters.".into(),
                    )
                    .await;
            }
            Err(error) => {
                let message = flotilla_runtime::errors::describe(error);
                set_condition(
                    &self.client,
                    &mcs,
                    MCS_SERVICE_APPLIED,
                    false,
                    "ServiceAppliedFailed",
                    &message,
                )
                .await?;
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        "SyncServiceFailed",
                        "SyncService",
                        message,
                    )
                    .await;
            }
        }
        result
    }

    async fn sync(&self, mcs: &MultiClusterService) -> Result<(), McsError> {
        let providers = clusters_of(&mcs.spec.provider_clusters, &self.clusters);
        let consumers = clusters_of(&mcs.spec.consumer_clusters, &self.clusters);
        if !mcs.cross_cluster() {
            self.release_service(mcs).await?;
            self.remove_marker_works(mcs, Some(&providers)).await?;
            self.set_finalizer(mcs, false).await?;
            return Ok(());
        }
        self.set_finalizer(mcs, true).await?;
        self.write_marker_works(mcs, &providers).await?;
        self.remove_marker_works(mcs, Some(&providers)).await?;
        let (namespace, name) = key_of(mcs);
        let Some(service) = self
            .templates
            .get(&ObjectRef::new(&name).within(&namespace))
        else {
            return Err(McsError::ServiceNotFound { name });
        };
        self.claim_service(mcs, &service).await?;
        self.write_binding(mcs, &service, providers.union(&consumers))
            .await?;
        Ok(())
    }

    async fn delete(&self, mcs: &MultiClusterService) -> Result<(), McsError> {
        let reference = mcs.object_ref(&());
        if let Err(error) = self.release_service(mcs).await {
            let message = format!(
                "failed to delete service work :{}",
                flotilla_runtime::errors::describe(&error)
            );
            self.warn(&reference, "SyncServiceFailed", message).await;
            return Err(error);
        }
        if let Err(error) = self.remove_marker_works(mcs, None).await {
            let message = format!(
                "failed to delete MultiClusterService work :{}",
                flotilla_runtime::errors::describe(&error)
            );
            self.warn(&reference, "SyncServiceFailed", message).await;
            return Err(error);
        }
        self.set_finalizer(mcs, false).await
    }

    async fn set_finalizer(
        &self,
        mcs: &MultiClusterService,
        present: bool,
    ) -> Result<(), McsError> {
        let mut finalizers = mcs.metadata.finalizers.clone().unwrap_or_default();
        let has = finalizers.iter().any(|f| f == MCS_FINALIZER);
        if has == present {
            return Ok(());
        }
        if present {
            finalizers.push(MCS_FINALIZER.into());
        } else {
            finalizers.retain(|f| f != MCS_FINALIZER);
        }
        let (namespace, name) = key_of(mcs);
        let patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": mcs.metadata.resource_version,
        }});
        match Api::<MultiClusterService>::namespaced(self.client.clone(), &namespace)
            .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 && !present => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    /// The marker Works (the MultiClusterService, never dispatched) in each provider cluster
    /// that is there, Ready and serves EndpointSlices.
    async fn write_marker_works(
        &self,
        mcs: &MultiClusterService,
        providers: &BTreeSet<String>,
    ) -> Result<(), McsError> {
        let reference = mcs.object_ref(&());
        let (namespace, name) = key_of(mcs);
        for cluster in providers {
            if let Some((reason, message)) =
                unusable(&self.clusters, cluster, "Provider", "MultiClusterService")
            {
                self.warn(&reference, reason, message).await;
                continue;
            }
            let meta = ObjectMeta {
                name: Some(work_name(MULTI_CLUSTER_SERVICE_KIND, &name, &namespace)),
                namespace: Some(execution_space_name(cluster)),
                labels: Some(
                    [
                        (MCS_PERMANENT_ID_LABEL.to_owned(), permanent_id(mcs)),
                        (MCS_NAMESPACE_LABEL.to_owned(), namespace.clone()),
                        (MCS_NAME_LABEL.to_owned(), name.clone()),
                    ]
                    .into(),
                ),
                ..ObjectMeta::default()
            };
            let mut manifest = serde_json::to_value(mcs).expect("a MultiClusterService serializes");
            manifest["apiVersion"] = "networking.karmada.io/v1alpha1".into();
            manifest["kind"] = MULTI_CLUSTER_SERVICE_KIND.into();
            let work = work_for(meta, manifest, true);
            let stored = self.works.get(
                &ObjectRef::new(work.metadata.name.as_deref().unwrap_or_default())
                    .within(work.metadata.namespace.as_deref().unwrap_or_default()),
            );
            ensure_work(&self.client, work, stored.as_deref()).await?;
        }
        Ok(())
    }

    /// Deletes the marker Works outside `keep` (all of them for `None`), with the EndpointSlices
    /// reported from those clusters.
    async fn remove_marker_works(
        &self,
        mcs: &MultiClusterService,
        keep: Option<&BTreeSet<String>>,
    ) -> Result<(), McsError> {
        let id = permanent_id(mcs);
        for work in self.works.state() {
            let labels = work.metadata.labels.clone().unwrap_or_default();
            if labels.get(MCS_PERMANENT_ID_LABEL) != Some(&id)
                || !work_holds(
                    &work,
                    "networking.karmada.io/v1alpha1",
                    MULTI_CLUSTER_SERVICE_KIND,
                )
            {
                continue;
            }
            let namespace = work.metadata.namespace.clone().unwrap_or_default();
            let Ok(cluster) = cluster_name(&namespace) else {
                continue;
            };
            if keep.is_some_and(|k| k.contains(cluster)) {
                continue;
            }
            collect::release_reported_slices(&self.client, &self.works, &work).await?;
            delete_work(&self.client, &work).await?;
        }
        Ok(())
    }
}

/// Which clusters exist and are Ready: what of a Cluster event concerns MultiClusterServices
/// (Karmada reacts to every Cluster event; heartbeats change nothing here, so they are
/// skipped).
#[derive(Debug, Default)]
pub struct ClusterReadiness(BTreeMap<String, bool>);

impl ClusterReadiness {
    /// Records the event; `true` when a cluster appeared, went away or changed readiness.
    pub fn changed(&mut self, event: &WatchEvent<&Cluster>) -> bool {
        match event {
            WatchEvent::Apply(c) | WatchEvent::InitApply(c) => {
                let ready = crate::execution::is_ready(c) && !c.is_deleting();
                self.0.insert(c.name().to_owned(), ready) != Some(ready)
                    && matches!(event, WatchEvent::Apply(_))
            }
            WatchEvent::Delete(c) => self.0.remove(c.name()).is_some(),
            WatchEvent::Init | WatchEvent::InitDone => false,
        }
    }
}

/// Why `cluster` cannot take part as a `role` (`Provider`, `Consumer`) cluster, as the warning
/// Karmada records (reason, message); `None` when it can. `skipped` names what is not
/// propagated to an unready cluster.
pub fn unusable(
    clusters: &Store<Cluster>,
    cluster: &str,
    role: &str,
    skipped: &str,
) -> Option<(&'static str, String)> {
    let Some(object) = clusters.get(&ObjectRef::new(cluster)) else {
        return Some((
            "ClusterNotFound",
            format!("{role} cluster {cluster} is not found"),
        ));
    };
    if !crate::execution::is_ready(&object) {
        return Some((
            "SyncServiceFailed",
            format!("{role} cluster {cluster} is not ready, skip to propagate {skipped}"),
        ));
    }
    if object.api_enablement("discovery.k8s.io/v1", "EndpointSlice")
        == flotilla_api::karmada::ApiEnablementStatus::Disabled
    {
        return Some((
            "APIIncompatible",
            format!("{role} cluster {cluster} does not support EndpointSlice"),
        ));
    }
    None
}

/// The MultiClusterService's permanent id (its webhook sets one on create).
pub fn permanent_id(mcs: &MultiClusterService) -> String {
    mcs.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(MCS_PERMANENT_ID_LABEL))
        .cloned()
        .unwrap_or_default()
}

/// Deletes a Work (gone already is fine).
pub async fn delete_work(client: &kube::Client, work: &Work) -> Result<(), kube::Error> {
    let namespace = work.metadata.namespace.as_deref().unwrap_or_default();
    let name = work.metadata.name.as_deref().unwrap_or_default();
    match Api::<Work>::namespaced(client.clone(), namespace)
        .delete(name, &Default::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests;
