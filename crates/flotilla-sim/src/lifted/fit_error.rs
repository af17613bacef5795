//! The scheduler's "no fit" message.
//!
//! Behaviour of k8s.io/kubernetes `pkg/scheduler/framework/types.go` (`FitError.Error`) and the
//! DefaultPreemption post-filter message at v1.32: a histogram of per-node reasons, each as
//! "<count> <reason>", sorted as strings and joined by ", "; then what preemption found. With no
//! lower-priority pods to evict (the simulator has none), nodes failing on resources report "No
//! preemption victims found for incoming pod" and nodes failing for reasons preemption cannot
//! fix report "Preemption is not helpful for scheduling".

use std::collections::BTreeMap;

/// Why one node was filtered out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFailure {
    /// Reasons, as the filter plugin reports them (NodeResourcesFit may give several).
    pub reasons: Vec<String>,
    /// Whether evicting pods could help (`Unschedulable`) rather than not
    /// (`UnschedulableAndUnresolvable`).
    pub resolvable_by_preemption: bool,
}

/// The reason of PodScheduled=False.
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";

const NO_VICTIMS: &str = "No preemption victims found for incoming pod";
const NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

fn histogram<'a>(reasons: impl Iterator<Item = &'a str>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for reason in reasons {
        *counts.entry(reason).or_default() += 1;
    }
    let mut parts: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    parts.join(", ")
}

/// The message for a pod that fits on none of `total_nodes` nodes.
pub fn message(total_nodes: usize, failures: &[NodeFailure], preemption_never: bool) -> String {
    let mut out = format!(
        "0/{total_nodes} nodes are available: {}.",
        histogram(
            failures
                .iter()
                .flat_map(|f| f.reasons.iter().map(String::as_str))
        )
    );
    if total_nodes == 0 {
        return "no nodes available to schedule pods".to_owned();
    }
    if preemption_never {
        out.push_str(" preemption: not eligible due to preemptionPolicy=Never.");
    } else {
        let post = histogram(failures.iter().map(|f| {
            if f.resolvable_by_preemption {
                NO_VICTIMS
            } else {
                NOT_HELPFUL
            }
        }));
        out.push_str(&format!(
            " preemption: 0/{total_nodes} nodes are available: {post}."
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(reasons: &[&str], resolvable: bool) -> NodeFailure {
        NodeFailure {
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
            resolvable_by_preemption: resolvable,
        }
    }

    #[test]
    fn kube_scheduler_shape() {
        let f = vec![fail(&["Insufficient nvidia.com/gpu"], true); 3];
        assert_eq!(
            message(3, &f, false),
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn mixed_reasons_sorted_as_strings() {
        let f = vec![
            fail(&["Insufficient cpu", "Insufficient memory"], true),
            fail(&["node(s) had untolerated taint {gpu: yes}"], false),
            fail(&["Insufficient cpu"], true),
        ];
        assert_eq!(
            message(3, &f, false),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {gpu: yes}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
        );
    }

    #[test]
    fn no_nodes_and_never_preempt() {
        assert_eq!(
            message(0, &[], false),
            "no nodes available to schedule pods"
        );
        let f = vec![fail(&["Too many pods"], true)];
        assert_eq!(
            message(1, &f, true),
            "0/1 nodes are available: 1 Too many pods. preemption: not eligible due to preemptionPolicy=Never."
        );
    }
}
