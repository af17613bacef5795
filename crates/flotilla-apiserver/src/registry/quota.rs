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
        match &old {
            // Not scheduled yet: nothing used.
            None if new.clusters.is_empty() => return Ok(()),
            Some(old) if !quota_relevant_change(old, &new) => return Ok(()),
            _ => {}
        }
        let old_usage = old.as_ref().map(binding_usage).unwrap_or_default();
        let delta = usage_delta(&binding_usage(&new), &old_usage);
        if delta.is_empty() {
            return Ok(());
        }
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or("");
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        let Some(quota_info) =
            self.catalog
                .get("policy.karmada.io", "v1alpha1", "federatedresourcequotas")
        else {
            return Ok(());
        };
        let (quotas, _) = self.cache.list(
            quota_info.storage_prefix_in(Some(namespace)).as_bytes(),
            None,
        );
        if quotas.is_empty() {
            return Ok(());
        }
        // What the namespace uses before this write: the other bindings, and this one as stored.
        let mut used: ResourceList = old_usage;
        let (bindings, _) = self
            .cache
            .list(info.storage_prefix_in(Some(namespace)).as_bytes(), None);
        for binding in bindings {
            let binding = binding.value();
            if binding["metadata"]["name"].as_str() != Some(name) {
                add_into(&mut used, &binding_usage(&spec_of(&binding)));
            }
        }
        for quota in quotas {
            let Ok(quota) = serde_json::from_value::<FederatedResourceQuota>(quota.value()) else {
                continue;
            };
            if let Err(message) = check_quota(&quota, &used, &delta) {
                tracing::debug!(namespace, name, %message, "ResourceBinding refused for quota");
                return Err(ApiError::new(
                    403,
                    QUOTA_EXCEEDED_REASON,
                    format!("{DENIED_PREFIX}: {message}"),
                ));
            }
        }
        Ok(())
    }
}
