//! Fields kube-apiserver refuses to change on update, for the kinds whose controllers depend on
//! them. Ported (behaviour, not code) from Kubernetes v1.32 `pkg/apis/apps/validation`
//! (`ValidateDeploymentUpdate`, `ValidateReplicaSetUpdate`, `ValidateDaemonSetUpdate`: the
//! selector; `ValidateStatefulSetUpdate`: every spec field but `replicas`, `ordinals`,
//! `template`, `updateStrategy`, `persistentVolumeClaimRetentionPolicy` and `minReadySeconds`),
//! `pkg/apis/batch/validation` (`ValidateJobSpecUpdate`: the selector, the template unless the
//! Job is suspended, `completions` unless an Indexed Job scales with `parallelism`) and
//! `pkg/apis/core/validation` (`ValidateServiceUpdate`: the cluster IPs, while the Service keeps
//! needing one).
//!
//! Messages are kube's; the offending value of a selector is rendered as Go's `%#v` of a
//! `LabelSelector`, a pod template as compact JSON (kube dumps the Go struct).

use flotilla_api::validation::{BadValue, FieldError};
use serde_json::Value;

const IMMUTABLE: &str = "field is immutable";
const STATEFUL_SET_MUTABLE: [&str; 6] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// The errors of updating `old` to `new`, a `group`/`kind` object (main resource, defaulted).
pub fn errors(group: &str, kind: &str, new: &Value, old: &Value) -> Vec<FieldError> {
    let (spec, old_spec) = (&new["spec"], &old["spec"]);
    let mut errors = Vec::new();
    match (group, kind) {
        ("apps", "Deployment" | "ReplicaSet" | "DaemonSet") => {
            selector(spec, old_spec, &mut errors);
        }
        ("apps", "StatefulSet") => {
            let changed = spec
                .as_object()
                .into_iter()
                .flatten()
                .chain(old_spec.as_object().into_iter().flatten())
                .any(|(field, _)| {
                    !STATEFUL_SET_MUTABLE.contains(&field.as_str())
                        && spec[field] != old_spec[field]
                });
            if changed {
                errors.push(FieldError::forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
                ));
            }
        }
        ("batch", "Job") => {
            selector(spec, old_spec, &mut errors);
            let suspended = old_spec["suspend"] == Value::Bool(true);
            if !suspended && spec["template"] != old_spec["template"] {
                errors.push(FieldError::invalid(
                    "spec.template",
                    BadValue::Verbatim(spec["template"].to_string()),
                    IMMUTABLE,
                ));
            }
            let elastic = spec["completionMode"] == "Indexed"
                && spec["completions"] == spec["parallelism"]
                && old_spec["completions"] == old_spec["parallelism"];
            if spec["completions"] != old_spec["completions"] && !elastic {
                errors.push(FieldError::invalid(
                    "spec.completions",
                    spec["completions"]
                        .as_i64()
                        .map_or(BadValue::Null, BadValue::Int),
                    IMMUTABLE,
                ));
            }
        }
        ("", "Service") => {
            let needs = |s: &Value| s["type"].as_str().unwrap_or("ClusterIP") != "ExternalName";
            let old_ips = strings(&old_spec["clusterIPs"]);
            let new_ips = strings(&spec["clusterIPs"]);
            if needs(spec)
                && needs(old_spec)
                && !old_ips.is_empty()
                && !new_ips.is_empty()
                && old_ips.first() != new_ips.first()
            {
                errors.push(FieldError::invalid(
                    "spec.clusterIPs[0]",
                    BadValue::StrList(new_ips),
                    "may not change once set",
                ));
            }
        }
        _ => {}
    }
    errors
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn selector(spec: &Value, old_spec: &Value, errors: &mut Vec<FieldError>) {
    if spec["selector"] != old_spec["selector"] {
        errors.push(FieldError::invalid(
            "spec.selector",
            BadValue::Verbatim(go_selector(&spec["selector"])),
            IMMUTABLE,
        ));
    }
}

