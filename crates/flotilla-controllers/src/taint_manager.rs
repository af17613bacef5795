//! The taint manager (Karmada's `NoExecuteTaintManager`, started with the `cluster` controller
//! when `--enable-taint-manager` and the `Failover` gate are on): it evicts workloads from
//! clusters with NoExecute taints their placement does not tolerate, but only with
//! `--enable-no-execute-taint-eviction`.
//!
//! On every Cluster change, and every 10 s while a cluster has NoExecute taints, each binding
//! targeting it is weighed against the tolerations of its *applied* placement (the
//! `policy.karmada.io/applied-placement` annotation the scheduler writes): a taint nobody
//! tolerates evicts now; tolerations with `tolerationSeconds` evict at the earliest `timeAdded +
//! tolerationSeconds`; tolerations without seconds never. Evicting moves the cluster from
//! `spec.clusters` into a `gracefulEvictionTask` (reason `TaintUntolerated`, producer
//! `TaintManager`, purge mode from the policy's `failover.cluster` or
//! `--no-execute-taint-eviction-purge-mode`), and the scheduler places the replicas elsewhere.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{
    ANNOTATION_APPLIED_PLACEMENT, Cluster, ClusterResourceBinding, FailoverBehavior,
    GracefulEvictionTask, Placement, ResourceBinding,
};
use flotilla_api::lifted::taints::{matching_tolerations, min_toleration_time, no_execute_taints};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Recorder, Reporter};
use flotilla_runtime::{Backoff, Shutdown, WorkQueue};
use k8s_openapi::api::core::v1::Taint;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use tracing::{info, warn};

use crate::binding::{BindingKey, BindingView};
use crate::eviction::{
    EvictionError, EvictionKey, PRODUCER_TAINT_MANAGER, REASON_TAINT_UNTOLERATED, evict_cluster,
    eviction_event, preserved_label_state, write_eviction,
};
use crate::manager::Context;
use crate::metrics::eviction::EvictionMetrics;
use crate::options::{FailoverOptions, PurgeMode};

/// Karmada's name for the taint manager (its events' reporter).
pub const NAME: &str = "taint-manager";
/// Concurrent evictions per queue (Karmada: 3).
const WORKERS: usize = 3;
/// Karmada's names of its two eviction queues (the `name` label of the eviction metrics).
pub const RB_QUEUE: &str = "binding-eviction";
pub const CRB_QUEUE: &str = "cluster-binding-eviction";

/// What the tolerations of a binding's applied placement say about a cluster's taints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Some NoExecute taint is not tolerated, or the tolerated time has passed.
    EvictNow,
    /// Tolerated for this much longer.
    EvictAfter(Duration),
    /// Tolerated for ever (or the cluster has no NoExecute taints).
    Keep,
}

/// Karmada's `needEviction` for one binding and one cluster's taints at `now`.
pub fn decide(taints: &[Taint], placement: &Placement, now: jiff::Timestamp) -> Decision {
    let taints = no_execute_taints(taints);
    if taints.is_empty() {
        return Decision::Keep;
    }
    let Some(used) = matching_tolerations(&taints, &placement.cluster_tolerations) else {
        return Decision::EvictNow;
    };
    match min_toleration_time(&taints, &used, now) {
        Some(Duration::ZERO) => Decision::EvictNow,
        Some(left) => Decision::EvictAfter(left),
        None => Decision::Keep,
    }
}

