//! The graceful-eviction controllers (`gracefulEviction`, Karmada's
//! `resource-binding-graceful-eviction-controller` and its ClusterResourceBinding twin): for
//! every binding with `gracefulEvictionTasks`, each task is kept until the workload runs
//! healthy in its new placement or the task's grace period ends; then it is dropped, and with it
//! the Work of the cluster it came from (the binding controller deletes Works of clusters no
//! longer expected).
//!
//! Per task, as Karmada assesses it: no `creationTimestamp` ⇒ stamp now and keep;
//! `suppressDeletion: true` ⇒ keep for ever, `false` ⇒ drop now; older than
//! `gracePeriodSeconds` (or `--graceful-eviction-timeout`, 10 minutes) ⇒ drop; the scheduler has
//! seen the binding's generation and every cluster of `spec.clusters` reports `Healthy` ⇒ drop;
//! otherwise keep, and look again when the earliest grace period ends.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{
    AggregatedStatusItem, ClusterResourceBinding, GracefulEvictionTask, ResourceBinding,
    TargetCluster,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::Event as WatchEvent;
use tracing::{info, warn};

use crate::binding::{BindingKey, BindingView};
use crate::eviction::{eviction_event, write_tasks};
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "gracefulEviction";
/// Karmada's reporter names.
pub const RB_CONTROLLER: &str = "resource-binding-graceful-eviction-controller";
pub const CRB_CONTROLLER: &str = "cluster-resource-binding-graceful-eviction-controller";

/// What an assessment sees of the binding.
#[derive(Debug, Clone, Copy)]
pub struct Assessment<'a> {
    /// `--graceful-eviction-timeout`, for tasks without `gracePeriodSeconds`.
    pub timeout: Duration,
    pub scheduled: &'a [TargetCluster],
    pub observed: &'a [AggregatedStatusItem],
    /// `status.schedulerObservedGeneration == metadata.generation`.
    pub has_scheduled: bool,
}

fn task_timeout(task: &GracefulEvictionTask, default: Duration) -> Duration {
    task.grace_period_seconds.map_or(default, |s| {
        Duration::from_secs(u64::try_from(s).unwrap_or(0))
    })
}

fn all_healthy(a: &Assessment<'_>) -> bool {
    a.scheduled.iter().all(|target| {
        a.observed
            .iter()
            .find(|item| item.cluster_name == target.name)
            .is_some_and(|item| item.health == "Healthy")
    })
}

/// Karmada's `assessEvictionTasks` at `now`: the tasks kept (new ones stamped) and the
/// clusters whose tasks were dropped, in order.
pub fn assess(
    tasks: &[GracefulEvictionTask],
    now: jiff::Timestamp,
    a: &Assessment<'_>,
) -> (Vec<GracefulEvictionTask>, Vec<String>) {
    let mut kept = Vec::new();
    let mut evicted = Vec::new();
    let stamp = Time(jiff::Timestamp::from_second(now.as_second()).unwrap_or(now));
    for task in tasks {
        let Some(created) = &task.creation_timestamp else {
            kept.push(GracefulEvictionTask {
                creation_timestamp: Some(stamp.clone()),
                ..task.clone()
            });
            continue;
        };
        let keep = match task.suppress_deletion {
            Some(suppress) => suppress,
            None => {
                let deadline = created
                    .0
                    .checked_add(task_timeout(task, a.timeout))
                    .unwrap_or(created.0);
                now <= deadline && !(a.has_scheduled && all_healthy(a))
            }
        };
        if keep {
            kept.push(task.clone());
        } else {
            evicted.push(task.from_cluster.clone());
        }
    }
    (kept, evicted)
}

/// Karmada's `nextRetry`: until the earliest grace period of a task that can time out ends
/// (`None`: nothing to wait for).
pub fn next_retry(
    tasks: &[GracefulEvictionTask],
    timeout: Duration,
    now: jiff::Timestamp,
) -> Option<Duration> {
    tasks
        .iter()
        .filter(|t| t.suppress_deletion.is_none())
        .filter_map(|t| {
            let created = t.creation_timestamp.as_ref()?;
            let deadline = created.0.checked_add(task_timeout(t, timeout)).ok()?;
            let left = deadline.duration_since(now);
            Some(left)
        })
        .min()
        .filter(|left| left.is_positive())
        .map(|left| left.unsigned_abs())
}

