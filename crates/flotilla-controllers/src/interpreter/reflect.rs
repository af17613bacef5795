//! `ReflectStatus` of the native interpreter (Karmada
//! pkg/resourceinterpreter/default/native/reflectstatus.go): what of a member object's status
//! goes into `Work.status.manifestStatuses[].status`. Workloads keep selected counters plus the
//! member `generation` and the template generation (annotation
//! `resourcetemplate.karmada.io/generation`) so aggregation can tell when every member caught up;
//! Services keep their load balancer; Jobs their progress; other kinds the whole `.status`.
//! `None` means "not collected". Field order and omission follow Go's encoding of the same types.

use k8s_openapi::api::apps::v1::{
    DaemonSetStatus, DeploymentStatus, ReplicaSetStatus, StatefulSetStatus,
};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus;
use k8s_openapi::api::batch::v1::JobStatus;
use k8s_openapi::api::core::v1::ServiceStatus;
use k8s_openapi::api::policy::v1::PodDisruptionBudgetStatus;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use flotilla_api::karmada::RESOURCE_TEMPLATE_GENERATION_ANNOTATION;

use super::gvk_of;

/// Why a status could not be reflected.
#[derive(Debug, thiserror::Error)]
pub enum ReflectError {
    #[error("failed to convert {kind} status: {source}")]
    Status {
        kind: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("failed to parse generation from annotation({annotation}:{value}): invalid syntax")]
    TemplateGeneration {
        annotation: &'static str,
        value: String,
    },
}

/// The status to record for `object`, `None` when there is nothing (yet).
pub fn reflect_status(object: &Value) -> Result<Option<Value>, ReflectError> {
    let (api_version, kind) = gvk_of(object);
    let status = match object.get("status") {
        Some(Value::Object(status)) => Value::Object(status.clone()),
        _ => return Ok(None),
    };
    match (api_version, kind) {
        ("apps/v1", "Deployment") => {
            let s: DeploymentStatus = typed(&status, "Deployment")?;
            let mut out = federated_generation(object)?;
            omit_zero(&mut out, "observedGeneration", s.observed_generation);
            omit_zero(&mut out, "replicas", s.replicas);
            omit_zero(&mut out, "updatedReplicas", s.updated_replicas);
            omit_zero(&mut out, "readyReplicas", s.ready_replicas);
            omit_zero(&mut out, "availableReplicas", s.available_replicas);
            omit_zero(&mut out, "unavailableReplicas", s.unavailable_replicas);
            Ok((!out.is_empty()).then_some(Value::Object(out)))
        }
        ("apps/v1", "ReplicaSet") => {
            let s: ReplicaSetStatus = typed(&status, "ReplicaSet")?;
            let mut out = federated_generation(object)?;
            out.insert("replicas".into(), s.replicas.into());
            omit_zero(&mut out, "readyReplicas", s.ready_replicas);
            omit_zero(&mut out, "availableReplicas", s.available_replicas);
            omit_zero(&mut out, "observedGeneration", s.observed_generation);
            Ok(Some(Value::Object(out)))
        }
        ("apps/v1", "StatefulSet") => {
            let mut out = federated_generation(object)?;
            let s: StatefulSetStatus = typed(&status, "StatefulSet")?;
            // Karmada does not carry the StatefulSet's observedGeneration.
            out.insert("replicas".into(), s.replicas.into());
            omit_zero(&mut out, "readyReplicas", s.ready_replicas);
            omit_zero(&mut out, "currentReplicas", s.current_replicas);
            omit_zero(&mut out, "updatedReplicas", s.updated_replicas);
            out.insert(
                "availableReplicas".into(),
                s.available_replicas.unwrap_or(0).into(),
            );
            Ok(Some(Value::Object(out)))
        }
        ("apps/v1", "DaemonSet") => {
            let s: DaemonSetStatus = typed(&status, "DaemonSet")?;
            let mut out = federated_generation(object)?;
            out.insert(
                "currentNumberScheduled".into(),
                s.current_number_scheduled.into(),
            );
            out.insert("numberMisscheduled".into(), s.number_misscheduled.into());
            out.insert(
                "desiredNumberScheduled".into(),
                s.desired_number_scheduled.into(),
            );
            out.insert("numberReady".into(), s.number_ready.into());
            omit_zero(&mut out, "observedGeneration", s.observed_generation);
            omit_zero(
                &mut out,
                "updatedNumberScheduled",
                s.updated_number_scheduled,
            );
            omit_zero(&mut out, "numberAvailable", s.number_available);
            omit_zero(&mut out, "numberUnavailable", s.number_unavailable);
            Ok(Some(Value::Object(out)))
        }
        ("v1", "Service") => {
            if object["spec"]["type"].as_str() != Some("LoadBalancer") {
                return Ok(None);
            }
            let s: ServiceStatus = typed(&status, "Service")?;
            let load_balancer = serde_json::to_value(s.load_balancer.unwrap_or_default())
                .unwrap_or_else(|_| Value::Object(Map::new()));
            let mut out = Map::new();
            out.insert("loadBalancer".into(), load_balancer);
            Ok(Some(Value::Object(out)))
        }
        ("batch/v1", "Job") => {
            let s: JobStatus = typed(&status, "Job")?;
            let mut out = Map::new();
            if let Some(conditions) = s.conditions.filter(|c| !c.is_empty()) {
                out.insert("conditions".into(), to_value(&conditions));
            }
            if let Some(start) = s.start_time {
                out.insert("startTime".into(), to_value(&start));
            }
            if let Some(done) = s.completion_time {
                out.insert("completionTime".into(), to_value(&done));
            }
            omit_zero(&mut out, "active", s.active);
            omit_zero(&mut out, "succeeded", s.succeeded);
            omit_zero(&mut out, "failed", s.failed);
            Ok(Some(Value::Object(out)))
        }
        ("policy/v1", "PodDisruptionBudget") => {
            let s: PodDisruptionBudgetStatus = typed(&status, "PodDisruptionBudget")?;
            let mut out = Map::new();
            if let Some(disrupted) = s.disrupted_pods.filter(|d| !d.is_empty()) {
                out.insert("disruptedPods".into(), to_value(&disrupted));
            }
            out.insert("disruptionsAllowed".into(), s.disruptions_allowed.into());
            out.insert("currentHealthy".into(), s.current_healthy.into());
            out.insert("desiredHealthy".into(), s.desired_healthy.into());
            out.insert("expectedPods".into(), s.expected_pods.into());
            Ok(Some(Value::Object(out)))
        }
        ("autoscaling/v2", "HorizontalPodAutoscaler") => {
            let s: HorizontalPodAutoscalerStatus = typed(&status, "HorizontalPodAutoscaler")?;
            let mut out = Map::new();
            omit_zero(&mut out, "currentReplicas", s.current_replicas);
            out.insert("desiredReplicas".into(), s.desired_replicas.into());
            // Go's `currentMetrics` has no `omitempty`: Karmada writes the list it leaves
            // empty as `null`.
            out.insert("currentMetrics".into(), Value::Null);
            Ok(Some(Value::Object(out)))
        }
        // Ingress and every other kind: the whole status.
        _ => Ok(Some(status)),
    }
}

