//! Karmada's `ClusterMatches`: whether a cluster satisfies a `ClusterAffinity` (exclusions,
//! label selector, field selector over provider/region/zones, cluster names; all ANDed).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeSelectorRequirement;

use super::cluster::Cluster;
use super::policy::ClusterAffinity;
use crate::selector::label::{LabelSelector, Operator, Requirement};

/// Field key matched against `spec.provider`.
pub const PROVIDER_FIELD: &str = "provider";
/// Field key matched against `spec.region`.
pub const REGION_FIELD: &str = "region";
/// Field key matched against `spec.zones`.
pub const ZONE_FIELD: &str = "zone";

/// Whether `cluster` matches `affinity`. Invalid selectors match nothing, as in Karmada.
pub fn cluster_matches(cluster: &Cluster, affinity: &ClusterAffinity) -> bool {
    CompiledAffinity::new(affinity).matches(cluster)
}

/// A `ClusterAffinity` with its selectors parsed once, for matching many clusters.
#[derive(Debug, Clone)]
pub struct CompiledAffinity<'a> {
    affinity: &'a ClusterAffinity,
    /// `None` = no label selector; `Some(None)` = an invalid one (matches nothing).
    labels: Option<Option<LabelSelector>>,
    zones: Vec<&'a NodeSelectorRequirement>,
    /// `None` = an invalid field requirement (matches nothing).
    fields: Option<Vec<Requirement>>,
}

impl<'a> CompiledAffinity<'a> {
    /// Parses the selectors of `affinity`.
    pub fn new(affinity: &'a ClusterAffinity) -> Self {
        let labels = affinity
            .label_selector
            .as_ref()
            .map(|s| LabelSelector::try_from(s).ok());
        let mut zones = Vec::new();
        let mut others = Vec::new();
        for expression in affinity
            .field_selector
            .iter()
            .flat_map(|f| &f.match_expressions)
        {
            if expression.key == ZONE_FIELD {
                zones.push(expression);
            } else {
                others.push(expression);
            }
        }
        let fields = node_selector_requirements(others.into_iter());
        Self {
            affinity,
            labels,
            zones,
            fields,
        }
    }

    /// Whether `cluster` matches.
    pub fn matches(&self, cluster: &Cluster) -> bool {
        let affinity = self.affinity;
        let name = cluster.name();
        if affinity.exclude.iter().any(|n| n == name) {
            return false;
        }
        match &self.labels {
            None => {}
            Some(None) => return false,
            Some(Some(selector)) => {
                let empty = BTreeMap::new();
                if !selector.matches(cluster.metadata.labels.as_ref().unwrap_or(&empty)) {
                    return false;
                }
            }
        }
        if !self
            .zones
            .iter()
            .all(|z| zones_match(z, &cluster.spec.zones))
        {
            return false;
        }
        let Some(fields) = &self.fields else {
            return false;
        };
        let lookup = |key: &str| match key {
            PROVIDER_FIELD if !cluster.spec.provider.is_empty() => {
                Some(cluster.spec.provider.as_str())
            }
            REGION_FIELD if !cluster.spec.region.is_empty() => Some(cluster.spec.region.as_str()),
            _ => None,
        };
        if !fields.iter().all(|r| r.matches_with(lookup)) {
            return false;
        }
        affinity.cluster_names.is_empty() || affinity.cluster_names.iter().any(|n| n == name)
    }
}

/// `zone` expressions against `spec.zones`: In = some zone listed (false without zones); NotIn =
/// no zone listed (true without zones); Exists / DoesNotExist = zones non-empty / empty; any
/// other operator never matches.
fn zones_match(expression: &NodeSelectorRequirement, zones: &[String]) -> bool {
    let values = expression.values.as_deref().unwrap_or_default();
    match expression.operator.as_str() {
        "In" => zones.iter().any(|z| values.contains(z)),
        "NotIn" => !zones.iter().any(|z| values.contains(z)),
        "Exists" => !zones.is_empty(),
        "DoesNotExist" => zones.is_empty(),
        _ => false,
    }
}

/// Kubernetes' `NodeSelectorRequirementsAsSelector`: `None` when any requirement is invalid.
pub fn node_selector_requirements<'a>(
    expressions: impl Iterator<Item = &'a NodeSelectorRequirement>,
) -> Option<Vec<Requirement>> {
    expressions
        .map(|e| {
            let operator = match e.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                "Gt" => Operator::GreaterThan,
                "Lt" => Operator::LessThan,
                _ => return None,
            };
            Requirement::new(e.key.clone(), operator, e.values.iter().flatten().cloned()).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests;
