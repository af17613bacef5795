//! The controllers' Prometheus metrics: Karmada's propagation metrics (pkg/metrics/resource.go:
//! names, label names and buckets) plus the two the propagation issue asks for that Karmada
//! lacks, `karmada_propagation_latency_seconds` and `karmada_binding_status`.
//!
//! One [`Metrics`] lives in [`crate::Context`]; every controller records into it and
//! [`Metrics::register`] puts it into the process's registry (`flotilla up`'s `/metrics`). Names
//! carry the `karmada_` prefix of Karmada's metrics reference; Karmada's controller-manager
//! exposes the same histograms and `policy_apply_attempts_total` without the prefix, so those
//! are also registered under that name (same series, two names) for dashboards scraped from a
//! running Karmada.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub mod cluster;
pub mod eviction;

use parking_lot::Mutex;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::time::Instant;

/// Karmada's `result` label: `success` or `error`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

impl ResultLabels {
    fn of(ok: bool) -> Self {
        Self {
            result: result(ok).to_owned(),
        }
    }
}

/// Labels of `create_resource_to_cluster` and `delete_resource_from_cluster`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResourceLabels {
    pub result: String,
    pub apiversion: String,
    pub kind: String,
    pub member_cluster: String,
}

/// Labels of `update_resource_to_cluster` (Karmada spells the last one in camel case).
#[allow(non_snake_case)]
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpdateLabels {
    pub result: String,
    pub apiversion: String,
    pub kind: String,
    pub member_cluster: String,
    pub operationResult: String,
}

/// Labels of `federatedhpa_pull_metrics_duration_seconds` (Karmada spells the second in camel
/// case).
#[allow(non_snake_case)]
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PullLabels {
    pub result: String,
    pub metricType: String,
}

/// The `status` label of `karmada_binding_status`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    pub status: String,
}

/// What an update of a member object did (Karmada's objectwatcher `OperationResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateResult {
    /// Not sent: nothing would change, or the update failed before it was sent.
    None,
    /// Sent, but the member kept the object as it was (same resourceVersion).
    Unchanged,
    /// Sent and the member object changed.
    Updated,
}

impl UpdateResult {
    fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Unchanged => "unchanged",
            Self::Updated => "updated",
        }
    }
}

/// A binding's state for `karmada_binding_status`, from its `FullyApplied` condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingState {
    /// `FullyApplied=True`: every target cluster has the workload.
    Applied,
    /// `FullyApplied=False`: at least one Work is not applied (see `aggregatedStatus`).
    NotApplied,
    /// No `FullyApplied` condition yet (not scheduled, or not aggregated yet).
    Pending,
}

impl BindingState {
    pub const ALL: [BindingState; 3] = [Self::Applied, Self::NotApplied, Self::Pending];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "Applied",
            Self::NotApplied => "NotApplied",
            Self::Pending => "Pending",
        }
    }
}

/// A resource template: apiVersion, kind, namespace ("" when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TemplateId {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// Template changes waiting to be live in every member: per template, `(generation, when the
/// detector saw it)`, oldest first. Bounded so a template that never converges (suspended,
/// unschedulable) costs a few entries, not a growing list.
const MAX_PENDING_PER_TEMPLATE: usize = 16;

/// Per template: the newest generation the detector saw, and the changes whose propagation
/// clock runs.
type Pending = HashMap<TemplateId, (i64, Vec<(i64, Instant)>)>;

