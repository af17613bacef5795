//! The CronFederatedHPA controller (`cronFederatedHorizontalPodAutoscaler`, Karmada's
//! `cronfederatedhpa-controller`): every rule of a CronFederatedHPA that is not suspended runs
//! on its cron schedule ([`flotilla_api::karmada::cron`]) and scales the target: a workload through its `scale`
//! subresource to `targetReplicas`, or a FederatedHPA's `minReplicas` / `maxReplicas` to
//! `targetMinReplicas` / `targetMaxReplicas`. Each rule's `status.executionHistories[]` entry
//! carries its `nextExecutionTime` and its latest successful and failed runs (newest first, at
//! most `successfulHistoryLimit` / `failedHistoryLimit`).
//!
//! As in Karmada, the controller looks at a CronFederatedHPA when it is created and when its
//! generation changes: a rule whose definition changed is restarted, a suspended rule is stopped
//! (its `nextExecutionTime` cleared), a removed rule is stopped and its history dropped, and a
//! new scale target restarts every rule. The schedules run in memory: after a restart, the next
//! run of each rule is computed again.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use flotilla_api::karmada::{
    AUTOSCALING_KARMADA_V1ALPHA1, CronFederatedHPA, CronFederatedHPARule, ExecutionHistory,
    FailedExecution, SuccessfulExecution,
};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Shutdown, WorkQueue};
use k8s_openapi::api::autoscaling::v2::CrossVersionObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource as _;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use serde_json::json;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};
use crate::metrics::Metrics;
use crate::resources::{ResolveError, Resources};
use flotilla_api::karmada::cron::{Schedule, ScheduleError, load_zone};

/// The `--controllers` name.
pub const NAME: &str = "cronFederatedHorizontalPodAutoscaler";
/// Karmada's controller name (the events' reporter).
pub const CONTROLLER_NAME: &str = "cronfederatedhpa-controller";
/// Runs kept when a rule leaves its limits out (the CRD's default).
const DEFAULT_HISTORY_LIMIT: i32 = 3;
/// Attempts of a write that conflicts (client-go's `retry.DefaultRetry`).
const CONFLICT_ATTEMPTS: usize = 5;

/// Why a reconcile or a run failed.
#[derive(Debug, thiserror::Error)]
pub enum CronError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error("CronFederatedHPA({key}) do not support scale target {api_version}/{kind}")]
    UnsupportedTarget {
        key: String,
        api_version: String,
        kind: String,
    },
    #[error("rule {0} sets no targetReplicas for a workload target")]
    NoTargetReplicas(String),
}

type Key = (String, String);

fn key_string(key: &Key) -> String {
    format!("{}/{}", key.0, key.1)
}

