//! The cluster status controller (`clusterStatus`, Karmada's `cluster-status-controller`). In
//! the controller manager (`Context::cluster` is `None`) it serves every `Push` cluster; in the
//! agent (`Some(name)`) only that cluster. Every `cluster-status-update-frequency` it probes the
//! member's `/readyz` (`/healthz` on 404) and derives Ready (`ClusterReady`, `ClusterNotReady`,
//! `ClusterNotReachable`, `StatusCollectionFailed`), held back by the success/failure
//! thresholds ([`threshold`]) so one slow probe does not flap. While Ready it reports the
//! Kubernetes version, the API enablements (+ `CompleteAPIEnablements`), the node summary and
//! the resource summary with allocatable modelings — the latter from watches of the member's
//! nodes and pods ([`flotilla_member::watch::MemberWatch`]) that start with the first
//! collection and stop when the cluster goes away. Status is written only when it changed.
//! For `Pull` clusters a control plane would also renew the heartbeat Lease ([`lease`]); in the
//! agent the session loop renews it, so this controller does not.

pub mod lease;
pub mod threshold;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{
    CONDITION_COMPLETE_API_ENABLEMENTS, CONDITION_READY, Cluster, ClusterStatus,
    LocalSecretReference,
};
use flotilla_member::health::{self, Health};
use flotilla_member::watch::MemberWatch;
use flotilla_member::{MemberError, discovery};
use flotilla_runtime::{Backoff, Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use crate::cluster::{FINALIZER, health::ready_condition, now_time};
use crate::manager::{Context, ControllerTask};
use threshold::Thresholds;

/// Timings of the cluster status controller (Karmada's flags and defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusOptions {
    /// `cluster-status-update-frequency`.
    pub update_frequency: Duration,
    /// `cluster-success-threshold`.
    pub success_threshold: Duration,
    /// `cluster-failure-threshold`.
    pub failure_threshold: Duration,
    /// Bound of one health probe request.
    pub probe_timeout: Duration,
    /// `cluster-cache-sync-timeout`: how long the first list of nodes and pods may take.
    pub cache_sync_timeout: Duration,
    /// `cluster-lease-duration`.
    pub lease_duration: Duration,
    /// `cluster-lease-renew-interval-fraction`.
    pub lease_renew_fraction: f64,
    /// Clusters handled concurrently.
    pub workers: usize,
}

impl Default for StatusOptions {
    fn default() -> Self {
        Self {
            update_frequency: Duration::from_secs(10),
            success_threshold: Duration::from_secs(30),
            failure_threshold: Duration::from_secs(30),
            probe_timeout: Duration::from_secs(10),
            cache_sync_timeout: Duration::from_secs(120),
            lease_duration: Duration::from_secs(40),
            lease_renew_fraction: 0.25,
            workers: 8,
        }
    }
}

/// Karmada's reasons and messages of the Ready condition.
pub const REASON_READY: &str = "ClusterReady";
pub const MESSAGE_READY: &str = "cluster is healthy and ready to accept workloads";
pub const REASON_NOT_READY: &str = "ClusterNotReady";
pub const MESSAGE_NOT_READY: &str = "cluster is reachable but health endpoint responded without ok";
pub const REASON_NOT_REACHABLE: &str = "ClusterNotReachable";
pub const MESSAGE_NOT_REACHABLE: &str = "cluster is not reachable";
pub const REASON_COLLECTION_FAILED: &str = "StatusCollectionFailed";

/// Errors of one sync (logged, retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("write the status of cluster {cluster:?}: {source}")]
    Write {
        cluster: String,
        #[source]
        source: kube::Error,
    },
    #[error("cluster {cluster:?}: the member's nodes and pods were not listed within {timeout:?}")]
    CacheSync { cluster: String, timeout: Duration },
}

/// The `start` of the `clusterStatus` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, StatusOptions::default(), shutdown))
}

