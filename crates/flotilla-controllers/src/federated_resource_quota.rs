//! FederatedResourceQuota (Karmada's `federated-resource-quota-{sync,status,enforcement}`
//! controllers; `docs/quota.md`):
//! - [`sync`] writes one ResourceQuota Work per `spec.staticAssignments[]` cluster and removes
//!   the Works of clusters no longer assigned (or of a deleted quota);
//! - [`status`] collects the member ResourceQuotas' status from those Works into
//!   `status.aggregatedStatus` (and, without gate `FederatedQuotaEnforcement`, `overall` and
//!   `overallUsed` from the members);
//! - [`enforcement`] (gate `FederatedQuotaEnforcement`) computes `overall`/`overallUsed` from the
//!   namespace's ResourceBindings. The refusal of a binding write beyond the quota is the API
//!   server's (`flotilla_apiserver`'s ResourceBinding admission).
//!
//! The pure parts live here; the arithmetic is `flotilla_api::karmada::quota`'s.

pub mod enforcement;
pub mod status;
pub mod sync;

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::karmada::names::{cluster_name, execution_space_name, work_name};
use flotilla_api::karmada::quota::{
    ClusterQuotaStatus, FederatedResourceQuota, QUOTA_NAME_LABEL, QUOTA_NAMESPACE_LABEL, add_into,
    binding_usage, limited_to,
};
use flotilla_api::karmada::{ResourceBinding, ResourceList, Work, WorkSpec, WorkloadTemplate};
use flotilla_runtime::events::{Recorder, Reporter};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::binding::render::{
    EXECUTION_FINALIZER, MANAGED_LABEL, TEMPLATE_UID_ANNOTATION, WORK_NAME_ANNOTATION,
    WORK_NAMESPACE_ANNOTATION,
};

/// `--controllers` name of the Work writer.
pub const SYNC_NAME: &str = "federatedResourceQuotaSync";
/// `--controllers` name of the member status collector.
pub const STATUS_NAME: &str = "federatedResourceQuotaStatus";
/// `--controllers` name of the binding-usage accountant (gate `FederatedQuotaEnforcement`).
pub const ENFORCEMENT_NAME: &str = "federatedResourceQuotaEnforcement";

/// Event reasons (Karmada's `pkg/events`).
pub const REASON_SYNC_SUCCEED: &str = "SyncWorkSucceed";
pub const REASON_SYNC_FAILED: &str = "SyncWorkFailed";
pub const REASON_STATUS_SUCCEED: &str = "AggregateStatusSucceed";
pub const REASON_STATUS_FAILED: &str = "AggregateStatusFailed";
pub const REASON_OVERALL_SUCCEED: &str = "CollectOverallStatusSucceed";
pub const REASON_OVERALL_FAILED: &str = "CollectOverallStatusFailed";

/// A quota by namespace and name.
pub type QuotaKey = (String, String);

/// The key of `quota`.
pub fn key_of(quota: &FederatedResourceQuota) -> QuotaKey {
    (
        quota.metadata.namespace.clone().unwrap_or_default(),
        quota.metadata.name.clone().unwrap_or_default(),
    )
}

/// The quota a Work was written for, from its labels.
pub fn quota_of_work(work: &Work) -> Option<QuotaKey> {
    let labels = work.metadata.labels.as_ref()?;
    Some((
        labels.get(QUOTA_NAMESPACE_LABEL)?.clone(),
        labels.get(QUOTA_NAME_LABEL)?.clone(),
    ))
}

/// The Work carrying `quota`'s ResourceQuota to `cluster`, `None` when the cluster has no static
/// assignment. Named and labelled as Karmada names them: the member object is a ResourceQuota
/// of the quota's name and namespace with `spec.hard` from the assignment.
pub fn quota_work(quota: &FederatedResourceQuota, cluster: &str) -> Option<Work> {
    let hard = quota.spec.hard_for(cluster)?;
    let (namespace, name) = key_of(quota);
    let work_namespace = execution_space_name(cluster);
    let work = work_name("ResourceQuota", &name, &namespace);
    let manifest = json!({
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {MANAGED_LABEL: "true"},
            "annotations": {
                // Karmada stamps the (empty) uid of the object it built.
                TEMPLATE_UID_ANNOTATION: "",
                WORK_NAME_ANNOTATION: work,
                WORK_NAMESPACE_ANNOTATION: work_namespace,
            },
        },
        "spec": {"hard": hard},
    });
    Some(Work {
        metadata: ObjectMeta {
            name: Some(work),
            namespace: Some(work_namespace),
            finalizers: Some(vec![EXECUTION_FINALIZER.to_owned()]),
            labels: Some(BTreeMap::from([
                (QUOTA_NAMESPACE_LABEL.to_owned(), namespace),
                (QUOTA_NAME_LABEL.to_owned(), name),
            ])),
            ..ObjectMeta::default()
        },
        spec: WorkSpec {
            workload: WorkloadTemplate {
                manifests: vec![manifest.into()],
            },
            ..WorkSpec::default()
        },
        ..Work::default()
    })
}

