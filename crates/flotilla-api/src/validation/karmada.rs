//! Admission rules of Karmada's kinds, on plain JSON: the defaults and constraints of their
//! CRD schemas, what karmada-webhook's mutating and validating handlers do, and the strategy of
//! the `Cluster` kind in Karmada's aggregated API server. Errors carry Karmada's messages as
//! [`FieldError`]s naming the field, for the API server to return as a 422 `Invalid` status.
//!
//! Provenance: karmada-io/karmada v1.19 (`pkg/webhook/*`, `pkg/util/validation/validation.go`,
//! `pkg/util/helper/policy.go`, `pkg/apis/*/v1alpha1` kubebuilder markers,
//! `pkg/registry/cluster/strategy.go`, `pkg/apis/cluster/{mutation,validation}`,
//! `pkg/apis/search/validation` for karmada-search's ResourceRegistry). Behaviour
//! only; values Karmada prints with Go's `%#v` (whole structs) are printed here as JSON.
//!
//! Works on `serde_json::Value` so that it depends on no typed Karmada API.

mod binding;
mod cluster;
mod defaults;
mod federated_hpa;
mod go_url;
mod ingress;
mod interpreter_webhook;
mod networking;
mod others;
mod overrides;
mod policy;
mod resource_registry;
mod schema;
mod tables;
mod work;

use serde_json::Value;

use crate::validation::{BadValue, FieldError};

pub use cluster::{CLUSTER_NAME_MAX_LENGTH, cluster_name_errors};
pub use defaults::{
    CPP_FINALIZER, CPP_PERMANENT_ID, CRB_PERMANENT_ID, Defaulting, MAX_INT64, PP_FINALIZER,
    PP_PERMANENT_ID, RB_PERMANENT_ID, WORK_PERMANENT_ID, default_resource_models,
};
pub use overrides::json_pointer;
pub use schema::{Constraint, Rule};
pub use work::{MANAGED_ANNOTATIONS, MANAGED_LABELS, prune as prune_manifest};

/// The Karmada kinds that have admission rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `cluster.karmada.io/v1alpha1` Cluster.
    Cluster,
    /// `policy.karmada.io/v1alpha1` PropagationPolicy.
    PropagationPolicy,
    /// `policy.karmada.io/v1alpha1` ClusterPropagationPolicy.
    ClusterPropagationPolicy,
    /// `policy.karmada.io/v1alpha1` OverridePolicy.
    OverridePolicy,
    /// `policy.karmada.io/v1alpha1` ClusterOverridePolicy.
    ClusterOverridePolicy,
    /// `policy.karmada.io/v1alpha1` FederatedResourceQuota.
    FederatedResourceQuota,
    /// `policy.karmada.io/v1alpha1` ClusterTaintPolicy.
    ClusterTaintPolicy,
    /// `work.karmada.io/v1alpha2` ResourceBinding.
    ResourceBinding,
    /// `work.karmada.io/v1alpha2` ClusterResourceBinding.
    ClusterResourceBinding,
    /// `work.karmada.io/v1alpha1` Work.
    Work,
    /// `autoscaling.karmada.io/v1alpha1` FederatedHPA.
    FederatedHpa,
    /// `autoscaling.karmada.io/v1alpha1` CronFederatedHPA.
    CronFederatedHpa,
    /// `apps.karmada.io/v1alpha1` WorkloadRebalancer.
    WorkloadRebalancer,
    /// `remedy.karmada.io/v1alpha1` Remedy.
    Remedy,
    /// `search.karmada.io/v1alpha1` ResourceRegistry (served by karmada-search).
    ResourceRegistry,
    /// `networking.karmada.io/v1alpha1` MultiClusterService.
    MultiClusterService,
    /// `networking.karmada.io/v1alpha1` MultiClusterIngress.
    MultiClusterIngress,
    /// `config.karmada.io/v1alpha1` ResourceInterpreterCustomization.
    ResourceInterpreterCustomization,
    /// `config.karmada.io/v1alpha1` ResourceInterpreterWebhookConfiguration.
    ResourceInterpreterWebhookConfiguration,
}

