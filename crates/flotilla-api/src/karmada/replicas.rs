//! The native replica interpreter (Karmada's `InterpretReplica` for built-in kinds): how many
//! replicas a workload asks for and what each replica needs (resource requests, node claim).
//!
//! Kinds: `apps/v1` Deployment, ReplicaSet, StatefulSet (`spec.replicas`, default 1 as the
//! Kubernetes API server defaults it), `batch/v1` Job (`min(parallelism, completions)`, both
//! defaulted as Kubernetes does) and `v1` Pod (1). Other kinds are not workloads: 0 replicas and
//! no requirements.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PodSpec, ResourceRequirements};
use serde_json::Value;

use super::ResourceList;
use super::work::{NodeClaim, ReplicaRequirements};
use crate::{Quantity, QuantityFormat};

/// Why a workload's replicas could not be interpreted.
#[derive(Debug, thiserror::Error)]
pub enum InterpretError {
    /// The object does not have the shape of its kind.
    #[error("{kind} {field}: {source}")]
    Shape {
        /// The kind.
        kind: String,
        /// The field that failed to decode.
        field: &'static str,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// A resource quantity does not parse.
    #[error("{field}: invalid quantity {value:?}: {source}")]
    Quantity {
        /// Where the quantity is.
        field: String,
        /// The text.
        value: String,
        /// The parse error.
        #[source]
        source: crate::QuantityError,
    },
}

/// The result of interpreting a workload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InterpretedReplicas {
    /// Desired replicas.
    pub replicas: i32,
    /// Per-replica needs (`None` when the pod template asks for nothing).
    pub requirements: Option<ReplicaRequirements>,
}

/// Interprets `object` (any Kubernetes object as JSON).
pub fn interpret_replica(object: &Value) -> Result<InterpretedReplicas, InterpretError> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let spec = object.get("spec");
    let int = |field: &str| spec.and_then(|s| s.get(field)).and_then(Value::as_i64);
    let template_spec = |kind: &str| -> Result<Option<PodSpec>, InterpretError> {
        decode_pod_spec(
            kind,
            spec.and_then(|s| s.get("template"))
                .and_then(|t| t.get("spec")),
        )
    };
    let (replicas, pod_spec) = match (api_version, kind) {
        ("apps/v1", "Deployment" | "ReplicaSet" | "StatefulSet") => {
            (clamp(int("replicas").unwrap_or(1)), template_spec(kind)?)
        }
        ("batch/v1", "Job") => {
            let completions = int("completions");
            let parallelism = int("parallelism").unwrap_or(1);
            // Kubernetes defaults completions to 1 only when both are unset.
            let completions = match (completions, int("parallelism")) {
                (Some(c), _) => c,
                (None, None) => 1,
                (None, Some(p)) => p,
            };
            (clamp(parallelism.min(completions)), template_spec(kind)?)
        }
        ("v1", "Pod") => (1, decode_pod_spec(kind, spec)?),
        _ => return Ok(InterpretedReplicas::default()),
    };
    let requirements = match pod_spec {
        Some(pod_spec) => replica_requirements(&pod_spec)?,
        None => None,
    };
    Ok(InterpretedReplicas {
        replicas,
        requirements,
    })
}

fn clamp(value: i64) -> i32 {
    i32::try_from(value.max(0)).unwrap_or(i32::MAX)
}

fn decode_pod_spec(kind: &str, spec: Option<&Value>) -> Result<Option<PodSpec>, InterpretError> {
    spec.map(|s| {
        serde_json::from_value(s.clone()).map_err(|source| InterpretError::Shape {
            kind: kind.to_owned(),
            field: "pod spec",
            source,
        })
    })
    .transpose()
}

/// Karmada's `GenerateReplicaRequirements`: the node claim (nodeSelector, tolerations, required
/// node affinity) and the per-replica request (Σ containers, max with each init container, plus
/// overhead; a limit stands in for a missing request). `None` when both are empty.
pub fn replica_requirements(
    pod_spec: &PodSpec,
) -> Result<Option<ReplicaRequirements>, InterpretError> {
    let hard_node_affinity = pod_spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .clone()
        });
    let tolerations = pod_spec.tolerations.clone().unwrap_or_default();
    let node_claim = if pod_spec.node_selector.is_none()
        && hard_node_affinity.is_none()
        && tolerations.is_empty()
    {
        None
    } else {
        Some(NodeClaim {
            hard_node_affinity,
            node_selector: pod_spec.node_selector.clone(),
            tolerations,
        })
    };
    let mut total = Resource::default();
    for (i, container) in pod_spec.containers.iter().enumerate() {
        let field = format!("spec.containers[{i}].resources");
        total.add(&effective_requests(container.resources.as_ref(), &field)?);
    }
    for (i, container) in pod_spec.init_containers.iter().flatten().enumerate() {
        let field = format!("spec.initContainers[{i}].resources");
        total.set_max(&effective_requests(container.resources.as_ref(), &field)?);
    }
    if let Some(overhead) = &pod_spec.overhead {
        total.add(&parse_list(overhead, "spec.overhead")?);
    }
    let resource_request = total.into_list();
    if node_claim.is_none() && resource_request.is_none() {
        return Ok(None);
    }
    Ok(Some(ReplicaRequirements {
        node_claim,
        resource_request,
        ..ReplicaRequirements::default()
    }))
}