/// Why an eviction failed (retried with the eviction queue's backoff).
#[derive(Debug, thiserror::Error)]
pub enum TaintManagerError {
    #[error("binding {binding} has no readable applied placement")]
    NoAppliedPlacement { binding: BindingKey },
    #[error(transparent)]
    State(#[from] EvictionError),
    #[error("evict binding {binding} from cluster {cluster}: {source}")]
    Write {
        binding: BindingKey,
        cluster: String,
        #[source]
        source: kube::Error,
    },
}

struct TaintManager {
    client: kube::Client,
    recorder: Recorder,
    options: FailoverOptions,
    preserve_state: bool,
    clusters: Store<Cluster>,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    cluster_queue: WorkQueue<String>,
    /// ResourceBindings to weigh for eviction.
    rb_evictions: WorkQueue<EvictionKey>,
    /// ClusterResourceBindings to weigh for eviction.
    crb_evictions: WorkQueue<EvictionKey>,
    metrics: EvictionMetrics,
}

/// Runs the taint manager until `shutdown` (the caller checks the gate and the flag).
pub async fn run(context: Context, shutdown: Shutdown) {
    let options = context.options.failover.clone();
    let clusters = context.informers.all::<Cluster>();
    let rbs = context.informers.all::<ResourceBinding>();
    let crbs = context.informers.all::<ClusterResourceBinding>();
    let interval = options.eviction_interval();
    let this = Arc::new(TaintManager {
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: NAME.into(),
                instance: None,
            },
        ),
        client: context.client.clone(),
        preserve_state: context.options.gates.stateful_failover_injection(),
        options,
        clusters: clusters.store(),
        bindings: rbs.store(),
        cluster_bindings: crbs.store(),
        cluster_queue: WorkQueue::named("taint-manager"),
        // Karmada's eviction queues retry at the eviction rate (and at least the controller's
        // backoff).
        rb_evictions: WorkQueue::named_with("binding-eviction", eviction_backoff(interval)),
        crb_evictions: WorkQueue::named_with(
            "cluster-binding-eviction",
            eviction_backoff(interval),
        ),
        metrics: context.metrics.eviction.clone(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&clusters, move |event: WatchEvent<&Cluster>| match event {
        WatchEvent::Apply(c) | WatchEvent::InitApply(c) => me
            .cluster_queue
            .add(c.metadata.name.clone().unwrap_or_default()),
        _ => {}
    });
    let ready = async {
        clusters.wait_until_ready().await;
        rbs.wait_until_ready().await;
        crbs.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.cluster_queue,
        1,
        move |name: String| {
            let me = me.clone();
            async move {
                me.sync_cluster(&name);
                Ok::<(), TaintManagerError>(())
            }
        },
        |_, _| {},
    );
    for (queue, name) in [
        (&this.rb_evictions, RB_QUEUE),
        (&this.crb_evictions, CRB_QUEUE),
    ] {
        let me = this.clone();
        tasks.workers(
            queue,
            WORKERS,
            move |key: EvictionKey| {
                let me = me.clone();
                async move { me.process(name, &key).await }
            },
            |key, error| warn!(cluster = %key.cluster, binding = %key.binding, %error, "eviction failed; retrying"),
        );
    }
    info!("taint manager running");
    shutdown.cancelled().await;
    this.cluster_queue.shut_down();
    this.rb_evictions.shut_down();
    this.crb_evictions.shut_down();
    tasks.abort();
}

fn eviction_backoff(interval: Duration) -> Backoff {
    Backoff {
        base: interval.max(Duration::from_millis(5)),
        max: Duration::from_secs(1800).max(interval),
    }
}

fn resource_kind(key: &BindingKey) -> &'static str {
    match key {
        BindingKey::Namespaced { .. } => "ResourceBinding",
        BindingKey::Cluster { .. } => "ClusterResourceBinding",
    }
}

fn applied_placement(binding: &BindingView) -> Option<Placement> {
    placement_of(binding.metadata.annotations.as_ref())
}

/// The applied placement in a binding's annotations; `None` when the annotation is missing,
/// empty or not a placement (Karmada's eviction worker fails such a binding and retries).
fn placement_of(annotations: Option<&BTreeMap<String, String>>) -> Option<Placement> {
    let text = annotations?.get(ANNOTATION_APPLIED_PLACEMENT)?;
    serde_json::from_str(text).ok()
}

/// Karmada's `enqueueBinding`: whether (and when) a binding on a cluster with `taints` goes to
/// the eviction queue. A missing or unreadable placement queues it at once, so that the eviction
/// worker reports it.
fn enqueue_decision(
    taints: &[Taint],
    placement: Option<&Placement>,
    now: jiff::Timestamp,
) -> Decision {
    if no_execute_taints(taints).is_empty() {
        return Decision::Keep;
    }
    placement.map_or(Decision::EvictNow, |p| decide(taints, p, now))
}