/// Every controller metric. Clones share their values.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub match_policy_duration: Histogram,
    pub apply_policy_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    pub policy_apply_attempts: Family<ResultLabels, Counter>,
    pub policy_preemption: Family<ResultLabels, Counter>,
    pub sync_work_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    pub sync_workload_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    pub create_resource: Family<ResourceLabels, Counter>,
    pub update_resource: Family<UpdateLabels, Counter>,
    pub delete_resource: Family<ResourceLabels, Counter>,
    pub propagation_latency: Histogram,
    pub binding_status: Family<StatusLabels, Gauge>,
    /// The CronFederatedHPA controller's reconciles and rule runs.
    pub cron_process_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    pub cron_rule_process_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    /// The FederatedHPA controller's syncs and its reads of members' metrics.
    pub fhpa_process_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    pub fhpa_pull_metrics_duration: Family<PullLabels, Histogram, fn() -> Histogram>,
    /// The cluster status controller's metrics (Karmada's `cluster_*`).
    pub cluster: cluster::ClusterMetrics,
    /// The taint manager's eviction-queue metrics.
    pub eviction: eviction::EvictionMetrics,
    /// The scheduler estimator's metrics: the descheduler's questions to members (and, in
    /// `up`, the scheduler's accurate estimator). Control plane only.
    pub estimator: flotilla_runtime::EstimatorMetrics,
    pending: Arc<Mutex<Pending>>,
    bindings: Arc<Mutex<HashMap<String, BindingState>>>,
}

/// Karmada's buckets for its resource metrics: 1 ms doubling, 12 buckets (to ~2 s).
fn karmada_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 12))
}

/// Karmada's buckets for the FederatedHPA's durations: 10 ms doubling, 12 buckets (to ~20 s).
fn fhpa_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 2.0, 12))
}

/// Propagation spans the whole pipeline (detector, scheduler, binding, execution and the
/// member's status coming back): 1 ms doubling, 18 buckets (to ~131 s).
fn propagation_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 18))
}

fn result(ok: bool) -> &'static str {
    if ok { "success" } else { "error" }
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            match_policy_duration: karmada_histogram(),
            apply_policy_duration: Family::new_with_constructor(karmada_histogram),
            policy_apply_attempts: Family::default(),
            policy_preemption: Family::default(),
            sync_work_duration: Family::new_with_constructor(karmada_histogram),
            sync_workload_duration: Family::new_with_constructor(karmada_histogram),
            create_resource: Family::default(),
            update_resource: Family::default(),
            delete_resource: Family::default(),
            propagation_latency: propagation_histogram(),
            binding_status: Family::default(),
            cron_process_duration: Family::new_with_constructor(karmada_histogram),
            cron_rule_process_duration: Family::new_with_constructor(karmada_histogram),
            fhpa_process_duration: Family::new_with_constructor(fhpa_histogram),
            fhpa_pull_metrics_duration: Family::new_with_constructor(fhpa_histogram),
            cluster: cluster::ClusterMetrics::default(),
            eviction: eviction::EvictionMetrics::default(),
            estimator: flotilla_runtime::EstimatorMetrics::default(),
            pending: Arc::default(),
            bindings: Arc::default(),
        }
    }
}

