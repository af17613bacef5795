//! The application-failover controllers (`applicationFailover`, Karmada's
//! `resource-binding-application-failover-controller` and its ClusterResourceBinding twin): a
//! binding whose policy sets `failover.application` (and `propagateDeps`, which that requires)
//! leaves a cluster where its workload has been `Unhealthy` for longer than
//! `decisionConditions.tolerationSeconds`.
//!
//! The controller remembers, in memory, when it first saw each cluster's copy unhealthy (a
//! restart starts the clocks again, as in Karmada). Once a clock passes the toleration, the
//! cluster moves from `spec.clusters` into a `gracefulEvictionTask` (reason
//! `ApplicationFailure`, the policy's purge mode; `Gracefully` carries `gracePeriodSeconds`,
//! `Never` sets `suppressDeletion`), and the scheduler places the replicas elsewhere. A copy that
//! turns healthy (or unknown) again, or a cluster that is no longer targeted, forgets its clock.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{
    AggregatedStatusItem, ApplicationFailoverBehavior, ClusterResourceBinding,
    GracefulEvictionTask, ResourceBinding, ResourceBindingSpec,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use kube::runtime::reflector::Store;
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use tokio::time::Instant;
use tracing::{info, warn};

use crate::binding::{BindingKey, BindingView};
use crate::eviction::{
    EvictionError, REASON_APPLICATION_FAILURE, evict_cluster, eviction_event,
    preserved_label_state, write_eviction,
};
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "applicationFailover";
/// Karmada's controller names: the reporter of events and the producer of eviction tasks.
pub const RB_CONTROLLER: &str = "resource-binding-application-failover-controller";
pub const CRB_CONTROLLER: &str = "cluster-resource-binding-application-failover-controller";
/// `decisionConditions.tolerationSeconds` when the policy left it out.
const DEFAULT_TOLERATION_SECONDS: i32 = 300;

/// Why a binding could not be failed over (retried with backoff).
#[derive(Debug, thiserror::Error)]
pub enum FailoverError {
    #[error(transparent)]
    State(#[from] EvictionError),
    #[error("GracefulEviction featureGate must be enabled when purgeMode is Gracefully")]
    GracefulEvictionOff,
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
}

/// Per binding, per cluster: when its copy was first seen unhealthy.
#[derive(Debug, Default)]
pub struct UnhealthySince {
    bindings: Mutex<HashMap<BindingKey, BTreeMap<String, Instant>>>,
}

impl UnhealthySince {
    /// Karmada's `detectFailure`: starts the clock of newly unhealthy clusters and returns the
    /// clusters unhealthy for longer than `toleration`, and how long until the next one may be.
    pub fn detect(
        &self,
        key: &BindingKey,
        unhealthy: &[String],
        toleration: Duration,
        now: Instant,
    ) -> (Vec<String>, Option<Duration>) {
        let mut bindings = self.bindings.lock();
        let clocks = bindings.entry(key.clone()).or_default();
        let mut evict = Vec::new();
        let mut next: Option<Duration> = None;
        for cluster in unhealthy {
            let Some(since) = clocks.get(cluster) else {
                clocks.insert(cluster.clone(), now);
                next = Some(next.map_or(toleration, |n| n.min(toleration)));
                continue;
            };
            let elapsed = now.saturating_duration_since(*since);
            if elapsed > toleration {
                evict.push(cluster.clone());
            } else {
                let left = toleration - elapsed;
                next = Some(next.map_or(left, |n| n.min(left)));
            }
        }
        (evict, next)
    }

    /// Forgets the clocks of clusters not in `targeted` and of those in `recovered`.
    pub fn retain(&self, key: &BindingKey, targeted: &BTreeSet<String>, recovered: &[String]) {
        let mut bindings = self.bindings.lock();
        if let Some(clocks) = bindings.get_mut(key) {
            clocks.retain(|cluster, _| targeted.contains(cluster) && !recovered.contains(cluster));
        }
    }