/// A running rule: its definition and its timer task.
struct Runner {
    rule: CronFederatedHPARule,
    task: JoinHandle<()>,
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The rules running for one CronFederatedHPA, and the target they were started for.
#[derive(Default)]
struct Executors {
    target: Option<CrossVersionObjectReference>,
    rules: HashMap<String, Runner>,
}

struct Controller {
    client: kube::Client,
    recorder: Recorder,
    resources: Resources,
    metrics: Metrics,
    store: Store<CronFederatedHPA>,
    queue: WorkQueue<Key>,
    generations: Mutex<HashMap<Key, i64>>,
    executors: Mutex<HashMap<Key, Executors>>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

fn key_of(c: &CronFederatedHPA) -> Key {
    (
        c.metadata.namespace.clone().unwrap_or_default(),
        c.metadata.name.clone().unwrap_or_default(),
    )
}

async fn run(context: Context, shutdown: Shutdown) {
    let informer = context.informers.all::<CronFederatedHPA>();
    let this = Arc::new(Controller {
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: CONTROLLER_NAME.into(),
                instance: None,
            },
        ),
        resources: Resources::new(context.client.clone()),
        client: context.client.clone(),
        metrics: context.metrics.clone(),
        store: informer.store(),
        queue: WorkQueue::named(CONTROLLER_NAME),
        generations: Mutex::new(HashMap::new()),
        executors: Mutex::new(HashMap::new()),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&informer, move |event: WatchEvent<&CronFederatedHPA>| {
        match event {
            // Karmada's GenerationChangedPredicate: status writes do not come back here.
            WatchEvent::Apply(c) | WatchEvent::InitApply(c) => {
                let key = key_of(c);
                let generation = c.metadata.generation.unwrap_or(0);
                let deleting = c.metadata.deletion_timestamp.is_some();
                let previous = me.generations.lock().insert(key.clone(), generation);
                if previous != Some(generation) || deleting {
                    me.queue.add(key);
                }
            }
            WatchEvent::Delete(c) => {
                let key = key_of(c);
                me.generations.lock().remove(&key);
                me.queue.add(key);
            }
            _ => {}
        }
    });
    if !until_ready(&shutdown, informer.wait_until_ready()).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |key: Key| {
            let me = me.clone();
            async move { me.reconcile(&key).await }
        },
        |key, error| warn!(cronfederatedhpa = %key_string(key), %error, "CronFederatedHPA: retrying"),
    );
    info!("CronFederatedHPA controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    this.executors.lock().clear();
    tasks.abort();
}

/// A rule's schedule in its time zone (the system's when it names none).
pub fn rule_schedule(rule: &CronFederatedHPARule) -> Result<Schedule, CronError> {
    let zone = match &rule.time_zone {
        Some(name) => load_zone(name)?,
        None => jiff::tz::TimeZone::system(),
    };
    Ok(Schedule::parse(&rule.schedule, zone)?)
}

fn suspended(rule: &CronFederatedHPARule) -> bool {
    rule.suspend == Some(true)
}

fn now_time() -> Time {
    Time(jiff::Timestamp::now())
}

impl Controller {
    async fn event(&self, cron: &CronFederatedHPA, reason: &str, note: String) {
        self.recorder
            .note(
                &cron.object_ref(&()),
                EventType::Warning,
                reason,
                reason,
                note,
            )
            .await;
    }

    async fn reconcile(self: &Arc<Self>, key: &Key) -> Result<(), CronError> {
        let started = Instant::now();
        let result = self.sync(key).await;
        self.metrics
            .observe_cron(false, result.is_ok(), started.elapsed());
        result
    }

    async fn sync(self: &Arc<Self>, key: &Key) -> Result<(), CronError> {
        let Some(cron) = self.store.get(&ObjectRef::new(&key.1).within(&key.0)) else {
            self.executors.lock().remove(key);
            return Ok(());
        };
        if cron.metadata.deletion_timestamp.is_some() {
            self.executors.lock().remove(key);
            return Ok(());
        }
        let mut cron = (*cron).clone();
        {
            let mut executors = self.executors.lock();
            let entry = executors.entry(key.clone()).or_default();
            match &entry.target {
                Some(target) if *target != cron.spec.scale_target_ref => {
                    info!(cronfederatedhpa = %key_string(key), "scale target changed; restarting its rules");
                    entry.rules.clear();
                    entry.target = Some(cron.spec.scale_target_ref.clone());
                }
                Some(_) => {}
                None => entry.target = Some(cron.spec.scale_target_ref.clone()),
            }
        }
        let before: Vec<String> = cron
            .status
            .execution_histories
            .iter()
            .map(|h| h.rule_name.clone())
            .collect();
        for rule in cron.spec.rules.clone() {
            self.process_rule(key, &mut cron, rule).await?;
        }
        for name in before {
            if cron.spec.rules.iter().any(|r| r.name == name) {
                continue;
            }
            if let Some(executors) = self.executors.lock().get_mut(key) {
                executors.rules.remove(&name);
            }
            let Some(index) = cron
                .status
                .execution_histories
                .iter()
                .position(|h| h.rule_name == name)
            else {
                continue;
            };
            cron.status.execution_histories.remove(index);
            if let Err(error) = self.write_status(&mut cron).await {
                self.event(
                    &cron,
                    "UpdateCronFederatedHPAFailed",
                    flotilla_runtime::errors::describe(&error),
                )
                .await;
                return Err(error);
            }
        }
        Ok(())
    }

