//! `policy.karmada.io/v1alpha1` `FederatedResourceQuota` and the pure quota arithmetic the
//! controllers and the API server's ResourceBinding admission share: a binding's resource usage
//! (Karmada's `CalculateResourceUsage`), sums, and the check of a usage change against
//! `spec.overall` with Karmada's refusal message.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::work::ResourceBindingSpec;
use super::{ApiVersion, Kind, ResourceList, karmada_resource};
use crate::Quantity;

/// Label on a quota's Works: the FederatedResourceQuota's namespace.
pub const QUOTA_NAMESPACE_LABEL: &str = "federatedresourcequota.karmada.io/namespace";
/// Label on a quota's Works: the FederatedResourceQuota's name.
pub const QUOTA_NAME_LABEL: &str = "federatedresourcequota.karmada.io/name";
/// `Status.reason` of a binding write refused for quota (and the `Scheduled` condition's reason).
pub const QUOTA_EXCEEDED_REASON: &str = "QuotaExceeded";

/// A namespace's quota across clusters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederatedResourceQuota {
    /// Always `policy.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<FederatedResourceQuota>,
    /// Always `FederatedResourceQuota`.
    #[serde(default)]
    pub kind: Kind<FederatedResourceQuota>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The limits.
    #[serde(default)]
    pub spec: FederatedResourceQuotaSpec,
    /// What is enforced and used.
    #[serde(default)]
    pub status: FederatedResourceQuotaStatus,
}
karmada_resource!(
    FederatedResourceQuota,
    group = "policy.karmada.io",
    version = "v1alpha1",
    kind = "FederatedResourceQuota",
    plural = "federatedresourcequotas",
    scope = NamespaceResourceScope
);

/// `FederatedResourceQuota.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederatedResourceQuotaSpec {
    /// The limits for the whole federation.
    #[serde(default)]
    pub overall: ResourceList,
    /// A ResourceQuota of `hard` for each listed cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_assignments: Vec<StaticClusterAssignment>,
}

impl FederatedResourceQuotaSpec {
    /// The `hard` assigned to `cluster` (the first assignment naming it), if any.
    pub fn hard_for(&self, cluster: &str) -> Option<&ResourceList> {
        self.static_assignments
            .iter()
            .find(|a| a.cluster_name == cluster)
            .map(|a| &a.hard)
    }
}

/// One cluster's ResourceQuota.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaticClusterAssignment {
    /// The cluster.
    #[serde(default)]
    pub cluster_name: String,
    /// The member ResourceQuota's `spec.hard`.
    #[serde(default)]
    pub hard: ResourceList,
}

/// `FederatedResourceQuota.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederatedResourceQuotaStatus {
    /// The enforced `spec.overall`.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub overall: ResourceList,
    /// What is used of `overall`.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub overall_used: ResourceList,
    /// The member ResourceQuotas' status, by cluster name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregated_status: Vec<ClusterQuotaStatus>,
}

/// One member ResourceQuota's status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQuotaStatus {
    /// The cluster.
    pub cluster_name: String,
    /// The member's enforced limits.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub hard: ResourceList,
    /// The member's usage.
    #[serde(default, skip_serializing_if = "ResourceList::is_empty")]
    pub used: ResourceList,
}

/// `quantity × times`, in `quantity`'s format (`None` on overflow).
pub fn multiply(quantity: &Quantity, times: i64) -> Option<Quantity> {
    let mut result = Quantity::zero_with(quantity.format());
    let mut addend = *quantity;
    let mut n = times.unsigned_abs();
    while n > 0 {
        if n & 1 == 1 {
            result = result.checked_add(&addend)?;
        }
        n >>= 1;
        if n > 0 {
            addend = addend.checked_add(&addend)?;
        }
    }
    Some(if times < 0 { -result } else { result })
}

