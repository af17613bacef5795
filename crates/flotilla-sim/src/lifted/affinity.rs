//! `nodeSelector` and required node affinity.
//!
//! Behaviour of k8s.io/component-helpers `scheduling/corev1/nodeaffinity/nodeaffinity.go`
//! (`NodeSelectorRequirementsAsSelector`, `LazyErrorNodeSelector.Match`) and the NodeAffinity
//! filter plugin (pkg/scheduler/framework/plugins/nodeaffinity) at v1.32: terms are ORed, the
//! expressions and fields of a term ANDed, a term with neither matches nothing, `Gt`/`Lt`
//! compare integers, and an unparsable value never matches.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};

use crate::pod::Pod;

/// The filter's message when a node fails `nodeSelector` or required node affinity.
pub const NO_MATCH_MESSAGE: &str = "node(s) didn't match Pod's node affinity/selector";

/// Whether a node (its name and labels) satisfies the pod's `nodeSelector` and required node
/// affinity.
pub fn pod_matches_node(pod: &Pod, node_name: &str, labels: &BTreeMap<String, String>) -> bool {
    let Some(spec) = pod.spec.as_ref() else {
        return true;
    };
    if let Some(selector) = &spec.node_selector
        && !selector.iter().all(|(k, v)| labels.get(k) == Some(v))
    {
        return false;
    }
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    match required {
        Some(selector) => selector_matches(selector, node_name, labels),
        None => true,
    }
}

/// A `NodeSelector`: any term matches.
pub fn selector_matches(
    selector: &NodeSelector,
    node_name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    selector
        .node_selector_terms
        .iter()
        .any(|term| term_matches(term, node_name, labels))
}

fn term_matches(
    term: &NodeSelectorTerm,
    node_name: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    expressions
        .iter()
        .all(|r| requirement_matches(r, labels.get(&r.key).map(String::as_str)))
        && fields.iter().all(|r| {
            // Only metadata.name is a supported field.
            r.key == "metadata.name"
                && matches!(r.operator.as_str(), "In" | "NotIn")
                && requirement_matches(r, Some(node_name))
        })
}

fn requirement_matches(requirement: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let [bound] = values else {
                return false;
            };
            let (Ok(bound), Some(Ok(actual))) =
                (bound.parse::<i64>(), value.map(str::parse::<i64>))
            else {
                return false;
            };
            if requirement.operator == "Gt" {
                actual > bound
            } else {
                actual < bound
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).expect("a pod")
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn affinity(terms: serde_json::Value) -> Pod {
        pod(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}))
    }

    #[test]
    fn node_selector_needs_every_label() {
        let p = pod(json!({"containers": [], "nodeSelector": {"a": "1", "b": "2"}}));
        assert!(pod_matches_node(
            &p,
            "n",
            &labels(&[("a", "1"), ("b", "2"), ("c", "3")])
        ));
        assert!(!pod_matches_node(&p, "n", &labels(&[("a", "1")])));
    }

    #[test]
    fn every_operator() {
        let l = labels(&[("zone", "z1"), ("gpus", "8")]);
        let one = |op: &str, key: &str, values: &[&str]| {
            affinity(
                json!([{"matchExpressions": [{"key": key, "operator": op, "values": values}]}]),
            )
        };
        assert!(pod_matches_node(&one("In", "zone", &["z1", "z2"]), "n", &l));
        assert!(!pod_matches_node(&one("In", "zone", &["z2"]), "n", &l));
        assert!(pod_matches_node(&one("NotIn", "zone", &["z2"]), "n", &l));
        assert!(pod_matches_node(&one("NotIn", "absent", &["x"]), "n", &l));
        assert!(!pod_matches_node(&one("NotIn", "zone", &["z1"]), "n", &l));
        assert!(pod_matches_node(&one("Exists", "zone", &[]), "n", &l));
        assert!(!pod_matches_node(&one("Exists", "absent", &[]), "n", &l));
        assert!(pod_matches_node(
            &one("DoesNotExist", "absent", &[]),
            "n",
            &l
        ));
        assert!(!pod_matches_node(
            &one("DoesNotExist", "zone", &[]),
            "n",
            &l
        ));
        assert!(pod_matches_node(&one("Gt", "gpus", &["4"]), "n", &l));
        assert!(!pod_matches_node(&one("Gt", "gpus", &["8"]), "n", &l));
        assert!(pod_matches_node(&one("Lt", "gpus", &["9"]), "n", &l));
        assert!(
            !pod_matches_node(&one("Lt", "zone", &["9"]), "n", &l),
            "not an integer"
        );
        assert!(
            !pod_matches_node(&one("Gt", "gpus", &["x"]), "n", &l),
            "bad bound"
        );
        assert!(!pod_matches_node(&one("Bogus", "zone", &["z1"]), "n", &l));
    }

    #[test]
    fn terms_are_ored_and_an_empty_term_matches_nothing() {
        let l = labels(&[("zone", "z1")]);
        let p = affinity(json!([
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z9"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
        ]));
        assert!(pod_matches_node(&p, "n", &l));
        assert!(!pod_matches_node(&affinity(json!([{}])), "n", &l));
    }

    #[test]
    fn match_fields_on_the_node_name() {
        let p = affinity(json!([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]));
        assert!(pod_matches_node(&p, "node-a", &BTreeMap::new()));
        assert!(!pod_matches_node(&p, "node-b", &BTreeMap::new()));
    }
}
