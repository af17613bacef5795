//! The HorizontalPodAutoscaler controller of a simulated cluster: kube-controller-manager's
//! `horizontalpodautoscaling` loop over `autoscaling/v2` HPAs whose target is a Deployment,
//! ReplicaSet or StatefulSet of the cluster. Every sync period (15 s, kube's default) and when
//! an HPA's spec changes: the target's replicas are brought within `minReplicas`/`maxReplicas`
//! first (`Current number of replicas below Spec.MinReplicas`), else the resource metrics
//! (`Resource` and `ContainerResource`, utilization or average value) are computed from the
//! cluster's usage model ([`crate::metrics`]) with Kubernetes' replica calculator, and the
//! proposal is stabilized, bounded and rate-limited (the HPA arithmetic shared with Karmada's
//! FederatedHPA, [`flotilla_api::lifted::hpa`]). The target is scaled through its `spec.replicas`,
//! with kube's `SuccessfulRescale` Event, and the HPA's status gets the current and desired
//! replicas, the metrics and the `AbleToScale`/`ScalingActive`/`ScalingLimited` conditions.
//!
//! Metrics of other types (`Pods`, `Object`, `External`) have no source in a simulated cluster:
//! they are reported as kube reports an unavailable metrics API, and never scale down.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::lifted::hpa::{self, History, PodFacts, Sample, Samples, Tunables};
use futures::StreamExt;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::{
    HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus, MetricSpec, MetricStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::api::Api;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::cluster::{Ctx, Stores};
use crate::events::{Involved, record_about};
use crate::metrics::model::quantity;
use crate::metrics::{ContainerUsage, SimMetrics};
use crate::pod::Pod;

/// kube-controller-manager's `--horizontal-pod-autoscaler-sync-period`.
pub const SYNC_PERIOD: Duration = Duration::from_secs(15);

const COMPONENT: &str = "horizontal-pod-autoscaler";

/// The controller of one cluster.
pub struct Autoscaler {
    ctx: Arc<Ctx>,
    stores: Stores,
    metrics: Arc<SimMetrics>,
    window: Duration,
    tunables: Tunables,
    /// Recommendations and scale events per HPA (`namespace/name`).
    histories: Mutex<HashMap<String, History>>,
    /// The generation each HPA was last synced at (a spec change syncs it at once).
    synced: Mutex<HashMap<String, i64>>,
    /// Wall-clock time at a tokio instant: `now` follows tokio's clock (virtual in tests).
    epoch: (Timestamp, tokio::time::Instant),
}

impl std::fmt::Debug for Autoscaler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Autoscaler").finish_non_exhaustive()
    }
}

impl Autoscaler {
    pub fn new(ctx: Arc<Ctx>, stores: Stores, metrics: Arc<SimMetrics>, window: Duration) -> Self {
        Autoscaler {
            ctx,
            stores,
            metrics,
            window,
            tunables: Tunables::default(),
            histories: Mutex::new(HashMap::new()),
            synced: Mutex::new(HashMap::new()),
            epoch: (Timestamp::now(), tokio::time::Instant::now()),
        }
    }

    fn now(&self) -> Timestamp {
        let elapsed = tokio::time::Instant::now() - self.epoch.1;
        self.epoch.0 + SignedDuration::try_from(elapsed).unwrap_or_default()
    }