/// Adds `other` into `into` (a resource absent from `into` is taken as it is). Sums that overflow
/// are left as they were.
pub fn add_into(into: &mut ResourceList, other: &ResourceList) {
    for (name, quantity) in other {
        match into.get_mut(name) {
            Some(sum) => {
                if let Some(added) = sum.checked_add(quantity) {
                    *sum = added;
                }
            }
            None => {
                into.insert(name.clone(), *quantity);
            }
        }
    }
}

/// What a binding's scheduling result uses (Karmada's `CalculateResourceUsage`): with
/// components, each component's requests × its replicas, summed, × the number of target
/// clusters; otherwise the per-replica requests × the replicas of `spec.clusters`. Zero
/// quantities are left out.
pub fn binding_usage(spec: &ResourceBindingSpec) -> ResourceList {
    let mut usage = ResourceList::new();
    if !spec.components.is_empty() {
        let clusters = spec.clusters.len() as i64;
        if clusters == 0 {
            return usage;
        }
        let mut per_set = ResourceList::new();
        for component in &spec.components {
            if component.replicas == 0 {
                continue;
            }
            let requests: ResourceList = component
                .replica_requirements
                .as_ref()
                .and_then(|r| r.get("resourceRequest"))
                .and_then(|r| serde_json::from_value(r.clone()).ok())
                .unwrap_or_default();
            let mut scaled = ResourceList::new();
            for (name, quantity) in requests.iter().filter(|(_, q)| !q.is_zero()) {
                if let Some(total) = multiply(quantity, component.replicas.into()) {
                    scaled.insert(name.clone(), total);
                }
            }
            add_into(&mut per_set, &scaled);
        }
        for (name, quantity) in per_set.iter().filter(|(_, q)| !q.is_zero()) {
            if let Some(total) = multiply(quantity, clusters) {
                usage.insert(name.clone(), total);
            }
        }
        return usage;
    }
    let Some(requests) = spec
        .replica_requirements
        .as_ref()
        .and_then(|r| r.resource_request.as_ref())
    else {
        return usage;
    };
    let replicas: i64 = spec.clusters.iter().map(|c| i64::from(c.replicas)).sum();
    if replicas == 0 {
        return usage;
    }
    for (name, quantity) in requests.iter().filter(|(_, q)| !q.is_zero()) {
        if let Some(total) = multiply(quantity, replicas) {
            usage.insert(name.clone(), total);
        }
    }
    usage
}

/// `new - old` per resource, zero differences left out.
pub fn usage_delta(new: &ResourceList, old: &ResourceList) -> ResourceList {
    let mut delta = ResourceList::new();
    for name in new.keys().chain(old.keys()) {
        if delta.contains_key(name) {
            continue;
        }
        let zero = Quantity::default();
        let after = new.get(name).unwrap_or(&zero);
        let before = old.get(name).unwrap_or(&zero);
        if let Some(d) = after.checked_sub(before).filter(|d| !d.is_zero()) {
            delta.insert(name.clone(), d);
        }
    }
    delta
}

/// Whether an update of a binding from `old` to `new` can change its usage (Karmada's
/// `isQuotaRelevantFieldChanged`): the per-replica requests, the total of scheduled replicas,
/// the set of target clusters (with components) or the components.
pub fn quota_relevant_change(old: &ResourceBindingSpec, new: &ResourceBindingSpec) -> bool {
    let requests = |spec: &ResourceBindingSpec| {
        spec.replica_requirements
            .as_ref()
            .and_then(|r| r.resource_request.clone())
            .unwrap_or_default()
    };
    if requests(old) != requests(new) {
        return true;
    }
    let scheduled = |spec: &ResourceBindingSpec| -> i64 {
        spec.clusters.iter().map(|c| i64::from(c.replicas)).sum()
    };
    if scheduled(old) != scheduled(new) {
        return true;
    }
    let components_present = !old.components.is_empty() || !new.components.is_empty();
    if components_present {
        let names = |spec: &ResourceBindingSpec| {
            spec.clusters
                .iter()
                .map(|c| c.name.clone())
                .collect::<std::collections::BTreeSet<_>>()
        };
        if old.clusters.len() != new.clusters.len() || names(old) != names(new) {
            return true;
        }
    }
    old.components.len() != new.components.len()
        || old.components.iter().zip(&new.components).any(|(a, b)| {
            a.replicas != b.replicas
                || a.replica_requirements
                    .as_ref()
                    .map(|r| &r["resourceRequest"])
                    != b.replica_requirements
                        .as_ref()
                        .map(|r| &r["resourceRequest"])
        })
}

