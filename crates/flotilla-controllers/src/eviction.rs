//! What the taint manager, the application-failover controllers and the graceful-eviction
//! controllers share: moving a cluster from a binding's `spec.clusters` into a
//! `gracefulEvictionTask` (Karmada's `GracefulEvictCluster`), writing that back with an
//! optimistic lock, the `EvictWorkloadFromCluster*` events, and the label state a stateful
//! failover preserves (values read by JSONPath from the evicted copy's status).

use std::collections::BTreeMap;

use flotilla_api::karmada::{
    AggregatedStatusItem, GracefulEvictionTask, ResourceBindingSpec, StatePreservation,
};
use flotilla_runtime::events::{EventType, Recorder};
use k8s_openapi::api::core::v1::ObjectReference;
use serde_json::{Value, json};

use crate::binding::{BindingKey, BindingView, binding_reference, patch_binding};

/// Karmada's eviction task reasons and producers (`work/v1alpha2`).
pub const REASON_TAINT_UNTOLERATED: &str = "TaintUntolerated";
pub const REASON_APPLICATION_FAILURE: &str = "ApplicationFailure";
pub const PRODUCER_TAINT_MANAGER: &str = "TaintManager";

/// Event reasons of an eviction (`pkg/events`).
pub const EVENT_EVICT_SUCCEED: &str = "EvictWorkloadFromClusterSucceed";
pub const EVENT_EVICT_FAILED: &str = "EvictWorkloadFromClusterFailed";

/// Why an eviction could not be prepared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvictionError {
    #[error("the application status has not yet been collected from Cluster({0})")]
    StatusNotCollected(String),
    #[error("failed to execute jsonpath {path:?}: {reason}")]
    JsonPath { path: String, reason: String },
}

/// Karmada's `GracefulEvictCluster`: removes `cluster` from `spec.clusters` and, unless a task
/// for it exists already, appends `task` (with the cluster's replicas when positive). Returns
/// false (and changes nothing) when the binding does not target `cluster`.
pub fn evict_cluster(
    spec: &mut ResourceBindingSpec,
    cluster: &str,
    mut task: GracefulEvictionTask,
) -> bool {
    let Some(index) = spec.clusters.iter().position(|c| c.name == cluster) else {
        return false;
    };
    let evicted = spec.clusters.remove(index);
    if spec
        .graceful_eviction_tasks
        .iter()
        .any(|t| t.from_cluster == cluster)
    {
        return true;
    }
    task.from_cluster = evicted.name;
    task.replicas = (evicted.replicas > 0).then_some(evicted.replicas);
    spec.graceful_eviction_tasks.push(task);
    true
}

/// Writes `spec.clusters` and `spec.gracefulEvictionTasks` of `binding` as they are in `spec`,
/// failing with a conflict if the binding changed since it was read.
pub async fn write_eviction(
    client: &kube::Client,
    binding: &BindingView,
    spec: &ResourceBindingSpec,
) -> Result<(), kube::Error> {
    let patch = json!({
        "metadata": {"resourceVersion": binding.metadata.resource_version},
        "spec": {
            "clusters": list_or_absent(&spec.clusters)?,
            "gracefulEvictionTasks": list_or_absent(&spec.graceful_eviction_tasks)?,
        },
    });
    patch_binding(client, &binding.key, &patch).await
}

/// Writes only `spec.gracefulEvictionTasks` (the graceful-eviction controller's patch).
pub async fn write_tasks(
    client: &kube::Client,
    binding: &BindingView,
    tasks: &[GracefulEvictionTask],
) -> Result<(), kube::Error> {
    let patch = json!({
        "metadata": {"resourceVersion": binding.metadata.resource_version},
        "spec": {"gracefulEvictionTasks": list_or_absent(tasks)?},
    });
    patch_binding(client, &binding.key, &patch).await
}

/// A list for a merge patch: an empty one removes the field, as Go's `omitempty` leaves it out.
fn list_or_absent<T: serde::Serialize>(items: &[T]) -> Result<Value, kube::Error> {
    if items.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::to_value(items).map_err(kube::Error::SerdeError)
}

