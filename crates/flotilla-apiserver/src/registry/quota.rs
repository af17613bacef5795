//! Karmada's ResourceBinding webhook's FederatedResourceQuota check (gate
//! `FederatedQuotaEnforcement`), done in line: a create with a scheduling result, or an update
//! that changes the binding's usage (requests, scheduled replicas, components), is refused when
//! a quota of the namespace would be exceeded.
//!
//! Karmada's webhook adds each admitted change to the quota's `status.overallUsed`; here the
//! namespace's usage is counted from the bindings the watch cache holds (the quota is not
//! written during admission), and the enforcement controller keeps `overallUsed` up to date.

use flotilla_api::karmada::ResourceList;
use flotilla_api::karmada::quota::{
    FederatedResourceQuota, QUOTA_EXCEEDED_REASON, add_into, binding_usage, check_quota,
    quota_relevant_change, usage_delta,
};
use flotilla_api::karmada::work::ResourceBindingSpec;
use serde_json::Value;

use super::Registry;
use crate::catalog::ResourceInfo;
use crate::error::ApiError;

/// The prefix kube-apiserver puts before a validating webhook's refusal.
const DENIED_PREFIX: &str = "admission webhook \"resourcebinding.karmada.io\" denied the request";

fn spec_of(object: &Value) -> ResourceBindingSpec {
    // Admission already checked the binding against its schema.
    serde_json::from_value(object["spec"].clone()).unwrap_or_default()
}

impl Registry {
    /// Refuses (403, reason `QuotaExceeded`) a ResourceBinding write whose usage change
    /// exceeds a FederatedResourceQuota of its namespace; `old` is the stored binding on update.
    pub(super) fn check_federated_quota(
        &self,
        info: &ResourceInfo,
        object: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if !self.webhook.federated_quota_enforcement
            || info.group != "work.karmada.io"
            || info.kind != "ResourceBinding"
        {
            return Ok(());
        }
        let new = spec_of(object);
        let old = old.map(spec_of);
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or("");
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        let quotas = || {
            let Some(quota_info) =
                self.catalog
                    .get("policy.karmada.io", "v1alpha1", "federatedresourcequotas")
            else {
                return Vec::new();
            };
            let (quotas, _) = self.cache.list(
                quota_info.storage_prefix_in(Some(namespace)).as_bytes(),
                None,
            );
            quotas
                .into_iter()
                .filter_map(|quota| serde_json::from_value(quota.value()).ok())
                .collect()
        };
        // What the namespace uses before this write: the other bindings, and this one as stored.
        let used = |old_usage: &ResourceList| {
            let mut used = old_usage.clone();
            let (bindings, _) = self
                .cache
                .list(info.storage_prefix_in(Some(namespace)).as_bytes(), None);
            for binding in bindings {
                let binding = binding.value();
                if binding["metadata"]["name"].as_str() != Some(name) {
                    add_into(&mut used, &binding_usage(&spec_of(&binding)));
                }
            }
            used
        };
        if let Some(message) = quota_refusal(&new, old.as_ref(), quotas, used) {
            tracing::debug!(namespace, name, %message, "ResourceBinding refused for quota");
            return Err(ApiError::new(
                403,
                QUOTA_EXCEEDED_REASON,
                format!("{DENIED_PREFIX}: {message}"),
            ));
        }
        Ok(())
    }
}

/// Karmada's decision for a ResourceBinding write (`old`: the stored spec on update): `None` to
/// admit, or the message of the first quota the change would exceed. A create without
/// `spec.clusters`, an update that changes no usage field, and a change of no usage are not
/// checked; otherwise the change is added, per quota of `quotas()`, to what the namespace uses
/// before the write (`used(old usage)`; Karmada reads each quota's `status.overallUsed`).
fn quota_refusal(
    new: &ResourceBindingSpec,
    old: Option<&ResourceBindingSpec>,
    quotas: impl FnOnce() -> Vec<FederatedResourceQuota>,
    used: impl FnOnce(&ResourceList) -> ResourceList,
) -> Option<String> {
    match old {
        // Not scheduled yet: nothing used.
        None if new.clusters.is_empty() => return None,
        Some(old) if !quota_relevant_change(old, new) => return None,
        _ => {}
    }
    let old_usage = old.map(binding_usage).unwrap_or_default();
    let delta = usage_delta(&binding_usage(new), &old_usage);
    if delta.is_empty() {
        return None;
    }
    let quotas = quotas();
    if quotas.is_empty() {
        return None;
    }
    let used = used(&old_usage);
    quotas
        .iter()
        .find_map(|quota| check_quota(quota, &used, &delta).err())
}

#[cfg(test)]
mod karmada_webhooks_tests;