/// What a member's watches were started against; a change restarts them.
#[derive(Debug, Clone, PartialEq)]
struct Connection {
    endpoint: String,
    secret: Option<LocalSecretReference>,
    insecure: bool,
    proxy: String,
    /// [`flotilla_member::MemberClients::client_generation`]: a rebuilt client (new token or
    /// CA) restarts the watches.
    client: u64,
}

impl Connection {
    fn of(cluster: &Cluster, client: u64) -> Self {
        Self {
            endpoint: cluster.spec.api_endpoint.clone(),
            secret: cluster.spec.secret_ref.clone(),
            insecure: cluster.spec.insecure_skip_tls_verification,
            proxy: cluster.spec.proxy_url.clone(),
            client,
        }
    }
}

struct Member {
    connection: Connection,
    watch: Option<MemberWatch>,
    lease: Option<Shutdown>,
}

impl Drop for Member {
    fn drop(&mut self) {
        if let Some(lease) = &self.lease {
            lease.cancel();
        }
    }
}

struct Controller {
    context: Context,
    options: StatusOptions,
    clusters: Store<Cluster>,
    queue: WorkQueue<String>,
    thresholds: parking_lot::Mutex<Thresholds>,
    members: parking_lot::Mutex<HashMap<String, Member>>,
    shutdown: Shutdown,
}

/// Runs the cluster status controller until `shutdown`.
pub async fn run(context: Context, options: StatusOptions, shutdown: Shutdown) {
    let queue = WorkQueue::<String>::new(Backoff {
        base: Duration::from_millis(200),
        max: Duration::from_secs(60),
    });
    let clusters = context.informers.all::<Cluster>();
    let q = queue.clone();
    let mut generations: HashMap<String, (Option<i64>, bool)> = HashMap::new();
    // Like Karmada's GenerationChangedPredicate: our own status writes do not re-trigger. The
    // cluster controller's finalizer does: status is collected only once it is there, and a
    // new cluster should not wait for a requeue to notice it.
    let subscription = clusters.subscribe(move |event| match event {
        watcher::Event::Apply(c) | watcher::Event::InitApply(c) => {
            let name = c.name().to_owned();
            let seen = (c.metadata.generation, has_finalizer(c));
            if generations.insert(name.clone(), seen) != Some(seen) {
                q.add(name);
            }
        }
        watcher::Event::Delete(c) => {
            generations.remove(c.name());
            q.add(c.name().to_owned());
        }
        watcher::Event::Init | watcher::Event::InitDone => {}
    });
    let clusters = clusters.store();
    let controller = Arc::new(Controller {
        thresholds: parking_lot::Mutex::new(Thresholds::new(
            options.success_threshold,
            options.failure_threshold,
        )),
        context,
        options,
        clusters,
        queue: queue.clone(),
        members: parking_lot::Mutex::new(HashMap::new()),
        shutdown: shutdown.clone(),
    });
    let mut workers = Vec::new();
    for _ in 0..options.workers.max(1) {
        let c = controller.clone();
        workers.push(tokio::spawn(async move { c.work().await }));
    }
    shutdown.cancelled().await;
    queue.shut_down();
    for worker in workers {
        let _ = worker.await;
    }
    drop(subscription);
    controller.members.lock().clear();
}

/// How soon a just-joined cluster whose client the factory cannot build yet is looked at again
/// (the factory's watches are usually a few milliseconds behind this controller's).
const NEW_CLIENT_RETRY: Duration = Duration::from_millis(100);

/// Whether the cluster controller's finalizer is on `cluster`.
fn has_finalizer(cluster: &Cluster) -> bool {
    cluster
        .metadata
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
}

fn condition(type_: &str, status: &str, reason: &str, message: String) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        last_transition_time: now_time(),
        observed_generation: None,
    }
}

