//! PropagationPolicy and ClusterPropagationPolicy validation, as karmada-webhook's validating
//! handlers and `ValidatePropagationSpec` (pkg/util/validation/validation.go) do it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::defaults::{CPP_PERMANENT_ID, PP_PERMANENT_ID};
use super::{shown, str_field};
use crate::validation::{BadValue, FieldError, FieldPath, is_qualified_name};

/// `content.IsLabelKey` in karmada-webhook's words. Karmada v1.19 builds on apimachinery
/// v0.36, whose format messages count lengths in "bytes" and call a key with several `/`
/// "a valid label key"; the shared [`is_qualified_name`] keeps Kubernetes 1.33's wording
/// ("characters", "a qualified name") for the API server's own kinds.
pub fn label_key_errors(value: &str) -> Vec<String> {
    is_qualified_name(value)
        .into_iter()
        .map(webhook_wording)
        .collect()
}

/// A format message of apimachinery v0.33 as v0.36 (karmada-webhook's) words it.
pub fn webhook_wording(message: String) -> String {
    let message = match message.strip_prefix("a qualified name ") {
        Some(rest) => format!("a valid label key {rest}"),
        None => message,
    };
    match message.strip_suffix(" characters") {
        Some(head) if head.contains("must be no more than ") => format!("{head} bytes"),
        _ => message,
    }
}

/// Update rules (scheduler name, permanent id) first; when they fail nothing else is checked.
pub fn propagation_policy(
    namespaced: bool,
    object: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    let label = if namespaced {
        PP_PERMANENT_ID
    } else {
        CPP_PERMANENT_ID
    };
    let label_path = FieldPath::new("metadata").child("labels").key(label);
    // Go compares the strings, so an absent scheduler name or label equals an empty one.
    if let Some(old) = old {
        if str_field(&object["spec"], "schedulerName") != str_field(&old["spec"], "schedulerName") {
            return vec![FieldError::forbidden(
                "spec.schedulerName",
                "the schedulerName should not be updated",
            )];
        }
        if str_field(&object["metadata"]["labels"], label)
            != str_field(&old["metadata"]["labels"], label)
        {
            return vec![FieldError::forbidden(
                label_path,
                format!(
                    "label {label} is immutable, it can only be set by the system during creation"
                ),
            )];
        }
    }
    if object["metadata"]["labels"].get(label).is_none() {
        return vec![FieldError::required(
            label_path,
            format!(
                "label {label} is required, it should be set by the mutating admission webhook during creation"
            ),
        )];
    }
    let namespace = if namespaced {
        object["metadata"]["namespace"].as_str().unwrap_or("")
    } else {
        ""
    };
    propagation_spec(&object["spec"], namespace)
}

/// `ValidatePropagationSpec`.
pub fn propagation_spec(spec: &Value, policy_namespace: &str) -> Vec<FieldError> {
    let path = FieldPath::new("spec");
    let mut errors = placement(&spec["placement"], &path.child("placement"));
    let propagate_deps = spec["propagateDeps"].as_bool().unwrap_or(false);
    if !spec["failover"]["application"].is_null() && !propagate_deps {
        errors.push(FieldError::invalid(
            path.child("propagateDeps"),
            false,
            "application failover is set, propagateDeps must be true",
        ));
    }
    errors.extend(failover(&spec["failover"], &path.child("failover")));
    errors.extend(resource_selector_namespaces(
        &spec["resourceSelectors"],
        policy_namespace,
        &path.child("resourceSelectors"),
    ));
    if str_field(spec, "preemption") == "Always" {
        for (i, selector) in items(&spec["resourceSelectors"]) {
            if str_field(selector, "name").is_empty() {
                errors.push(FieldError::invalid(
                    path.child("resourceSelectors").index(i).child("name"),
                    "",
                    "name cannot be empty if preemption is Always, the empty name may cause unexpected resources preemption",
                ));
            }
        }
    }
    let suspension = &spec["suspension"];
    let dispatching = suspension["dispatching"].as_bool() == Some(true);
    let on_clusters = suspension["dispatchingOnClusters"]["clusterNames"]
        .as_array()
        .is_some_and(|c| !c.is_empty());
    if dispatching && on_clusters {
        errors.push(FieldError::invalid(
            path.child("suspension"),
            shown(suspension),
            "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames",
        ));
    }
    errors
}

/// The items of a list with their indexes (nothing when not a list).
pub fn items(value: &Value) -> impl Iterator<Item = (usize, &Value)> {
    value.as_array().into_iter().flatten().enumerate()
}

/// Selectors of a namespaced policy must select in the policy's namespace.
pub fn resource_selector_namespaces(
    selectors: &Value,
    namespace: &str,
    path: &FieldPath,
) -> Vec<FieldError> {
    if namespace.is_empty() {
        return Vec::new();
    }
    items(selectors)
        .filter(|(_, s)| str_field(s, "namespace") != namespace)
        .map(|(i, s)| {
            FieldError::invalid(
                path.index(i).child("namespace"),
                str_field(s, "namespace"),
                "namespace of resource selector must be the same as the namespace of the policy",
            )
        })
        .collect()
}