impl Metrics {
    /// Registers every metric (see the module documentation for the names).
    pub fn register(&self, registry: &mut Registry) {
        self.register_member_side(registry);
        self.eviction.register(registry);
        self.estimator.register(registry);
        let karmada = registry.sub_registry_with_prefix("karmada");
        karmada.register(
            "resource_match_policy_duration_seconds",
            "Duration in seconds to find a matched PropagationPolicy or ClusterPropagationPolicy for the resource templates.",
            self.match_policy_duration.clone(),
        );
        karmada.register(
            "resource_apply_policy_duration_seconds",
            "Duration in seconds to apply a PropagationPolicy or ClusterPropagationPolicy for the resource templates. By the result, 'error' means a resource template failed to apply the policy. Otherwise 'success'.",
            self.apply_policy_duration.clone(),
        );
        karmada.register(
            "policy_apply_attempts",
            "Number of attempts to be applied for a PropagationPolicy or ClusterPropagationPolicy. By the result, 'error' means a resource template failed to apply the policy. Otherwise 'success'.",
            self.policy_apply_attempts.clone(),
        );
        karmada.register(
            "binding_sync_work_duration_seconds",
            "Duration in seconds to sync works for ResourceBinding and ClusterResourceBinding objects. By the result, 'error' means a binding failed to sync works. Otherwise 'success'.",
            self.sync_work_duration.clone(),
        );
        karmada.register(
            "policy_preemption",
            "Number of preemptions of a resource template's claiming policy. By the result, 'error' means the preempting policy failed to claim the template. Otherwise 'success'.",
            self.policy_preemption.clone(),
        );
        karmada.register(
            "propagation_latency_seconds",
            "Seconds from the resource detector observing a new generation of a workload template to every target member running an object of that generation (the binding FullyApplied and each member reporting resourceTemplateGeneration at least that generation).",
            self.propagation_latency.clone(),
        );
        karmada.register(
            "binding_status",
            "ResourceBindings and ClusterResourceBindings by their FullyApplied condition: Applied (True), NotApplied (False), Pending (no condition yet).",
            self.binding_status.clone(),
        );
        karmada.register(
            "cronfederatedhpa_process_duration_seconds",
            "Duration in seconds to process a CronFederatedHPA. By the result, 'error' means a CronFederatedHPA failed to be processed. Otherwise 'success'.",
            self.cron_process_duration.clone(),
        );
        karmada.register(
            "cronfederatedhpa_rule_process_duration_seconds",
            "Duration in seconds to process a CronFederatedHPA rule. By the result, 'error' means a CronFederatedHPA rule failed to be processed. Otherwise 'success'.",
            self.cron_rule_process_duration.clone(),
        );
        karmada.register(
            "federatedhpa_process_duration_seconds",
            "Duration in seconds to process a FederatedHPA. By the result, 'error' means a FederatedHPA failed to be processed. Otherwise 'success'.",
            self.fhpa_process_duration.clone(),
        );
        karmada.register(
            "federatedhpa_pull_metrics_duration_seconds",
            "Duration in seconds taken by the FederatedHPA to pull metrics. By the result, 'error' means the FederatedHPA failed to pull the metrics. Otherwise 'success'.",
            self.fhpa_pull_metrics_duration.clone(),
        );
        // Karmada's controller-manager exposes these without the prefix.
        registry.register(
            "federatedhpa_process_duration_seconds",
            "Same as karmada_federatedhpa_process_duration_seconds (Karmada's unprefixed name).",
            self.fhpa_process_duration.clone(),
        );
        registry.register(
            "federatedhpa_pull_metrics_duration_seconds",
            "Same as karmada_federatedhpa_pull_metrics_duration_seconds (Karmada's unprefixed name).",
            self.fhpa_pull_metrics_duration.clone(),
        );
        registry.register(
            "cronfederatedhpa_process_duration_seconds",
            "Same as karmada_cronfederatedhpa_process_duration_seconds (Karmada's unprefixed name).",
            self.cron_process_duration.clone(),
        );
        registry.register(
            "cronfederatedhpa_rule_process_duration_seconds",
            "Same as karmada_cronfederatedhpa_rule_process_duration_seconds (Karmada's unprefixed name).",
            self.cron_rule_process_duration.clone(),
        );
        registry.register(
            "resource_match_policy_duration_seconds",
            "Same as karmada_resource_match_policy_duration_seconds (Karmada's unprefixed name).",
            self.match_policy_duration.clone(),
        );
        registry.register(
            "resource_apply_policy_duration_seconds",
            "Same as karmada_resource_apply_policy_duration_seconds (Karmada's unprefixed name).",
            self.apply_policy_duration.clone(),
        );
        registry.register(
            "policy_apply_attempts",
            "Same as karmada_policy_apply_attempts_total (Karmada's unprefixed name).",
            self.policy_apply_attempts.clone(),
        );
        registry.register(
            "binding_sync_work_duration_seconds",
            "Same as karmada_binding_sync_work_duration_seconds (Karmada's unprefixed name).",
            self.sync_work_duration.clone(),
        );
        registry.register(
            "policy_preemption",
            "Same as karmada_policy_preemption_total (Karmada's unprefixed name).",
            self.policy_preemption.clone(),
        );
    }

