//! `scheduling.k8s.io/v1` PriorityClass: kube-apiserver's defaulting, validation and the
//! two system classes it creates at startup.
//!
//! Ported from kubernetes/kubernetes v1.33: `pkg/apis/scheduling/v1/defaults.go`
//! (`SetDefaults_PriorityClass`), `pkg/apis/scheduling/validation/validation.go`
//! (`ValidatePriorityClass`, `ValidatePriorityClassUpdate`), `pkg/apis/scheduling/types.go`
//! and `helpers.go` (the limits, `SystemPriorityClasses`, `IsKnownSystemPriorityClass`),
//! `pkg/registry/scheduling/rest/storage_scheduling.go` (the classes created at startup).

use flotilla_api::validation::FieldError;
use serde_json::{Value, json};

/// Names starting with this are reserved for the system classes.
pub const SYSTEM_PREFIX: &str = "system-";

/// The highest value a user-defined class may have.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;

/// The classes every cluster has: name, value, description.
pub const SYSTEM_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

const PREEMPTION_POLICIES: [&str; 2] = ["Never", "PreemptLowerPriority"];

/// `preemptionPolicy` defaults to `PreemptLowerPriority`.
pub fn default(object: &mut serde_json::Map<String, Value>) {
    if object.get("preemptionPolicy").is_none_or(Value::is_null) {
        object.insert("preemptionPolicy".into(), "PreemptLowerPriority".into());
    }
}

fn value_of(object: &Value) -> i64 {
    object["value"].as_i64().unwrap_or(0)
}

/// The errors of a PriorityClass (and of its update from `old`).
pub fn errors(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    let value = value_of(object);
    if name.starts_with(SYSTEM_PREFIX) {
        if let Err(reason) = known_system_class(name, value, object["globalDefault"] == true) {
            errors.push(FieldError::forbidden(
                "metadata.name",
                format!(
                    "priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {reason}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        errors.push(FieldError::forbidden(
            "value",
            format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    if let Some(policy) = object["preemptionPolicy"].as_str()
        && !PREEMPTION_POLICIES.contains(&policy)
    {
        errors.push(FieldError::not_supported(
            "preemptionPolicy",
            policy,
            &PREEMPTION_POLICIES,
        ));
    }
    if let Some(old) = old {
        if value != value_of(old) {
            errors.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        if object["preemptionPolicy"] != old["preemptionPolicy"] {
            errors.push(FieldError::invalid(
                "preemptionPolicy",
                object["preemptionPolicy"].as_str().unwrap_or(""),
                "field is immutable",
            ));
        }
    }
    errors
}

/// Whether `name` is one of the system classes with its value and not a global default.
fn known_system_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, wanted, _)) = SYSTEM_CLASSES.iter().find(|(n, _, _)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if value != *wanted {
        return Err(format!("value of {name} PriorityClass must be {wanted}"));
    }
    if global_default {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
}

/// The system classes as kube-apiserver creates them at startup.
pub fn system_classes() -> impl Iterator<Item = Value> {
    SYSTEM_CLASSES.iter().map(|(name, value, description)| {
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "description": description})
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value})
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn user_classes_stay_below_the_system_range_and_system_names_are_reserved() {
        assert!(errors(&class("high", 1_000_000_000), None).is_empty());
        assert_eq!(
            messages(&errors(&class("too-high", 1_000_000_001), None)),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        assert_eq!(
            messages(&errors(&class("system-mine", 5), None)),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
            ]
        );
        assert!(errors(&class("system-node-critical", 2_000_001_000), None).is_empty());
    }

    #[test]
    fn value_and_preemption_policy_are_immutable_and_defaulted() {
        let mut old = class("batch", 100);
        default(old.as_object_mut().expect("object"));
        assert_eq!(old["preemptionPolicy"], "PreemptLowerPriority");
        let mut changed = class("batch", 200);
        changed["preemptionPolicy"] = "Never".into();
        assert_eq!(
            messages(&errors(&changed, Some(&old))),
            [
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"Never\": field is immutable"
            ]
        );
        let mut bad = class("batch", 1);
        bad["preemptionPolicy"] = "Sometimes".into();
        assert_eq!(
            messages(&errors(&bad, None)),
            [
                "preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"Never\", \"PreemptLowerPriority\""
            ]
        );
    }
}
