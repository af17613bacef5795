//! Namespace sync (Karmada's `namespace` controller): every namespace that is not reserved,
//! not `default`, not `kube-*`, not labelled `namespace.karmada.io/skip-auto-propagation=true`
//! (the value compared case-insensitively, as Karmada does)
//! and not claimed by a ClusterPropagationPolicy is written as a Work (owned by the namespace,
//! ClusterOverridePolicies applied) into every cluster's execution namespace, so workloads find
//! their namespace in each member. Re-run when clusters or ClusterOverridePolicies change;
//! deletion follows the namespace through garbage collection. A ClusterOverridePolicy that
//! cannot be applied fails the reconcile (retried with backoff), after the other clusters.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::{StreamExt, stream};

use flotilla_api::karmada::names::{execution_space_name, work_name};
use flotilla_api::karmada::{Cluster, ClusterOverridePolicy, Work, WorkSpec, WorkloadTemplate};
use flotilla_api::validation::karmada::{CPP_PERMANENT_ID, prune_manifest};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::Value;
use tracing::{info, warn};

use crate::binding::render::{EXECUTION_FINALIZER, MANAGED_LABEL};
use crate::binding::works::{WorkWrite, ensure_work};
use crate::detector::is_reserved_namespace;
use crate::manager::{Context, ControllerTask};
use crate::overrides::{self, PolicyRef};

/// Label that keeps a namespace out of members.
pub const SKIP_AUTO_PROPAGATION_LABEL: &str = "namespace.karmada.io/skip-auto-propagation";
/// A namespace's Works (one per cluster) written at once.
const CONCURRENT_WORK_WRITES: usize = 16;

/// Whether `namespace` is propagated to every cluster.
pub fn should_sync(namespace: &Namespace) -> bool {
    let name = namespace.metadata.name.as_deref().unwrap_or("");
    let labels = namespace.metadata.labels.clone().unwrap_or_default();
    !is_reserved_namespace(name)
        && name != "default"
        && !name.starts_with("kube-")
        && !labels
            .get(SKIP_AUTO_PROPAGATION_LABEL)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        && !labels.contains_key(CPP_PERMANENT_ID)
        && namespace.metadata.deletion_timestamp.is_none()
}

/// The Work carrying `namespace` to `cluster`.
pub fn namespace_work(
    namespace: &Namespace,
    cluster: &Cluster,
    cluster_overrides: &[Arc<ClusterOverridePolicy>],
) -> Result<Work, overrides::OverrideError> {
    let name = namespace.metadata.name.clone().unwrap_or_default();
    let mut manifest = serde_json::to_value(namespace).unwrap_or(Value::Null);
    let applied = overrides::apply_overrides(
        &mut manifest,
        cluster,
        cluster_overrides.iter().map(|p| PolicyRef::from(&**p)),
        std::iter::empty(),
    )?;
    if let Value::Object(object) = &mut manifest {
        prune_manifest(object);
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            let labels = meta
                .entry("labels")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert(MANAGED_LABEL.into(), "true".into());
            }
        }
    }
    let annotations: BTreeMap<String, String> = applied
        .annotations()
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect();
    Ok(Work {
        metadata: ObjectMeta {
            name: Some(work_name("Namespace", &name, "")),
            namespace: Some(execution_space_name(cluster.name())),
            finalizers: Some(vec![EXECUTION_FINALIZER.to_owned()]),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".to_owned(),
                kind: "Namespace".to_owned(),
                name: name.clone(),
                uid: namespace.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        },
        spec: WorkSpec {
            workload: WorkloadTemplate {
                manifests: vec![manifest.into()],
            },
            ..WorkSpec::default()
        },
        ..Work::default()
    })
}

/// Why syncing a namespace to the clusters failed.
#[derive(Debug, thiserror::Error)]
pub enum NamespaceSyncError {
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error("applying overrides for cluster {cluster}: {source}")]
    Override {
        cluster: String,
        #[source]
        source: overrides::OverrideError,
    },
}

struct NamespaceSync {
    client: kube::Client,
    queue: WorkQueue<String>,
    namespaces: Store<Namespace>,
    clusters: Store<Cluster>,
    cluster_overrides: Store<ClusterOverridePolicy>,
    works: Store<Work>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move { run(context, shutdown).await })
}