fn effective_requests(
    resources: Option<&ResourceRequirements>,
    field: &str,
) -> Result<ResourceList, InterpretError> {
    let Some(resources) = resources else {
        return Ok(ResourceList::new());
    };
    let mut list = parse_list(
        resources.requests.as_ref().unwrap_or(&BTreeMap::new()),
        field,
    )?;
    for (name, value) in parse_list(resources.limits.as_ref().unwrap_or(&BTreeMap::new()), field)? {
        list.entry(name).or_insert(value);
    }
    Ok(list)
}

/// Parses a `corev1.ResourceList`.
pub fn parse_list(
    list: &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    field: &str,
) -> Result<ResourceList, InterpretError> {
    list.iter()
        .map(|(name, q)| {
            Quantity::parse(&q.0)
                .map(|parsed| (name.clone(), parsed))
                .map_err(|source| InterpretError::Quantity {
                    field: format!("{field}.{name}"),
                    value: q.0.clone(),
                    source,
                })
        })
        .collect()
}

/// Karmada's `util.Resource` accumulator: cpu in millis, everything else in whole units, only
/// native and scalar (extended, hugepages, prefixed) resources.
#[derive(Debug, Default)]
struct Resource {
    milli_cpu: i64,
    memory: i64,
    ephemeral_storage: i64,
    pods: i64,
    scalar: BTreeMap<String, i64>,
}

impl Resource {
    fn slot(&mut self, name: &str) -> Option<&mut i64> {
        match name {
            "cpu" => Some(&mut self.milli_cpu),
            "memory" => Some(&mut self.memory),
            "ephemeral-storage" => Some(&mut self.ephemeral_storage),
            "pods" => Some(&mut self.pods),
            other if is_scalar_resource_name(other) => {
                Some(self.scalar.entry(other.to_owned()).or_default())
            }
            _ => None,
        }
    }

    fn value(name: &str, quantity: &Quantity) -> i64 {
        let v = if name == "cpu" {
            quantity.as_milli()
        } else {
            quantity.as_i64()
        };
        v.unwrap_or(i64::MAX)
    }

    fn add(&mut self, list: &ResourceList) {
        for (name, quantity) in list {
            let v = Self::value(name, quantity);
            if let Some(slot) = self.slot(name) {
                *slot = slot.saturating_add(v);
            }
        }
    }

    fn set_max(&mut self, list: &ResourceList) {
        for (name, quantity) in list {
            let v = Self::value(name, quantity);
            if let Some(slot) = self.slot(name) {
                *slot = (*slot).max(v);
            }
        }
    }

    fn into_list(self) -> Option<ResourceList> {
        let mut out = ResourceList::new();
        if self.milli_cpu > 0 {
            out.insert(
                "cpu".into(),
                Quantity::from_milli(self.milli_cpu, QuantityFormat::DecimalSI),
            );
        }
        if self.memory > 0 {
            out.insert(
                "memory".into(),
                Quantity::from_i64(self.memory, QuantityFormat::BinarySI),
            );
        }
        if self.ephemeral_storage > 0 {
            out.insert(
                "ephemeral-storage".into(),
                Quantity::from_i64(self.ephemeral_storage, QuantityFormat::BinarySI),
            );
        }
        if self.pods > 0 {
            out.insert(
                "pods".into(),
                Quantity::from_i64(self.pods, QuantityFormat::DecimalSI),
            );
        }
        for (name, v) in self.scalar {
            if v > 0 {
                let format = if name.starts_with("hugepages-") {
                    QuantityFormat::BinarySI
                } else {
                    QuantityFormat::DecimalSI
                };
                out.insert(name, Quantity::from_i64(v, format));
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// Kubernetes' `IsScalarResourceName`: extended (domain-prefixed, not `kubernetes.io/`, not
/// `requests.`), hugepages, prefixed native (`kubernetes.io/…`) or attachable volumes.
pub fn is_scalar_resource_name(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    let extended = !native && !name.starts_with("requests.");
    extended
        || name.starts_with("hugepages-")
        || name.contains("kubernetes.io/")
        || name.starts_with("attachable-volumes-")
}

#[cfg(test)]
mod tests;