/// `usage` restricted to the resources `overall` limits.
pub fn limited_to(usage: &ResourceList, overall: &ResourceList) -> ResourceList {
    usage
        .iter()
        .filter(|(name, _)| overall.contains_key(*name))
        .map(|(name, quantity)| (name.clone(), *quantity))
        .collect()
}

/// Checks a binding's usage change against one quota: `Ok(None)` when the change does not
/// touch the resources it limits, `Ok(Some(total))` with the quota's new usage when it fits,
/// `Err(message)` (Karmada's wording) when some resource would exceed `spec.overall`.
/// `used` is what the namespace uses before the change.
pub fn check_quota(
    quota: &FederatedResourceQuota,
    used: &ResourceList,
    delta: &ResourceList,
) -> Result<Option<ResourceList>, String> {
    let overall = &quota.spec.overall;
    if overall.is_empty() {
        return Ok(None);
    }
    let delta = limited_to(delta, overall);
    if delta.values().all(Quantity::is_zero) {
        return Ok(None);
    }
    let mut total = limited_to(used, overall);
    add_into(&mut total, &delta);
    for (name, requested) in &total {
        if requested.is_zero() {
            continue;
        }
        if let Some(limit) = overall.get(name)
            && requested > limit
        {
            return Err(format!(
                "FederatedResourceQuota({}/{}) exceeded for resource {name}: requested sum {requested}, limit {limit}.",
                quota.metadata.namespace.as_deref().unwrap_or(""),
                quota.metadata.name.as_deref().unwrap_or(""),
            ));
        }
    }
    Ok(Some(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Karmada's own `CalculateResourceUsage` cases, restated.
    mod karmada_usage;
    use crate::karmada::work::{Component, ReplicaRequirements, TargetCluster};

    fn list(entries: &[(&str, &str)]) -> ResourceList {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Quantity::parse(v).expect("quantity")))
            .collect()
    }

    fn spec(requests: &[(&str, &str)], clusters: &[(&str, i32)]) -> ResourceBindingSpec {
        ResourceBindingSpec {
            replica_requirements: Some(ReplicaRequirements {
                resource_request: Some(list(requests)),
                ..ReplicaRequirements::default()
            }),
            clusters: clusters
                .iter()
                .map(|(n, r)| TargetCluster::new(*n, *r))
                .collect(),
            ..ResourceBindingSpec::default()
        }
    }

    fn quota(overall: &[(&str, &str)]) -> FederatedResourceQuota {
        let mut quota = FederatedResourceQuota::default();
        quota.metadata.namespace = Some("shop".into());
        quota.metadata.name = Some("team".into());
        quota.spec.overall = list(overall);
        quota
    }

    #[test]
    fn usage_is_requests_times_scheduled_replicas() {
        let usage = binding_usage(&spec(
            &[("cpu", "10m"), ("memory", "0")],
            &[("a", 2), ("b", 1)],
        ));
        assert_eq!(usage, list(&[("cpu", "30m")]));
        assert_eq!(usage["cpu"].to_string(), "30m");
        // Not scheduled yet: nothing used.
        assert!(binding_usage(&spec(&[("cpu", "10m")], &[])).is_empty());
    }

    #[test]
    fn component_usage_is_per_set_times_target_clusters() {
        let component = |name: &str, replicas: i32, cpu: &str, memory: &str| Component {
            name: name.into(),
            replicas,
            replica_requirements: Some(
                serde_json::json!({"resourceRequest": {"cpu": cpu, "memory": memory}}),
            ),
        };
        // Karmada's e2e FlinkDeployment: a jobmanager (1 × 50m/100m) and a taskmanager
        // (1 × 100m/100m) on one cluster use 150m cpu and 200m memory.
        let spec = ResourceBindingSpec {
            components: vec![
                component("jobmanager", 1, "50m", "100m"),
                component("taskmanager", 1, "100m", "100m"),
            ],
            clusters: vec![TargetCluster::new("a", 0)],
            ..ResourceBindingSpec::default()
        };
        assert_eq!(
            binding_usage(&spec),
            list(&[("cpu", "150m"), ("memory", "200m")])
        );
    }

    #[test]
    fn multiply_keeps_the_format_and_handles_large_counts() {
        let q = Quantity::parse("100Mi").expect("quantity");
        assert_eq!(multiply(&q, 3).expect("fits").to_string(), "300Mi");
        assert_eq!(
            multiply(&Quantity::parse("1m").expect("q"), 1000)
                .expect("fits")
                .to_string(),
            "1"
        );
        assert_eq!(multiply(&q, 0).expect("fits"), Quantity::default());
    }

    #[test]
    fn a_change_beyond_overall_is_refused_with_karmadas_message() {
        let quota = quota(&[("cpu", "10m"), ("memory", "100Mi")]);
        let used = list(&[("cpu", "10m")]);
        let error = check_quota(&quota, &used, &list(&[("cpu", "10m")])).expect_err("over");
        assert_eq!(
            error,
            "FederatedResourceQuota(shop/team) exceeded for resource cpu: requested sum 20m, limit 10m."
        );
        // Within the limit: the new usage.
        assert_eq!(
            check_quota(&quota, &ResourceList::new(), &list(&[("cpu", "10m")])),
            Ok(Some(list(&[("cpu", "10m")])))
        );
        // A resource the quota does not limit is not checked.
        assert_eq!(
            check_quota(&quota, &used, &list(&[("nvidia.com/gpu", "1")])),
            Ok(None)
        );
        // A quota without overall limits nothing.
        assert_eq!(
            check_quota(&self::quota(&[]), &used, &list(&[("cpu", "1")])),
            Ok(None)
        );
    }

    #[test]
    fn a_scale_down_that_stays_over_the_limit_is_still_refused() {
        // Karmada checks the new total, whatever the sign of the change.
        let quota = quota(&[("cpu", "10m")]);
        let used = list(&[("cpu", "40m")]);
        assert!(check_quota(&quota, &used, &list(&[("cpu", "-10m")])).is_err());
        assert!(check_quota(&quota, &used, &list(&[("cpu", "-30m")])).is_ok());
    }

    #[test]
    fn only_usage_fields_make_an_update_relevant() {
        let old = spec(&[("cpu", "10m")], &[("a", 1)]);
        let mut new = old.clone();
        new.conflict_resolution = "Overwrite".into();
        assert!(!quota_relevant_change(&old, &new));
        // Moving the replica to another cluster does not change the total.
        new.clusters = vec![TargetCluster::new("b", 1)];
        assert!(!quota_relevant_change(&old, &new));
        new.clusters = vec![TargetCluster::new("b", 2)];
        assert!(quota_relevant_change(&old, &new));
        let raised = spec(&[("cpu", "20m")], &[("a", 1)]);
        assert!(quota_relevant_change(&old, &raised));
    }

    #[test]
    fn delta_leaves_out_unchanged_resources() {
        let delta = usage_delta(
            &list(&[("cpu", "20m"), ("memory", "1Gi")]),
            &list(&[("cpu", "10m"), ("memory", "1Gi"), ("pods", "1")]),
        );
        assert_eq!(delta, list(&[("cpu", "10m"), ("pods", "-1")]));
    }

    #[test]
    fn status_serializes_as_karmada_does() {
        let mut quota = quota(&[("cpu", "1")]);
        quota.status.aggregated_status.push(ClusterQuotaStatus {
            cluster_name: "a".into(),
            hard: list(&[("cpu", "1")]),
            used: ResourceList::new(),
        });
        let json = serde_json::to_value(&quota.status).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"aggregatedStatus": [{"clusterName": "a", "hard": {"cpu": "1"}}]})
        );
    }
}