impl Kind {
    /// The kind served as `group, kind`, if it has rules here.
    pub fn of(group: &str, kind: &str) -> Option<Kind> {
        Some(match (group, kind) {
            ("cluster.karmada.io", "Cluster") => Kind::Cluster,
            ("policy.karmada.io", "PropagationPolicy") => Kind::PropagationPolicy,
            ("policy.karmada.io", "ClusterPropagationPolicy") => Kind::ClusterPropagationPolicy,
            ("policy.karmada.io", "OverridePolicy") => Kind::OverridePolicy,
            ("policy.karmada.io", "ClusterOverridePolicy") => Kind::ClusterOverridePolicy,
            ("policy.karmada.io", "FederatedResourceQuota") => Kind::FederatedResourceQuota,
            ("policy.karmada.io", "ClusterTaintPolicy") => Kind::ClusterTaintPolicy,
            ("work.karmada.io", "ResourceBinding") => Kind::ResourceBinding,
            ("work.karmada.io", "ClusterResourceBinding") => Kind::ClusterResourceBinding,
            ("work.karmada.io", "Work") => Kind::Work,
            ("autoscaling.karmada.io", "FederatedHPA") => Kind::FederatedHpa,
            ("autoscaling.karmada.io", "CronFederatedHPA") => Kind::CronFederatedHpa,
            ("apps.karmada.io", "WorkloadRebalancer") => Kind::WorkloadRebalancer,
            ("remedy.karmada.io", "Remedy") => Kind::Remedy,
            ("search.karmada.io", "ResourceRegistry") => Kind::ResourceRegistry,
            ("networking.karmada.io", "MultiClusterService") => Kind::MultiClusterService,
            ("networking.karmada.io", "MultiClusterIngress") => Kind::MultiClusterIngress,
            ("config.karmada.io", "ResourceInterpreterCustomization") => {
                Kind::ResourceInterpreterCustomization
            }
            ("config.karmada.io", "ResourceInterpreterWebhookConfiguration") => {
                Kind::ResourceInterpreterWebhookConfiguration
            }
            _ => return None,
        })
    }

    /// What Karmada's schema of the kind requires, enumerates, bounds and defaults, by path
    /// (`[]`: every list item, `{}`: every map value): the rules admission applies, and the
    /// published OpenAPI schema states.
    pub fn constraints(self) -> &'static [&'static [schema::Constraint]] {
        self.schema()
    }

    fn schema(self) -> &'static [&'static [schema::Constraint]] {
        match self {
            Kind::Cluster => &[tables::CLUSTER],
            Kind::PropagationPolicy | Kind::ClusterPropagationPolicy => {
                &[tables::PROPAGATION, tables::PLACEMENT, tables::FAILOVER]
            }
            Kind::OverridePolicy | Kind::ClusterOverridePolicy => &[tables::OVERRIDE],
            Kind::FederatedResourceQuota => &[tables::FEDERATED_RESOURCE_QUOTA],
            Kind::ClusterTaintPolicy => &[tables::CLUSTER_TAINT_POLICY],
            Kind::ResourceBinding | Kind::ClusterResourceBinding => {
                &[tables::BINDING, tables::PLACEMENT, tables::FAILOVER]
            }
            Kind::Work => &[tables::WORK],
            Kind::FederatedHpa => &[tables::FEDERATED_HPA],
            Kind::CronFederatedHpa => &[tables::CRON_FEDERATED_HPA],
            Kind::WorkloadRebalancer => &[tables::WORKLOAD_REBALANCER],
            Kind::Remedy => &[tables::REMEDY],
            Kind::ResourceRegistry => &[tables::RESOURCE_REGISTRY],
            Kind::MultiClusterService => &[tables::MULTI_CLUSTER_SERVICE],
            Kind::MultiClusterIngress => &[],
            Kind::ResourceInterpreterCustomization => &[tables::RESOURCE_INTERPRETER_CUSTOMIZATION],
            Kind::ResourceInterpreterWebhookConfiguration => {
                &[tables::RESOURCE_INTERPRETER_WEBHOOK_CONFIGURATION]
            }
        }
    }
}

