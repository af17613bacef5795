//! The accurate estimator's ResourceQuota rule: Karmada's scheduler-estimator plugin
//! `ResourceQuotaEstimator` (gate `ResourceQuotaEstimate`), run in process over a member's
//! ResourceQuotas. A binding whose replica requirements name a namespace (the detector names it
//! with the gate on) gets at most as many replicas in a member as every applicable quota of that
//! namespace still has room for: free = `status.hard − status.used` of the compute resources
//! (`cpu`/`requests.cpu`, `memory`/`requests.memory`, extended resources such as
//! `requests.nvidia.com/gpu`; `limits.*` are skipped, as the requirements carry requests only),
//! divided by the per-replica request. A quota applies when it has no scopes or one of its scope
//! selectors matches the requirements' priority class (`PriorityClass` scope; Karmada answers
//! "does not apply" for every other scope). Pod-count quotas are not counted, as in Karmada.
//!
//! With gate `SchedulingOvercommitProtection`, the footprints of assumed in-flight workloads of
//! the same namespace (that the quota's scopes select) are deducted from the free resources
//! first; a quota they overrun leaves room for nothing. Multi-template workloads are counted in
//! whole component sets: free ÷ what a set requests.
//!
//! Behaviour of Karmada's `pkg/estimator/server/framework/plugins/resourcequota`.

use std::collections::BTreeMap;

use flotilla_api::Quantity;
use flotilla_api::karmada::{Component, ReplicaRequirements, ResourceList};

use crate::assume::AssumedWorkload;
use k8s_openapi::api::core::v1::{ResourceQuota, ScopedResourceSelectorRequirement};

use super::{CompiledRequest, Resources};

/// No quota limits the replicas (Karmada's `noQuotaConstraint`).
pub const NO_QUOTA_CONSTRAINT: i32 = i32::MAX;

/// One ResourceQuota, digested: its scope selectors and free compute resources.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaEntry {
    /// The quota's namespace.
    pub namespace: String,
    /// `spec.scopes` (as `Exists` selectors) and `spec.scopeSelector.matchExpressions`.
    selectors: Vec<ScopedResourceSelectorRequirement>,
    /// Free resources by unprefixed name (`cpu` in millis, others in units); none when the
    /// quota constrains no compute resource (or its status is not reported yet).
    free: BTreeMap<String, i64>,
}

/// Kubernetes' `IsExtendedResourceName`: domain-prefixed, not `kubernetes.io/`, not a quota's
/// `requests.` name.
fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// The quota resource names Karmada's plugin considers (`matchingResources`).
fn is_matching(name: &str) -> bool {
    matches!(
        name,
        "cpu" | "memory" | "requests.cpu" | "requests.memory" | "limits.cpu" | "limits.memory"
    ) || is_extended(name)
        || name.strip_prefix("requests.").is_some_and(is_extended)
        || name.strip_prefix("limits.").is_some_and(is_extended)
}

fn parsed(
    list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    name: &str,
) -> Option<Quantity> {
    Quantity::parse(&list?.get(name)?.0).ok()
}

