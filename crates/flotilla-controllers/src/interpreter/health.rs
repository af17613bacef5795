//! `InterpretHealth` of the native interpreter (Karmada
//! pkg/resourceinterpreter/default/native/healthy.go): whether a member object is healthy.
//! Kinds without a rule are Healthy; an object that cannot be read as its kind is Unknown.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Service};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::gvk_of;

/// A member object's health as recorded in `manifestStatuses[].health`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Healthy,
    Unhealthy,
    Unknown,
}

impl Health {
    /// Karmada's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Healthy => "Healthy",
            Health::Unhealthy => "Unhealthy",
            Health::Unknown => "Unknown",
        }
    }
}

/// Why a health rule could not read an object.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {kind} for health interpretation: {source}")]
pub struct HealthError {
    kind: &'static str,
    #[source]
    source: serde_json::Error,
}

/// The health of `object`: no rule for its kind ⇒ Healthy, unreadable ⇒ Unknown.
pub fn health(object: &Value) -> Health {
    verdict_health(interpret(object).as_ref())
}

/// The health an [`interpret`] verdict records: no rule ⇒ Healthy, an error ⇒ Unknown.
pub fn verdict_health(verdict: Option<&Result<bool, HealthError>>) -> Health {
    match verdict {
        None | Some(Ok(true)) => Health::Healthy,
        Some(Ok(false)) => Health::Unhealthy,
        Some(Err(error)) => {
            tracing::debug!(%error, "health interpretation failed");
            Health::Unknown
        }
    }
}

/// Whether the native interpreter or a bundled third-party rule has a health rule for the kind
/// (Karmada's `HookEnabled` for `InterpretHealth`): the kinds [`interpret`] knows and the
/// bundled ones with a `healthInterpretation`.
pub fn has_rule(api_version: &str, kind: &str) -> bool {
    super::bundled::interprets(
        api_version,
        kind,
        flotilla_api::karmada::Operation::InterpretHealth,
    ) || matches!(
        (api_version, kind),
        (
            "apps/v1",
            "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet"
        ) | ("v1", "Service" | "PersistentVolumeClaim" | "Pod")
            | ("networking.k8s.io/v1", "Ingress")
            | ("policy/v1", "PodDisruptionBudget")
    )
}

/// The native rule for `object`'s kind, if there is one.
pub fn interpret(object: &Value) -> Option<Result<bool, HealthError>> {
    Some(match gvk_of(object) {
        ("apps/v1", "Deployment") => typed::<Deployment>(object, "Deployment").map(|d| {
            let status = d.status.unwrap_or_default();
            let replicas = d.spec.and_then(|s| s.replicas);
            workload_healthy(
                d.metadata.generation,
                status.observed_generation,
                replicas,
                status.updated_replicas.unwrap_or(0),
                status.available_replicas.unwrap_or(0),
            )
        }),
        ("apps/v1", "StatefulSet") => typed::<StatefulSet>(object, "StatefulSet").map(|s| {
            let status = s.status.unwrap_or_default();
            let replicas = s.spec.and_then(|s| s.replicas);
            workload_healthy(
                s.metadata.generation,
                status.observed_generation,
                replicas,
                status.updated_replicas.unwrap_or(0),
                status.available_replicas.unwrap_or(0),
            )
        }),
        ("apps/v1", "ReplicaSet") => typed::<ReplicaSet>(object, "ReplicaSet").map(|r| {
            let status = r.status.unwrap_or_default();
            let replicas = r.spec.and_then(|s| s.replicas);
            status.observed_generation.unwrap_or(0) == r.metadata.generation.unwrap_or(0)
                && replicas.is_none_or(|want| status.available_replicas.unwrap_or(0) >= want)
        }),
        ("apps/v1", "DaemonSet") => typed::<DaemonSet>(object, "DaemonSet").map(|d| {
            let status = d.status.unwrap_or_default();
            let updated = status.updated_number_scheduled.unwrap_or(0);
            status.observed_generation.unwrap_or(0) == d.metadata.generation.unwrap_or(0)
                && updated >= status.desired_number_scheduled
                && status.number_available.unwrap_or(0) >= updated
        }),
        ("v1", "Service") => typed::<Service>(object, "Service").map(|s| {
            let load_balancer = s.spec.and_then(|s| s.type_).as_deref() == Some("LoadBalancer");
            !load_balancer
                || s.status
                    .and_then(|s| s.load_balancer)
                    .and_then(|lb| lb.ingress)
                    .unwrap_or_default()
                    .iter()
                    .any(|i| has_address(i.ip.as_deref(), i.hostname.as_deref()))
        }),
        ("networking.k8s.io/v1", "Ingress") => typed::<Ingress>(object, "Ingress").map(|i| {
            i.status
                .and_then(|s| s.load_balancer)
                .and_then(|lb| lb.ingress)
                .unwrap_or_default()
                .iter()
                .any(|i| has_address(i.ip.as_deref(), i.hostname.as_deref()))
        }),
        ("v1", "PersistentVolumeClaim") => {
            typed::<PersistentVolumeClaim>(object, "PersistentVolumeClaim")
                .map(|p| p.status.and_then(|s| s.phase).as_deref() == Some("Bound"))
        }
        ("v1", "Pod") => typed::<Pod>(object, "Pod").map(|p| {
            let status = p.status.unwrap_or_default();
            match status.phase.as_deref() {
                Some("Succeeded") => true,
                // The first `Ready` condition decides (Karmada's `GetPodCondition`).
                Some("Running") => status
                    .conditions
                    .unwrap_or_default()
                    .iter()
                    .find(|c| c.type_ == "Ready")
                    .is_some_and(|c| c.status == "True"),
                _ => false,
            }
        }),
        ("policy/v1", "PodDisruptionBudget") => {
            typed::<PodDisruptionBudget>(object, "PodDisruptionBudget").map(|p| {
                let status = p.status.unwrap_or_default();
                status.current_healthy >= status.desired_healthy
            })
        }
        _ => return None,
    })
}

/// Deployment and StatefulSet: the controller saw the latest spec, every replica is updated and
/// every updated replica is available.
fn workload_healthy(
    generation: Option<i64>,
    observed: Option<i64>,
    replicas: Option<i32>,
    updated: i32,
    available: i32,
) -> bool {
    observed.unwrap_or(0) == generation.unwrap_or(0)
        && replicas.is_none_or(|want| updated >= want)
        && available >= updated
}

fn has_address(ip: Option<&str>, hostname: Option<&str>) -> bool {
    ip.is_some_and(|s| !s.is_empty()) || hostname.is_some_and(|s| !s.is_empty())
}

fn typed<T: DeserializeOwned>(object: &Value, kind: &'static str) -> Result<T, HealthError> {
    T::deserialize(object).map_err(|source| HealthError { kind, source })
}

#[cfg(test)]
mod tests;
