//! The FederatedHPA controller (`federatedHorizontalPodAutoscaler`, Karmada's
//! `federatedHPA-controller`): a HorizontalPodAutoscaler whose target is a resource template on
//! the control plane and whose pods run in members. Every sync period (15 s,
//! `--horizontal-pod-autoscaler-sync-period`), and whenever a FederatedHPA's generation changes,
//! it:
//!
//! 1. reads the template, finds its ResourceBinding through the policy's permanent-id label and
//!    takes the binding's Ready clusters;
//! 2. in each of them, reads the workload's `scale` (replicas and selector), lists its pods and
//!    their resource metrics (`metrics.k8s.io/v1beta1`, the member's metrics-server or the sim's);
//! 3. computes the replicas each metric asks for with Kubernetes' HPA arithmetic
//!    ([`crate::lifted::hpa`]), calibrated by how many member replicas one template replica
//!    makes, keeps the highest, and applies the bounds, the behavior's rates and stabilization
//!    windows;
//! 4. writes the template's `scale` subresource (the binding then spreads the new count), the
//!    FederatedHPA's status (current and desired replicas, current metrics, the conditions
//!    `AbleToScale`, `ScalingActive`, `ScalingLimited`, `lastScaleTime`) and Karmada's events
//!    (`SuccessfulRescale`, `FailedGetScale`, `FailedComputeMetricsReplicas`, …).
//!
//! Only resource metrics (`Resource`, `ContainerResource`) have a source: Flotilla serves no
//! custom or external metrics API, so `Pods`, `Object` and `External` metrics report
//! `ScalingActive=False` with the reason Kubernetes gives when that API is missing.