    /// Registers the metrics of the member-facing controllers (execution, cluster status), the
    /// set Karmada's agent exposes too.
    pub fn register_member_side(&self, registry: &mut Registry) {
        self.cluster.register(registry);
        let karmada = registry.sub_registry_with_prefix("karmada");
        karmada.register(
            "work_sync_workload_duration_seconds",
            "Duration in seconds to sync the workload to a target cluster. By the result, 'error' means a work failed to sync workloads. Otherwise 'success'.",
            self.sync_workload_duration.clone(),
        );
        karmada.register(
            "create_resource_to_cluster",
            "Number of creation operations against a target member cluster. The 'result' label indicates outcome ('success' or 'error'). Labels 'apiversion', 'kind', and 'member_cluster' specify the resource's API version, type and target cluster.",
            self.create_resource.clone(),
        );
        karmada.register(
            "update_resource_to_cluster",
            "Number of updating operations of the resource to a target member cluster. By the result, 'error' means a resource update failed. Otherwise 'success'. operationResult is none (not sent), unchanged or updated.",
            self.update_resource.clone(),
        );
        karmada.register(
            "delete_resource_from_cluster",
            "Number of deletion operations against a target member cluster. The 'result' label indicates outcome ('success' or 'error').",
            self.delete_resource.clone(),
        );
        registry.register(
            "work_sync_workload_duration_seconds",
            "Same as karmada_work_sync_workload_duration_seconds (Karmada's unprefixed name).",
            self.sync_workload_duration.clone(),
        );
    }

    /// The detector found the best policy of a template (Karmada observes only matches).
    pub fn observe_match_policy(&self, elapsed: Duration) {
        self.match_policy_duration.observe(elapsed.as_secs_f64());
    }

