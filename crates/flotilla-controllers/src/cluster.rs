//! The cluster controller (`cluster`, Karmada's `cluster-controller`): for every Cluster it
//! creates the execution namespace `karmada-es-<name>` (label `karmada.io/system=true`), keeps
//! the finalizer `karmada.io/cluster-controller`, and sets the NoSchedule taints the Ready
//! condition calls for ([`health::desired_taints`]). On deletion it deletes the execution
//! namespace (and with it the Works), waits until the namespace is gone and no binding targets
//! the cluster, then removes the finalizer. Every `cluster-monitor-period` it runs the health
//! monitor over its cache ([`health::HealthMonitor`]): a `Pull` cluster whose status and Lease
//! stopped moving goes Ready=Unknown.

pub mod health;

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::names::{self, EXECUTION_SPACE_PREFIX};
use flotilla_api::karmada::{Cluster, ClusterResourceBinding, ResourceBinding};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Backoff, Shared, Shutdown, WorkQueue};
use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::json;

use crate::manager::{Context, ControllerTask};
use health::{HealthMonitor, MonitorTimings};

/// The finalizer the cluster controller keeps on every Cluster.
pub const FINALIZER: &str = "karmada.io/cluster-controller";
/// Namespace of the `Pull` clusters' Leases.
pub const LEASE_NAMESPACE: &str = "karmada-cluster";
/// Label of Karmada's system namespaces.
pub const SYSTEM_LABEL: &str = "karmada.io/system";

/// Karmada's event reasons of the cluster controller (`pkg/events`).
pub const EVENT_CREATE_EXECUTION_SPACE_SUCCEED: &str = "CreateExecutionSpaceSucceed";
pub const EVENT_CREATE_EXECUTION_SPACE_FAILED: &str = "CreateExecutionSpaceFailed";
pub const EVENT_REMOVE_EXECUTION_SPACE_SUCCEED: &str = "RemoveExecutionSpaceSucceed";
pub const EVENT_REMOVE_EXECUTION_SPACE_FAILED: &str = "RemoveExecutionSpaceFailed";
pub const EVENT_TAINT_CLUSTER_SUCCEED: &str = "TaintClusterSucceed";
pub const EVENT_TAINT_CLUSTER_FAILED: &str = "TaintClusterFailed";

/// The note of a `TaintClusterSucceed` event: the cluster's taints after the change, each as
/// `{Key:k,Value:v,Effect:e}` (`Value` left out when empty), as Karmada words it.
pub fn taints_message(taints: &[Taint]) -> String {
    if taints.is_empty() {
        return "Taint cluster succeed: cluster now does not have taints.".to_owned();
    }
    let listed: Vec<String> = taints
        .iter()
        .map(|t| match t.value.as_deref() {
            Some(value) if !value.is_empty() => {
                format!("{{Key:{},Value:{},Effect:{}}}", t.key, value, t.effect)
            }
            _ => format!("{{Key:{},Effect:{}}}", t.key, t.effect),
        })
        .collect();
    format!(
        "Taint cluster succeed: cluster now has taints([{}]).",
        listed.join(",")
    )
}

/// Timings of the cluster controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterOptions {
    pub monitor: MonitorTimings,
    /// How often a terminating cluster's cleanup is checked again (Karmada: 10 s).
    pub cleanup_check_interval: Duration,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        Self {
            monitor: MonitorTimings::default(),
            cleanup_check_interval: Duration::from_secs(10),
        }
    }
}

/// Errors of one reconcile (logged and retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("{step} for cluster {cluster:?}: {source}")]
    Api {
        step: &'static str,
        cluster: String,
        #[source]
        source: kube::Error,
    },
}

/// The `start` of the `cluster` entry in [`crate::CONTROLLERS`].
/// Karmada registers its taint manager with the cluster controller, when
/// `--enable-taint-manager` and the `Failover` gate are both on.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(async move {
        let failover = &context.options;
        let taints = (failover.failover.enable_taint_manager && failover.gates.failover())
            .then(|| tokio::spawn(crate::taint_manager::run(context.clone(), shutdown.child())));
        if taints.is_none() {
            tracing::info!(
                "taint manager not started: it needs --enable-taint-manager and the Failover feature gate"
            );
        }
        run(context, ClusterOptions::default(), shutdown).await;
        if let Some(task) = taints {
            let _ = task.await;
        }
    })
}

struct Controller {
    client: kube::Client,
    recorder: Recorder,
    options: ClusterOptions,
    clusters: Store<Cluster>,
    leases: Store<Lease>,
    queue: WorkQueue<String>,
}