impl QuotaEntry {
    /// Digests `quota` (`None` without a namespace).
    pub fn new(quota: &ResourceQuota) -> Option<Self> {
        let namespace = quota.metadata.namespace.clone()?;
        let spec = quota.spec.as_ref();
        let mut selectors: Vec<ScopedResourceSelectorRequirement> = spec
            .and_then(|s| s.scopes.as_ref())
            .into_iter()
            .flatten()
            .map(|scope| ScopedResourceSelectorRequirement {
                scope_name: scope.clone(),
                operator: "Exists".to_owned(),
                values: None,
            })
            .collect();
        selectors.extend(
            spec.and_then(|s| s.scope_selector.as_ref())
                .and_then(|s| s.match_expressions.clone())
                .into_iter()
                .flatten(),
        );
        let status = quota.status.as_ref();
        let (hard, used) = (
            status.and_then(|s| s.hard.as_ref()),
            status.and_then(|s| s.used.as_ref()),
        );
        let mut free = BTreeMap::new();
        for name in hard.into_iter().flat_map(|h| h.keys()) {
            if !is_matching(name) || name.starts_with("limits.") {
                continue;
            }
            let (Some(hard_q), Some(used_q)) = (parsed(hard, name), parsed(used, name)) else {
                continue;
            };
            let unprefixed = name.strip_prefix("requests.").unwrap_or(name);
            let value = |q: &Quantity| {
                if unprefixed == "cpu" {
                    q.as_milli()
                } else {
                    q.as_i64()
                }
            };
            let (Some(hard_v), Some(used_v)) = (value(&hard_q), value(&used_q)) else {
                continue;
            };
            // `requests.cpu` and `cpu` are the same resource; Karmada keeps one of the two.
            free.insert(unprefixed.to_owned(), hard_v.saturating_sub(used_v));
        }
        Some(Self {
            namespace,
            selectors,
            free,
        })
    }

    /// Whether the quota counts pods of `priority_class` (no scopes: every pod).
    fn applies_to(&self, priority_class: &str) -> bool {
        self.selectors.is_empty()
            || self
                .selectors
                .iter()
                .any(|selector| scope_matches(selector, priority_class))
    }

    /// Replicas of `request` this quota leaves room for ([`NO_QUOTA_CONSTRAINT`] when it does
    /// not constrain them; never below 0), after the assumed components it selects.
    fn allowed(&self, request: &ResourceList, priority_class: &str, assumed: &[&Component]) -> i32 {
        if !self.applies_to(priority_class) || self.free.is_empty() {
            return NO_QUOTA_CONSTRAINT;
        }
        let Some(free) = self.free_after(assumed) else {
            return 0;
        };
        let constrained: ResourceList = request
            .iter()
            .filter(|(name, _)| free.contains_key(name.as_str()))
            .map(|(name, q)| (name.clone(), *q))
            .collect();
        if constrained.is_empty() {
            return NO_QUOTA_CONSTRAINT;
        }
        let allowed = CompiledRequest::new(Some(&constrained)).max_divided(&as_resources(&free));
        i32::try_from(allowed.max(0)).unwrap_or(NO_QUOTA_CONSTRAINT)
    }

    /// The free resources once the assumed components this quota selects are deducted; `None`
    /// when they overrun it (Karmada's `deductAssumedResources`).
    fn free_after(&self, assumed: &[&Component]) -> Option<BTreeMap<String, i64>> {
        let mut free = self.free.clone();
        let selected: Vec<Component> = assumed
            .iter()
            .filter(|c| self.selects(c))
            .map(|c| (*c).clone())
            .collect();
        let (_, demands) = crate::assume::demands(&selected);
        for (name, amount) in demands {
            if let Some(left) = free.get_mut(&name) {
                *left = left.saturating_sub(amount);
                if *left < 0 {
                    return None;
                }
            }
        }
        Some(free)
    }

    /// Whether the quota counts a component (no scopes: every one; else by its priority class).
    fn selects(&self, component: &Component) -> bool {
        component.replica_requirements.is_some()
            && (self.selectors.is_empty()
                || self.applies_to(crate::assume::priority_class(component)))
    }

    /// Whole sets of `components` this quota leaves room for (Karmada's
    /// `evaluateComponentsAgainstQuota`).
    fn allowed_sets(&self, components: &[Component], assumed: &[&Component]) -> i32 {
        let matched: Vec<Component> = components
            .iter()
            .filter(|c| self.selects(c))
            .cloned()
            .collect();
        if matched.is_empty() || self.free.is_empty() {
            return NO_QUOTA_CONSTRAINT;
        }
        let Some(free) = self.free_after(assumed) else {
            return 0;
        };
        let (_, per_set) = crate::assume::demands(&matched);
        let mut sets = i64::MAX;
        for (name, need) in per_set {
            let Some(left) = free.get(&name) else {
                continue;
            };
            if need <= 0 {
                continue;
            }
            sets = sets.min(left / need);
        }
        if sets == i64::MAX {
            return NO_QUOTA_CONSTRAINT;
        }
        i32::try_from(sets.max(0)).unwrap_or(NO_QUOTA_CONSTRAINT)
    }
}