/// Whether the reflected status of `kind` carries `resourceTemplateGeneration`: its members
/// report which template generation they run (what `karmada_propagation_latency_seconds`
/// waits for).
pub fn reports_template_generation(api_version: &str, kind: &str) -> bool {
    api_version == "apps/v1"
        && matches!(
            kind,
            "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet"
        )
}

/// `generation` (member) and `resourceTemplateGeneration` (annotation), both omitted when 0.
fn federated_generation(object: &Value) -> Result<Map<String, Value>, ReflectError> {
    let annotation = object["metadata"]["annotations"][RESOURCE_TEMPLATE_GENERATION_ANNOTATION]
        .as_str()
        .unwrap_or_default();
    let template_generation = if annotation.is_empty() {
        0
    } else {
        annotation
            .parse::<i64>()
            .map_err(|_| ReflectError::TemplateGeneration {
                annotation: RESOURCE_TEMPLATE_GENERATION_ANNOTATION,
                value: annotation.to_owned(),
            })?
    };
    let mut out = Map::new();
    omit_zero(
        &mut out,
        "generation",
        object["metadata"]["generation"].as_i64(),
    );
    omit_zero(
        &mut out,
        "resourceTemplateGeneration",
        Some(template_generation),
    );
    Ok(out)
}

/// Go's `omitempty` on an integer.
fn omit_zero<N: Into<i64> + Copy>(out: &mut Map<String, Value>, key: &str, value: Option<N>) {
    if let Some(v) = value.map(Into::into).filter(|v| *v != 0) {
        out.insert(key.into(), v.into());
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn typed<T: DeserializeOwned>(status: &Value, kind: &'static str) -> Result<T, ReflectError> {
    T::deserialize(status).map_err(|source| ReflectError::Status { kind, source })
}

#[cfg(test)]
mod tests;