fn spawn_reflected<K>(
    api: Api<K>,
    config: watcher::Config,
    shutdown: &Shutdown,
    on_event: impl Fn(&watcher::Event<K>) + Send + 'static,
) -> Store<K>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store();
    let stream = watcher(api, config)
        .default_backoff()
        .reflect(writer)
        .for_each(move |event| {
            match &event {
                Ok(event) => on_event(event),
                Err(error) => tracing::debug!(%error, "watch failed; retrying"),
            }
            async {}
        });
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = stream => {}
            _ = shutdown.cancelled() => {}
        }
    });
    store
}

/// Runs the cluster controller until `shutdown`.
pub async fn run(context: Context, options: ClusterOptions, shutdown: Shutdown) {
    let queue = WorkQueue::<String>::new(Backoff {
        base: Duration::from_millis(100),
        max: Duration::from_secs(60),
    });
    let q = queue.clone();
    let informer = context.informers.all::<Cluster>();
    let subscription = informer.subscribe(move |event| match event {
        watcher::Event::Apply(c) | watcher::Event::Delete(c) | watcher::Event::InitApply(c) => {
            q.add(c.name().to_owned())
        }
        watcher::Event::Init | watcher::Event::InitDone => {}
    });
    let clusters = informer.store();
    let leases = spawn_reflected(
        Api::<Lease>::namespaced(context.client.clone(), LEASE_NAMESPACE),
        watcher::Config::default(),
        &shutdown,
        |_| {},
    );
    // A deleted execution namespace lets its terminating cluster go on at once.
    let q = queue.clone();
    let _namespaces = spawn_reflected(
        Api::<Namespace>::all(context.client.clone()),
        watcher::Config::default().labels(&format!("{SYSTEM_LABEL}=true")),
        &shutdown,
        move |event| {
            if let watcher::Event::Delete(ns) = event
                && let Some(name) = ns.metadata.name.as_deref()
                && let Some(cluster) = name.strip_prefix(EXECUTION_SPACE_PREFIX)
            {
                q.add(cluster.to_owned());
            }
        },
    );
    let controller = Arc::new(Controller {
        client: context.client.clone(),
        recorder: recorder(context.client.clone()),
        options,
        clusters,
        leases,
        queue: queue.clone(),
    });
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let c = controller.clone();
        tasks.push(tokio::spawn(async move { c.work().await }));
    }
    let monitor = tokio::spawn(controller.clone().monitor(informer, shutdown.clone()));
    shutdown.cancelled().await;
    queue.shut_down();
    monitor.abort();
    for task in tasks {
        let _ = task.await;
    }
    drop(subscription);
}

/// The recorder of Karmada's `cluster-controller`.
fn recorder(client: kube::Client) -> Recorder {
    Recorder::new(
        client,
        Reporter {
            controller: "cluster-controller".into(),
            instance: None,
        },
    )
}

/// Now, in whole seconds (how `metav1.Time` is written).
pub(crate) fn now_time() -> Time {
    let t = jiff::Timestamp::now();
    Time(jiff::Timestamp::from_second(t.as_second()).unwrap_or(t))
}

impl Controller {
    async fn work(&self) {
        while let Some(name) = self.queue.next().await {
            match self.reconcile(&name).await {
                Ok(None) => self.queue.forget(&name),
                Ok(Some(after)) => {
                    self.queue.forget(&name);
                    self.queue.add_after(name.clone(), after);
                }
                Err(error) => {
                    tracing::warn!(%error, "cluster controller: will retry");
                    self.queue.add_rate_limited(name.clone());
                }
            }
            self.queue.done(&name);
        }
    }

    /// Records an event about `cluster` (a failure to do so is only logged).
    async fn publish(&self, cluster: &Cluster, type_: EventType, reason: &str, note: String) {
        use kube::Resource as _;
        self.recorder
            .note(&cluster.object_ref(&()), type_, reason, reason, note)
            .await;
    }

    fn api_error(step: &'static str, cluster: &str) -> impl FnOnce(kube::Error) -> ClusterError {
        let cluster = cluster.to_owned();
        move |source| ClusterError::Api {
            step,
            cluster,
            source,
        }
    }

