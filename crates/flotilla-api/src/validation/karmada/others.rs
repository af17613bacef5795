//! FederatedResourceQuota, ClusterTaintPolicy and CronFederatedHPA validation
//! (pkg/webhook/{federatedresourcequota,clustertaintpolicy,cronfederatedhpa}/validating.go).
//! FederatedHPA has its own module, [`super::federated_hpa`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::cluster::cluster_name_errors;
use super::federated_hpa::cross_version_reference;
use super::policy::{items, label_key_errors};
use super::str_field;
use crate::Quantity;
use crate::validation::{DNS1123_LABEL_MAX_LENGTH, FieldError, FieldPath, is_qualified_name};

const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

const STANDARD_RESOURCES_EXTRA: &[&str] = &["storage"];

const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

/// A resource name Kubernetes knows (`IsStandardResourceName`): the quota resources, `storage`
/// and huge pages.
pub(super) fn standard_resource(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name)
        || STANDARD_RESOURCES_EXTRA.contains(&name)
        || huge_pages(name)
}

/// An extended resource (`example.com/foo`): integer-valued in quotas.
pub(super) fn extended(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if native || name.starts_with("requests.") {
        return false;
    }
    is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `ValidateResourceQuotaResourceName`, with the qualified-name messages in karmada-webhook's
/// (apimachinery v0.36) words: lengths in bytes, "a valid label key".
fn quota_resource_name(name: &str, path: &FieldPath) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = label_key_errors(name)
        .into_iter()
        .map(|m| FieldError::invalid(path, name, m))
        .collect();
    if errors.is_empty() && !name.contains('/') && !standard_resource(name) {
        errors.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
    }
    let quota = STANDARD_QUOTA_RESOURCES.contains(&name) || huge_pages(name);
    if !name.contains('/') && !quota {
        errors.push(FieldError::invalid(
            path,
            name,
            "must be a standard resource for quota",
        ));
    }
    errors
}

fn resource_list(list: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // Sorted, for a deterministic order (Karmada walks a Go map).
    let sorted: BTreeMap<&String, &Value> = list.as_object().into_iter().flatten().collect();
    for (name, value) in sorted {
        let at = path.key(name);
        errors.extend(quota_resource_name(name, &at));
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let Ok(quantity) = Quantity::parse(&text) else {
            continue;
        };
        if quantity.signum() < 0 {
            errors.push(FieldError::invalid(
                &at,
                quantity.to_string(),
                "must be greater than or equal to 0",
            ));
        }
        let integer = INTEGER_RESOURCES.contains(&name.as_str()) || extended(name);
        if integer && quantity.as_milli().is_none_or(|m| m % 1000 != 0) {
            errors.push(FieldError::invalid(
                &at,
                quantity.to_string(),
                "must be an integer",
            ));
        }
    }
    errors
}

fn quantities(list: &Value) -> BTreeMap<String, Quantity> {
    list.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            v.as_str()
                .and_then(|s| Quantity::parse(s).ok())
                .map(|q| (k.clone(), q))
        })
        .collect()
}

/// The FederatedResourceQuota webhook's rules (spec and status).
pub fn federated_resource_quota(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    if name.len() > DNS1123_LABEL_MAX_LENGTH {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("must be no more than {DNS1123_LABEL_MAX_LENGTH} characters"),
        ));
    }
    let spec = &object["spec"];
    let path = FieldPath::new("spec");
    errors.extend(resource_list(&spec["overall"], &path.child("overall")));
    let assignments = &spec["staticAssignments"];
    for (i, assignment) in items(assignments) {
        let at = path.child("staticAssignments").index(i);
        errors.extend(cluster_name(assignment, &at));
        errors.extend(resource_list(&assignment["hard"], &at.child("hard")));
    }
    let overall = quantities(&spec["overall"]);
    for (resource, total) in &overall {
        let mut assigned = Quantity::parse("0").expect("zero parses");
        for (_, assignment) in items(assignments) {
            if let Some(q) = quantities(&assignment["hard"]).get(resource) {
                assigned = assigned.checked_add(q).unwrap_or(assigned);
            }
        }
        if *total < assigned {
            errors.push(FieldError::invalid(
                path.child("overall").key(resource),
                total.to_string(),
                "overall is less than assignments",
            ));
        }
    }
    for (i, assignment) in items(assignments) {
        for (resource, _) in assignment["hard"].as_object().into_iter().flatten() {
            if !overall.contains_key(resource) && spec["overall"].get(resource).is_none() {
                errors.push(FieldError::invalid(
                    path.child("staticAssignments")
                        .index(i)
                        .child("hard")
                        .key(resource),
                    resource.as_str(),
                    "assignment resourceName is not exist in overall",
                ));
            }
        }
    }
    let status = &object["status"];
    let path = FieldPath::new("status");
    errors.extend(resource_list(&status["overall"], &path.child("overall")));
    errors.extend(resource_list(
        &status["overallUsed"],
        &path.child("overallUsed"),
    ));
    for (i, item) in items(&status["aggregatedStatus"]) {
        let at = path.child("aggregatedStatus").index(i);
        errors.extend(cluster_name(item, &at));
        errors.extend(resource_list(&item["hard"], &at.child("hard")));
        errors.extend(resource_list(&item["used"], &at.child("used")));
    }
    errors
}