    /// Runs until the task is aborted.
    pub async fn run(self: Arc<Self>) {
        let (hpas, writer) = reflector::store::<HorizontalPodAutoscaler>();
        let mut events = reflector::reflector(
            writer,
            watcher::watcher(
                Api::<HorizontalPodAutoscaler>::all(self.ctx.client.clone()),
                watcher::Config::default(),
            )
            .default_backoff(),
        )
        .boxed();
        let mut tick = tokio::time::interval(SYNC_PERIOD);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                event = events.next() => match event {
                    Some(Ok(watcher::Event::Apply(hpa) | watcher::Event::InitApply(hpa))) => {
                        let key = key_of(&hpa);
                        let generation = hpa.metadata.generation.unwrap_or_default();
                        if self.synced.lock().get(&key) != Some(&generation) {
                            self.sync(&hpa).await;
                        }
                    }
                    Some(Ok(watcher::Event::Delete(hpa))) => {
                        let key = key_of(&hpa);
                        self.histories.lock().remove(&key);
                        self.synced.lock().remove(&key);
                    }
                    Some(_) => {}
                    None => return,
                },
                _ = tick.tick() => self.sync_all(&hpas).await,
            }
        }
    }

    async fn sync_all(&self, hpas: &Store<HorizontalPodAutoscaler>) {
        for hpa in hpas.state() {
            self.sync(&hpa).await;
        }
    }

    /// kube's `reconcileAutoscaler` for one HPA.
    async fn sync(&self, hpa: &HorizontalPodAutoscaler) {
        let key = key_of(hpa);
        self.synced
            .lock()
            .insert(key.clone(), hpa.metadata.generation.unwrap_or_default());
        if hpa.metadata.deletion_timestamp.is_some() {
            return;
        }
        let namespace = hpa.metadata.namespace.clone().unwrap_or_default();
        let spec = hpa.spec.clone().unwrap_or_default();
        let now_ts = self.now();
        let now = Time(now_ts);
        let original = hpa.status.clone().unwrap_or_default();
        let mut status = original.clone();
        let set = |status: &mut HorizontalPodAutoscalerStatus,
                   type_: &str,
                   value: &str,
                   reason: &str,
                   message: String| {
            hpa::normalize::set_condition(status, type_, value, reason, message, &now);
        };
        let target = &spec.scale_target_ref;
        let Some((current, selector)) = self.target(&namespace, &target.kind, &target.name) else {
            let resource = match target.kind.as_str() {
                "Deployment" => "deployments.apps",
                "ReplicaSet" => "replicasets.apps",
                "StatefulSet" => "statefulsets.apps",
                other => other,
            };
            set(
                &mut status,
                "AbleToScale",
                "False",
                "FailedGetScale",
                format!(
                    "the HPA controller was unable to get the target's current scale: {resource} \"{}\" not found",
                    target.name
                ),
            );
            self.write_status(hpa, &original, status).await;
            return;
        };
        set(
            &mut status,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale".into(),
        );
        let min = spec.min_replicas.unwrap_or(1);
        let max = spec.max_replicas;
        let rules = hpa::normalize::rules(spec.behavior.as_ref(), &self.tunables);
        let mut metric_statuses = status.current_metrics.clone();
        let mut reason = String::new();
        let (desired, rescale) = if current == 0 && min != 0 {
            set(
                &mut status,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero".into(),
            );
            (0, false)
        } else if current > max {
            reason = "Current number of replicas above Spec.MaxReplicas".into();
            (max, true)
        } else if current < min {
            reason = "Current number of replicas below Spec.MinReplicas".into();
            (min, true)
        } else {
            let pods = self.pods(&namespace, &selector, now_ts);
            let outcome = self.compute(
                &spec.metrics.clone().unwrap_or_default(),
                current,
                &pods,
                now_ts,
            );
            metric_statuses = Some(outcome.statuses.clone());
            let Some((proposed, metric)) = outcome.proposal else {
                let (why, message) = outcome.error.unwrap_or_default();
                set(
                    &mut status,
                    "ScalingActive",
                    "False",
                    &why,
                    format!("the HPA was unable to compute the replica count: {message}"),
                );
                status.current_replicas = Some(current);
                status.current_metrics = metric_statuses;
                self.write_status(hpa, &original, status).await;
                self.event(hpa, "Warning", "FailedComputeMetricsReplicas", &message)
                    .await;
                return;
            };
            set(
                &mut status,
                "ScalingActive",
                "True",
                "ValidMetricFound",
                format!("the HPA was able to successfully calculate a replica count from {metric}"),
            );
            if proposed > current {
                reason = format!("{metric} above target");
            } else if proposed < current {
                reason = "All metrics below target".into();
            }
            let desired = {
                let mut histories = self.histories.lock();
                let history = histories.entry(key.clone()).or_default();
                hpa::normalize::normalize(
                    history,
                    &mut status,
                    rules.clone(),
                    &self.tunables,
                    current,
                    proposed,
                    min,
                    max,
                    &now,
                )
            };
            (desired, desired != current)
        };
        let desired = if rescale {
            match self
                .scale(&namespace, &target.kind, &target.name, desired)
                .await
            {
                Ok(()) => {
                    set(
                        &mut status,
                        "AbleToScale",
                        "True",
                        "SucceededRescale",
                        format!(
                            "the HPA controller was able to update the target scale to {desired}"
                        ),
                    );
                    let note = format!("New size: {desired}; reason: {reason}");
                    self.event(hpa, "Normal", "SuccessfulRescale", &note).await;
                    if let Some((up, down)) = &rules {
                        let mut histories = self.histories.lock();
                        let history = histories.entry(key.clone()).or_default();
                        hpa::record_scale(history, up, down, current, desired, now_ts);
                    }
                    status.last_scale_time = Some(now.clone());
                    desired
                }
                Err(error) => {
                    set(
                        &mut status,
                        "AbleToScale",
                        "False",
                        "FailedUpdateScale",
                        format!(
                            "the HPA controller was unable to update the target scale: {error}"
                        ),
                    );
                    let note = format!("New size: {desired}; reason: {reason}; error: {error}");
                    self.event(hpa, "Warning", "FailedRescale", &note).await;
                    current
                }
            }
        } else {
            current
        };
        status.current_replicas = Some(current);
        status.desired_replicas = desired;
        status.current_metrics = metric_statuses;
        self.write_status(hpa, &original, status).await;
    }

    /// The target's `spec.replicas` and selector, from the cluster's caches.
    fn target(&self, namespace: &str, kind: &str, name: &str) -> Option<(i32, LabelSelector)> {
        match kind {
            "Deployment" => {
                let d = self.stores.deployments.get(namespace, name)?;
                let spec = d.spec.as_ref()?;
                Some((spec.replicas.unwrap_or(1), spec.selector.clone()))
            }
            "ReplicaSet" => {
                let rs = self.stores.replicasets.get(namespace, name)?;
                let spec = rs.spec.as_ref()?;
                Some((spec.replicas.unwrap_or(1), spec.selector.clone()))
            }
            "StatefulSet" => {
                let sts = self.stores.statefulsets.get(namespace, name)?;
                let spec = sts.spec.as_ref()?;
                Some((spec.replicas.unwrap_or(1), spec.selector.clone()))
            }
            _ => None,
        }
    }

    async fn scale(
        &self,
        namespace: &str,
        kind: &str,
        name: &str,
        replicas: i32,
    ) -> Result<(), String> {
        let patch = json!({"spec": {"replicas": replicas}});
        let written = match kind {
            "Deployment" => {
                crate::writes::merge_patch::<Deployment>(
                    &self.ctx,
                    Some(namespace),
                    name,
                    None,
                    &patch,
                )
                .await
            }
            "ReplicaSet" => {
                crate::writes::merge_patch::<ReplicaSet>(
                    &self.ctx,
                    Some(namespace),
                    name,
                    None,
                    &patch,
                )
                .await
            }
            _ => {
                crate::writes::merge_patch::<StatefulSet>(
                    &self.ctx,
                    Some(namespace),
                    name,
                    None,
                    &patch,
                )
                .await
            }
        };
        written.map_err(|e| api_message(&e))
    }

    /// The pods the target's selector matches in `namespace`, with their usage samples.
    fn pods(&self, namespace: &str, selector: &LabelSelector, now: Timestamp) -> Selected {
        let Ok(selector) = flotilla_api::selector::label::LabelSelector::try_from(selector) else {
            return Selected::default();
        };
        let empty = BTreeMap::new();
        let wanted = |p: &Pod| {
            p.metadata.namespace.as_deref() == Some(namespace)
                && selector.matches(p.metadata.labels().unwrap_or(&empty))
        };
        let facts = self
            .stores
            .pods
            .state()
            .iter()
            .filter(|p| wanted(p))
            .map(|p| facts_of(p))
            .collect();
        let usage = self
            .metrics
            .pods_usage(now, wanted)
            .into_iter()
            .map(|(pod, containers)| (pod.metadata.name.clone().unwrap_or_default(), containers))
            .collect();
        Selected { facts, usage }
    }

    /// kube's `computeReplicasForMetrics`: the highest proposal over the metrics that could be
    /// computed, with each metric's status; no proposal when none could, or when one could not
    /// and the others would scale down.
    fn compute(
        &self,
        metrics: &[MetricSpec],
        current: i32,
        pods: &Selected,
        now: Timestamp,
    ) -> Computed {
        let results = metrics
            .iter()
            .map(|spec| self.metric(spec, current, pods, now))
            .collect();
        combine(results, current)
    }

    /// One metric: (replicas, its name in conditions, its status), or (reason, message).
    fn metric(
        &self,
        spec: &MetricSpec,
        current: i32,
        pods: &Selected,
        now: Timestamp,
    ) -> Result<(i32, String, MetricStatus), (String, String)> {
        let (source, resource, container) = match spec.type_.as_str() {
            "Resource" => {
                let r = spec
                    .resource
                    .as_ref()
                    .ok_or_else(|| invalid_spec("resource"))?;
                (&r.target, r.name.clone(), None)
            }
            "ContainerResource" => {
                let r = spec
                    .container_resource
                    .as_ref()
                    .ok_or_else(|| invalid_spec("containerResource"))?;
                (&r.target, r.name.clone(), Some(r.container.clone()))
            }
            "Pods" => return Err(no_source("FailedGetPodsMetric", "pods")),
            "Object" => return Err(no_source("FailedGetObjectMetric", "object")),
            "External" => return Err(no_source("FailedGetExternalMetric", "external")),
            other => {
                return Err((
                    "InvalidMetricSourceType".into(),
                    format!("unknown metric source type \"{other}\""),
                ));
            }
        };
        let samples = pods.samples(&resource, container.as_deref(), now, self.window);
        let failed = |e: hpa::CalcError| {
            let what = if container.is_some() {
                "FailedGetContainerResourceMetric"
            } else {
                "FailedGetResourceMetric"
            };
            (
                what.to_owned(),
                format!("failed to get {resource} utilization: {e}"),
            )
        };
        let kind = if container.is_some() {
            "container resource"
        } else {
            "resource"
        };
        if let Some(target) = source.average_utilization {
            let proposal = hpa::resource_replicas(
                current,
                target,
                &resource,
                container.as_deref(),
                &pods.facts,
                samples,
                1.0,
                &self.tunables,
                now,
            )
            .map_err(failed)?;
            let current_value = json!({
                "averageUtilization": proposal.utilization,
                "averageValue": milli_text(proposal.average),
            });
            let status = metric_status(spec, &resource, container.as_deref(), current_value);
            Ok((
                proposal.replicas,
                format!("{resource} {kind} utilization (percentage of request)"),
                status,
            ))
        } else if let Some(target) = source.average_value.as_ref() {
            let target_milli = quantity(&target.0).map_or(0, |v| (v * 1000.0).round() as i64);
            let (replicas, average) = hpa::plain_replicas(
                current,
                target_milli,
                &resource,
                &pods.facts,
                samples,
                1.0,
                &self.tunables,
                now,
            )
            .map_err(failed)?;
            let status = metric_status(
                spec,
                &resource,
                container.as_deref(),
                json!({"averageValue": milli_text(average)}),
            );
            Ok((replicas, format!("{resource} {kind}"), status))
        } else {
            Err(invalid_spec("target"))
        }
    }

    async fn write_status(
        &self,
        hpa: &HorizontalPodAutoscaler,
        original: &HorizontalPodAutoscalerStatus,
        status: HorizontalPodAutoscalerStatus,
    ) {
        if *original == status {
            return;
        }
        let Ok(value) = serde_json::to_value(&status) else {
            return;
        };
        let patch = json!({"status": value});
        let (namespace, name) = (
            hpa.metadata.namespace.as_deref(),
            hpa.metadata.name.as_deref().unwrap_or_default(),
        );
        crate::writes::resync_status::<HorizontalPodAutoscaler>(&self.ctx, namespace, name, &patch)
            .await;
    }

    async fn event(&self, hpa: &HorizontalPodAutoscaler, type_: &str, reason: &str, note: &str) {
        let involved = Involved::of("HorizontalPodAutoscaler", "autoscaling/v2", &hpa.metadata);
        record_about(&self.ctx, &involved, type_, reason, note, COMPONENT).await;
    }
}