    async fn process_rule(
        self: &Arc<Self>,
        key: &Key,
        cron: &mut CronFederatedHPA,
        rule: CronFederatedHPARule,
    ) -> Result<(), CronError> {
        {
            let mut executors = self.executors.lock();
            let entry = executors.entry(key.clone()).or_default();
            if let Some(running) = entry.rules.get(&rule.name) {
                if running.rule == rule {
                    return Ok(());
                }
                entry.rules.remove(&rule.name);
            }
        }
        let mut next = None;
        if !suspended(&rule) {
            match self.start_rule(key, &rule) {
                Ok(at) => next = Some(Time(at)),
                Err(error) => {
                    self.event(
                        cron,
                        "StartRuleFailed",
                        flotilla_runtime::errors::describe(&error),
                    )
                    .await;
                    return Err(error);
                }
            }
        }
        match cron
            .status
            .execution_histories
            .iter_mut()
            .find(|h| h.rule_name == rule.name)
        {
            Some(history) => history.next_execution_time = next,
            None => cron.status.execution_histories.push(ExecutionHistory {
                rule_name: rule.name.clone(),
                next_execution_time: next,
                ..ExecutionHistory::default()
            }),
        }
        if let Err(error) = self.write_status(cron).await {
            self.event(
                cron,
                "UpdateCronFederatedHPAFailed",
                flotilla_runtime::errors::describe(&error),
            )
            .await;
            return Err(error);
        }
        Ok(())
    }

    /// Starts `rule`'s timer; returns its first run.
    fn start_rule(
        self: &Arc<Self>,
        key: &Key,
        rule: &CronFederatedHPARule,
    ) -> Result<jiff::Timestamp, CronError> {
        let schedule = rule_schedule(rule)?;
        let first = schedule.next_after(jiff::Timestamp::now())?;
        let me = self.clone();
        let task_key = key.clone();
        let task_rule = rule.clone();
        let task = tokio::spawn(async move {
            let mut next = Some(first);
            while let Some(at) = next {
                let wait = at.duration_since(jiff::Timestamp::now());
                if wait.is_positive() {
                    tokio::time::sleep(wait.unsigned_abs()).await;
                }
                next = schedule.next_after(at.max(jiff::Timestamp::now())).ok();
                me.run_rule(&task_key, &task_rule, next).await;
            }
        });
        self.executors
            .lock()
            .entry(key.clone())
            .or_default()
            .rules
            .insert(
                rule.name.clone(),
                Runner {
                    rule: rule.clone(),
                    task,
                },
            );
        debug!(cronfederatedhpa = %key_string(key), rule = %rule.name, next = %first, "rule started");
        Ok(first)
    }

    /// One run of `rule` (Karmada's `RunCronFederatedHPARule`).
    async fn run_rule(
        &self,
        key: &Key,
        rule: &CronFederatedHPARule,
        following: Option<jiff::Timestamp>,
    ) {
        let api = Api::<CronFederatedHPA>::namespaced(self.client.clone(), &key.0);
        let cron = match api.get_opt(&key.1).await {
            Ok(Some(cron)) => cron,
            Ok(None) => return,
            Err(error) => {
                warn!(cronfederatedhpa = %key_string(key), %error, "reading the CronFederatedHPA failed");
                return;
            }
        };
        if suspended(rule) {
            return;
        }
        let started = Instant::now();
        let scaled = self.scale(key, &cron, rule).await;
        self.metrics
            .observe_cron(true, scaled.is_ok(), started.elapsed());
        let recorded = match &scaled {
            Ok(()) => {
                info!(cronfederatedhpa = %key_string(key), rule = %rule.name, "scaled");
                self.record_run(key, rule, following, None).await
            }
            Err(error) => {
                warn!(cronfederatedhpa = %key_string(key), rule = %rule.name, %error, "scaling failed");
                let message = message(error);
                self.event(&cron, "ScaleFailed", message.clone()).await;
                self.record_run(key, rule, following, Some(message)).await
            }
        };
        if let Err(error) = recorded {
            self.event(
                &cron,
                "UpdateStatusFailed",
                flotilla_runtime::errors::describe(&error),
            )
            .await;
        }
    }

