//! Required node affinity: `nodeSelector` plus
//! `requiredDuringSchedulingIgnoredDuringExecution`.
//!
//! Provenance: kubernetes/kubernetes v1.33,
//! `staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go`
//! (`GetRequiredNodeAffinity`, `RequiredNodeAffinity.Match`, `LazyErrorNodeSelector`): terms are
//! ORed; a term ANDs its `matchExpressions` (label requirements incl. `Gt`/`Lt`) and its
//! `matchFields` (only `metadata.name`, `In`/`NotIn` with exactly one value); a term with neither
//! or with an invalid requirement matches nothing; an empty term list matches nothing.

use std::collections::BTreeMap;

use flotilla_api::karmada::affinity::node_selector_requirements;
use flotilla_api::selector::label::Requirement;
use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement};

/// A compiled node claim: node selector and required terms.
#[derive(Debug, Clone, Default)]
pub struct RequiredNodeAffinity {
    selector: Vec<(String, String)>,
    /// `None` = no required affinity; `Some(terms)` = at least one term must match.
    terms: Option<Vec<CompiledTerm>>,
}

#[derive(Debug, Clone)]
struct CompiledTerm {
    /// `None` when the term is invalid or empty (matches nothing).
    labels: Option<Vec<Requirement>>,
    fields: Vec<FieldRequirement>,
}

#[derive(Debug, Clone)]
enum FieldRequirement {
    NameIn(String),
    NameNotIn(String),
    /// `In` on a field nodes do not have.
    Never,
    /// `NotIn` on a field nodes do not have.
    Always,
}

impl RequiredNodeAffinity {
    /// Compiles a node selector and required affinity.
    pub fn new(
        node_selector: Option<&BTreeMap<String, String>>,
        required: Option<&NodeSelector>,
    ) -> Self {
        let selector = node_selector
            .map(|s| s.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        let terms = required.map(|r| r.node_selector_terms.iter().map(compile_term).collect());
        Self { selector, terms }
    }

    /// Whether a node with `name` and `labels` satisfies the claim.
    pub fn matches(&self, name: &str, labels: &BTreeMap<String, String>) -> bool {
        if !self
            .selector
            .iter()
            .all(|(k, v)| labels.get(k).is_some_and(|l| l == v))
        {
            return false;
        }
        let Some(terms) = &self.terms else {
            return true;
        };
        terms.iter().any(|term| {
            let Some(labels_req) = &term.labels else {
                return false;
            };
            labels_req
                .iter()
                .all(|r| r.matches_with(|k| labels.get(k).map(String::as_str)))
                && term.fields.iter().all(|f| match f {
                    FieldRequirement::NameIn(v) => v == name,
                    FieldRequirement::NameNotIn(v) => v != name,
                    FieldRequirement::Never => false,
                    FieldRequirement::Always => true,
                })
        })
    }
}

fn compile_term(term: &k8s_openapi::api::core::v1::NodeSelectorTerm) -> CompiledTerm {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    let invalid = CompiledTerm {
        labels: None,
        fields: Vec::new(),
    };
    if expressions.is_empty() && fields.is_empty() {
        return invalid;
    }
    let Some(labels) = node_selector_requirements(expressions.iter()) else {
        return invalid;
    };
    let Some(fields) = fields.iter().map(compile_field).collect::<Option<Vec<_>>>() else {
        return invalid;
    };
    CompiledTerm {
        labels: Some(labels),
        fields,
    }
}

fn compile_field(requirement: &NodeSelectorRequirement) -> Option<FieldRequirement> {
    let values = requirement.values.as_deref().unwrap_or_default();
    let [value] = values else {
        return None;
    };
    // Other field keys are valid selectors over a field the node's field set lacks.
    let by_name = requirement.key == "metadata.name";
    match (requirement.operator.as_str(), by_name) {
        ("In", true) => Some(FieldRequirement::NameIn(value.clone())),
        ("NotIn", true) => Some(FieldRequirement::NameNotIn(value.clone())),
        ("In", false) => Some(FieldRequirement::Never),
        ("NotIn", false) => Some(FieldRequirement::Always),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn table() {
        let a100 = labels(&[("nvidia.com/gpu.memory", "81920"), ("zone", "a")]);
        let t4 = labels(&[("nvidia.com/gpu.memory", "15360"), ("zone", "b")]);
        let affinity = |v: serde_json::Value| -> NodeSelector {
            serde_json::from_value(v).expect("node selector")
        };
        let gt = affinity(json!({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["70000"]}]}]}));
        let lt_or_zone = affinity(json!({"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "nvidia.com/gpu.memory", "operator": "Lt", "values": ["20000"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}));
        let by_name = affinity(json!({"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}));
        let empty_term = affinity(json!({"nodeSelectorTerms": [{}]}));
        let no_terms = affinity(json!({"nodeSelectorTerms": []}));
        let selector: BTreeMap<String, String> = labels(&[("zone", "b")]);
        let table: Vec<(RequiredNodeAffinity, bool, bool)> = vec![
            (RequiredNodeAffinity::new(None, None), true, true),
            (RequiredNodeAffinity::new(None, Some(&gt)), true, false),
            (
                RequiredNodeAffinity::new(None, Some(&lt_or_zone)),
                true,
                true,
            ),
            (
                RequiredNodeAffinity::new(Some(&selector), Some(&lt_or_zone)),
                false,
                true,
            ),
            (RequiredNodeAffinity::new(None, Some(&by_name)), true, false),
            (
                RequiredNodeAffinity::new(None, Some(&empty_term)),
                false,
                false,
            ),
            (
                RequiredNodeAffinity::new(None, Some(&no_terms)),
                false,
                false,
            ),
        ];
        for (i, (a, want_n1, want_n2)) in table.into_iter().enumerate() {
            assert_eq!(a.matches("n1", &a100), want_n1, "case {i} n1");
            assert_eq!(a.matches("n2", &t4), want_n2, "case {i} n2");
        }
    }
}