/// One metric's outcome: (replicas, its name in conditions, its status), or (reason, message).
type MetricOutcome = Result<(i32, String, MetricStatus), (String, String)>;

/// The rest of kube's `computeReplicasForMetrics`: the highest proposal and one status per
/// metric (empty for those that could not be computed); no proposal when none could, or when one could not and the
/// others would scale down (a missing metric never lets the target shrink).
fn combine(results: Vec<MetricOutcome>, current: i32) -> Computed {
    let mut computed = Computed::default();
    let mut best: Option<(i32, String)> = None;
    let count = results.len();
    let mut invalid = 0;
    for result in results {
        match result {
            Ok((replicas, name, status)) => {
                computed.statuses.push(status);
                if best.as_ref().is_none_or(|(r, _)| replicas > *r) {
                    best = Some((replicas, name));
                }
            }
            Err(error) => {
                // kube keeps one status per metric, by position: an empty one here.
                computed.statuses.push(MetricStatus::default());
                invalid += 1;
                computed.error = Some(error);
            }
        }
    }
    let scales_down = best.as_ref().is_some_and(|(r, _)| *r < current);
    if invalid > 0 && (invalid >= count || scales_down) {
        return computed;
    }
    computed.proposal = best;
    computed
}

fn key_of(hpa: &HorizontalPodAutoscaler) -> String {
    format!(
        "{}/{}",
        hpa.metadata.namespace.as_deref().unwrap_or_default(),
        hpa.metadata.name.as_deref().unwrap_or_default()
    )
}