/// Applies `kind`'s defaults to `object` (see [`Defaulting`]). Idempotent.
pub fn default_object(kind: Kind, object: &mut Value, ctx: &Defaulting<'_>) {
    defaults::default_object(kind, object, ctx);
}

/// karmada-webhook's flags that change what it admits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebhookOptions {
    /// `--allow-no-execute-taint-policy` (default false): ClusterTaintPolicies may carry
    /// NoExecute taints (which evict workloads).
    pub allow_no_execute_taint_policy: bool,
    /// Gate `FederatedQuotaEnforcement`: the ResourceBinding webhook refuses a binding whose
    /// usage change exceeds a FederatedResourceQuota of its namespace.
    pub federated_quota_enforcement: bool,
    /// Gate `MultiplePodTemplatesScheduling`: the ResourceBinding webhook requires unique,
    /// non-empty `spec.components[].name`s.
    pub multiple_pod_templates_scheduling: bool,
}

/// Every rule of `kind` that `object` breaks (`old`: the stored object on update). Schema
/// violations are reported alone, as kube-apiserver rejects them before any webhook runs.
pub fn validate(kind: Kind, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    validate_with(kind, object, old, WebhookOptions::default())
}

/// [`validate`] with the webhook's flags.
pub fn validate_with(
    kind: Kind,
    object: &Value,
    old: Option<&Value>,
    webhook: WebhookOptions,
) -> Vec<FieldError> {
    let errors: Vec<FieldError> = kind
        .schema()
        .iter()
        .flat_map(|table| match old {
            Some(old) => schema::check_update(table, object, old),
            None => schema::check(table, object),
        })
        .collect();
    if !errors.is_empty() {
        return errors;
    }
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or("");
    match kind {
        Kind::Cluster => cluster::cluster(object),
        Kind::PropagationPolicy => policy::propagation_policy(true, object, old),
        Kind::ClusterPropagationPolicy => policy::propagation_policy(false, object, old),
        Kind::OverridePolicy => overrides::override_spec(&object["spec"], namespace),
        Kind::ClusterOverridePolicy => overrides::override_spec(&object["spec"], ""),
        Kind::FederatedResourceQuota => others::federated_resource_quota(object),
        Kind::ClusterTaintPolicy => {
            others::cluster_taint_policy(object, webhook.allow_no_execute_taint_policy)
        }
        Kind::FederatedHpa => federated_hpa::federated_hpa(object),
        Kind::CronFederatedHpa => others::cron_federated_hpa(object),
        Kind::ResourceRegistry => resource_registry::resource_registry(object),
        Kind::ResourceBinding => {
            binding::resource_binding(object, webhook.multiple_pod_templates_scheduling)
        }
        Kind::MultiClusterService => networking::multi_cluster_service(object, old),
        Kind::MultiClusterIngress => ingress::multi_cluster_ingress(object, old),
        Kind::ResourceInterpreterWebhookConfiguration => {
            interpreter_webhook::resource_interpreter_webhook_configuration(object)
        }
        Kind::ClusterResourceBinding
        | Kind::Work
        | Kind::WorkloadRebalancer
        | Kind::Remedy
        | Kind::ResourceInterpreterCustomization => Vec::new(),
    }
}

/// A string field of a JSON object, `""` when absent or not a string.
fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or("")
}

/// How an offending value is shown: scalars as Go prints them, structures as compact JSON
/// (Karmada prints Go's `%#v` of its structs there, pointers included).
fn shown(value: &Value) -> BadValue {
    match value {
        Value::String(s) => BadValue::Str(s.clone()),
        Value::Bool(b) => BadValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => BadValue::Int(i),
            None => BadValue::Verbatim(n.to_string()),
        },
        Value::Null => BadValue::Null,
        other => BadValue::Verbatim(other.to_string()),
    }
}

#[cfg(test)]
mod tests;