fn as_resources(free: &BTreeMap<String, i64>) -> Resources {
    let mut resources = Resources {
        pods: i64::MAX,
        ..Resources::default()
    };
    for (name, value) in free {
        match name.as_str() {
            "cpu" => resources.milli_cpu = *value,
            "memory" => resources.memory = *value,
            other => resources.scalar.push((other.to_owned(), *value)),
        }
    }
    resources.scalar.sort();
    resources
}

/// The assumed components of `namespace` with requirements (Karmada's
/// `flattenAssumedWorkloadComponents`).
fn assumed_in<'a>(assumed: &'a [AssumedWorkload], namespace: &str) -> Vec<&'a Component> {
    assumed
        .iter()
        .filter(|w| w.namespace == namespace)
        .flat_map(|w| &w.components)
        .filter(|c| c.replica_requirements.is_some())
        .collect()
}

/// Karmada's `matchesScope`: only the `PriorityClass` scope can match a replica.
fn scope_matches(selector: &ScopedResourceSelectorRequirement, priority_class: &str) -> bool {
    if selector.scope_name != "PriorityClass" {
        return false;
    }
    let values = selector.values.as_deref().unwrap_or_default();
    let has = !priority_class.is_empty();
    match selector.operator.as_str() {
        "Exists" => has,
        "DoesNotExist" => !has,
        "In" => has && values.iter().any(|v| v == priority_class),
        "NotIn" => !has || !values.iter().any(|v| v == priority_class),
        _ => false,
    }
}

/// The replicas every applicable quota in the requirements' namespace leaves room for
/// ([`NO_QUOTA_CONSTRAINT`] without a namespace, a request or an applicable quota).
pub fn max_replicas(quotas: &[QuotaEntry], requirements: Option<&ReplicaRequirements>) -> i32 {
    max_replicas_assuming(quotas, requirements, &[])
}

/// [`max_replicas`] after the assumed in-flight workloads of the namespace.
pub fn max_replicas_assuming(
    quotas: &[QuotaEntry],
    requirements: Option<&ReplicaRequirements>,
    assumed: &[AssumedWorkload],
) -> i32 {
    let Some(requirements) = requirements.filter(|r| !r.namespace.is_empty()) else {
        return NO_QUOTA_CONSTRAINT;
    };
    let Some(request) = requirements.resource_request.as_ref() else {
        return NO_QUOTA_CONSTRAINT;
    };
    let assumed = assumed_in(assumed, &requirements.namespace);
    quotas
        .iter()
        .filter(|q| q.namespace == requirements.namespace)
        .map(|q| q.allowed(request, &requirements.priority_class_name, &assumed))
        .min()
        .unwrap_or(NO_QUOTA_CONSTRAINT)
}