/// The template a binding was built from, as an event's object.
pub fn template_reference(spec: &ResourceBindingSpec) -> ObjectReference {
    let r = &spec.resource;
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    ObjectReference {
        api_version: some(&r.api_version),
        kind: some(&r.kind),
        namespace: some(&r.namespace),
        name: some(&r.name),
        uid: some(&r.uid),
        ..ObjectReference::default()
    }
}

/// Karmada's `EmitClusterEvictionEventFor(Cluster)ResourceBinding`: the same event on the
/// binding and on its template.
pub async fn eviction_event(
    recorder: &Recorder,
    binding: &BindingView,
    cluster: &str,
    succeeded: bool,
) {
    let (type_, reason, note) = if succeeded {
        (
            EventType::Normal,
            EVENT_EVICT_SUCCEED,
            format!("Evict from cluster {cluster} succeed."),
        )
    } else {
        (
            EventType::Warning,
            EVENT_EVICT_FAILED,
            format!("Evict from cluster {cluster} failed."),
        )
    };
    for reference in [
        binding_reference(binding),
        template_reference(&binding.spec),
    ] {
        recorder
            .note(&reference, type_, reason, "EvictWorkload", note.clone())
            .await;
    }
}

/// The label state a stateful failover keeps (Karmada's `BuildPreservedLabelState`): for each
/// rule, the value its JSONPath selects in the status `cluster` reported. `None` when there are
/// no rules.
pub fn preserved_label_state(
    preservation: Option<&StatePreservation>,
    aggregated: &[AggregatedStatusItem],
    cluster: &str,
) -> Result<Option<BTreeMap<String, String>>, EvictionError> {
    let Some(preservation) = preservation.filter(|p| !p.rules.is_empty()) else {
        return Ok(None);
    };
    let status = aggregated
        .iter()
        .find(|item| item.cluster_name == cluster)
        .and_then(|item| item.status.as_ref())
        .map(|s| s.to_value())
        .filter(|v| !v.is_null())
        .ok_or_else(|| EvictionError::StatusNotCollected(cluster.to_owned()))?;
    let mut state = BTreeMap::new();
    for rule in &preservation.rules {
        let value =
            jsonpath_text(&status, &rule.json_path).map_err(|reason| EvictionError::JsonPath {
                path: rule.json_path.clone(),
                reason,
            })?;
        state.insert(rule.alias_label_name.clone(), value);
    }
    Ok(Some(state))
}