    pub fn forget(&self, key: &BindingKey) {
        self.bindings.lock().remove(key);
    }
}

struct Controller {
    client: kube::Client,
    rb_recorder: Recorder,
    crb_recorder: Recorder,
    graceful_eviction: bool,
    preserve_state: bool,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    queue: WorkQueue<BindingKey>,
    clocks: UnhealthySince,
    /// Whether a kind has a health rule counts customizations and webhooks too.
    interpreter: Arc<crate::interpreter::Customizations>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

fn recorder(client: &kube::Client, name: &str) -> Recorder {
    Recorder::new(
        client.clone(),
        Reporter {
            controller: name.into(),
            instance: None,
        },
    )
}

fn has_application_failover(spec: &flotilla_api::karmada::ResourceBindingSpec) -> bool {
    spec.failover
        .as_ref()
        .is_some_and(|f| f.application.is_some())
}

async fn run(context: Context, shutdown: Shutdown) {
    let rbs = context.informers.all::<ResourceBinding>();
    let crbs = context.informers.all::<ClusterResourceBinding>();
    let this = Arc::new(Controller {
        rb_recorder: recorder(&context.client, RB_CONTROLLER),
        crb_recorder: recorder(&context.client, CRB_CONTROLLER),
        client: context.client.clone(),
        graceful_eviction: context.options.gates.graceful_eviction(),
        preserve_state: context.options.gates.stateful_failover_injection(),
        bindings: rbs.store(),
        cluster_bindings: crbs.store(),
        queue: WorkQueue::named("resource-binding-application-failover-controller"),
        clocks: UnhealthySince::default(),
        interpreter: context.interpreter.clone(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(
        &rbs,
        move |event: WatchEvent<&ResourceBinding>| match event {
            WatchEvent::Apply(b) | WatchEvent::InitApply(b) => {
                me.binding_changed(BindingKey::of_rb(b), has_application_failover(&b.spec))
            }
            WatchEvent::Delete(b) => me.clocks.forget(&BindingKey::of_rb(b)),
            _ => {}
        },
    );
    let me = this.clone();
    tasks.subscribe(
        &crbs,
        move |event: WatchEvent<&ClusterResourceBinding>| match event {
            WatchEvent::Apply(b) | WatchEvent::InitApply(b) => {
                me.binding_changed(BindingKey::of_crb(b), has_application_failover(&b.spec))
            }
            WatchEvent::Delete(b) => me.clocks.forget(&BindingKey::of_crb(b)),
            _ => {}
        },
    );
    let ready = async {
        rbs.wait_until_ready().await;
        crbs.wait_until_ready().await;
        this.interpreter.ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        2,
        move |key: BindingKey| {
            let me = me.clone();
            async move { me.reconcile(&key).await }
        },
        |key, error| {
            let conflict = matches!(error, FailoverError::Kube(kube::Error::Api(status)) if status.code == 409);
            if conflict {
                tracing::debug!(binding = %key, %error, "application failover: retrying");
            } else {
                warn!(binding = %key, %error, "application failover: retrying");
            }
        },
    );
    info!("application-failover controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    /// Every binding event comes here (cheaply: no copy of the binding): a binding with the
    /// behaviour, or one that had it and may have lost it (to forget its clocks), is queued.
    fn binding_changed(&self, key: BindingKey, has_behaviour: bool) {
        if has_behaviour || self.clocks.bindings.lock().contains_key(&key) {
            self.queue.add(key);
        }
    }

    fn view(&self, key: &BindingKey) -> Option<BindingView> {
        crate::binding::cached_view(&self.bindings, &self.cluster_bindings, key)
    }

    /// Karmada's `bindingFilter` ([`failover_behaviour`]) with this controller's interpreter.
    fn applies<'v>(&self, view: &'v BindingView) -> Option<&'v ApplicationFailoverBehavior> {
        failover_behaviour(&view.spec, &view.status.aggregated_status, |v, k| {
            self.interpreter.health_hook(v, k)
        })
    }

    async fn reconcile(&self, key: &BindingKey) -> Result<(), FailoverError> {
        let Some(binding) = self.view(key) else {
            self.clocks.forget(key);
            return Ok(());
        };
        let Some(behaviour) = self.applies(&binding) else {
            self.clocks.forget(key);
            return Ok(());
        };
        let seconds = behaviour
            .decision_conditions
            .toleration_seconds
            .unwrap_or(DEFAULT_TOLERATION_SECONDS);
        let toleration = Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
        let (unhealthy, recovered) =
            unhealthy_and_others(&binding.status.aggregated_status, &binding.spec);
        let (evict, next) = self
            .clocks
            .detect(key, &unhealthy, toleration, Instant::now());
        let mut targeted: BTreeSet<String> = binding
            .spec
            .clusters
            .iter()
            .map(|c| c.name.clone())
            .collect();
        if !evict.is_empty() {
            let before: Vec<String> = binding
                .spec
                .clusters
                .iter()
                .map(|c| c.name.clone())
                .collect();
            let producer = match key {
                BindingKey::Namespaced { .. } => RB_CONTROLLER,
                BindingKey::Cluster { .. } => CRB_CONTROLLER,
            };
            let mut spec = binding.spec.clone();
            for cluster in &evict {
                let task = self.task(behaviour, &binding, cluster, producer, &before)?;
                evict_cluster(&mut spec, cluster, task);
            }
            let recorder = match key {
                BindingKey::Namespaced { .. } => &self.rb_recorder,
                BindingKey::Cluster { .. } => &self.crb_recorder,
            };
            if let Err(error) = write_eviction(&self.client, &binding, &spec).await {
                for cluster in &evict {
                    eviction_event(recorder, &binding, cluster, false).await;
                }
                return Err(error.into());
            }
            for cluster in &evict {
                info!(binding = %key, %cluster, "workload unhealthy beyond its toleration; failing over");
                targeted.remove(cluster);
            }
        }
        self.clocks.retain(key, &targeted, &recovered);
        if let Some(after) = next.filter(|d| !d.is_zero()) {
            self.queue.add_after(key.clone(), after);
        }
        Ok(())
    }

    /// Karmada's `buildTaskOptions`, with this controller's feature gates.
    fn task(
        &self,
        behaviour: &ApplicationFailoverBehavior,
        binding: &BindingView,
        cluster: &str,
        producer: &str,
        before: &[String],
    ) -> Result<GracefulEvictionTask, FailoverError> {
        build_task(
            behaviour,
            &binding.status.aggregated_status,
            cluster,
            producer,
            before,
            Gates {
                graceful_eviction: self.graceful_eviction,
                preserve_state: self.preserve_state,
            },
        )
    }
}

/// Karmada's `bindingFilter`: the behaviour, when it is set, some status was collected, the
/// kind has a health rule (`health_hook(apiVersion, kind)`, Karmada's `HookEnabled`: native,
/// bundled, a customization's or a webhook's), and dependencies propagate.
pub fn failover_behaviour<'s>(
    spec: &'s ResourceBindingSpec,
    aggregated: &[AggregatedStatusItem],
    health_hook: impl FnOnce(&str, &str) -> bool,
) -> Option<&'s ApplicationFailoverBehavior> {
    let behaviour = spec.failover.as_ref()?.application.as_ref()?;
    let resource = &spec.resource;
    (!aggregated.is_empty()
        && health_hook(&resource.api_version, &resource.kind)
        && spec.propagate_deps)
        .then_some(behaviour)
}

/// Karmada's `distinguishUnhealthyClustersWithOthers`: the clusters whose copy is `Unhealthy`
/// and not already being evicted, and those whose copy is `Healthy` or `Unknown` (their clocks
/// are forgotten), both in status order.
pub fn unhealthy_and_others(
    aggregated: &[AggregatedStatusItem],
    spec: &ResourceBindingSpec,
) -> (Vec<String>, Vec<String>) {
    let mut unhealthy = Vec::new();
    let mut others = Vec::new();
    for item in aggregated {
        match item.health.as_str() {
            "Unhealthy" if !spec.cluster_in_graceful_eviction_tasks(&item.cluster_name) => {
                unhealthy.push(item.cluster_name.clone())
            }
            "Healthy" | "Unknown" => others.push(item.cluster_name.clone()),
            _ => {}
        }
    }
    (unhealthy, others)
}

/// The feature gates a failover task depends on.
#[derive(Debug, Clone, Copy)]
pub struct Gates {
    /// `GracefulEviction`: required by `purgeMode: Gracefully`.
    pub graceful_eviction: bool,
    /// `StatefulFailoverInjection`: record the preserved label state.
    pub preserve_state: bool,
}

/// Karmada's `buildTaskOptions`: the eviction task for `cluster` (its `fromCluster` and
/// `replicas` are filled in by [`evict_cluster`]). `before` is `spec.clusters` before the
/// failover, recorded with a preserved label state.
pub fn build_task(
    behaviour: &ApplicationFailoverBehavior,
    aggregated: &[AggregatedStatusItem],
    cluster: &str,
    producer: &str,
    before: &[String],
    gates: Gates,
) -> Result<GracefulEvictionTask, FailoverError> {
    let mut task = GracefulEvictionTask {
        producer: producer.into(),
        reason: REASON_APPLICATION_FAILURE.into(),
        purge_mode: behaviour.purge_mode.clone(),
        ..GracefulEvictionTask::default()
    };
    if gates.preserve_state
        && let Some(state) =
            preserved_label_state(behaviour.state_preservation.as_ref(), aggregated, cluster)?
    {
        task.preserved_label_state = state;
        task.clusters_before_failover = before.to_vec();
    }
    match behaviour.purge_mode.as_str() {
        "Gracefully" if !gates.graceful_eviction => {
            return Err(FailoverError::GracefulEvictionOff);
        }
        "Gracefully" => task.grace_period_seconds = behaviour.grace_period_seconds,
        "Never" => task.suppress_deletion = Some(true),
        _ => {}
    }
    Ok(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    mod karmada_common;

    fn key() -> BindingKey {
        BindingKey::Namespaced {
            namespace: "default".into(),
            name: "nginx-deployment".into(),
        }
    }

    #[test]
    fn a_cluster_is_evicted_only_after_its_toleration() {
        let clocks = UnhealthySince::default();
        let t0 = Instant::now();
        let toleration = Duration::from_secs(30);
        let sick = vec!["member1".to_owned()];
        let (evict, next) = clocks.detect(&key(), &sick, toleration, t0);
        assert!(evict.is_empty());
        assert_eq!(next, Some(toleration));
        let (evict, next) = clocks.detect(&key(), &sick, toleration, t0 + Duration::from_secs(10));
        assert!(evict.is_empty());
        assert_eq!(next, Some(Duration::from_secs(20)));
        let (evict, _) = clocks.detect(&key(), &sick, toleration, t0 + Duration::from_secs(31));
        assert_eq!(evict, sick);
    }

    #[test]
    fn recovering_restarts_the_clock() {
        let clocks = UnhealthySince::default();
        let t0 = Instant::now();
        let toleration = Duration::from_secs(30);
        let sick = vec!["member1".to_owned()];
        clocks.detect(&key(), &sick, toleration, t0);
        let targeted: BTreeSet<String> = ["member1".to_owned()].into();
        clocks.retain(&key(), &targeted, &sick);
        let (evict, next) = clocks.detect(&key(), &sick, toleration, t0 + Duration::from_secs(40));
        assert!(evict.is_empty(), "the clock started again");
        assert_eq!(next, Some(toleration));
    }
}