    /// Reconciles one cluster; `Some(d)` asks to look again after `d`.
    async fn reconcile(&self, name: &str) -> Result<Option<Duration>, ClusterError> {
        let Some(cluster) = self.clusters.get(&ObjectRef::new(name)) else {
            return Ok(None);
        };
        if cluster.is_deleting() {
            return self.remove(&cluster).await;
        }
        if let Err(error) = self.ensure_execution_space(&cluster).await {
            self.publish(
                &cluster,
                EventType::Warning,
                EVENT_CREATE_EXECUTION_SPACE_FAILED,
                flotilla_runtime::errors::describe(&error),
            )
            .await;
            return Err(error);
        }
        let api = Api::<Cluster>::all(self.client.clone());
        let version = cluster.metadata.resource_version.clone();
        let mut patch = serde_json::Map::new();
        let taints = health::desired_taints(&cluster, now_time());
        if let Some(taints) = &taints {
            patch.insert("spec".into(), json!({ "taints": taints }));
            tracing::info!(cluster = name, taints = ?taints.iter().map(|t| &t.key).collect::<Vec<_>>(), "tainting");
        }
        let finalizers = cluster.metadata.finalizers.clone().unwrap_or_default();
        if !finalizers.iter().any(|f| f == FINALIZER) {
            let mut next = finalizers;
            next.push(FINALIZER.to_owned());
            patch.insert(
                "metadata".into(),
                json!({"finalizers": next, "resourceVersion": version}),
            );
        } else if !patch.is_empty() {
            patch.insert("metadata".into(), json!({ "resourceVersion": version }));
        }
        if patch.is_empty() {
            return Ok(None);
        }
        let written = api
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(serde_json::Value::Object(patch)),
            )
            .await
            .map_err(Self::api_error("update taints and finalizer", name));
        if let Some(taints) = &taints {
            match &written {
                Ok(_) => {
                    let note = taints_message(taints);
                    self.publish(
                        &cluster,
                        EventType::Normal,
                        EVENT_TAINT_CLUSTER_SUCCEED,
                        note,
                    )
                    .await
                }
                Err(error) => {
                    let note = flotilla_runtime::errors::describe(error);
                    self.publish(
                        &cluster,
                        EventType::Warning,
                        EVENT_TAINT_CLUSTER_FAILED,
                        note,
                    )
                    .await
                }
            }
        }
        written?;
        Ok(None)
    }

    async fn ensure_execution_space(&self, cluster: &Cluster) -> Result<(), ClusterError> {
        let owner = cluster;
        let cluster = owner.name();
        let name = names::execution_space_name(cluster);
        let api = Api::<Namespace>::all(self.client.clone());
        if api
            .get_opt(&name)
            .await
            .map_err(Self::api_error("read the execution space", cluster))?
            .is_some()
        {
            return Ok(());
        }
        let namespace = Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(name.clone()),
                labels: Some([(SYSTEM_LABEL.to_owned(), "true".to_owned())].into()),
                ..kube::api::ObjectMeta::default()
            },
            ..Namespace::default()
        };
        match api.create(&PostParams::default(), &namespace).await {
            Ok(_) => {
                tracing::info!(cluster, namespace = %name, "created the execution space");
                let note = format!("Created execution space({name}) for cluster({cluster}).");
                self.publish(
                    owner,
                    EventType::Normal,
                    EVENT_CREATE_EXECUTION_SPACE_SUCCEED,
                    note,
                )
                .await;
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(Self::api_error("create the execution space", cluster)(e)),
        }
    }

    async fn remove(&self, cluster: &Cluster) -> Result<Option<Duration>, ClusterError> {
        let name = cluster.name();
        let finalizers = cluster.metadata.finalizers.clone().unwrap_or_default();
        if !finalizers.iter().any(|f| f == FINALIZER) {
            return Ok(None);
        }
        let space = names::execution_space_name(name);
        let namespaces = Api::<Namespace>::all(self.client.clone());
        match self.remove_execution_space(cluster, &space).await {
            Ok(()) => {
                let note = format!("Removed execution space for cluster({name}).");
                self.publish(
                    cluster,
                    EventType::Normal,
                    EVENT_REMOVE_EXECUTION_SPACE_SUCCEED,
                    note,
                )
                .await;
            }
            Err(error) => {
                let note = flotilla_runtime::errors::describe(&error);
                self.publish(
                    cluster,
                    EventType::Warning,
                    EVENT_REMOVE_EXECUTION_SPACE_FAILED,
                    note,
                )
                .await;
                return Err(error);
            }
        }
        if namespaces
            .get_opt(&space)
            .await
            .map_err(Self::api_error("read the execution space", name))?
            .is_some()
        {
            tracing::info!(cluster = name, "waiting for the execution space to go");
            return Ok(Some(self.options.cleanup_check_interval));
        }
        if self.still_targeted(name).await? {
            tracing::info!(
                cluster = name,
                "waiting until no binding targets the cluster"
            );
            return Ok(Some(self.options.cleanup_check_interval));
        }
        let rest: Vec<String> = finalizers.into_iter().filter(|f| f != FINALIZER).collect();
        Api::<Cluster>::all(self.client.clone())
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"finalizers": rest,
                    "resourceVersion": cluster.metadata.resource_version}})),
            )
            .await
            .map_err(Self::api_error("remove the finalizer", name))?;
        tracing::info!(cluster = name, "cleanup done; finalizer removed");
        Ok(None)
    }

    /// Deletes the execution space (first freeing its Works when no agent will).
    async fn remove_execution_space(
        &self,
        cluster: &Cluster,
        space: &str,
    ) -> Result<(), ClusterError> {
        let name = cluster.name();
        let ready = health::ready_condition(cluster).is_some_and(|c| c.status == "True");
        if cluster.spec.sync_mode == "Pull" && !ready {
            // No agent will remove them: the Works must not hold the namespace forever.
            self.remove_work_finalizers(name, space).await?;
        }
        match Api::<Namespace>::all(self.client.clone())
            .delete(space, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(Self::api_error("delete the execution space", name)(e)),
        }
    }

    async fn remove_work_finalizers(&self, cluster: &str, space: &str) -> Result<(), ClusterError> {
        let resource = kube::discovery::ApiResource {
            group: "work.karmada.io".into(),
            version: "v1alpha1".into(),
            api_version: "work.karmada.io/v1alpha1".into(),
            kind: "Work".into(),
            plural: "works".into(),
        };
        let works: Api<kube::api::DynamicObject> =
            Api::namespaced_with(self.client.clone(), space, &resource);
        let list = works
            .list(&ListParams::default())
            .await
            .map_err(Self::api_error("list the Works", cluster))?;
        for work in list.items {
            let finalizers = work.metadata.finalizers.clone().unwrap_or_default();
            if !finalizers
                .iter()
                .any(|f| f == "karmada.io/execution-controller")
            {
                continue;
            }
            let rest: Vec<&String> = finalizers
                .iter()
                .filter(|f| *f != "karmada.io/execution-controller")
                .collect();
            let name = work.metadata.name.clone().unwrap_or_default();
            works
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"finalizers": rest}})),
                )
                .await
                .map_err(Self::api_error("remove a Work's finalizer", cluster))?;
        }
        Ok(())
    }

    async fn still_targeted(&self, cluster: &str) -> Result<bool, ClusterError> {
        let targets = |clusters: &[flotilla_api::karmada::TargetCluster]| {
            clusters.iter().any(|t| t.name == cluster)
        };
        let rbs = Api::<ResourceBinding>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(Self::api_error("list ResourceBindings", cluster))?;
        if rbs.items.iter().any(|b| targets(&b.spec.clusters)) {
            return Ok(true);
        }
        let crbs = Api::<ClusterResourceBinding>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(Self::api_error("list ClusterResourceBindings", cluster))?;
        Ok(crbs.items.iter().any(|b| targets(&b.spec.clusters)))
    }

    /// The health monitor: every period, over the cached Clusters and Leases.
    async fn monitor(self: Arc<Self>, clusters: Shared<Cluster>, shutdown: Shutdown) {
        clusters.wait_until_ready().await;
        let mut monitor = HealthMonitor::default();
        let mut ticker = tokio::time::interval(self.options.monitor.period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = ticker.tick() => {}
            }
            let now = tokio::time::Instant::now();
            let wall = now_time();
            let clusters = self.clusters.state();
            let mut seen = std::collections::HashSet::new();
            for cluster in clusters {
                let name = cluster.name().to_owned();
                let lease = self
                    .leases
                    .get(&ObjectRef::new(&name).within(LEASE_NAMESPACE));
                let renew = lease
                    .as_ref()
                    .and_then(|l| l.spec.as_ref()?.renew_time.clone());
                if let Some(condition) = monitor.observe(
                    &cluster,
                    renew.as_ref(),
                    now,
                    wall.clone(),
                    &self.options.monitor,
                ) {
                    self.write_ready(&cluster, condition).await;
                }
                seen.insert(name);
            }
            monitor.retain(|name| seen.contains(name));
        }
    }

    async fn write_ready(
        &self,
        cluster: &Cluster,
        condition: k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition,
    ) {
        let name = cluster.name();
        let mut status = cluster.status.clone().unwrap_or_default();
        status.conditions.retain(|c| c.type_ != condition.type_);
        status.conditions.push(condition.clone());
        let patch = json!({"metadata": {"resourceVersion": cluster.metadata.resource_version},
            "status": {"conditions": status.conditions}});
        match Api::<Cluster>::all(self.client.clone())
            .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
        {
            Ok(_) => {
                tracing::warn!(cluster = name, reason = %condition.reason, "cluster health signal lost; Ready=Unknown")
            }
            Err(error) => {
                tracing::warn!(cluster = name, %error, "cannot mark the cluster Unknown; next period retries")
            }
        }
    }
}

#[cfg(test)]
mod tests;
