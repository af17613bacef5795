//! `AggregateStatus`: the template's status computed from the members' reflected statuses
//! (`binding.status.aggregatedStatus`), per kind (reference §5.2). Each function returns the
//! whole new `.status`; the caller writes it only when it differs from the current one.

use std::collections::BTreeSet;

use flotilla_api::karmada::AggregatedStatusItem;
use serde_json::{Map, Value, json};

/// One member's item with its reflected status parsed (bindings hold it as JSON text).
struct Item<'a> {
    cluster_name: &'a str,
    status: Option<Value>,
}

/// The new status of `template`, or `None` when its kind has no aggregation hook.
pub fn aggregate_status(template: &Value, items: &[AggregatedStatusItem]) -> Option<Value> {
    let items: Vec<Item<'_>> = items
        .iter()
        .map(|item| Item {
            cluster_name: &item.cluster_name,
            status: item.status.as_ref().map(|s| s.to_value()),
        })
        .collect();
    let items = items.as_slice();
    let api_version = template
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = template.get("kind").and_then(Value::as_str).unwrap_or("");
    let generation = template
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let old = template.get("status").cloned().unwrap_or(json!({}));
    let out = match (api_version, kind) {
        ("apps/v1", "Deployment") => counters(
            &old,
            items,
            generation,
            &[
                ("replicas", true),
                ("updatedReplicas", true),
                ("readyReplicas", true),
                ("availableReplicas", true),
                ("unavailableReplicas", true),
            ],
            GenerationRule::TemplateGeneration,
        ),
        ("apps/v1", "ReplicaSet") => counters(
            &old,
            items,
            generation,
            &[
                ("replicas", false),
                ("readyReplicas", true),
                ("availableReplicas", true),
            ],
            GenerationRule::TemplateGeneration,
        ),
        ("apps/v1", "StatefulSet") => counters(
            &old,
            items,
            generation,
            &[
                ("replicas", false),
                ("readyReplicas", true),
                ("currentReplicas", true),
                ("updatedReplicas", true),
                ("availableReplicas", true),
            ],
            GenerationRule::MemberGeneration,
        ),
        ("apps/v1", "DaemonSet") => counters(
            &old,
            items,
            generation,
            &[
                ("currentNumberScheduled", false),
                ("numberMisscheduled", false),
                ("desiredNumberScheduled", false),
                ("numberReady", false),
                ("updatedNumberScheduled", true),
                ("numberAvailable", true),
                ("numberUnavailable", true),
            ],
            GenerationRule::TemplateGeneration,
        ),
        ("v1", "Service") => {
            if template.pointer("/spec/type").and_then(Value::as_str) != Some("LoadBalancer") {
                return None;
            }
            load_balancer(&old, items)
        }
        ("networking.k8s.io/v1", "Ingress") => load_balancer(&old, items),
        ("batch/v1", "Job") => job(&old, items)?,
        ("batch/v1", "CronJob") => cron_job(&old, items),
        ("v1", "Pod") => pod(&old, items),
        ("v1", "PersistentVolumeClaim") => pvc(&old, items),
        ("policy/v1", "PodDisruptionBudget") => {
            let mut status = old.as_object().cloned().unwrap_or_default();
            for field in [
                "currentHealthy",
                "desiredHealthy",
                "disruptionsAllowed",
                "expectedPods",
            ] {
                status.insert(field.into(), json!(sum(items, field)));
            }
            Value::Object(status)
        }
        ("autoscaling/v2" | "autoscaling/v1", "HorizontalPodAutoscaler") => {
            let mut status = old.as_object().cloned().unwrap_or_default();
            for field in ["currentReplicas", "desiredReplicas"] {
                status.insert(field.into(), json!(sum(items, field)));
            }
            Value::Object(status)
        }
        _ => return None,
    };
    Some(out)
}