/// Karmada's `getPurgeMode`: the purge mode of the policy's `failover.cluster` (`Gracefully`
/// when it names none), else `--no-execute-taint-eviction-purge-mode`.
fn purge_mode_for(failover: Option<&FailoverBehavior>, default: PurgeMode) -> String {
    match failover.and_then(|f| f.cluster.as_ref()) {
        Some(cluster) if cluster.purge_mode.is_empty() => PurgeMode::Gracefully.as_str().into(),
        Some(cluster) => cluster.purge_mode.clone(),
        None => default.as_str().into(),
    }
}

impl TaintManager {
    fn queue(&self, key: &EvictionKey) -> (&WorkQueue<EvictionKey>, &'static str) {
        match key.binding {
            BindingKey::Namespaced { .. } => (&self.rb_evictions, RB_QUEUE),
            BindingKey::Cluster { .. } => (&self.crb_evictions, CRB_QUEUE),
        }
    }

    /// Queues `key` now or after `after`, counted as Karmada's eviction worker counts it.
    fn enqueue(&self, key: EvictionKey, after: Option<Duration>) {
        let (queue, name) = self.queue(&key);
        self.metrics
            .count_kind(&key.cluster, resource_kind(&key.binding), 1);
        match after {
            None => queue.add(key),
            Some(after) => queue.add_after(key, after),
        }
        self.metrics.set_depth(name, queue.len());
    }

    /// One item of eviction queue `name`, then Karmada's pacing: a worker waits `1 /
    /// --resource-eviction-rate` after every item it processed.
    async fn process(
        &self,
        name: &'static str,
        key: &EvictionKey,
    ) -> Result<(), TaintManagerError> {
        let (queue, _) = self.queue(key);
        self.metrics.set_depth(name, queue.len());
        let started = std::time::Instant::now();
        let result = self.evict(key).await;
        self.metrics
            .processed(name, result.is_ok(), started.elapsed().as_secs_f64());
        if result.is_ok() {
            self.metrics
                .count_kind(&key.cluster, resource_kind(&key.binding), -1);
            tokio::time::sleep(self.options.eviction_interval()).await;
        }
        result
    }

    fn cluster_taints(&self, name: &str) -> Option<Vec<Taint>> {
        let cluster = self.clusters.get(&ObjectRef::new(name))?;
        Some(no_execute_taints(&cluster.spec.taints))
    }

    /// Queues every binding on `name` whose time is up (or will be), and looks again in 10 s.
    fn sync_cluster(&self, name: &str) {
        if !self.options.enable_no_execute_taint_eviction {
            return;
        }
        let Some(taints) = self.cluster_taints(name) else {
            return;
        };
        if taints.is_empty() {
            return;
        }
        let now = jiff::Timestamp::now();
        let views = self
            .bindings
            .state()
            .iter()
            .filter(|b| b.spec.clusters.iter().any(|c| c.name == name))
            .map(|b| BindingView::from_rb(b))
            .chain(
                self.cluster_bindings
                    .state()
                    .iter()
                    .filter(|b| b.spec.clusters.iter().any(|c| c.name == name))
                    .map(|b| BindingView::from_crb(b)),
            )
            .collect::<Vec<_>>();
        for view in views {
            let key = EvictionKey {
                cluster: name.to_owned(),
                binding: view.key.clone(),
            };
            match enqueue_decision(&taints, applied_placement(&view).as_ref(), now) {
                Decision::EvictNow => self.enqueue(key, None),
                Decision::EvictAfter(left) => self.enqueue(key, Some(left)),
                Decision::Keep => {}
            }
        }
        self.cluster_queue
            .add_after(name.to_owned(), self.options.taint_eviction_retry_frequency);
    }

    fn view(&self, key: &BindingKey) -> Option<BindingView> {
        crate::binding::cached_view(&self.bindings, &self.cluster_bindings, key)
    }

    fn purge_mode(&self, binding: &BindingView) -> String {
        purge_mode_for(
            binding.spec.failover.as_ref(),
            self.options.no_execute_taint_eviction_purge_mode,
        )
    }