/// `ValidatePlacement`.
pub fn placement(placement: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let affinity = &placement["clusterAffinity"];
    let affinities = &placement["clusterAffinities"];
    if !affinity.is_null() && !affinities.is_null() {
        errors.push(FieldError::invalid(
            path,
            shown(placement),
            "clusterAffinities cannot co-exist with clusterAffinity",
        ));
    }
    let overflow_allowed = overflow_allowed(&placement["replicaScheduling"]);
    for (i, term) in items(affinities) {
        if !term["overflowAffinities"].is_null() && !overflow_allowed {
            errors.push(FieldError::invalid(
                path.child("clusterAffinities").index(i).child("overflowAffinities"),
                shown(&term["overflowAffinities"]),
                "overflowAffinities can only be used together with dynamic weight or aggregated scheduling",
            ));
        }
    }
    errors.extend(cluster_affinity(affinity, &path.child("clusterAffinity")));
    errors.extend(cluster_affinities(
        affinities,
        &path.child("clusterAffinities"),
    ));
    errors.extend(spread_constraints(
        &placement["spreadConstraints"],
        &path.child("spreadConstraints"),
    ));
    errors.extend(workload_affinity(
        &placement["workloadAffinity"],
        &path.child("workloadAffinity"),
    ));
    for (i, toleration) in items(&placement["clusterTolerations"]) {
        let operator = str_field(toleration, "operator");
        if operator == "Lt" || operator == "Gt" {
            errors.push(FieldError::not_supported(
                path.child("clusterTolerations").index(i).child("operator"),
                operator,
                &["", "Exists", "Equal"],
            ));
        }
    }
    errors
}

/// `IsOverflowSchedulingAllowed`: Divided and Aggregated, or Weighted by a dynamic weight.
fn overflow_allowed(scheduling: &Value) -> bool {
    if str_field(scheduling, "replicaSchedulingType") != "Divided" {
        return false;
    }
    match str_field(scheduling, "replicaDivisionPreference") {
        "Aggregated" => true,
        "Weighted" => !str_field(&scheduling["weightPreference"], "dynamicWeight").is_empty(),
        _ => false,
    }
}

/// `ValidateClusterAffinity`: field selectors only on provider/region/zone with In/NotIn.
pub fn cluster_affinity(affinity: &Value, path: &FieldPath) -> Vec<FieldError> {
    let selector = &affinity["fieldSelector"];
    if selector.is_null() {
        return Vec::new();
    }
    for (_, expression) in items(&selector["matchExpressions"]) {
        let key = str_field(expression, "key");
        let operator = str_field(expression, "operator");
        let message = if !matches!(key, "provider" | "region" | "zone") {
            format!("unsupported key {key:?}, must be provider, region, or zone")
        } else if !matches!(operator, "In" | "NotIn") {
            format!("unsupported operator {operator:?}, must be In or NotIn")
        } else {
            continue;
        };
        return vec![FieldError::invalid(
            path.child("fieldSelector"),
            shown(selector),
            message,
        )];
    }
    Vec::new()
}

fn cluster_affinities(terms: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (i, term) in items(terms) {
        let name = str_field(term, "affinityName");
        for message in label_key_errors(name) {
            errors.push(FieldError::invalid(path.index(i), name, message));
        }
        if !names.insert(name) {
            errors.push(FieldError::invalid(
                path,
                shown(terms),
                "each affinity term in a policy must have a unique name",
            ));
        }
        errors.extend(cluster_affinity(term, &path.index(i)));
        errors.extend(overflow_affinities(term, &path.index(i)));
    }
    errors
}

fn empty_cluster_affinity(affinity: &Value) -> bool {
    let empty_list = |key: &str| affinity[key].as_array().is_none_or(Vec::is_empty);
    affinity["labelSelector"].is_null()
        && affinity["fieldSelector"].is_null()
        && empty_list("clusterNames")
        && empty_list("exclude")
}

fn overflow_affinities(term: &Value, path: &FieldPath) -> Vec<FieldError> {
    let overflow = &term["overflowAffinities"];
    if overflow.is_null() {
        return Vec::new();
    }
    let path = path.child("overflowAffinities");
    let mut errors = Vec::new();
    if empty_cluster_affinity(term) {
        errors.push(FieldError::invalid(
            &path,
            shown(overflow),
            "overflowAffinities can only be used together with the inline ClusterAffinity",
        ));
    }
    let mut names = BTreeSet::from([str_field(term, "affinityName")]);
    for (i, affinity) in items(overflow) {
        let name = str_field(affinity, "affinityName");
        let name_path = path.index(i).child("affinityName");
        for message in label_key_errors(name) {
            errors.push(FieldError::invalid(&name_path, name, message));
        }
        if !names.insert(name) {
            errors.push(FieldError::invalid(
                &name_path,
                name,
                "overflow affinity name must be unique and must not duplicate the primary group's affinityName",
            ));
        }
        errors.extend(cluster_affinity(affinity, &path.index(i)));
    }
    errors
}