fn statuses<'a>(items: &'a [Item<'_>]) -> impl Iterator<Item = &'a Value> {
    items.iter().filter_map(|i| i.status.as_ref())
}

fn int(status: &Value, field: &str) -> i64 {
    status.get(field).and_then(Value::as_i64).unwrap_or(0)
}

fn sum(items: &[Item<'_>], field: &str) -> i64 {
    statuses(items).map(|s| int(s, field)).sum()
}

/// How `observedGeneration` is advanced.
#[derive(Debug, Clone, Copy)]
enum GenerationRule {
    /// Every member observed its generation and was rendered from the current template
    /// (`resourceTemplateGeneration ≥ template generation`).
    TemplateGeneration,
    /// StatefulSet: Karmada compares `resourceTemplateGeneration` with the member's generation.
    MemberGeneration,
}

/// Sums of `fields` (`true`: omitted when zero, as Go's `omitempty`); `observedGeneration`
/// becomes the template generation only when every item (nil statuses included) caught up.
fn counters(
    old: &Value,
    items: &[Item<'_>],
    generation: i64,
    fields: &[(&str, bool)],
    rule: GenerationRule,
) -> Value {
    let caught_up = items
        .iter()
        .filter(|item| {
            item.status.as_ref().is_some_and(|s| {
                let member_generation = int(s, "generation");
                let template_generation = int(s, "resourceTemplateGeneration");
                let target = match rule {
                    GenerationRule::TemplateGeneration => generation,
                    GenerationRule::MemberGeneration => member_generation,
                };
                int(s, "observedGeneration") >= member_generation && template_generation >= target
            })
        })
        .count();
    let observed = if caught_up == items.len() {
        generation
    } else {
        int(old, "observedGeneration")
    };
    let mut status = Map::new();
    if observed != 0 {
        status.insert("observedGeneration".into(), json!(observed));
    }
    for (field, omit_empty) in fields {
        let total = sum(items, field);
        if total != 0 || !omit_empty {
            status.insert((*field).into(), json!(total));
        }
    }
    Value::Object(status)
}

/// Service (LoadBalancer) and Ingress: the union of the members' `loadBalancer.ingress`,
/// de-duplicated and sorted.
fn load_balancer(old: &Value, items: &[Item<'_>]) -> Value {
    let mut seen = BTreeSet::new();
    let mut ingress = Vec::new();
    for status in statuses(items) {
        for entry in status
            .pointer("/loadBalancer/ingress")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = serde_json::to_string(entry).unwrap_or_default();
            if seen.insert(key.clone()) {
                ingress.push((key, entry.clone()));
            }
        }
    }
    ingress.sort_by(|a, b| a.0.cmp(&b.0));
    let mut status = old.as_object().cloned().unwrap_or_default();
    let entries: Vec<Value> = ingress.into_iter().map(|(_, v)| v).collect();
    status.insert(
        "loadBalancer".into(),
        if entries.is_empty() {
            json!({})
        } else {
            json!({"ingress": entries})
        },
    );
    Value::Object(status)
}

fn has_condition(status: &Value, kind: &str) -> bool {
    status
        .get("conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            c.get("type").and_then(Value::as_str) == Some(kind)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
}

/// Job: unless the template already finished, Σ active/succeeded/failed, the earliest start,
/// the latest completion; `Failed` when any member failed, `Complete` when all completed.
fn job(old: &Value, items: &[Item<'_>]) -> Option<Value> {
    if has_condition(old, "Complete") || has_condition(old, "Failed") {
        return Some(old.clone());
    }
    let mut status = Map::new();
    let time = |s: &Value, f: &str| s.get(f).and_then(Value::as_str).map(str::to_owned);
    let start = statuses(items).filter_map(|s| time(s, "startTime")).min();
    let completion = statuses(items)
        .filter_map(|s| time(s, "completionTime"))
        .max();
    let mut failed_clusters = Vec::new();
    let mut complete = 0;
    for item in items {
        if let Some(s) = &item.status {
            if has_condition(s, "Failed") {
                failed_clusters.push(item.cluster_name.to_owned());
            }
            if has_condition(s, "Complete") {
                complete += 1;
            }
        }
    }
    let mut conditions = Vec::new();
    if !failed_clusters.is_empty() {
        conditions.push(json!({"type": "Failed", "status": "True", "reason": "JobFailed",
            "message": format!("Job executed failed in member clusters {}", failed_clusters.join(","))}));
    }
    let all_complete = !items.is_empty() && complete == items.len();
    if all_complete {
        conditions.push(
            json!({"type": "Complete", "status": "True", "reason": "Completed",
            "message": "Job completed"}),
        );
    }
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    if let Some(start) = start {
        status.insert("startTime".into(), json!(start));
    }
    if all_complete && let Some(completion) = completion {
        status.insert("completionTime".into(), json!(completion));
    }
    for field in ["active", "succeeded", "failed"] {
        let total = sum(items, field);
        if total != 0 {
            status.insert(field.into(), json!(total));
        }
    }
    Some(Value::Object(status))
}

/// CronJob: the members' active jobs concatenated, the latest schedule and success times.
fn cron_job(old: &Value, items: &[Item<'_>]) -> Value {
    let mut status = old.as_object().cloned().unwrap_or_default();
    let active: Vec<Value> = statuses(items)
        .filter_map(|s| s.get("active").and_then(Value::as_array))
        .flatten()
        .cloned()
        .collect();
    if active.is_empty() {
        status.remove("active");
    } else {
        status.insert("active".into(), Value::Array(active));
    }
    for field in ["lastScheduleTime", "lastSuccessfulTime"] {
        if let Some(latest) = statuses(items)
            .filter_map(|s| s.get(field).and_then(Value::as_str))
            .max()
        {
            status.insert(field.into(), json!(latest));
        }
    }
    Value::Object(status)
}

/// Pod: a phase from the set of member phases (missing ⇒ Pending), container statuses
/// concatenated.
fn pod(old: &Value, items: &[Item<'_>]) -> Value {
    let phases: Vec<&str> = items
        .iter()
        .map(|i| {
            i.status
                .as_ref()
                .and_then(|s| s.get("phase"))
                .and_then(Value::as_str)
                .unwrap_or("Pending")
        })
        .collect();
    let phase = if phases.contains(&"Failed") {
        "Failed"
    } else if phases.contains(&"Pending") || phases.is_empty() {
        "Pending"
    } else if phases.iter().all(|p| *p == "Succeeded") {
        "Succeeded"
    } else if phases.contains(&"Unknown") {
        "Unknown"
    } else {
        "Running"
    };
    let mut status = old.as_object().cloned().unwrap_or_default();
    status.insert("phase".into(), json!(phase));
    for field in ["containerStatuses", "initContainerStatuses"] {
        let all: Vec<Value> = statuses(items)
            .filter_map(|s| s.get(field).and_then(Value::as_array))
            .flatten()
            .cloned()
            .collect();
        if !all.is_empty() {
            status.insert(field.into(), Value::Array(all));
        }
    }
    Value::Object(status)
}

/// PVC: `Lost` if any member lost it, `Bound` when all are bound, else `Pending`.
fn pvc(old: &Value, items: &[Item<'_>]) -> Value {
    let phases: Vec<&str> = statuses(items)
        .filter_map(|s| s.get("phase").and_then(Value::as_str))
        .collect();
    let phase = if phases.contains(&"Lost") {
        "Lost"
    } else if !items.is_empty()
        && phases.len() == items.len()
        && phases.iter().all(|p| *p == "Bound")
    {
        "Bound"
    } else {
        "Pending"
    };
    let mut status = old.as_object().cloned().unwrap_or_default();
    status.insert("phase".into(), json!(phase));
    Value::Object(status)
}

#[cfg(test)]
mod tests;