mod gather;
mod metrics;
mod state;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use flotilla_api::karmada::{CONDITION_READY, Cluster, FederatedHPA, ResourceBinding};
use flotilla_api::selector::label::LabelSelector;
use flotilla_api::validation::karmada::{CPP_PERMANENT_ID, PP_PERMANENT_ID};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Shared, Shutdown, WorkQueue};
use k8s_openapi::api::autoscaling::v2::{HorizontalPodAutoscalerStatus, MetricStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::Resource as _;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::Event as WatchEvent;
use parking_lot::Mutex;
use tracing::{debug, info, warn};

use crate::lifted::hpa::{self, History};
use crate::manager::{Context, ControllerTask};
use crate::resources::Resources;
use state::set_condition;

/// The `--controllers` name.
pub const NAME: &str = "federatedHorizontalPodAutoscaler";
/// Karmada's controller name (the events' reporter).
pub const CONTROLLER_NAME: &str = "federatedHPA-controller";

type Key = (String, String);

fn key_string(key: &Key) -> String {
    format!("{}/{}", key.0, key.1)
}

struct Controller {
    client: kube::Client,
    members: Arc<dyn flotilla_member::MemberClients>,
    recorder: Recorder,
    resources: Resources,
    store: kube::runtime::reflector::Store<FederatedHPA>,
    bindings: Shared<ResourceBinding>,
    clusters: Shared<Cluster>,
    queue: WorkQueue<Key>,
    metrics: crate::metrics::Metrics,
    options: crate::options::HpaOptions,
    generations: Mutex<HashMap<Key, i64>>,
    /// Per FederatedHPA: recommendations and scale events (Kubernetes keeps them in memory too).
    histories: Mutex<HashMap<Key, History>>,
    /// Per FederatedHPA: the pod selector it last used (to find pods two of them select).
    selectors: Mutex<HashMap<Key, LabelSelector>>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

fn key_of(f: &FederatedHPA) -> Key {
    (
        f.metadata.namespace.clone().unwrap_or_default(),
        f.metadata.name.clone().unwrap_or_default(),
    )
}

async fn run(context: Context, shutdown: Shutdown) {
    let informer = context.informers.all::<FederatedHPA>();
    let bindings = context.informers.all::<ResourceBinding>();
    let clusters = context.informers.all::<Cluster>();
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
        members: context.members.clone(),
        store: informer.store(),
        bindings: bindings.clone(),
        clusters: clusters.clone(),
        queue: WorkQueue::named(CONTROLLER_NAME),
        metrics: context.metrics.clone(),
        options: context.options.hpa,
        generations: Mutex::new(HashMap::new()),
        histories: Mutex::new(HashMap::new()),
        selectors: Mutex::new(HashMap::new()),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(
        &informer,
        move |event: WatchEvent<&FederatedHPA>| match event {
            // Karmada's GenerationChangedPredicate; the sync period brings every one back.
            WatchEvent::Apply(f) | WatchEvent::InitApply(f) => {
                let key = key_of(f);
                let generation = f.metadata.generation.unwrap_or(0);
                let previous = me.generations.lock().insert(key.clone(), generation);
                if previous != Some(generation) {
                    me.queue.add(key);
                }
            }
            WatchEvent::Delete(f) => {
                let key = key_of(f);
                me.generations.lock().remove(&key);
                me.queue.add(key);
            }
            _ => {}
        },
    );
    let ready = async {
        informer.wait_until_ready().await;
        bindings.wait_until_ready().await;
        clusters.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |key: Key| {
            let me = me.clone();
            async move { me.reconcile(key).await }
        },
        |key, error| warn!(federatedhpa = %key_string(key), %error, "FederatedHPA: retrying"),
    );
    info!("FederatedHPA controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

/// Why a sync failed (the error is also on the FederatedHPA as an event and a condition).
#[derive(Debug, thiserror::Error)]
pub enum FhpaError {
    #[error("{0}")]
    Failed(String),
    #[error("{}", flotilla_runtime::errors::message(.0))]
    Kube(#[from] kube::Error),
}

impl Controller {
    async fn reconcile(self: Arc<Self>, key: Key) -> Result<(), FhpaError> {
        let Some(fhpa) = self.store.get(&ObjectRef::new(&key.1).within(&key.0)) else {
            self.histories.lock().remove(&key);
            self.selectors.lock().remove(&key);
            return Ok(());
        };
        if fhpa.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let started = Instant::now();
        let result = self.sync(&key, (*fhpa).clone()).await;
        self.metrics.observe_fhpa(result.is_ok(), started.elapsed());
        debug!(federatedhpa = %key_string(&key), elapsed = ?started.elapsed(), ok = result.is_ok(), "synced");
        // Every FederatedHPA is looked at again after the sync period, whatever happened. As in
        // Kubernetes' HPA controller, a failure the FederatedHPA already reports (event and
        // condition) waits for that sync rather than retrying at once: missing metrics are
        // normal for a minute after pods start, and each attempt would write events.
        self.queue.add_after(key.clone(), self.options.sync_period);
        match result {
            Err(FhpaError::Failed(reason)) => {
                debug!(federatedhpa = %key_string(&key), %reason, "not scaled");
                Ok(())
            }
            other => other,
        }
    }

    async fn event(&self, fhpa: &FederatedHPA, type_: EventType, reason: &str, note: String) {
        self.recorder
            .note(&fhpa.object_ref(&()), type_, reason, reason, note)
            .await;
    }

    /// Records a failure before scaling: an event, `AbleToScale=False` and the status.
    async fn fail(
        &self,
        fhpa: &mut FederatedHPA,
        original: &Option<HorizontalPodAutoscalerStatus>,
        event_reason: &str,
        condition_reason: &str,
        condition_message: String,
        error: String,
    ) -> FhpaError {
        self.event(fhpa, EventType::Warning, event_reason, error.clone())
            .await;
        let now = now();
        let status = fhpa.status.get_or_insert_with(Default::default);
        set_condition(
            status,
            "AbleToScale",
            "False",
            condition_reason,
            condition_message,
            &now,
        );
        if let Err(write) = self.write_status_if_changed(fhpa, original).await {
            warn!(error = %write, "writing the FederatedHPA status failed");
        }
        FhpaError::Failed(error)
    }

    async fn sync(&self, key: &Key, mut fhpa: FederatedHPA) -> Result<(), FhpaError> {
        let original = fhpa.status.clone();
        let target = fhpa.spec.scale_target_ref.clone();
        let api_version = target.api_version.clone().unwrap_or_default();
        let reference = format!("{}/{}/{}", target.kind, key.0, target.name);
        if let Err(error) = gather::parse_group_version(&api_version) {
            let message = format!("invalid API version in scale target reference: {error}");
            return Err(self
                .fail(
                    &mut fhpa,
                    &original,
                    "FailedGetScale",
                    "FailedGetScale",
                    format!(
                        "the HPA controller was unable to get the target's current scale: {error}"
                    ),
                    message,
                )
                .await);
        }
        let template = match self
            .template(&key.0, &api_version, &target.kind, &target.name)
            .await
        {
            Ok(template) => template,
            Err(error) => {
                return Err(self
                    .fail(
                        &mut fhpa,
                        &original,
                        "FailedGetScaleTargetRef",
                        "FailedGetScaleTargetRef",
                        format!("the HPA controller was unable to get the target reference object: {error}"),
                        error,
                    )
                    .await);
            }
        };
        let binding = match self.binding_of(&template, &api_version, &target.kind, &target.name) {
            Ok(binding) => binding,
            Err(error) => {
                return Err(self
                    .fail(
                        &mut fhpa,
                        &original,
                        "FailedGetBindings",
                        "FailedGetBinding",
                        format!("the HPA controller was unable to get the binding by scaleTargetRef: {error}"),
                        error,
                    )
                    .await);
            }
        };
        let clusters = match self.ready_clusters(&binding) {
            Ok(clusters) => clusters,
            Err(error) => {
                return Err(self
                    .fail(
                        &mut fhpa,
                        &original,
                        "FailedGetTargetClusters",
                        "FailedGetTargetClusters",
                        format!("the HPA controller was unable to get the target clusters from binding: {error}"),
                        error,
                    )
                    .await);
            }
        };
        let pulling = Instant::now();
        let gathered = gather::gather(
            self.members.as_ref(),
            &clusters,
            &key.0,
            &api_version,
            &target.kind,
            &target.name,
        )
        .await;
        self.metrics.observe_fhpa_pull(
            gathered.metrics.is_ok(),
            "ResourceMetric",
            pulling.elapsed(),
        );
        for problem in &gathered.selector_problems {
            self.event(
                &fhpa,
                EventType::Warning,
                problem.event_reason,
                problem.event_message.clone(),
            )
            .await;
            let now = now();
            set_condition(
                fhpa.status.get_or_insert_with(Default::default),
                "ScalingActive",
                "False",
                "InvalidSelector",
                problem.condition_message.clone(),
                &now,
            );
        }
        if gathered.spec_replicas == 0 {
            let error = "failed to get replicas in any of clusters, possibly because all of clusters are not ready".to_owned();
            return Err(self
                .fail(
                    &mut fhpa,
                    &original,
                    "FailedGetScale",
                    "FailedGetScale",
                    format!(
                        "the HPA controller was unable to get the target's current scale: {error}"
                    ),
                    format!("failed to query scale subresource for {reference}: {error}"),
                )
                .await);
        }
        let served = self
            .resources
            .resolve(&api_version, &target.kind)
            .await
            .map_err(|e| FhpaError::Failed(e.to_string()))?;
        let templates = self.resources.api(&served, &key.0);
        let mut template_scale = templates.get_scale(&target.name).await.map_err(|error| {
            FhpaError::Failed(format!(
                "failed to get scale subresource for resource template {reference}: {}",
                flotilla_runtime::errors::describe(&error)
            ))
        })?;
        let current = template_scale
            .spec
            .as_ref()
            .and_then(|s| s.replicas)
            .unwrap_or(0);
        let now = now();
        set_condition(
            fhpa.status.get_or_insert_with(Default::default),
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale".into(),
            &now,
        );
        let ts = now.0;
        {
            let mut histories = self.histories.lock();
            let history = histories.entry(key.clone()).or_default();
            if history.recommendations.is_empty() {
                history.recommendations.push(hpa::Recommendation {
                    replicas: current,
                    at: ts,
                });
            }
        }
        let min = fhpa.spec.min_replicas.unwrap_or(1);
        let max = fhpa.spec.max_replicas;
        let mut statuses: Vec<MetricStatus> = Vec::new();
        let mut metrics_error = None;
        let (desired, rescale, reason) = if current > max {
            (
                max,
                true,
                "Current number of replicas above Spec.MaxReplicas".to_owned(),
            )
        } else if current < min {
            (
                min,
                true,
                "Current number of replicas below Spec.MinReplicas".to_owned(),
            )
        } else {
            let computed = self.compute(key, &mut fhpa, &gathered, current, &now).await;
            let proposal = match computed {
                Ok(proposal) => proposal,
                Err(error) => {
                    // No metric could be used: keep the status' desired replicas and metrics.
                    let status = fhpa.status.get_or_insert_with(Default::default);
                    status.current_replicas = Some(current);
                    self.write_status_if_changed(&mut fhpa, &original).await?;
                    self.event(
                        &fhpa,
                        EventType::Warning,
                        "FailedComputeMetricsReplicas",
                        error.clone(),
                    )
                    .await;
                    return Err(FhpaError::Failed(format!(
                        "failed to compute desired number of replicas based on listed metrics for {reference}: {error}"
                    )));
                }
            };
            statuses = proposal.statuses;
            metrics_error = proposal.error;
            let desired = proposal.replicas.max(0);
            let mut reason = String::new();
            if desired > current {
                reason = format!("{} above target", proposal.metric);
            }
            if desired < current {
                reason = "All metrics below target".into();
            }
            let desired = self.normalize(key, &mut fhpa, current, desired, min, &now);
            (desired, desired != current, reason)
        };
        let mut desired = desired;
        if rescale {
            template_scale
                .spec
                .get_or_insert_with(Default::default)
                .replicas = Some(desired);
            if let Err(error) = templates
                .replace_scale(&target.name, &PostParams::default(), &template_scale)
                .await
            {
                self.event(
                    &fhpa,
                    EventType::Warning,
                    "FailedRescale",
                    format!(
                        "New size: {desired}; reason: {reason}; error: {}",
                        flotilla_runtime::errors::describe(&error)
                    ),
                )
                .await;
                let status = fhpa.status.get_or_insert_with(Default::default);
                set_condition(
                    status,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    format!(
                        "the HPA controller was unable to update the target scale: {}",
                        flotilla_runtime::errors::describe(&error)
                    ),
                    &now,
                );
                status.current_replicas = Some(current);
                self.write_status_if_changed(&mut fhpa, &original).await?;
                return Err(FhpaError::Failed(format!(
                    "failed to rescale {reference}: {}",
                    flotilla_runtime::errors::describe(&error)
                )));
            }
            set_condition(
                fhpa.status.get_or_insert_with(Default::default),
                "AbleToScale",
                "True",
                "SucceededRescale",
                format!("the HPA controller was able to update the target scale to {desired}"),
                &now,
            );
            self.event(
                &fhpa,
                EventType::Normal,
                "SuccessfulRescale",
                format!("New size: {desired}; reason: {reason}"),
            )
            .await;
            if let Some(rules) = state::rules(&fhpa, &self.options.tunables) {
                let mut histories = self.histories.lock();
                let history = histories.entry(key.clone()).or_default();
                hpa::record_scale(history, &rules.0, &rules.1, current, desired, ts);
            }
            info!(federatedhpa = %key_string(key), current, desired, %reason, "rescaled");
        } else {
            desired = current;
        }
        let status = fhpa.status.get_or_insert_with(Default::default);
        status.current_replicas = Some(current);
        status.desired_replicas = desired;
        status.current_metrics = (!statuses.is_empty()).then_some(statuses);
        if rescale {
            status.last_scale_time = Some(now.clone());
        }
        self.write_status_if_changed(&mut fhpa, &original).await?;
        match metrics_error {
            Some(error) => Err(FhpaError::Failed(error)),
            None => Ok(()),
        }
    }

    /// The template, as the scale target names it.
    async fn template(
        &self,
        namespace: &str,
        api_version: &str,
        kind: &str,
        name: &str,
    ) -> Result<kube::api::DynamicObject, String> {
        let served = self
            .resources
            .resolve(api_version, kind)
            .await
            .map_err(|e| e.to_string())?;
        self.resources
            .api(&served, namespace)
            .get(name)
            .await
            .map_err(|e| gather::kube_message(&e))
    }

    /// The binding of the template (Karmada's `getBindingByLabel`).
    fn binding_of(
        &self,
        template: &kube::api::DynamicObject,
        api_version: &str,
        kind: &str,
        name: &str,
    ) -> Result<Arc<ResourceBinding>, String> {
        let labels = template.metadata.labels.clone().unwrap_or_default();
        if labels.is_empty() {
            return Err("target resource has no label".into());
        }
        let (label, id) = if let Some(id) = labels.get(PP_PERMANENT_ID) {
            (PP_PERMANENT_ID, id)
        } else if let Some(id) = labels.get(CPP_PERMANENT_ID) {
            (CPP_PERMANENT_ID, id)
        } else {
            return Err("no label of policy permanent-id found".into());
        };
        let mut labelled: Vec<Arc<ResourceBinding>> = self
            .bindings
            .store()
            .state()
            .into_iter()
            .filter(|b| {
                b.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(label))
                    .is_some_and(|v| v == id)
            })
            .collect();
        if labelled.is_empty() {
            return Err("length of binding list is zero".into());
        }
        labelled.sort_by(|a, b| {
            (&a.metadata.namespace, &a.metadata.name)
                .cmp(&(&b.metadata.namespace, &b.metadata.name))
        });
        let namespace = template.metadata.namespace.as_deref().unwrap_or("");
        // Karmada compares name, apiVersion and kind; the template's own namespace first.
        labelled.sort_by_key(|b| b.metadata.namespace.as_deref() != Some(namespace));
        labelled
            .into_iter()
            .find(|b| {
                let r = &b.spec.resource;
                r.name == name && r.api_version == api_version && r.kind == kind
            })
            .ok_or_else(|| "no binding matches the target resource".into())
    }

    /// The binding's clusters that are Ready (Karmada's `getTargetCluster`).
    fn ready_clusters(&self, binding: &ResourceBinding) -> Result<Vec<String>, String> {
        if binding.spec.clusters.is_empty() {
            return Err("binding has no schedulable clusters".into());
        }
        let mut ready = Vec::new();
        for target in &binding.spec.clusters {
            let Some(cluster) = self.clusters.store().get(&ObjectRef::new(&target.name)) else {
                return Err(format!(
                    "clusters.cluster.karmada.io \"{}\" not found",
                    target.name
                ));
            };
            let is_ready = cluster.status.as_ref().is_some_and(|s| {
                s.conditions
                    .iter()
                    .any(|c| c.type_ == CONDITION_READY && c.status == "True")
            });
            if is_ready {
                ready.push(target.name.clone());
            }
        }
        Ok(ready)
    }

    /// Writes the status when it differs from what was read (Karmada's `updateStatusIfNeeded`).
    async fn write_status_if_changed(
        &self,
        fhpa: &mut FederatedHPA,
        original: &Option<HorizontalPodAutoscalerStatus>,
    ) -> Result<(), FhpaError> {
        if fhpa.status == *original {
            return Ok(());
        }
        let namespace = fhpa.metadata.namespace.clone().unwrap_or_default();
        let name = fhpa.metadata.name.clone().unwrap_or_default();
        let api = Api::<FederatedHPA>::namespaced(self.client.clone(), &namespace);
        match api
            .replace_status(&name, &PostParams::default(), &*fhpa)
            .await
        {
            Ok(_) => Ok(()),
            Err(error) => {
                self.event(
                    fhpa,
                    EventType::Warning,
                    "FailedUpdateStatus",
                    flotilla_runtime::errors::describe(&error),
                )
                .await;
                Err(FhpaError::Failed(format!(
                    "failed to update status for {name}: {}",
                    flotilla_runtime::errors::describe(&error)
                )))
            }
        }
    }
}

fn now() -> Time {
    Time(jiff::Timestamp::now())
}

/// The metrics' proposal.
struct Proposal {
    replicas: i32,
    metric: String,
    statuses: Vec<MetricStatus>,
    /// Some metrics failed but others proposed a scale-up: scale, then report this.
    error: Option<String>,
}