/// Whole sets of `components` every quota of `namespace` leaves room for, after the assumed
/// in-flight workloads ([`NO_QUOTA_CONSTRAINT`] without a namespace or a constraining quota).
pub fn max_sets(
    quotas: &[QuotaEntry],
    namespace: &str,
    components: &[Component],
    assumed: &[AssumedWorkload],
) -> i32 {
    if namespace.is_empty() || components.is_empty() {
        return NO_QUOTA_CONSTRAINT;
    }
    let assumed = assumed_in(assumed, namespace);
    quotas
        .iter()
        .filter(|q| q.namespace == namespace)
        .map(|q| q.allowed_sets(components, &assumed))
        .min()
        .unwrap_or(NO_QUOTA_CONSTRAINT)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn quota(value: serde_json::Value) -> QuotaEntry {
        let quota: ResourceQuota = serde_json::from_value(value).expect("a quota");
        QuotaEntry::new(&quota).expect("namespaced")
    }

    fn requirements(
        namespace: &str,
        priority: &str,
        request: serde_json::Value,
    ) -> ReplicaRequirements {
        serde_json::from_value(json!({
            "namespace": namespace, "priorityClassName": priority, "resourceRequest": request,
        }))
        .expect("requirements")
    }

    #[test]
    fn free_requests_divided_by_the_replicas_request() {
        // Karmada's e2e: 0.03 CPU of quota, 10m per replica.
        let q = quota(json!({"metadata": {"name": "q", "namespace": "ns"},
            "spec": {"hard": {"requests.cpu": "0.03"}},
            "status": {"hard": {"requests.cpu": "0.03"}, "used": {"requests.cpu": "0"}}}));
        let r = requirements("ns", "", json!({"cpu": "10m", "memory": "16Mi"}));
        assert_eq!(max_replicas(std::slice::from_ref(&q), Some(&r)), 3);
        // Another namespace, or no namespace (gate off): no constraint.
        let other = requirements("elsewhere", "", json!({"cpu": "10m"}));
        assert_eq!(
            max_replicas(std::slice::from_ref(&q), Some(&other)),
            NO_QUOTA_CONSTRAINT
        );
        let unnamed = requirements("", "", json!({"cpu": "10m"}));
        assert_eq!(max_replicas(&[q], Some(&unnamed)), NO_QUOTA_CONSTRAINT);
    }

    #[test]
    fn used_and_the_tightest_quota_count_and_nothing_goes_negative() {
        let a = quota(json!({"metadata": {"name": "a", "namespace": "ns"},
            "status": {"hard": {"cpu": "2", "limits.cpu": "1m", "requests.memory": "1Gi"},
                "used": {"cpu": "500m", "limits.cpu": "0", "requests.memory": "512Mi"}}}));
        let b = quota(json!({"metadata": {"name": "b", "namespace": "ns"},
            "status": {"hard": {"requests.nvidia.com/gpu": "4", "pods": "1"},
                "used": {"requests.nvidia.com/gpu": "3", "pods": "1"}}}));
        let r = requirements(
            "ns",
            "",
            json!({"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"}),
        );
        // a: cpu 1500m/100m = 15, memory 512Mi/64Mi = 8 (limits skipped); b: 1 GPU left (pods
        // not counted).
        assert_eq!(max_replicas(std::slice::from_ref(&a), Some(&r)), 8);
        assert_eq!(max_replicas(&[a, b.clone()], Some(&r)), 1);
        let over = quota(json!({"metadata": {"name": "over", "namespace": "ns"},
            "status": {"hard": {"requests.cpu": "1"}, "used": {"requests.cpu": "2"}}}));
        assert_eq!(max_replicas(&[over], Some(&r)), 0);
        // A quota whose status is not reported yet does not constrain.
        let fresh = quota(json!({"metadata": {"name": "fresh", "namespace": "ns"},
            "spec": {"hard": {"requests.cpu": "1"}}}));
        assert_eq!(max_replicas(&[fresh], Some(&r)), NO_QUOTA_CONSTRAINT);
        // A request the quota does not name is not constrained by it.
        let cpu_only = requirements("ns", "", json!({"nvidia.com/gpu": "1"}));
        let a = quota(json!({"metadata": {"name": "a", "namespace": "ns"},
            "status": {"hard": {"cpu": "1"}, "used": {"cpu": "0"}}}));
        assert_eq!(max_replicas(&[a], Some(&cpu_only)), NO_QUOTA_CONSTRAINT);
    }

    #[test]
    fn scoped_quotas_apply_by_priority_class_only() {
        let scoped = |expression: serde_json::Value| {
            quota(json!({"metadata": {"name": "s", "namespace": "ns"},
                "spec": {"scopeSelector": {"matchExpressions": [expression]}},
                "status": {"hard": {"requests.cpu": "1"}, "used": {"requests.cpu": "0"}}}))
        };
        let request = json!({"cpu": "500m"});
        let high = requirements("ns", "high", request.clone());
        let none = requirements("ns", "", request);
        let in_high =
            scoped(json!({"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}));
        assert_eq!(max_replicas(std::slice::from_ref(&in_high), Some(&high)), 2);
        assert_eq!(max_replicas(&[in_high], Some(&none)), NO_QUOTA_CONSTRAINT);
        let exists = scoped(json!({"scopeName": "PriorityClass", "operator": "Exists"}));
        assert_eq!(max_replicas(std::slice::from_ref(&exists), Some(&high)), 2);
        assert_eq!(max_replicas(&[exists], Some(&none)), NO_QUOTA_CONSTRAINT);
        let not_in =
            scoped(json!({"scopeName": "PriorityClass", "operator": "NotIn", "values": ["high"]}));
        assert_eq!(max_replicas(std::slice::from_ref(&not_in), Some(&none)), 2);
        assert_eq!(max_replicas(&[not_in], Some(&high)), NO_QUOTA_CONSTRAINT);
        // Other scopes never match a replica (Karmada cannot tell its QoS or deadline).
        let best_effort = quota(json!({"metadata": {"name": "b", "namespace": "ns"},
            "spec": {"scopes": ["NotBestEffort"]},
            "status": {"hard": {"requests.cpu": "1"}, "used": {"requests.cpu": "0"}}}));
        assert_eq!(
            max_replicas(&[best_effort], Some(&high)),
            NO_QUOTA_CONSTRAINT
        );
    }

    fn flink(namespace: &str) -> AssumedWorkload {
        AssumedWorkload {
            namespace: namespace.into(),
            components: serde_json::from_value(json!([
                {"name": "jobmanager", "replicas": 1,
                    "replicaRequirements": {"resourceRequest": {"cpu": "50m"}}},
                {"name": "taskmanager", "replicas": 1,
                    "replicaRequirements": {"resourceRequest": {"cpu": "100m"}}}
            ]))
            .expect("components"),
        }
    }

    #[test]
    fn assumed_workloads_of_the_namespace_use_up_the_quota() {
        // Karmada's estimator_test.go: cpu=1, nothing used, 150m per FlinkDeployment.
        let q = quota(json!({"metadata": {"name": "q", "namespace": "ns"},
            "status": {"hard": {"cpu": "1"}, "used": {"cpu": "0"}}}));
        let quotas = std::slice::from_ref(&q);
        let components = flink("ns").components;
        assert_eq!(max_sets(quotas, "ns", &components, &[]), 6);
        let six: Vec<AssumedWorkload> = (0..6).map(|_| flink("ns")).collect();
        assert_eq!(max_sets(quotas, "ns", &components, &six[..5]), 1);
        assert_eq!(max_sets(quotas, "ns", &components, &six), 0);
        // Another namespace's footprints do not count.
        let elsewhere: Vec<AssumedWorkload> = (0..6).map(|_| flink("other")).collect();
        assert_eq!(max_sets(quotas, "ns", &components, &elsewhere), 6);
        // A single-template Deployment of 200m: 100m left after six → 0 replicas.
        let r = requirements("ns", "", json!({"cpu": "200m"}));
        assert_eq!(max_replicas_assuming(quotas, Some(&r), &six[..4]), 2);
        assert_eq!(max_replicas_assuming(quotas, Some(&r), &six), 0);
        // Footprints beyond the quota leave nothing.
        let seven: Vec<AssumedWorkload> = (0..7).map(|_| flink("ns")).collect();
        assert_eq!(max_replicas_assuming(quotas, Some(&r), &seven), 0);
    }
}