    /// The detector applied (or failed to apply) a policy to a template.
    pub fn observe_apply_policy(&self, ok: bool, elapsed: Duration) {
        let labels = ResultLabels::of(ok);
        self.policy_apply_attempts.get_or_create(&labels).inc();
        self.apply_policy_duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// The detector moved a template's claim to a preempting policy (or failed to).
    pub fn count_preemption(&self, ok: bool) {
        self.policy_preemption
            .get_or_create(&ResultLabels::of(ok))
            .inc();
    }

    /// The binding controller synced (or failed to sync) a binding's Works.
    pub fn observe_sync_work(&self, ok: bool, elapsed: Duration) {
        self.sync_work_duration
            .get_or_create(&ResultLabels::of(ok))
            .observe(elapsed.as_secs_f64());
    }

    /// A CronFederatedHPA reconcile (`rule: false`) or rule run (`rule: true`).
    pub fn observe_cron(&self, rule: bool, ok: bool, elapsed: Duration) {
        let family = if rule {
            &self.cron_rule_process_duration
        } else {
            &self.cron_process_duration
        };
        family
            .get_or_create(&ResultLabels::of(ok))
            .observe(elapsed.as_secs_f64());
    }

    /// A FederatedHPA sync.
    pub fn observe_fhpa(&self, ok: bool, elapsed: Duration) {
        self.fhpa_process_duration
            .get_or_create(&ResultLabels::of(ok))
            .observe(elapsed.as_secs_f64());
    }

    /// A FederatedHPA's read of its pods' `metric_type` metrics from its members.
    pub fn observe_fhpa_pull(&self, ok: bool, metric_type: &str, elapsed: Duration) {
        self.fhpa_pull_metrics_duration
            .get_or_create(&PullLabels {
                result: result(ok).to_owned(),
                metricType: metric_type.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// The execution controller synced (or failed to sync) a Work's workload to its member.
    pub fn observe_sync_workload(&self, ok: bool, elapsed: Duration) {
        self.sync_workload_duration
            .get_or_create(&ResultLabels::of(ok))
            .observe(elapsed.as_secs_f64());
    }

    /// A create request to a member.
    pub fn count_create(&self, ok: bool, api_version: &str, kind: &str, cluster: &str) {
        self.create_resource
            .get_or_create(&resource_labels(ok, api_version, kind, cluster))
            .inc();
    }

    /// An update of a member object (attempted, skipped as unchanged, or sent).
    pub fn count_update(
        &self,
        ok: bool,
        api_version: &str,
        kind: &str,
        cluster: &str,
        outcome: UpdateResult,
    ) {
        let ResourceLabels {
            result,
            apiversion,
            kind,
            member_cluster,
        } = resource_labels(ok, api_version, kind, cluster);
        self.update_resource
            .get_or_create(&UpdateLabels {
                result,
                apiversion,
                kind,
                member_cluster,
                operationResult: outcome.as_str().to_owned(),
            })
            .inc();
    }

    /// A delete request to a member.
    pub fn count_delete(&self, ok: bool, api_version: &str, kind: &str, cluster: &str) {
        self.delete_resource
            .get_or_create(&resource_labels(ok, api_version, kind, cluster))
            .inc();
    }

    /// The detector saw `template` at `generation`. A generation newer than any seen before
    /// starts the propagation clock, unless it comes from the initial list (`initial`: a
    /// restart, whose changes were not seen happening); a change that left the generation as
    /// it was (labels, annotations, the claim) starts nothing.
    pub fn template_seen(
        &self,
        template: TemplateId,
        generation: i64,
        initial: bool,
        now: Instant,
    ) {
        let mut pending = self.pending.lock();
        let (latest, clocks) = pending.entry(template).or_insert((0, Vec::new()));
        if generation <= *latest {
            return;
        }
        *latest = generation;
        if initial {
            return;
        }
        if clocks.len() == MAX_PENDING_PER_TEMPLATE {
            clocks.remove(0);
        }
        clocks.push((generation, now));
    }

    /// The template is gone: nothing of it is pending any more.
    pub fn template_deleted(&self, template: &TemplateId) {
        self.pending.lock().remove(template);
    }

    /// Every target member of `template` runs generation `generation` or later: observes the
    /// latency of every change up to it.
    pub fn template_applied(&self, template: &TemplateId, generation: i64, now: Instant) {
        let mut pending = self.pending.lock();
        let Some((_, clocks)) = pending.get_mut(template) else {
            return;
        };
        clocks.retain(|(g, started)| {
            if *g > generation {
                return true;
            }
            self.propagation_latency
                .observe(now.saturating_duration_since(*started).as_secs_f64());
            false
        });
    }

    /// Templates whose propagation clock runs.
    pub fn pending_templates(&self) -> usize {
        self.pending
            .lock()
            .values()
            .filter(|(_, clocks)| !clocks.is_empty())
            .count()
    }

    /// Records a binding's state (`key` names the binding uniquely across both kinds).
    pub fn binding_state(&self, key: String, state: BindingState) {
        let previous = self.bindings.lock().insert(key, state);
        if previous == Some(state) {
            return;
        }
        if let Some(previous) = previous {
            self.binding_gauge(previous).dec();
        }
        self.binding_gauge(state).inc();
    }

    /// The binding is gone.
    pub fn binding_deleted(&self, key: &str) {
        if let Some(previous) = self.bindings.lock().remove(key) {
            self.binding_gauge(previous).dec();
        }
    }

    /// Forgets every binding (a new leader term re-lists them).
    pub fn reset_bindings(&self) {
        self.bindings.lock().clear();
        for state in BindingState::ALL {
            self.binding_gauge(state).set(0);
        }
    }

    fn binding_gauge(&self, state: BindingState) -> Gauge {
        self.binding_status
            .get_or_create(&StatusLabels {
                status: state.as_str().to_owned(),
            })
            .clone()
    }
}

fn resource_labels(ok: bool, api_version: &str, kind: &str, cluster: &str) -> ResourceLabels {
    ResourceLabels {
        result: result(ok).to_owned(),
        apiversion: api_version.to_owned(),
        kind: kind.to_owned(),
        member_cluster: cluster.to_owned(),
    }
}

#[cfg(test)]
mod tests;