/// The Works of `key` to delete: all of them when the quota is gone, otherwise those in the
/// execution space of no assigned cluster. As (namespace, name), sorted.
pub fn works_to_remove(
    key: &QuotaKey,
    quota: Option<&FederatedResourceQuota>,
    works: &[Arc<Work>],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = works
        .iter()
        .filter(|w| quota_of_work(w).as_ref() == Some(key))
        .filter(|w| {
            let namespace = w.metadata.namespace.as_deref().unwrap_or("");
            quota.is_none_or(|q| {
                !q.spec
                    .static_assignments
                    .iter()
                    .any(|a| execution_space_name(&a.cluster_name) == namespace)
            })
        })
        .map(|w| {
            (
                w.metadata.namespace.clone().unwrap_or_default(),
                w.metadata.name.clone().unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Why a Work's status could not be aggregated.
#[derive(Debug, thiserror::Error)]
pub enum AggregateError {
    #[error("work {namespace}/{name} is not in an execution namespace")]
    NotExecutionSpace { namespace: String, name: String },
    #[error("failed to parse the ResourceQuota status of work {namespace}/{name}: {source}")]
    Status {
        namespace: String,
        name: String,
        #[source]
        source: serde_json::Error,
    },
}

/// The member ResourceQuotas' status from `key`'s Works, by cluster name (Karmada's
/// `aggregatedStatusFormWorks`): Works not applied, or without a manifest status yet, are
/// skipped.
pub fn aggregate(
    key: &QuotaKey,
    works: &[Arc<Work>],
) -> Result<Vec<ClusterQuotaStatus>, AggregateError> {
    #[derive(serde::Deserialize, Default)]
    struct QuotaStatus {
        #[serde(default)]
        hard: ResourceList,
        #[serde(default)]
        used: ResourceList,
    }
    let mut out = Vec::new();
    for work in works
        .iter()
        .filter(|w| quota_of_work(w).as_ref() == Some(key))
    {
        if !work.is_applied() {
            continue;
        }
        let Some(first) = work
            .status
            .as_ref()
            .and_then(|s| s.manifest_statuses.first())
        else {
            continue;
        };
        let namespace = work.metadata.namespace.clone().unwrap_or_default();
        let name = work.metadata.name.clone().unwrap_or_default();
        let Ok(cluster) = cluster_name(&namespace) else {
            return Err(AggregateError::NotExecutionSpace { namespace, name });
        };
        let cluster = cluster.to_owned();
        let status: QuotaStatus = match &first.status {
            Some(text) => text.parse().map_err(|source| AggregateError::Status {
                namespace,
                name,
                source,
            })?,
            None => QuotaStatus::default(),
        };
        out.push(ClusterQuotaStatus {
            cluster_name: cluster,
            hard: status.hard,
            used: status.used,
        });
    }
    out.sort_by(|a, b| a.cluster_name.cmp(&b.cluster_name));
    Ok(out)
}

/// The members' usage summed (Karmada's `calculateUsed`).
pub fn members_used(aggregated: &[ClusterQuotaStatus]) -> ResourceList {
    let mut used = ResourceList::new();
    for status in aggregated {
        add_into(&mut used, &status.used);
    }
    used
}

/// What the bindings of `namespace` use of `overall` (Karmada's
/// `calculateUsedWithResourceBinding`).
pub fn bindings_used<'a>(
    namespace: &str,
    bindings: impl IntoIterator<Item = &'a ResourceBinding>,
    overall: &ResourceList,
) -> ResourceList {
    let mut used = ResourceList::new();
    for binding in bindings
        .into_iter()
        .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
    {
        add_into(&mut used, &binding_usage(&binding.spec));
    }
    limited_to(&used, overall)
}

/// A JSON merge patch of `status` fields: empty lists are written as `null` (removed).
fn status_patch(fields: &[(&str, Value)]) -> Value {
    let mut status = serde_json::Map::new();
    for (name, value) in fields {
        let empty = match value {
            Value::Object(map) => map.is_empty(),
            Value::Array(items) => items.is_empty(),
            _ => false,
        };
        status.insert(
            (*name).to_owned(),
            if empty { Value::Null } else { value.clone() },
        );
    }
    json!({ "status": status })
}

fn recorder(client: &kube::Client, name: &str) -> Recorder {
    Recorder::new(
        client.clone(),
        Reporter {
            controller: name.into(),
            instance: None,
        },
    )
}

fn reference(quota: &FederatedResourceQuota) -> ObjectReference {
    ObjectReference {
        api_version: Some("policy.karmada.io/v1alpha1".to_owned()),
        kind: Some("FederatedResourceQuota".to_owned()),
        namespace: quota.metadata.namespace.clone(),
        name: quota.metadata.name.clone(),
        uid: quota.metadata.uid.clone(),
        resource_version: quota.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

#[cfg(test)]
mod tests;