fn cluster_name(item: &Value, path: &FieldPath) -> Vec<FieldError> {
    let name = str_field(item, "clusterName");
    let messages = cluster_name_errors(name);
    if messages.is_empty() {
        Vec::new()
    } else {
        vec![FieldError::invalid(
            path.child("clusterName"),
            name,
            messages.join(","),
        )]
    }
}

/// The ClusterTaintPolicy webhook: no NoExecute taints unless `allow_no_execute`
/// (karmada-webhook's `--allow-no-execute-taint-policy`, off by default), no two taints with the
/// same key and effect.
pub fn cluster_taint_policy(object: &Value, allow_no_execute: bool) -> Vec<FieldError> {
    let path = FieldPath::new("spec").child("taints");
    let taints: Vec<(usize, &Value)> = items(&object["spec"]["taints"]).collect();
    let mut errors = Vec::new();
    for (i, taint) in &taints {
        let key = str_field(taint, "key");
        let effect = str_field(taint, "effect");
        if effect == "NoExecute" && !allow_no_execute {
            errors.push(FieldError::forbidden(
                path.index(*i),
                "Configuring taint with NoExecute effect is not allowed, this capability must be explicitly enabled by administrators through command-line flags",
            ));
        }
        let repeated = taints[i + 1..]
            .iter()
            .any(|(_, t)| str_field(t, "key") == key && str_field(t, "effect") == effect);
        if repeated {
            errors.push(FieldError::duplicate(
                path.index(*i),
                format!(
                    "Duplicate taint with the same key({key}) and effect({effect}) is not allowed"
                ),
            ));
        }
    }
    errors
}

/// The CronFederatedHPA webhook: a Karmada scale target must be a FederatedHPA; the target
/// reference; unique rule names, a schedule the controller can run, a known time zone, and the
/// replicas the target kind needs.
pub fn cron_federated_hpa(object: &Value) -> Vec<FieldError> {
    let spec = &object["spec"];
    let path = FieldPath::new("spec");
    let reference = &spec["scaleTargetRef"];
    let kind = str_field(reference, "kind");
    let federated =
        str_field(reference, "apiVersion") == crate::karmada::AUTOSCALING_KARMADA_V1ALPHA1;
    if federated && kind != "FederatedHPA" {
        return vec![FieldError::invalid(
            path.child("scaleTargetRef").child("kind"),
            kind,
            format!("invalid scaleTargetRef kind: {kind}, only support FederatedHPA"),
        )];
    }
    let mut errors = cross_version_reference(reference, &path.child("scaleTargetRef"));
    let mut names = std::collections::BTreeSet::new();
    for (i, rule) in items(&spec["rules"]) {
        let at = path.child("rules").index(i);
        let name = str_field(rule, "name");
        if !names.insert(name) {
            errors.push(FieldError::duplicate(at.child("name"), name));
        }
        let schedule = str_field(rule, "schedule");
        if crate::karmada::cron::Schedule::parse(schedule, jiff::tz::TimeZone::UTC).is_err() {
            errors.push(FieldError::invalid(
                at.child("schedule"),
                schedule,
                "invalid cron format",
            ));
        }
        if let Some(zone) = rule["timeZone"].as_str()
            && crate::karmada::cron::load_zone(zone).is_err()
        {
            errors.push(FieldError::invalid(
                at.child("timeZone"),
                zone,
                format!("unknown time zone {zone}"),
            ));
        }
        let int = |field: &str| rule[field].as_i64();
        if federated {
            let (min, max) = (int("targetMinReplicas"), int("targetMaxReplicas"));
            if min.is_none() && max.is_none() {
                errors.push(FieldError::invalid(
                    at.child("targetMaxReplicas"),
                    "",
                    "targetMinReplicas and targetMaxReplicas cannot be nil at the same time if you want to scale FederatedHPA",
                ));
            }
            if min.unwrap_or(1) <= 0 {
                errors.push(FieldError::invalid(
                    at.child("targetMinReplicas"),
                    "",
                    "targetMinReplicas should be larger than 0",
                ));
            }
            if max.unwrap_or(i64::from(i32::MAX)) <= 0 {
                errors.push(FieldError::invalid(
                    at.child("targetMaxReplicas"),
                    "",
                    "targetMaxReplicas should be larger than 0",
                ));
            }
            if min.unwrap_or(1) > max.unwrap_or(i64::from(i32::MAX)) {
                errors.push(FieldError::invalid(
                    at.child("targetMinReplicas"),
                    "",
                    "targetMaxReplicas should be larger than or equal to targetMinReplicas",
                ));
            }
        } else {
            let replicas = int("targetReplicas");
            if replicas.is_none() {
                errors.push(FieldError::invalid(
                    at.child("targetReplicas"),
                    "",
                    format!("targetReplicas cannot be nil if you want to scale {kind}"),
                ));
            }
            if replicas.unwrap_or(0) < 0 {
                errors.push(FieldError::invalid(
                    at.child("targetReplicas"),
                    "",
                    "targetReplicas should be larger than or equal to 0",
                ));
            }
        }
    }
    errors
}