    async fn evict(&self, key: &EvictionKey) -> Result<(), TaintManagerError> {
        let Some(binding) = self.view(&key.binding) else {
            return Ok(());
        };
        let cluster = key.cluster.as_str();
        if binding.metadata.deletion_timestamp.is_some()
            || !binding.spec.clusters.iter().any(|c| c.name == cluster)
        {
            return Ok(());
        }
        if !self.options.enable_no_execute_taint_eviction {
            return Ok(());
        }
        let Some(taints) = self.cluster_taints(cluster) else {
            return Ok(());
        };
        let placement =
            applied_placement(&binding).ok_or_else(|| TaintManagerError::NoAppliedPlacement {
                binding: key.binding.clone(),
            })?;
        match decide(&taints, &placement, jiff::Timestamp::now()) {
            Decision::EvictNow => {}
            Decision::EvictAfter(left) => {
                self.enqueue(key.clone(), Some(left));
                return Ok(());
            }
            Decision::Keep => return Ok(()),
        }
        let cluster_failover = binding
            .spec
            .failover
            .as_ref()
            .and_then(|f| f.cluster.as_ref());
        let preserved = match cluster_failover {
            Some(behaviour) if self.preserve_state => preserved_label_state(
                behaviour.state_preservation.as_ref(),
                &binding.status.aggregated_status,
                cluster,
            )?,
            _ => None,
        };
        let task = GracefulEvictionTask {
            purge_mode: self.purge_mode(&binding),
            reason: REASON_TAINT_UNTOLERATED.into(),
            producer: PRODUCER_TAINT_MANAGER.into(),
            preserved_label_state: preserved.unwrap_or_default(),
            ..GracefulEvictionTask::default()
        };
        let mut spec = binding.spec.clone();
        evict_cluster(&mut spec, cluster, task);
        if let Err(source) = write_eviction(&self.client, &binding, &spec).await {
            eviction_event(&self.recorder, &binding, cluster, false).await;
            return Err(TaintManagerError::Write {
                binding: key.binding.clone(),
                cluster: cluster.to_owned(),
                source,
            });
        }
        info!(binding = %key.binding, cluster, "evicted the workload from a tainted cluster");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Toleration;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    // Karmada's taint-manager cases (`taint_manager_test.go`), restated.
    mod karmada_taint_manager;

    fn taint(key: &str, effect: &str, added: &str) -> Taint {
        Taint {
            key: key.into(),
            effect: effect.into(),
            value: None,
            time_added: Some(Time(added.parse().unwrap())),
        }
    }

    fn placement(tolerations: Vec<Toleration>) -> Placement {
        Placement {
            cluster_tolerations: tolerations,
            ..Placement::default()
        }
    }

    fn toleration(key: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            toleration_seconds: seconds,
            value: None,
        }
    }

    #[test]
    fn karmadas_eviction_decisions() {
        let now: jiff::Timestamp = "2026-12-06T10:00:00Z".parse().unwrap();
        let noexec = vec![taint("fail-test", "NoExecute", "2026-12-06T09:59:59Z")];
        // NoSchedule taints never evict.
        let nosched = vec![taint("fail-test", "NoSchedule", "2026-12-06T09:00:00Z")];
        assert_eq!(decide(&nosched, &placement(vec![]), now), Decision::Keep);
        // Not tolerated: now.
        assert_eq!(decide(&noexec, &placement(vec![]), now), Decision::EvictNow);
        // Tolerated 3 s from 09:59:59: two seconds left.
        assert_eq!(
            decide(
                &noexec,
                &placement(vec![toleration("fail-test", Some(3))]),
                now
            ),
            Decision::EvictAfter(Duration::from_secs(2))
        );
        // Tolerated for ever.
        assert_eq!(
            decide(
                &noexec,
                &placement(vec![toleration("fail-test", None)]),
                now
            ),
            Decision::Keep
        );
        // A toleration of another key does not help.
        assert_eq!(
            decide(&noexec, &placement(vec![toleration("other", None)]), now),
            Decision::EvictNow
        );
    }
}