/// `ValidateSpreadConstraint`.
pub fn spread_constraints(constraints: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // Per spreadByField: whether its repetition was already reported.
    let mut fields: BTreeMap<&str, bool> = BTreeMap::new();
    for (i, constraint) in items(constraints) {
        let field = str_field(constraint, "spreadByField");
        let label = str_field(constraint, "spreadByLabel");
        let min = constraint["minGroups"].as_i64().unwrap_or(0);
        let max = constraint["maxGroups"].as_i64().unwrap_or(0);
        let mut invalid = |message: &str| {
            errors.push(FieldError::invalid(
                path.index(i),
                shown(constraint),
                message,
            ));
        };
        if !field.is_empty() && !label.is_empty() {
            invalid("spreadByLabel should not co-exist with spreadByField");
        }
        if min < 0 {
            invalid("minGroups lower than 0 is not allowed");
        }
        if max < 0 {
            invalid("maxGroups lower than 0 is not allowed");
        }
        if max > 0 && max < min {
            invalid("maxGroups lower than minGroups is not allowed");
        }
        if !field.is_empty() {
            match fields.get_mut(field) {
                Some(reported @ false) => {
                    errors.push(FieldError::invalid(
                        path,
                        shown(constraints),
                        format!("multiple {field} spread constraints are not allowed"),
                    ));
                    *reported = true;
                }
                Some(true) => {}
                None => {
                    fields.insert(field, false);
                }
            }
        }
    }
    if !fields.is_empty() && !fields.contains_key("cluster") {
        errors.push(FieldError::invalid(
            path,
            shown(constraints),
            "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
        ));
    }
    errors
}

fn workload_affinity(affinity: &Value, path: &FieldPath) -> Vec<FieldError> {
    if affinity.is_null() {
        return Vec::new();
    }
    let mut errors = Vec::new();
    for term in ["affinity", "antiAffinity"] {
        if affinity[term].is_null() {
            continue;
        }
        let key = str_field(&affinity[term], "groupByLabelKey");
        for message in label_key_errors(key) {
            errors.push(FieldError::invalid(
                path.child(term).child("groupByLabelKey"),
                key,
                message,
            ));
        }
    }
    if !affinity["affinity"].is_null()
        && !affinity["antiAffinity"].is_null()
        && str_field(&affinity["affinity"], "groupByLabelKey")
            == str_field(&affinity["antiAffinity"], "groupByLabelKey")
    {
        errors.push(FieldError::invalid(
            path,
            shown(affinity),
            "affinity and antiAffinity must not use the same groupByLabelKey",
        ));
    }
    errors
}

/// `ValidateFailover`.
pub fn failover(failover: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let application = &failover["application"];
    if application.is_object() {
        let path = path.child("application");
        let toleration = &application["decisionConditions"]["tolerationSeconds"];
        if let Some(seconds) = toleration.as_i64()
            && seconds < 0
        {
            errors.push(FieldError::invalid(
                path.child("decisionConditions").child("tolerationSeconds"),
                seconds,
                "must be greater than or equal to 0",
            ));
        }
        let gracefully = str_field(application, "purgeMode") == "Gracefully";
        let grace = &application["gracePeriodSeconds"];
        let grace_path = path.child("gracePeriodSeconds");
        if !gracefully && !grace.is_null() {
            errors.push(FieldError::invalid(
                &grace_path,
                shown(grace),
                "only takes effect when purgeMode is gracefully",
            ));
        }
        if gracefully && grace.is_null() {
            errors.push(FieldError::invalid(
                &grace_path,
                BadValue::Null,
                "should not be empty when purgeMode is gracefully",
            ));
        }
        if grace.as_i64().is_some_and(|g| g <= 0) {
            errors.push(FieldError::invalid(
                &grace_path,
                shown(grace),
                "must be greater than 0",
            ));
        }
        errors.extend(state_preservation(
            &application["statePreservation"],
            &path.child("statePreservation"),
        ));
    }
    let cluster = &failover["cluster"];
    if cluster.is_object() {
        let path = path.child("cluster").child("statePreservation");
        errors.extend(state_preservation(&cluster["statePreservation"], &path));
    }
    errors
}

fn state_preservation(preservation: &Value, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, rule) in items(&preservation["rules"]) {
        let name = str_field(rule, "aliasLabelName");
        for message in label_key_errors(name) {
            errors.push(FieldError::invalid(
                path.child("rules").index(i).child("aliasLabelName"),
                name,
                message,
            ));
        }
    }
    errors
}

/// A JSON object's entries as strings (non-string values are skipped).
pub fn string_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(Map::iter)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
        .collect()
}
