//! `AggregateStatus`: the template's status computed from the members' reflected statuses
//! (`binding.status.aggregatedStatus`), per kind (reference §5.2). Each function returns the
//! whole new `.status`; the caller writes it only when it differs from the current one.
//!
//! Which fields of the template's current status survive follows Karmada: the workloads
//! (Deployment, ReplicaSet, StatefulSet, DaemonSet) and CronJob only overwrite the fields they
//! aggregate; every other kind gets a new status. Fields are written as Go encodes the
//! Kubernetes types (a zero counter without `omitempty` is written, one with it is left out).
//! Malformed member statuses never fail: a field of the wrong type counts as absent.

mod load_balancer;

use std::collections::BTreeSet;

use flotilla_api::karmada::AggregatedStatusItem;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// One member's item with its reflected status parsed (bindings hold it as JSON text).
struct Item<'a> {
    cluster_name: &'a str,
    status: Option<Value>,
}

/// The new status of `template`, or `None` when its kind has no aggregation hook.
pub fn aggregate_status(template: &Value, items: &[AggregatedStatusItem]) -> Option<Value> {
    aggregate_status_at(template, items, Timestamp::now())
}

/// [`aggregate_status`] with `now` as the time of the conditions it adds (Job).
fn aggregate_status_at(
    template: &Value,
    items: &[AggregatedStatusItem],
    now: Timestamp,
) -> Option<Value> {
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
                ("availableReplicas", false),
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
            load_balancer::service(items)
        }
        ("networking.k8s.io/v1", "Ingress") => load_balancer::ingress(items),
        ("batch/v1", "Job") => job(&old, items, now),
        ("batch/v1", "CronJob") => cron_job(&old, items),
        ("v1", "Pod") => pod(items),
        ("v1", "PersistentVolume") => persistent_volume(items),
        ("v1", "PersistentVolumeClaim") => pvc(items),
        ("policy/v1", "PodDisruptionBudget") => pod_disruption_budget(items),
        // Karmada has no hook for autoscaling/v1 (nor v2beta*).
        ("autoscaling/v2", "HorizontalPodAutoscaler") => horizontal_pod_autoscaler(items),
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
    statuses(items)
        .map(|s| int(s, field))
        .fold(0, i64::saturating_add)
}

fn str_field<'a>(status: &'a Value, field: &str) -> Option<&'a str> {
    status.get(field).and_then(Value::as_str)
}

/// A `metav1.Time` field; one that does not parse counts as absent.
fn timestamp(status: &Value, field: &str) -> Option<Timestamp> {
    str_field(status, field)?.parse().ok()
}

