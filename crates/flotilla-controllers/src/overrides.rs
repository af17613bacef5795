//! OverridePolicy and ClusterOverridePolicy: which policies apply to a resource going to a
//! cluster, in Karmada's order, and what each overrider does (`overridemanager`). Pure: the
//! binding and namespace controllers call [`apply_overrides`] on a copy of the template.
//!
//! Order: every matching ClusterOverridePolicy, then (namespaced resources) every matching
//! OverridePolicy of the resource's namespace; within each set by implicit selector priority
//! ascending (match-all, label selector, name; no selectors = match-all), ties by name, so the
//! more specific policy is applied later and wins. Within one rule: image → command → args →
//! labels → annotations → field → plaintext.

mod go_json;
mod image;
mod ops;

use flotilla_api::karmada::{
    Cluster, ClusterOverridePolicy, OverridePolicy, OverridePolicyShadow, OverrideSpec, Overriders,
    affinity::cluster_matches,
};
use serde_json::Value;

use crate::detector::matching::{ImplicitPriority, selectors_priority};

pub use image::{ImageComponents, ImageError, ReferenceError};

/// Annotation on a Work: the OverridePolicies applied (JSON list of `{policyName, overriders}`).
pub const ANNOTATION_APPLIED_OVERRIDES: &str = "policy.karmada.io/applied-overrides";
/// Annotation on a Work: the ClusterOverridePolicies applied.
pub const ANNOTATION_APPLIED_CLUSTER_OVERRIDES: &str =
    "policy.karmada.io/applied-cluster-overrides";

/// Why an override could not be applied (the Work is not written; the binding reports it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("policy {policy}: {message}")]
    Apply {
        policy: String,
        /// A ClusterOverridePolicy (else an OverridePolicy of the object's namespace).
        cluster_policy: bool,
        message: String,
    },
}

/// What was applied, for the Work's annotations (each list sorted by policy name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppliedOverrides {
    pub cluster: Vec<OverridePolicyShadow>,
    pub namespaced: Vec<OverridePolicyShadow>,
}

impl AppliedOverrides {
    /// The annotation values (`None` when nothing of that kind applied), written as Go's
    /// `encoding/json` writes Karmada's types.
    pub fn annotations(&self) -> [(&'static str, Option<String>); 2] {
        let render =
            |list: &[OverridePolicyShadow]| (!list.is_empty()).then(|| go_json::shadows(list));
        [
            (ANNOTATION_APPLIED_CLUSTER_OVERRIDES, render(&self.cluster)),
            (ANNOTATION_APPLIED_OVERRIDES, render(&self.namespaced)),
        ]
    }
}

/// A policy of either kind, as the override manager sees it.
#[derive(Debug, Clone, Copy)]
pub struct PolicyRef<'a> {
    pub name: &'a str,
    pub spec: &'a OverrideSpec,
    pub deleting: bool,
}

impl<'a> From<&'a OverridePolicy> for PolicyRef<'a> {
    fn from(policy: &'a OverridePolicy) -> Self {
        Self {
            name: policy.metadata.name.as_deref().unwrap_or_default(),
            spec: &policy.spec,
            deleting: policy.metadata.deletion_timestamp.is_some(),
        }
    }
}

impl<'a> From<&'a ClusterOverridePolicy> for PolicyRef<'a> {
    fn from(policy: &'a ClusterOverridePolicy) -> Self {
        Self {
            name: policy.metadata.name.as_deref().unwrap_or_default(),
            spec: &policy.spec,
            deleting: policy.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// The policies of one set that select `object`, ordered as Karmada applies them.
pub fn matching_policies<'a>(
    object: &Value,
    policies: impl IntoIterator<Item = PolicyRef<'a>>,
) -> Vec<PolicyRef<'a>> {
    let mut matched: Vec<(ImplicitPriority, PolicyRef<'a>)> = policies
        .into_iter()
        .filter(|p| !p.deleting)
        .filter_map(|p| {
            if p.spec.resource_selectors.is_empty() {
                return Some((ImplicitPriority::MatchAll, p));
            }
            let priority = selectors_priority(object, &p.spec.resource_selectors);
            (priority > ImplicitPriority::Mismatch).then_some((priority, p))
        })
        .collect();
    matched.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(b.1.name)));
    matched.into_iter().map(|(_, p)| p).collect()
}