    async fn scale(
        &self,
        key: &Key,
        cron: &CronFederatedHPA,
        rule: &CronFederatedHPARule,
    ) -> Result<(), CronError> {
        let target = &cron.spec.scale_target_ref;
        let api_version = target.api_version.clone().unwrap_or_default();
        if api_version == AUTOSCALING_KARMADA_V1ALPHA1 {
            if target.kind != "FederatedHPA" {
                return Err(CronError::UnsupportedTarget {
                    key: key_string(key),
                    api_version,
                    kind: target.kind.clone(),
                });
            }
            return self
                .retry(|| self.scale_federated_hpa(key, target, rule))
                .await;
        }
        let replicas = rule
            .target_replicas
            .ok_or_else(|| CronError::NoTargetReplicas(rule.name.clone()))?;
        self.retry(|| self.scale_workload(key, &api_version, target, replicas))
            .await
    }

    /// Retries `write` on conflicts, as client-go's `RetryOnConflict`.
    async fn retry<F, Fut>(&self, mut write: F) -> Result<(), CronError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(), CronError>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match write().await {
                Err(CronError::Kube(kube::Error::Api(status)))
                    if status.code == 409 && attempt < CONFLICT_ATTEMPTS =>
                {
                    tokio::time::sleep(std::time::Duration::from_millis(10 * attempt as u64)).await;
                }
                other => return other,
            }
        }
    }

    async fn scale_workload(
        &self,
        key: &Key,
        api_version: &str,
        target: &CrossVersionObjectReference,
        replicas: i32,
    ) -> Result<(), CronError> {
        let served = self.resources.resolve(api_version, &target.kind).await?;
        let api = self.resources.api(&served, &key.0);
        api.get(&target.name).await?;
        let mut scale = api.get_scale(&target.name).await?;
        let current = scale.spec.as_ref().and_then(|s| s.replicas);
        if current == Some(replicas) {
            return Ok(());
        }
        scale.spec.get_or_insert_with(Default::default).replicas = Some(replicas);
        api.replace_scale(&target.name, &PostParams::default(), &scale)
            .await?;
        Ok(())
    }

    async fn scale_federated_hpa(
        &self,
        key: &Key,
        target: &CrossVersionObjectReference,
        rule: &CronFederatedHPARule,
    ) -> Result<(), CronError> {
        let served = self
            .resources
            .resolve(AUTOSCALING_KARMADA_V1ALPHA1, "FederatedHPA")
            .await?;
        let api = self.resources.api(&served, &key.0);
        let fhpa = api.get(&target.name).await?;
        let spec = fhpa.data.get("spec");
        let max = spec
            .and_then(|s| s.get("maxReplicas"))
            .and_then(serde_json::Value::as_i64);
        let min = spec
            .and_then(|s| s.get("minReplicas"))
            .and_then(serde_json::Value::as_i64);
        let mut changes = serde_json::Map::new();
        if let Some(want) = rule.target_max_replicas
            && max != Some(i64::from(want))
        {
            changes.insert("maxReplicas".into(), want.into());
        }
        if let Some(want) = rule.target_min_replicas
            && min != Some(i64::from(want))
        {
            changes.insert("minReplicas".into(), want.into());
        }
        if changes.is_empty() {
            return Ok(());
        }
        let patch = json!({"metadata": {"resourceVersion": fhpa.metadata.resource_version},
            "spec": changes});
        api.patch(&target.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(())
    }

    /// Adds a run to the rule's history (newest first, within its limit) and moves its
    /// `nextExecutionTime` to `following`.
    async fn record_run(
        &self,
        key: &Key,
        rule: &CronFederatedHPARule,
        following: Option<jiff::Timestamp>,
        failure: Option<String>,
    ) -> Result<(), CronError> {
        let api = Api::<CronFederatedHPA>::namespaced(self.client.clone(), &key.0);
        self.retry(|| async {
            let Some(mut cron) = api.get_opt(&key.1).await? else {
                return Ok(());
            };
            let Some(history) = cron
                .status
                .execution_histories
                .iter_mut()
                .find(|h| h.rule_name == rule.name)
            else {
                return Ok(());
            };
            record(
                history,
                rule,
                now_time(),
                following.map(Time),
                failure.clone(),
            );
            api.replace_status(&key.1, &PostParams::default(), &cron)
                .await?;
            Ok(())
        })
        .await
    }

    /// Writes `cron`'s status (its resourceVersion guards it) and takes the stored result.
    async fn write_status(&self, cron: &mut CronFederatedHPA) -> Result<(), CronError> {
        let namespace = cron.metadata.namespace.clone().unwrap_or_default();
        let name = cron.metadata.name.clone().unwrap_or_default();
        let written = Api::<CronFederatedHPA>::namespaced(self.client.clone(), &namespace)
            .replace_status(&name, &PostParams::default(), &*cron)
            .await?;
        *cron = written;
        Ok(())
    }
}