/// How Go encodes a `metav1.Time`: RFC 3339 in UTC, whole seconds.
fn format_time(time: Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Sets `field` to `value`, or removes it when zero and Go's field has `omitempty`.
fn put_counter(status: &mut Map<String, Value>, field: &str, value: i64, omit_empty: bool) {
    if value == 0 && omit_empty {
        status.remove(field);
    } else {
        status.insert(field.into(), json!(value));
    }
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

/// The template's status with `fields` replaced by the members' sums (`true`: omitted when
/// zero, as Go's `omitempty`); its other fields (conditions, revisions…) are kept.
/// `observedGeneration` becomes the template generation only when every item (nil statuses
/// included) caught up.
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
    let mut status = old.as_object().cloned().unwrap_or_default();
    put_counter(&mut status, "observedGeneration", observed, true);
    for (field, omit_empty) in fields {
        put_counter(&mut status, field, sum(items, field), *omit_empty);
    }
    Value::Object(status)
}

fn has_condition(status: &Value, kind: &str) -> bool {
    conditions(status)
        .any(|c| str_field(c, "type") == Some(kind) && str_field(c, "status") == Some("True"))
}

fn conditions(status: &Value) -> impl Iterator<Item = &Value> {
    status
        .get("conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `Complete` or `Failed`: the first such condition that is True.
fn job_finished(status: &Value) -> Option<&str> {
    conditions(status).find_map(|c| {
        let kind = str_field(c, "type")?;
        (matches!(kind, "Complete" | "Failed") && str_field(c, "status") == Some("True"))
            .then_some(kind)
    })
}

/// Job (a new status unless the template already finished, then left as it is): Σ active,
/// succeeded and failed; `Failed` naming the members whose Job failed; `Complete` when every
/// member completed, and `SuccessCriteriaMet` when moreover all of them report it. The
/// template's own `startTime` is kept, else the earliest once every member started;
/// `completionTime` is the latest once every member has one.
fn job(old: &Value, items: &[Item<'_>], now: Timestamp) -> Value {
    if job_finished(old).is_some() {
        return old.clone();
    }
    let mut failed_clusters = Vec::new();
    let (mut complete, mut criteria_met, mut started, mut completed) = (0, 0, 0, 0);
    let mut start: Option<Timestamp> = None;
    let mut completion: Option<Timestamp> = None;
    for item in items {
        let Some(s) = &item.status else { continue };
        match job_finished(s) {
            Some("Complete") => complete += 1,
            Some(_) => failed_clusters.push(item.cluster_name),
            None => {}
        }
        if has_condition(s, "SuccessCriteriaMet") {
            criteria_met += 1;
        }
        if let Some(time) = timestamp(s, "startTime") {
            started += 1;
            start = Some(start.map_or(time, |earliest| earliest.min(time)));
        }
        if let Some(time) = timestamp(s, "completionTime") {
            completed += 1;
            completion = Some(completion.map_or(time, |latest| latest.max(time)));
        }
    }
    let now = format_time(now);
    let condition = |kind: &str, reason: &str, message: String| {
        json!({"type": kind, "status": "True", "lastProbeTime": now,
            "lastTransitionTime": now, "reason": reason, "message": message})
    };
    let mut conditions = Vec::new();
    if !failed_clusters.is_empty() {
        conditions.push(condition(
            "Failed",
            "JobFailed",
            format!(
                "Job executed failed in member clusters {}",
                failed_clusters.join(",")
            ),
        ));
    }
    if complete > 0 && complete == items.len() {
        conditions.push(condition("Complete", "Completed", "Job completed".into()));
        if criteria_met == items.len() {
            conditions.push(condition(
                "SuccessCriteriaMet",
                "CompletionsReached",
                "All member clusters have met success criteria".into(),
            ));
        }
    }
    let mut status = Map::new();
    if !conditions.is_empty() {
        status.insert("conditions".into(), Value::Array(conditions));
    }
    match old.get("startTime").filter(|t| !t.is_null()) {
        Some(own) => {
            status.insert("startTime".into(), own.clone());
        }
        None => {
            if let Some(start) = start.filter(|_| started == items.len()) {
                status.insert("startTime".into(), json!(format_time(start)));
            }
        }
    }
    if let Some(completion) = completion.filter(|_| completed == items.len()) {
        status.insert("completionTime".into(), json!(format_time(completion)));
    }
    for field in ["active", "succeeded", "failed"] {
        put_counter(&mut status, field, sum(items, field), true);
    }
    Value::Object(status)
}

/// CronJob: the members' active jobs concatenated, the latest schedule and success times
/// (removed when no member reports one).
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
        match statuses(items).filter_map(|s| timestamp(s, field)).max() {
            Some(latest) => {
                status.insert(field.into(), json!(format_time(latest)));
            }
            None => {
                status.remove(field);
            }
        }
    }
    Value::Object(status)
}

/// The first of `precedence` among `phases`.
fn first_phase<'a>(phases: &BTreeSet<&str>, precedence: &[&'a str]) -> Option<&'a str> {
    precedence.iter().copied().find(|p| phases.contains(p))
}