/// The overriders of `policy` for `cluster`: one entry per matching rule (the deprecated
/// `targetCluster` + `overriders` pair counts as one rule, also when it is empty).
pub fn overriders_for(policy: PolicyRef<'_>, cluster: &Cluster) -> Vec<OverridePolicyShadow> {
    let spec = policy.spec;
    // Without rules, the deprecated pair is the one rule, even with no overriders: the policy is
    // still recorded as applied.
    let rules: Vec<(Option<&flotilla_api::karmada::ClusterAffinity>, &Overriders)> =
        if spec.override_rules.is_empty() {
            vec![(spec.target_cluster.as_ref(), &spec.overriders)]
        } else {
            spec.override_rules
                .iter()
                .map(|r| (r.target_cluster.as_ref(), &r.overriders))
                .collect()
        };
    rules
        .into_iter()
        .filter(|(target, _)| target.is_none_or(|t| cluster_matches(cluster, t)))
        .map(|(_, overriders)| OverridePolicyShadow {
            policy_name: policy.name.to_owned(),
            overriders: overriders.clone(),
        })
        .collect()
}

/// Applies every matching ClusterOverridePolicy and (for namespaced objects) OverridePolicy to
/// `object` for `cluster`. OverridePolicies must be those of the object's namespace.
pub fn apply_overrides<'a>(
    object: &mut Value,
    cluster: &Cluster,
    cluster_policies: impl IntoIterator<Item = PolicyRef<'a>>,
    policies: impl IntoIterator<Item = PolicyRef<'a>>,
) -> Result<AppliedOverrides, OverrideError> {
    let mut applied = AppliedOverrides::default();
    let cluster_matched = matching_policies(object, cluster_policies);
    applied.cluster = apply_set(object, cluster, &cluster_matched, true)?;
    let namespaced = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .is_some_and(|ns| !ns.is_empty());
    if namespaced {
        let matched = matching_policies(object, policies);
        applied.namespaced = apply_set(object, cluster, &matched, false)?;
    }
    Ok(applied)
}

fn apply_set(
    object: &mut Value,
    cluster: &Cluster,
    policies: &[PolicyRef<'_>],
    cluster_policy: bool,
) -> Result<Vec<OverridePolicyShadow>, OverrideError> {
    let mut applied = Vec::new();
    for policy in policies {
        for shadow in overriders_for(*policy, cluster) {
            apply_overriders(object, &shadow.overriders).map_err(|message| {
                OverrideError::Apply {
                    policy: policy.name.to_owned(),
                    cluster_policy,
                    message,
                }
            })?;
            applied.push(shadow);
        }
    }
    applied.sort_by(|a, b| a.policy_name.cmp(&b.policy_name));
    Ok(applied)
}

/// Applies one rule's overriders in Karmada's fixed order.
pub fn apply_overriders(object: &mut Value, overriders: &Overriders) -> Result<(), String> {
    for overrider in &overriders.image_overrider {
        image::apply(object, overrider).map_err(|e| e.to_string())?;
    }
    for overrider in &overriders.command_overrider {
        ops::command_args(object, overrider, "command")?;
    }
    for overrider in &overriders.args_overrider {
        ops::command_args(object, overrider, "args")?;
    }
    for overrider in &overriders.labels_overrider {
        ops::labels_annotations(object, overrider, "labels")?;
    }
    for overrider in &overriders.annotations_overrider {
        ops::labels_annotations(object, overrider, "annotations")?;
    }
    for overrider in &overriders.field_overrider {
        ops::field(object, overrider)?;
    }
    let plaintext: Vec<ops::Operation> = overriders
        .plaintext
        .iter()
        .map(|p| ops::Operation {
            op: p.operator.clone(),
            path: p.path.clone(),
            value: p.value.clone(),
        })
        .collect();
    ops::json_patch(object, &plaintext)
}

#[cfg(test)]
mod tests;