fn invalid_spec(field: &str) -> (String, String) {
    (
        "InvalidMetricSourceType".into(),
        format!("the metric spec has no {field}"),
    )
}

/// A metric kube would read from the custom or external metrics API, which a simulated
/// cluster does not serve.
fn no_source(reason: &str, kind: &str) -> (String, String) {
    (
        reason.into(),
        format!("unable to get {kind} metric: no custom or external metrics API in this cluster"),
    )
}

/// What the API server said (its Status message), as kube's clients print an API error.
fn api_message(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// A quantity in milli-units as Go's `resource.NewMilliQuantity(...).String()` writes it
/// (whole units without the `m`).
fn milli_text(milli: i64) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

/// A metric's status: the spec's type and source with `current`.
fn metric_status(
    spec: &MetricSpec,
    resource: &str,
    container: Option<&str>,
    current: Value,
) -> MetricStatus {
    let value = match container {
        Some(container) => json!({"type": spec.type_, "containerResource": {
            "name": resource, "container": container, "current": current}}),
        None => json!({"type": spec.type_, "resource": {"name": resource, "current": current}}),
    };
    serde_json::from_value(value).unwrap_or_default()
}

/// What the metrics of one HPA are computed over.
#[derive(Debug, Default)]
struct Selected {
    facts: Vec<PodFacts>,
    /// Each running pod's containers' usage, by pod name.
    usage: HashMap<String, ContainerUsage>,
}

impl Selected {
    /// One sample per pod with usage: `resource` in milli-units, summed over its containers (or
    /// `container` alone).
    fn samples(
        &self,
        resource: &str,
        container: Option<&str>,
        now: Timestamp,
        window: Duration,
    ) -> Samples {
        let window = SignedDuration::try_from(window).unwrap_or_default();
        self.usage
            .iter()
            .map(|(pod, containers)| {
                let value: u64 = containers
                    .iter()
                    .filter(|(name, _)| container.is_none_or(|c| c == name))
                    .map(|(_, usage)| match resource {
                        "cpu" => usage.cpu_nanocores / 1_000_000,
                        "memory" => usage.memory_bytes.saturating_mul(1000),
                        _ => 0,
                    })
                    .sum();
                let sample = Sample {
                    timestamp: now,
                    window,
                    value: i64::try_from(value).unwrap_or(i64::MAX),
                };
                (pod.clone(), sample)
            })
            .collect()
    }
}

/// What the replica calculator needs of a pod (keyed by name: one cluster).
fn facts_of(pod: &Pod) -> PodFacts {
    let status = pod.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .map(|c| {
            let at = c
                .last_transition_time
                .as_ref()
                .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
            (c.status == "True", at)
        });
    let containers = pod
        .spec
        .as_ref()
        .map(|s| {
            s.containers
                .iter()
                .map(|c| {
                    let requests = c
                        .resources
                        .as_ref()
                        .and_then(|r| r.requests.as_ref())
                        .map(|r| {
                            r.iter()
                                .filter_map(|(name, q)| {
                                    let milli = quantity(&q.0)? * 1000.0;
                                    Some((name.clone(), milli.round() as i64))
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    (c.name.clone(), requests)
                })
                .collect()
        })
        .unwrap_or_default();
    PodFacts {
        key: pod.metadata.name.clone().unwrap_or_default(),
        deleting: pod.metadata.deletion_timestamp.is_some(),
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
        start_time: status.and_then(|s| s.start_time.as_ref()).map(|t| t.0),
        ready,
        containers,
    }
}

/// The outcome of computing every metric of an HPA.
#[derive(Debug, Default)]
struct Computed {
    /// The highest proposal and the metric that made it.
    proposal: Option<(i32, String)>,
    statuses: Vec<MetricStatus>,
    /// The last metric error: (condition reason, message).
    error: Option<(String, String)>,
}

#[cfg(test)]
mod tests;