struct Controller {
    client: kube::Client,
    rb_recorder: Recorder,
    crb_recorder: Recorder,
    timeout: Duration,
    bindings: Store<ResourceBinding>,
    cluster_bindings: Store<ClusterResourceBinding>,
    queue: WorkQueue<BindingKey>,
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

async fn run(context: Context, shutdown: Shutdown) {
    let rbs = context.informers.all::<ResourceBinding>();
    let crbs = context.informers.all::<ClusterResourceBinding>();
    let this = Arc::new(Controller {
        rb_recorder: recorder(&context.client, RB_CONTROLLER),
        crb_recorder: recorder(&context.client, CRB_CONTROLLER),
        client: context.client.clone(),
        timeout: context.options.failover.graceful_eviction_timeout,
        bindings: rbs.store(),
        cluster_bindings: crbs.store(),
        queue: WorkQueue::named("resource-binding-graceful-eviction-controller"),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&rbs, move |event: WatchEvent<&ResourceBinding>| {
        if let WatchEvent::Apply(b) | WatchEvent::InitApply(b) = event
            && !b.spec.graceful_eviction_tasks.is_empty()
        {
            me.queue.add(BindingKey::of_rb(b));
        }
    });
    let me = this.clone();
    tasks.subscribe(&crbs, move |event: WatchEvent<&ClusterResourceBinding>| {
        if let WatchEvent::Apply(b) | WatchEvent::InitApply(b) = event
            && !b.spec.graceful_eviction_tasks.is_empty()
        {
            me.queue.add(BindingKey::of_crb(b));
        }
    });
    let ready = async {
        rbs.wait_until_ready().await;
        crbs.wait_until_ready().await;
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
            // A binding written meanwhile (the scheduler, the binding controller) is retried
            // from the newer copy: routine, not worth a warning.
            let conflict = matches!(error, kube::Error::Api(status) if status.code == 409);
            let error = flotilla_runtime::errors::message(error);
            if conflict {
                tracing::debug!(binding = %key, %error, "graceful eviction: retrying");
            } else {
                warn!(binding = %key, %error, "graceful eviction: retrying");
            }
        },
    );
    info!("graceful-eviction controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    fn view(&self, key: &BindingKey) -> Option<BindingView> {
        crate::binding::cached_view(&self.bindings, &self.cluster_bindings, key)
    }

    async fn reconcile(&self, key: &BindingKey) -> Result<(), kube::Error> {
        let Some(binding) = self.view(key) else {
            return Ok(());
        };
        if binding.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let now = jiff::Timestamp::now();
        let tasks = &binding.spec.graceful_eviction_tasks;
        let (kept, evicted) = assess(
            tasks,
            now,
            &Assessment {
                timeout: self.timeout,
                scheduled: &binding.spec.clusters,
                observed: &binding.status.aggregated_status,
                has_scheduled: binding.status.scheduler_observed_generation
                    == binding.metadata.generation.unwrap_or(0),
            },
        );
        if kept != *tasks {
            write_tasks(&self.client, &binding, &kept).await?;
            let recorder = match key {
                BindingKey::Namespaced { .. } => &self.rb_recorder,
                BindingKey::Cluster { .. } => &self.crb_recorder,
            };
            for cluster in &evicted {
                info!(binding = %key, %cluster, "eviction task done; the old copy goes");
                eviction_event(recorder, &binding, cluster, true).await;
            }
        }
        if let Some(after) = next_retry(&kept, self.timeout, now) {
            self.queue.add_after(key.clone(), after);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod karmada_eviction_task;

    fn at(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    fn task(cluster: &str, created: Option<&str>) -> GracefulEvictionTask {
        GracefulEvictionTask {
            from_cluster: cluster.into(),
            purge_mode: "Gracefully".into(),
            creation_timestamp: created.map(|c| Time(at(c))),
            ..GracefulEvictionTask::default()
        }
    }

    fn target(name: &str) -> TargetCluster {
        TargetCluster {
            name: name.into(),
            replicas: 1,
            ..TargetCluster::default()
        }
    }

    fn item(cluster: &str, health: &str) -> AggregatedStatusItem {
        AggregatedStatusItem {
            cluster_name: cluster.into(),
            health: health.into(),
            applied: true,
            ..AggregatedStatusItem::default()
        }
    }

    #[test]
    fn a_new_task_is_stamped_and_kept() {
        let now = at("2026-12-06T10:00:00.700Z");
        let (kept, evicted) = assess(
            &[task("member1", None)],
            now,
            &Assessment {
                timeout: Duration::from_secs(600),
                scheduled: &[],
                observed: &[],
                has_scheduled: true,
            },
        );
        assert!(evicted.is_empty());
        assert_eq!(
            kept[0].creation_timestamp,
            Some(Time(at("2026-12-06T10:00:00Z")))
        );
    }

    #[test]
    fn a_task_goes_when_the_new_placement_is_healthy_or_its_time_is_up() {
        let now = at("2026-12-06T10:01:00Z");
        let tasks = [task("member1", Some("2026-12-06T10:00:00Z"))];
        let scheduled = [target("member2")];
        let unhealthy = [item("member2", "Unhealthy")];
        let healthy = [item("member2", "Healthy")];
        let base = Assessment {
            timeout: Duration::from_secs(600),
            scheduled: &scheduled,
            observed: &unhealthy,
            has_scheduled: true,
        };
        let (kept, _) = assess(&tasks, now, &base);
        assert_eq!(kept.len(), 1, "not healthy yet, within the timeout");
        assert_eq!(
            next_retry(&kept, base.timeout, now),
            Some(Duration::from_secs(540))
        );
        let (kept, evicted) = assess(
            &tasks,
            now,
            &Assessment {
                observed: &healthy,
                ..base
            },
        );
        assert!(kept.is_empty());
        assert_eq!(evicted, ["member1"]);
        // Healthy, but the scheduler has not seen the latest generation: kept.
        let (kept, _) = assess(
            &tasks,
            now,
            &Assessment {
                observed: &healthy,
                has_scheduled: false,
                ..base
            },
        );
        assert_eq!(kept.len(), 1);
        // Its own grace period of 30 s has passed.
        let mut short = tasks[0].clone();
        short.grace_period_seconds = Some(30);
        let (kept, evicted) = assess(&[short], now, &base);
        assert!(kept.is_empty());
        assert_eq!(evicted, ["member1"]);
    }

    #[test]
    fn suppressed_deletion_decides_alone() {
        let now = at("2026-12-06T12:00:00Z");
        let mut never = task("member1", Some("2026-12-06T10:00:00Z"));
        never.suppress_deletion = Some(true);
        let mut now_gone = task("member2", Some("2026-12-06T11:59:59Z"));
        now_gone.suppress_deletion = Some(false);
        let a = Assessment {
            timeout: Duration::from_secs(600),
            scheduled: &[],
            observed: &[],
            has_scheduled: false,
        };
        let (kept, evicted) = assess(&[never.clone(), now_gone], now, &a);
        assert_eq!(kept, [never.clone()]);
        assert_eq!(evicted, ["member2"]);
        assert_eq!(next_retry(&kept, a.timeout, now), None);
    }
}
