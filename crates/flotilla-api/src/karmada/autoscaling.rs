//! `autoscaling.karmada.io/v1alpha1` `CronFederatedHPA`: cron rules that set a workload's
//! replicas (or a FederatedHPA's bounds) at scheduled times, with each rule's execution history
//! in its status.

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerStatus,
    MetricSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, karmada_resource};

/// The API version a FederatedHPA scale target names.
pub const AUTOSCALING_KARMADA_V1ALPHA1: &str = "autoscaling.karmada.io/v1alpha1";

/// A namespaced set of scaling rules for one target.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronFederatedHPA {
    /// Always `autoscaling.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<CronFederatedHPA>,
    /// Always `CronFederatedHPA`.
    #[serde(default)]
    pub kind: Kind<CronFederatedHPA>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The target and the rules.
    #[serde(default)]
    pub spec: CronFederatedHPASpec,
    /// Per rule, the next run and the last runs.
    #[serde(default)]
    pub status: CronFederatedHPAStatus,
}
karmada_resource!(
    CronFederatedHPA,
    group = "autoscaling.karmada.io",
    version = "v1alpha1",
    kind = "CronFederatedHPA",
    plural = "cronfederatedhpas",
    scope = NamespaceResourceScope
);

/// `CronFederatedHPA.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronFederatedHPASpec {
    /// A workload with a `scale` subresource, or a FederatedHPA.
    #[serde(default)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// The rules.
    #[serde(default)]
    pub rules: Vec<CronFederatedHPARule>,
}

/// One cron rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronFederatedHPARule {
    /// Unique within the CronFederatedHPA.
    #[serde(default)]
    pub name: String,
    /// Cron schedule (5 fields or a descriptor).
    #[serde(default)]
    pub schedule: String,
    /// Replicas for a workload target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_replicas: Option<i32>,
    /// `minReplicas` for a FederatedHPA target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_min_replicas: Option<i32>,
    /// `maxReplicas` for a FederatedHPA target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_max_replicas: Option<i32>,
    /// A suspended rule does not run (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// IANA zone the schedule is read in (default: the controller's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Successful runs kept in the status (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_history_limit: Option<i32>,
    /// Failed runs kept in the status (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_history_limit: Option<i32>,
}

/// `CronFederatedHPA.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronFederatedHPAStatus {
    /// One entry per rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub execution_histories: Vec<ExecutionHistory>,
}

/// A rule's history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionHistory {
    /// The rule.
    #[serde(default)]
    pub rule_name: String,
    /// When it runs next (absent while suspended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_execution_time: Option<Time>,
    /// Newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub successful_executions: Vec<SuccessfulExecution>,
    /// Newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_executions: Vec<FailedExecution>,
}

/// A run that scaled (or found nothing to change).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuccessfulExecution {
    /// When it was due.
    pub schedule_time: Option<Time>,
    /// When it ran.
    pub execution_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_max_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_min_replicas: Option<i32>,
}

/// A run that failed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedExecution {
    /// When it was due.
    pub schedule_time: Option<Time>,
    /// When it ran.
    pub execution_time: Option<Time>,
    /// Why it failed.
    #[serde(default)]
    pub message: String,
}

/// `autoscaling.karmada.io/v1alpha1` `FederatedHPA`: a HorizontalPodAutoscaler whose target is a
/// resource template on the control plane and whose metrics come from the target's pods in every
/// member it was propagated to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederatedHPA {
    /// Always `autoscaling.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<FederatedHPA>,
    /// Always `FederatedHPA`.
    #[serde(default)]
    pub kind: Kind<FederatedHPA>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The target, the bounds, the metrics and the scaling behaviour (autoscaling/v2's).
    #[serde(default)]
    pub spec: FederatedHPASpec,
    /// autoscaling/v2's HPA status (absent until the controller first writes it; an empty
    /// status reads as `desiredReplicas: 0`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_hpa_status"
    )]
    pub status: Option<HorizontalPodAutoscalerStatus>,
}
karmada_resource!(
    FederatedHPA,
    group = "autoscaling.karmada.io",
    version = "v1alpha1",
    kind = "FederatedHPA",
    plural = "federatedhpas",
    scope = NamespaceResourceScope
);

/// `FederatedHPA.spec` (the fields of autoscaling/v2's HPA spec).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederatedHPASpec {
    /// The resource template scaled.
    #[serde(default)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// Lower bound (defaulted to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    /// Upper bound.
    #[serde(default)]
    pub max_replicas: i32,
    /// What to scale on (defaulted to 80% CPU utilization).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<MetricSpec>,
    /// Scaling rates and stabilization windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<HorizontalPodAutoscalerBehavior>,
}

/// Reads an HPA status that may lack `desiredReplicas` (a status nobody wrote yet is `{}`).
fn lenient_hpa_status<'de, D>(
    deserializer: D,
) -> Result<Option<HorizontalPodAutoscalerStatus>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = Option::<serde_json::Value>::deserialize(deserializer)?;
    match value {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Object(mut fields)) => {
            fields
                .entry("desiredReplicas")
                .or_insert(serde_json::Value::from(0));
            serde_json::from_value(serde_json::Value::Object(fields))
                .map(Some)
                .map_err(serde::de::Error::custom)
        }
        Some(other) => Err(serde::de::Error::custom(format!(
            "status: expected an object, got {other}"
        ))),
    }
}