/// Adds one run to `history`: a success with what the rule applied, or a failure with its
/// message; newest first, trimmed to the rule's limit; `nextExecutionTime` becomes `following`.
pub fn record(
    history: &mut ExecutionHistory,
    rule: &CronFederatedHPARule,
    now: Time,
    following: Option<Time>,
    failure: Option<String>,
) {
    let scheduled = history.next_execution_time.clone();
    match failure {
        None => {
            let limit = limit(rule.successful_history_limit);
            history
                .successful_executions
                .truncate(limit.saturating_sub(1));
            history.successful_executions.insert(
                0,
                SuccessfulExecution {
                    schedule_time: scheduled,
                    execution_time: Some(now),
                    applied_replicas: rule.target_replicas,
                    applied_max_replicas: rule.target_max_replicas,
                    applied_min_replicas: rule.target_min_replicas,
                },
            );
        }
        Some(message) => {
            let limit = limit(rule.failed_history_limit);
            history.failed_executions.truncate(limit.saturating_sub(1));
            history.failed_executions.insert(
                0,
                FailedExecution {
                    schedule_time: scheduled,
                    execution_time: Some(now),
                    message,
                },
            );
        }
    }
    history.next_execution_time = following;
}

/// What a user reads of a failed run: an API error's own message (`deployments.apps "web" not
/// found`), as Go's client prints it.
fn message(error: &CronError) -> String {
    match error {
        CronError::Kube(kube::Error::Api(status)) => status.message.clone(),
        other => other.to_string(),
    }
}

fn limit(value: Option<i32>) -> usize {
    usize::try_from(value.unwrap_or(DEFAULT_HISTORY_LIMIT)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    mod karmada_job;

    fn at(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    #[test]
    fn runs_are_kept_newest_first_within_the_limit() {
        let rule = CronFederatedHPARule {
            name: "scale-up".into(),
            schedule: "*/1 * * * *".into(),
            target_replicas: Some(5),
            successful_history_limit: Some(2),
            failed_history_limit: Some(1),
            ..CronFederatedHPARule::default()
        };
        let mut history = ExecutionHistory {
            rule_name: "scale-up".into(),
            next_execution_time: Some(at("2026-12-06T10:01:00Z")),
            ..ExecutionHistory::default()
        };
        record(
            &mut history,
            &rule,
            at("2026-12-06T10:01:00.2Z"),
            Some(at("2026-12-06T10:02:00Z")),
            None,
        );
        record(
            &mut history,
            &rule,
            at("2026-12-06T10:02:00.2Z"),
            Some(at("2026-12-06T10:03:00Z")),
            None,
        );
        record(
            &mut history,
            &rule,
            at("2026-12-06T10:03:00.2Z"),
            Some(at("2026-12-06T10:04:00Z")),
            None,
        );
        assert_eq!(history.successful_executions.len(), 2);
        assert_eq!(
            history.successful_executions[0].schedule_time,
            Some(at("2026-12-06T10:03:00Z"))
        );
        assert_eq!(history.successful_executions[0].applied_replicas, Some(5));
        assert_eq!(
            history.next_execution_time,
            Some(at("2026-12-06T10:04:00Z"))
        );
        record(
            &mut history,
            &rule,
            at("2026-12-06T10:04:00.2Z"),
            None,
            Some("boom".into()),
        );
        record(
            &mut history,
            &rule,
            at("2026-12-06T10:05:00.2Z"),
            None,
            Some("bang".into()),
        );
        assert_eq!(history.failed_executions.len(), 1);
        assert_eq!(history.failed_executions[0].message, "bang");
        assert_eq!(history.successful_executions.len(), 2);
    }
}
