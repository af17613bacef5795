//! Which (Cluster)PropagationPolicy a template gets (`detector/compare.go`,
//! `util/selector.go`): a selector's implicit priority against an object, and the precedence
//! among candidates (explicit priority, then implicit priority, then the smaller name).

use std::collections::BTreeMap;

use flotilla_api::karmada::ResourceSelector;
use flotilla_api::selector::label::api_selector_matches;
use serde_json::Value;

/// How specifically a selector matches an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ImplicitPriority {
    Mismatch = 0,
    /// No name and no label selector.
    MatchAll = 1,
    MatchLabelSelector = 2,
    MatchName = 3,
}

fn str_at<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The labels of `object`.
pub fn labels_of(object: &Value) -> BTreeMap<String, String> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
        .collect()
}

/// What selectors look at in an object, read once however many policies are weighed against
/// it (the labels only when a label selector asks).
#[derive(Debug)]
pub struct Subject<'a> {
    object: &'a Value,
    api_version: &'a str,
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
    labels: std::cell::OnceCell<BTreeMap<String, String>>,
}

impl<'a> Subject<'a> {
    pub fn of(object: &'a Value) -> Self {
        Self {
            object,
            api_version: str_at(object, "/apiVersion"),
            kind: str_at(object, "/kind"),
            namespace: str_at(object, "/metadata/namespace"),
            name: str_at(object, "/metadata/name"),
            labels: std::cell::OnceCell::new(),
        }
    }

    /// `ResourceSelectorPriority`: apiVersion and kind must be equal and a non-empty selector
    /// namespace must be the object's; a name (when set) decides alone; else the label
    /// selector.
    pub fn priority(&self, selector: &ResourceSelector) -> ImplicitPriority {
        if self.api_version != selector.api_version
            || self.kind != selector.kind
            || (!selector.namespace.is_empty() && self.namespace != selector.namespace)
        {
            return ImplicitPriority::Mismatch;
        }
        if !selector.name.is_empty() {
            return if selector.name == self.name {
                ImplicitPriority::MatchName
            } else {
                ImplicitPriority::Mismatch
            };
        }
        let Some(label_selector) = &selector.label_selector else {
            return ImplicitPriority::MatchAll;
        };
        let labels = self.labels.get_or_init(|| labels_of(self.object));
        // A required label the object lacks fails the selector, valid or not (an invalid one
        // matches nothing): decided without building it (every template meets every policy).
        if label_selector
            .match_labels
            .as_ref()
            .is_some_and(|required| required.iter().any(|(k, v)| labels.get(k) != Some(v)))
        {
            return ImplicitPriority::Mismatch;
        }
        match api_selector_matches(Some(label_selector), labels) {
            Ok(true) => ImplicitPriority::MatchLabelSelector,
            _ => ImplicitPriority::Mismatch,
        }
    }

    /// The highest priority of any selector.
    pub fn priority_of_any(&self, selectors: &[ResourceSelector]) -> ImplicitPriority {
        selectors
            .iter()
            .map(|s| self.priority(s))
            .max()
            .unwrap_or(ImplicitPriority::Mismatch)
    }
}

/// [`Subject::priority`] of `object`.
pub fn selector_priority(object: &Value, selector: &ResourceSelector) -> ImplicitPriority {
    Subject::of(object).priority(selector)
}

/// The highest priority of any selector.
pub fn selectors_priority(object: &Value, selectors: &[ResourceSelector]) -> ImplicitPriority {
    Subject::of(object).priority_of_any(selectors)
}

/// A policy as matching sees it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a, T> {
    pub name: &'a str,
    pub explicit: i32,
    pub selectors: &'a [ResourceSelector],
    pub deleting: bool,
    /// What the caller wants back.
    pub item: T,
}

/// The best candidate for `object`: highest explicit priority, then highest implicit
/// priority, then the alphabetically smaller name. Deleting policies never match.
pub fn best_match<'a, T: Copy>(
    object: &Subject<'_>,
    candidates: impl IntoIterator<Item = Candidate<'a, T>>,
) -> Option<(Candidate<'a, T>, ImplicitPriority)> {
    let mut best: Option<(Candidate<'a, T>, ImplicitPriority)> = None;
    for candidate in candidates {
        if candidate.deleting {
            continue;
        }
        let implicit = object.priority_of_any(candidate.selectors);
        if implicit == ImplicitPriority::Mismatch {
            continue;
        }
        let better = match &best {
            None => true,
            Some((current, current_implicit)) => {
                (
                    candidate.explicit,
                    implicit,
                    std::cmp::Reverse(candidate.name),
                ) > (
                    current.explicit,
                    *current_implicit,
                    std::cmp::Reverse(current.name),
                )
            }
        };
        if better {
            best = Some((candidate, implicit));
        }
    }
    best
}

/// Whether `challenger` may take a template away from its current claimer (gate
/// `PropagationPolicyPreemption`): it must say `preemption: Always` and have a higher explicit
/// priority; a PropagationPolicy preempts lower PropagationPolicies and any
/// ClusterPropagationPolicy, a ClusterPropagationPolicy only lower ClusterPropagationPolicies.
pub fn may_preempt(
    challenger_is_cluster: bool,
    challenger_priority: i32,
    challenger_preemption: &str,
    current_is_cluster: bool,
    current_priority: i32,
) -> bool {
    if challenger_preemption != "Always" {
        return false;
    }
    match (challenger_is_cluster, current_is_cluster) {
        (false, true) => true,
        (true, false) => false,
        _ => challenger_priority > current_priority,
    }
}

#[cfg(test)]
mod tests;