/// Each member's phase (`""` when it has none); a member without a status counts as Pending.
fn member_phases<'a>(items: &'a [Item<'_>]) -> BTreeSet<&'a str> {
    items
        .iter()
        .map(|i| match &i.status {
            Some(s) => str_field(s, "phase").unwrap_or(""),
            None => "Pending",
        })
        .collect()
}

fn with_phase(phase: Option<&str>) -> Map<String, Value> {
    let mut status = Map::new();
    if let Some(phase) = phase.filter(|p| !p.is_empty()) {
        status.insert("phase".into(), json!(phase));
    }
    status
}

/// Pod (a new status): the phase by precedence Failed > Pending > Running > Succeeded
/// (Unknown and unknown phases ignored; none left, as with no member listed ⇒ no phase), and
/// every member's container and init container statuses reduced to `ready` and `state`.
/// Karmada leaves the status alone only for a nil item list, which its status controller
/// never passes (it always hands over the list it assembled, empty or not).
fn pod(items: &[Item<'_>]) -> Value {
    let phase = first_phase(
        &member_phases(items),
        &["Failed", "Pending", "Running", "Succeeded"],
    );
    let mut status = with_phase(phase);
    for field in ["containerStatuses", "initContainerStatuses"] {
        let all: Vec<Value> = statuses(items)
            .filter_map(|s| s.get(field).and_then(Value::as_array))
            .flatten()
            .map(ready_and_state)
            .collect();
        if !all.is_empty() {
            status.insert(field.into(), Value::Array(all));
        }
    }
    Value::Object(status)
}

/// A container status with only `ready` and `state`, encoded as Go encodes the rest of
/// `ContainerStatus` left empty (its fields without `omitempty` are written).
fn ready_and_state(container: &Value) -> Value {
    let state: Map<String, Value> = container
        .get("state")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(key, value)| {
            matches!(key.as_str(), "waiting" | "running" | "terminated") && !value.is_null()
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let ready = container
        .get("ready")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    json!({"name": "", "state": state, "lastState": {}, "ready": ready, "restartCount": 0,
        "image": "", "imageID": ""})
}

/// PersistentVolume (a new status): the phase by precedence Failed > Pending > Available >
/// Bound > Released (a member without a status counts as Pending; none known ⇒ no phase).
fn persistent_volume(items: &[Item<'_>]) -> Value {
    let phase = first_phase(
        &member_phases(items),
        &["Failed", "Pending", "Available", "Bound", "Released"],
    );
    Value::Object(with_phase(phase))
}

/// PVC (a new status): `Lost` if any member lost it, else the last member phase that is not
/// `Bound` (an empty one included), else `Bound` — members without a status are skipped.
fn pvc(items: &[Item<'_>]) -> Value {
    let mut phase = "Bound";
    for status in statuses(items) {
        let member = str_field(status, "phase").unwrap_or("");
        if member == "Lost" {
            phase = member;
            break;
        }
        if member != "Bound" {
            phase = member;
        }
    }
    Value::Object(with_phase(Some(phase)))
}

/// PodDisruptionBudget (a new status): the counters summed and the disrupted pods merged
/// under `<cluster>/<pod>`.
fn pod_disruption_budget(items: &[Item<'_>]) -> Value {
    let mut status = Map::new();
    for field in [
        "currentHealthy",
        "desiredHealthy",
        "disruptionsAllowed",
        "expectedPods",
    ] {
        put_counter(&mut status, field, sum(items, field), false);
    }
    let mut disrupted = Map::new();
    for item in items {
        let Some(pods) = item
            .status
            .as_ref()
            .and_then(|s| s.get("disruptedPods"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (pod, time) in pods {
            disrupted.insert(format!("{}/{pod}", item.cluster_name), time.clone());
        }
    }
    if !disrupted.is_empty() {
        status.insert("disruptedPods".into(), Value::Object(disrupted));
    }
    Value::Object(status)
}

/// HorizontalPodAutoscaler `autoscaling/v2` (a new status): Σ currentReplicas and
/// desiredReplicas. Go writes the empty `currentMetrics` (no `omitempty`) as `null`.
fn horizontal_pod_autoscaler(items: &[Item<'_>]) -> Value {
    let mut status = Map::new();
    put_counter(
        &mut status,
        "currentReplicas",
        sum(items, "currentReplicas"),
        true,
    );
    put_counter(
        &mut status,
        "desiredReplicas",
        sum(items, "desiredReplicas"),
        false,
    );
    status.insert("currentMetrics".into(), Value::Null);
    Value::Object(status)
}

#[cfg(test)]
mod tests;