/// Go's `%#v` of a `metav1.LabelSelector`.
fn go_selector(selector: &Value) -> String {
    let quote = |s: &str| format!("{s:?}");
    let labels = match selector["matchLabels"].as_object() {
        Some(map) => {
            let mut pairs: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", quote(k), quote(v.as_str().unwrap_or(""))))
                .collect();
            pairs.sort();
            format!("map[string]string{{{}}}", pairs.join(", "))
        }
        None => "map[string]string(nil)".to_owned(),
    };
    let expressions = match selector["matchExpressions"].as_array() {
        Some(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|e| {
                    let values = strings(&e["values"]);
                    let values = if e["values"].is_array() {
                        format!(
                            "[]string{{{}}}",
                            values
                                .iter()
                                .map(|v| quote(v))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    } else {
                        "[]string(nil)".to_owned()
                    };
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{values}}}",
                        quote(e["key"].as_str().unwrap_or("")),
                        quote(e["operator"].as_str().unwrap_or(""))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
        None => "[]v1.LabelSelectorRequirement(nil)".to_owned(),
    };
    format!("v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expressions}}}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_workloads_selector_is_immutable() {
        let old = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 1}});
        let scaled = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "replicas": 3}});
        assert!(errors("apps", "Deployment", &scaled, &old).is_empty());
        let moved = json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}});
        assert_eq!(
            messages(&errors("apps", "Deployment", &moved, &old)),
            [
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"api\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
    }

    #[test]
    fn a_stateful_sets_spec_changes_only_where_kube_lets_it() {
        let old = json!({"spec": {"serviceName": "db", "replicas": 1, "template": {}}});
        let scaled = json!({"spec": {"serviceName": "db", "replicas": 3, "template": {"x": 1}}});
        assert!(errors("apps", "StatefulSet", &scaled, &old).is_empty());
        let renamed = json!({"spec": {"serviceName": "other", "replicas": 1, "template": {}}});
        assert_eq!(
            messages(&errors("apps", "StatefulSet", &renamed, &old)),
            [
                "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
            ]
        );
    }

    #[test]
    fn a_jobs_template_and_completions_are_fixed_unless_suspended_or_elastic() {
        let old =
            json!({"spec": {"completions": 3, "parallelism": 3, "template": {"spec": {"a": 1}}}});
        let wider =
            json!({"spec": {"completions": 3, "parallelism": 5, "template": {"spec": {"a": 1}}}});
        assert!(errors("batch", "Job", &wider, &old).is_empty());
        let edited =
            json!({"spec": {"completions": 4, "parallelism": 3, "template": {"spec": {"a": 2}}}});
        assert_eq!(
            messages(&errors("batch", "Job", &edited, &old)),
            [
                "spec.template: Invalid value: {\"spec\":{\"a\":2}}: field is immutable",
                "spec.completions: Invalid value: 4: field is immutable",
            ]
        );
        let mut suspended = old.clone();
        suspended["spec"]["suspend"] = json!(true);
        let mut resumed = edited.clone();
        resumed["spec"]["completions"] = json!(3);
        assert!(errors("batch", "Job", &resumed, &suspended).is_empty());
        let indexed =
            json!({"spec": {"completionMode": "Indexed", "completions": 3, "parallelism": 3}});
        let grown =
            json!({"spec": {"completionMode": "Indexed", "completions": 5, "parallelism": 5}});
        assert!(errors("batch", "Job", &grown, &indexed).is_empty());
    }

    #[test]
    fn a_services_cluster_ip_may_not_change_once_set() {
        let old = json!({"spec": {"clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.5"]}});
        let moved = json!({"spec": {"clusterIP": "10.96.0.9", "clusterIPs": ["10.96.0.9"]}});
        assert_eq!(
            messages(&errors("", "Service", &moved, &old)),
            ["spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.9\"}: may not change once set"]
        );
        let external = json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}});
        assert!(errors("", "Service", &external, &old).is_empty());
        assert!(errors("", "Service", &old, &old).is_empty());
    }
}