/// The text Kubernetes' JSONPath template (`k8s.io/client-go/util/jsonpath`, missing keys not
/// allowed) prints for `path` over `root`, for the paths state preservation uses: `{.a.b}`,
/// `{.a[0].b}`, `{.a['b']}`, optionally with a leading `$`. Strings print as they are, other
/// scalars as JSON; several results are separated by spaces.
pub fn jsonpath_text(root: &Value, path: &str) -> Result<String, String> {
    let inner = path
        .trim()
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .ok_or_else(|| format!("unsupported JSONPath {path:?}: expected {{.field…}}"))?;
    let mut rest = inner.trim().strip_prefix('$').unwrap_or(inner.trim());
    let mut current = root;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let field = &after[..end];
            rest = &after[end..];
            if field.is_empty() {
                continue;
            }
            current = current
                .get(field)
                .ok_or_else(|| format!("{field} is not found"))?;
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after
                .find(']')
                .ok_or_else(|| format!("unclosed [ in {path:?}"))?;
            let selector = after[..end].trim();
            rest = &after[end + 1..];
            if let Some(name) = selector
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| selector.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
            {
                current = current
                    .get(name)
                    .ok_or_else(|| format!("{name} is not found"))?;
            } else {
                let index: usize = selector
                    .parse()
                    .map_err(|_| format!("unsupported JSONPath selector [{selector}]"))?;
                let items = current
                    .as_array()
                    .ok_or_else(|| format!("[{selector}] of a non-array"))?;
                current = items
                    .get(index)
                    .ok_or_else(|| "array index out of bounds".to_owned())?;
            }
        } else {
            return Err(format!("unsupported JSONPath {path:?}"));
        }
    }
    Ok(match current {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// The key of a binding in an eviction queue: which cluster it may leave.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EvictionKey {
    pub cluster: String,
    pub binding: BindingKey,
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_api::karmada::{StatePreservationRule, TargetCluster};

    mod karmada_graceful_evict;

    fn spec(clusters: &[(&str, i32)]) -> ResourceBindingSpec {
        ResourceBindingSpec {
            clusters: clusters
                .iter()
                .map(|(n, r)| TargetCluster {
                    name: (*n).to_owned(),
                    replicas: *r,
                    ..TargetCluster::default()
                })
                .collect(),
            ..ResourceBindingSpec::default()
        }
    }

    #[test]
    fn evicting_moves_the_cluster_into_one_task() {
        let mut s = spec(&[("member1", 2), ("member2", 0)]);
        let task = GracefulEvictionTask {
            purge_mode: "Gracefully".into(),
            reason: REASON_TAINT_UNTOLERATED.into(),
            producer: PRODUCER_TAINT_MANAGER.into(),
            ..GracefulEvictionTask::default()
        };
        assert!(evict_cluster(&mut s, "member1", task.clone()));
        assert_eq!(s.clusters.len(), 1);
        assert_eq!(s.graceful_eviction_tasks.len(), 1);
        assert_eq!(s.graceful_eviction_tasks[0].from_cluster, "member1");
        assert_eq!(s.graceful_eviction_tasks[0].replicas, Some(2));
        // Zero replicas are not recorded.
        assert!(evict_cluster(&mut s, "member2", task.clone()));
        assert_eq!(s.graceful_eviction_tasks[1].replicas, None);
        // Not targeted: nothing changes.
        assert!(!evict_cluster(&mut s, "member3", task.clone()));
        // Targeted again while its task is pending: removed, no second task.
        s.clusters.push(TargetCluster {
            name: "member1".into(),
            replicas: 1,
            ..TargetCluster::default()
        });
        assert!(evict_cluster(&mut s, "member1", task));
        assert!(s.clusters.is_empty());
        assert_eq!(s.graceful_eviction_tasks.len(), 2);
    }

    #[test]
    fn jsonpath_prints_like_kubernetes() {
        let status = serde_json::json!({"replicas": 2, "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}], "ratio": 1.5});
        assert_eq!(jsonpath_text(&status, "{.replicas}").unwrap(), "2");
        assert_eq!(jsonpath_text(&status, "{.phase}").unwrap(), "Running");
        assert_eq!(jsonpath_text(&status, "{$.ratio}").unwrap(), "1.5");
        assert_eq!(
            jsonpath_text(&status, "{.conditions[0].status}").unwrap(),
            "True"
        );
        assert_eq!(
            jsonpath_text(&status, "{.conditions[0]['type']}").unwrap(),
            "Ready"
        );
        assert_eq!(
            jsonpath_text(&status, "{.missing}").unwrap_err(),
            "missing is not found"
        );
        assert!(jsonpath_text(&status, ".replicas").is_err());
    }

    #[test]
    fn preserved_state_needs_the_collected_status() {
        let rules = StatePreservation {
            rules: vec![StatePreservationRule {
                alias_label_name: "test-alias".into(),
                json_path: "{.replicas}".into(),
            }],
        };
        let collected = vec![AggregatedStatusItem {
            cluster_name: "member1".into(),
            status: Some(flotilla_api::karmada::JsonText::new(
                &serde_json::json!({"replicas": 2}),
            )),
            ..AggregatedStatusItem::default()
        }];
        let state = preserved_label_state(Some(&rules), &collected, "member1")
            .unwrap()
            .unwrap();
        assert_eq!(state.get("test-alias").map(String::as_str), Some("2"));
        assert_eq!(
            preserved_label_state(Some(&rules), &collected, "member2").unwrap_err(),
            EvictionError::StatusNotCollected("member2".into())
        );
        assert_eq!(
            preserved_label_state(None, &collected, "member2").unwrap(),
            None
        );
    }
}