/// The Ready condition one probe calls for.
pub fn ready_from(health: &Health) -> Condition {
    match health {
        Health::Healthy => condition(CONDITION_READY, "True", REASON_READY, MESSAGE_READY.into()),
        Health::Unhealthy { .. } => condition(
            CONDITION_READY,
            "False",
            REASON_NOT_READY,
            MESSAGE_NOT_READY.into(),
        ),
        Health::Unreachable { .. } => condition(
            CONDITION_READY,
            "False",
            REASON_NOT_REACHABLE,
            MESSAGE_NOT_REACHABLE.into(),
        ),
    }
}

/// apimachinery's `meta.SetStatusCondition`: the transition time moves only with the status.
pub fn set_condition(conditions: &mut Vec<Condition>, new: Condition) {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            if existing.status != new.status {
                existing.status = new.status;
                existing.last_transition_time = new.last_transition_time;
            }
            existing.reason = new.reason;
            existing.message = new.message;
            existing.observed_generation = new.observed_generation;
        }
        None => conditions.push(new),
    }
}

/// What a collection while Ready found.
struct Collected {
    kubernetes_version: String,
    enablements: discovery::Enablements,
    node_summary: flotilla_api::karmada::NodeSummary,
    resource_summary: flotilla_api::karmada::ResourceSummary,
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
                    tracing::warn!(%error, "cluster status: will retry");
                    self.queue.add_rate_limited(name.clone());
                }
            }
            self.queue.done(&name);
        }
    }

    fn handles(&self, cluster: &Cluster) -> bool {
        match &self.context.cluster {
            Some(name) => cluster.name() == name,
            None => cluster.spec.sync_mode == "Push",
        }
    }

    /// Forgets everything about `name`: its watches stop, its lease is no longer renewed.
    fn stop(&self, name: &str) {
        if self.members.lock().remove(name).is_some() {
            tracing::info!(cluster = name, "stopped watching the member");
        }
        self.thresholds.lock().forget(name);
        self.context.members.invalidate(name);
        self.context.metrics.cluster.forget(name);
    }

    async fn reconcile(&self, name: &str) -> Result<Option<Duration>, StatusError> {
        let started = tokio::time::Instant::now();
        let result = self.sync(name).await;
        // Like Karmada, only a sync that ran (the cluster is served here and the cluster
        // controller's finalizer is on it) is timed; waiting for the finalizer is not.
        if matches!(result, Ok(Some(_)) | Err(_))
            && self
                .clusters
                .get(&ObjectRef::new(name))
                .is_some_and(|c| self.handles(&c) && has_finalizer(&c))
        {
            self.context.metrics.cluster.synced(name, started.elapsed());
        }
        result
    }

    async fn sync(&self, name: &str) -> Result<Option<Duration>, StatusError> {
        let frequency = self.options.update_frequency;
        let Some(cluster) = self.clusters.get(&ObjectRef::new(name)) else {
            self.stop(name);
            return Ok(None);
        };
        if !self.handles(&cluster) {
            self.stop(name);
            return Ok(None);
        }
        if !has_finalizer(&cluster) {
            // The cluster controller has not seen it yet. Its finalizer re-triggers this
            // controller (see `run`); the requeue is only a safety net.
            return Ok(Some(Duration::from_secs(1)));
        }
        let current = ready_condition(&cluster).cloned();
        let client = match self.context.members.client(name).await {
            Ok(client) => client,
            Err(error) if current.is_none() && just_joined(&cluster) => {
                // The client factory watches Clusters and Secrets; right after a join it may not
                // have seen them yet. Publishing a failure now would hold the cluster NotReady
                // for the success threshold, so look again shortly instead.
                tracing::debug!(cluster = name, error = %describe(&error), "no client yet for a new cluster");
                return Ok(Some(NEW_CLIENT_RETRY));
            }
            Err(error) => {
                let observed = condition(
                    CONDITION_READY,
                    "False",
                    REASON_COLLECTION_FAILED,
                    format!("failed to create a ClusterClient: {}", describe(&error)),
                );
                let ready = self.thresholds.lock().adjust(
                    name,
                    current.as_ref(),
                    observed,
                    tokio::time::Instant::now(),
                );
                self.write(&cluster, None, vec![ready]).await?;
                return Ok(Some(frequency));
            }
        };
        let probing = tokio::time::Instant::now();
        let probe = health::probe(&client, self.options.probe_timeout).await;
        self.context.metrics.cluster.probe(
            name,
            probe.online(),
            probe.healthy(),
            probing.elapsed(),
        );
        let observed = ready_from(&probe);
        let ready = self.thresholds.lock().adjust(
            name,
            current.as_ref(),
            observed,
            tokio::time::Instant::now(),
        );
        if let Health::Unreachable { reason } | Health::Unhealthy { body: reason, .. } = &probe {
            tracing::debug!(cluster = name, %reason, "health probe failed");
        }
        if probe.healthy() && ready.status == "True" {
            let collected = self.collect(&cluster, &client).await?;
            // In the agent (`context.cluster` set) the agent's session loop renews its
            // cluster's Lease with the agent's own duration (flotilla-agent `lease.rs`); a second
            // writer here raced it at creation with this controller's default duration.
            if cluster.spec.sync_mode == "Pull" && self.context.cluster.is_none() {
                self.ensure_lease(name);
            }
            let enablements = match (
                &collected.enablements.incomplete,
                collected.enablements.list.len(),
            ) {
                (_, 0) => condition(
                    CONDITION_COMPLETE_API_ENABLEMENTS,
                    "False",
                    "Empty",
                    "collected empty APIEnablements from the cluster".into(),
                ),
                (Some(_), n) => condition(
                    CONDITION_COMPLETE_API_ENABLEMENTS,
                    "False",
                    "Partial",
                    format!("might collect partial APIEnablements({n}) from the cluster"),
                ),
                (None, _) => condition(
                    CONDITION_COMPLETE_API_ENABLEMENTS,
                    "True",
                    "Complete",
                    "collected complete APIEnablements from the cluster".into(),
                ),
            };
            self.write(&cluster, Some(collected), vec![enablements, ready])
                .await?;
        } else {
            self.write(&cluster, None, vec![ready]).await?;
        }
        Ok(Some(frequency))
    }

    fn ensure_lease(&self, name: &str) {
        let mut members = self.members.lock();
        let Some(member) = members.get_mut(name) else {
            // `collect` creates the entry; without one the member was never collected.
            return;
        };
        if member.lease.is_some() {
            return;
        }
        let stop = self.shutdown.child();
        tokio::spawn(lease::renew(
            self.context.client.clone(),
            name.to_owned(),
            self.options.lease_duration,
            self.options.lease_renew_fraction,
            stop.clone(),
        ));
        member.lease = Some(stop);
    }

    async fn collect(
        &self,
        cluster: &Cluster,
        client: &kube::Client,
    ) -> Result<Collected, StatusError> {
        let name = cluster.name();
        let connection = Connection::of(cluster, self.context.members.client_generation(name));
        let tracker = {
            let mut members = self.members.lock();
            let member = members.entry(name.to_owned()).or_insert_with(|| Member {
                connection: connection.clone(),
                watch: None,
                lease: None,
            });
            if member.connection != connection {
                member.connection = connection;
                member.watch = None;
            }
            let watch = member.watch.get_or_insert_with(|| {
                tracing::info!(cluster = name, "watching the member's nodes and pods");
                MemberWatch::start(client.clone(), &self.shutdown)
            });
            watch.tracker().clone()
        };
        let synced = self.wait_synced(name).await;
        if !synced {
            return Err(StatusError::CacheSync {
                cluster: name.to_owned(),
                timeout: self.options.cache_sync_timeout,
            });
        }
        let kubernetes_version = match discovery::kubernetes_version(client).await {
            Ok(v) => v,
            Err(error) => {
                tracing::warn!(cluster = name, %error, "cannot read the member's version");
                String::new()
            }
        };
        let enablements = discovery::api_enablements(client).await;
        let (node_summary, resource_summary) = {
            let t = tracker.lock();
            (
                t.node_summary(),
                t.resource_summary(&cluster.spec.resource_models),
            )
        };
        Ok(Collected {
            kubernetes_version,
            enablements,
            node_summary,
            resource_summary,
        })
    }

    async fn wait_synced(&self, name: &str) -> bool {
        // Wait on receivers, not under the lock.
        let waiter = {
            let members = self.members.lock();
            members
                .get(name)
                .and_then(|m| m.watch.as_ref())
                .map(|w| w.waiter())
        };
        match waiter {
            Some(waiter) => waiter.wait(self.options.cache_sync_timeout).await,
            None => false,
        }
    }

    async fn write(
        &self,
        cluster: &Cluster,
        collected: Option<Collected>,
        conditions: Vec<Condition>,
    ) -> Result<(), StatusError> {
        let name = cluster.name();
        let api = Api::<Cluster>::all(self.context.client.clone());
        let mut base = cluster.clone();
        // Karmada's RetryOnConflict: the cluster controller writes the same object (taints,
        // finalizer), so a conflict means "read again and reapply", not a failure.
        for attempt in 0.. {
            let old = base.status.clone().unwrap_or_default();
            let mut status: ClusterStatus = old.clone();
            if let Some(c) = &collected {
                status.kubernetes_version = c.kubernetes_version.clone();
                status.api_enablements = c.enablements.list.clone();
                status.node_summary = Some(c.node_summary.clone());
                status.resource_summary = Some(c.resource_summary.clone());
            }
            for c in &conditions {
                set_condition(&mut status.conditions, c.clone());
            }
            if status == old && base.status.is_some() {
                self.context.metrics.cluster.status(&base);
                return Ok(());
            }
            let was = old
                .conditions
                .iter()
                .find(|c| c.type_ == CONDITION_READY)
                .map(|c| (c.status.clone(), c.reason.clone()));
            let now = status
                .conditions
                .iter()
                .find(|c| c.type_ == CONDITION_READY)
                .map(|c| (c.status.clone(), c.reason.clone()));
            base.status = Some(status);
            match api
                .replace_status(name, &PostParams::default(), &base)
                .await
            {
                Ok(written) => {
                    let metrics = &self.context.metrics.cluster;
                    if let Some((ready, _)) = &now {
                        metrics.transition(
                            name,
                            was.as_ref().map(|(s, _)| s.as_str()),
                            ready,
                            std::time::SystemTime::now(),
                        );
                    }
                    metrics.status(&written);
                    if let Some((ready, reason)) = now
                        && was != Some((ready.clone(), reason.clone()))
                    {
                        tracing::info!(cluster = name, %ready, %reason, "cluster readiness changed");
                    }
                    return Ok(());
                }
                Err(kube::Error::Api(s)) if s.code == 409 && attempt < 4 => {
                    match api.get_opt(name).await {
                        Ok(Some(fresh)) => base = fresh,
                        Ok(None) => return Ok(()),
                        Err(source) => {
                            return Err(StatusError::Write {
                                cluster: name.to_owned(),
                                source,
                            });
                        }
                    }
                }
                Err(source) => {
                    return Err(StatusError::Write {
                        cluster: name.to_owned(),
                        source,
                    });
                }
            }
        }
        Ok(())
    }
}

/// A member error for a condition message (never contains credentials).
fn describe(error: &MemberError) -> String {
    error.to_string()
}

/// How long after its creation a cluster without any Ready condition may wait for its client
/// before the failure is published.
const JOIN_GRACE: Duration = Duration::from_secs(15);

fn just_joined(cluster: &Cluster) -> bool {
    cluster
        .metadata
        .creation_timestamp
        .as_ref()
        .is_some_and(|created| {
            jiff::Timestamp::now()
                .duration_since(created.0)
                .unsigned_abs()
                < JOIN_GRACE
        })
}

#[cfg(test)]
mod tests;