async fn run(context: Context, shutdown: Shutdown) {
    let Context {
        client, informers, ..
    } = context;
    let namespaces = informers.all::<Namespace>();
    let clusters = informers.all::<Cluster>();
    let cluster_overrides = informers.all::<ClusterOverridePolicy>();
    let works = informers.all::<Work>();
    let this = Arc::new(NamespaceSync {
        client: client.clone(),
        queue: WorkQueue::named("namespace-sync-controller"),
        namespaces: namespaces.store(),
        clusters: clusters.store(),
        cluster_overrides: cluster_overrides.store(),
        works: works.store(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&namespaces, move |e: WatchEvent<&Namespace>| match e {
        WatchEvent::Apply(ns) => me.queue.add(ns.metadata.name.clone().unwrap_or_default()),
        WatchEvent::InitApply(ns) => me
            .queue
            .add_with(ns.metadata.name.clone().unwrap_or_default(), Priority::Low),
        _ => {}
    });
    let me = this.clone();
    tasks.subscribe(&clusters, move |e: WatchEvent<&Cluster>| {
        if matches!(e, WatchEvent::Apply(_)) {
            me.enqueue_all();
        }
    });
    let me = this.clone();
    tasks.subscribe(
        &cluster_overrides,
        move |e: WatchEvent<&ClusterOverridePolicy>| {
            if matches!(e, WatchEvent::Apply(_) | WatchEvent::Delete(_)) {
                me.enqueue_all();
            }
        },
    );
    let ready = async {
        clusters.wait_until_ready().await;
        cluster_overrides.wait_until_ready().await;
        works.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |name| {
            let me = me.clone();
            async move { me.reconcile(&name).await }
        },
        |name, error| warn!(namespace = %name, %error, "syncing the namespace to clusters failed"),
    );
    info!("namespace sync running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl NamespaceSync {
    fn enqueue_all(&self) {
        for namespace in self.namespaces.state() {
            self.queue.add_with(
                namespace.metadata.name.clone().unwrap_or_default(),
                Priority::Low,
            );
        }
    }

    async fn reconcile(&self, name: &str) -> Result<(), NamespaceSyncError> {
        let Some(namespace) = self.namespaces.get(&ObjectRef::new(name)) else {
            return Ok(());
        };
        if !should_sync(&namespace) {
            return Ok(());
        }
        let cluster_overrides = self.cluster_overrides.state();
        let mut first_error = None;
        let mut writes = Vec::new();
        for cluster in self.clusters.state() {
            if cluster.is_deleting() {
                continue;
            }
            let work = match namespace_work(&namespace, &cluster, &cluster_overrides) {
                Ok(work) => work,
                Err(source) => {
                    warn!(namespace = %name, cluster = cluster.name(), error = %source, "override failed");
                    first_error.get_or_insert(NamespaceSyncError::Override {
                        cluster: cluster.name().to_owned(),
                        source,
                    });
                    continue;
                }
            };
            let stored = self.works.get(
                &ObjectRef::new(work.metadata.name.as_deref().unwrap_or(""))
                    .within(work.metadata.namespace.as_deref().unwrap_or("")),
            );
            writes.push((cluster, work, stored));
        }
        // One namespace goes to every cluster at once: written one after another, the last
        // clusters got theirs only after 100 store commits, while the workloads' Works for that
        // namespace were already being applied there (and failed: namespace not found).
        let results: Vec<_> = stream::iter(writes.into_iter().map(|(cluster, work, stored)| {
            let client = &self.client;
            async move {
                let result = ensure_work(client, work, stored.as_deref()).await;
                (cluster, result)
            }
        }))
        .buffered(CONCURRENT_WORK_WRITES)
        .collect()
        .await;
        for (cluster, result) in results {
            match result {
                Ok(WorkWrite::Unchanged) => {}
                Ok(_) => {
                    info!(namespace = %name, cluster = cluster.name(), "namespace Work written")
                }
                Err(error) => {
                    first_error.get_or_insert(error.into());
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespace(name: &str, labels: &[(&str, &str)]) -> Namespace {
        Namespace {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }
    }

    #[test]
    fn the_skip_label_is_honoured_whatever_its_case() {
        assert!(should_sync(&namespace("shop", &[])));
        for value in ["true", "True", "TRUE"] {
            assert!(
                !should_sync(&namespace("shop", &[(SKIP_AUTO_PROPAGATION_LABEL, value)])),
                "{value}"
            );
        }
        assert!(should_sync(&namespace(
            "shop",
            &[(SKIP_AUTO_PROPAGATION_LABEL, "false")]
        )));
    }

    #[test]
    fn reserved_default_and_kube_namespaces_are_not_synced() {
        for name in [
            "default",
            "kube-system",
            "kube-public",
            "karmada-system",
            "karmada-cluster",
            "karmada-es-member1",
        ] {
            assert!(!should_sync(&namespace(name, &[])), "{name}");
        }
    }

    mod karmada_namespace;
}
