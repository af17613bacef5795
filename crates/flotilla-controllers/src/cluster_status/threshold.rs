//! Flapping protection of the cluster status controller (Karmada's `clusterConditionStore`):
//! a change of Ready between True and not-True is published only after the new observation has
//! held for the success threshold (to True) or the failure threshold (to not-True); until then
//! the current condition is kept. The first observation of a cluster is published as is.

use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use tokio::time::Instant;

#[derive(Debug, Clone)]
struct Seen {
    status: String,
    since: Instant,
}

/// Per-cluster memory of the last observed Ready status and since when it holds.
#[derive(Debug)]
pub struct Thresholds {
    success: Duration,
    failure: Duration,
    seen: HashMap<String, Seen>,
}

impl Thresholds {
    pub fn new(success: Duration, failure: Duration) -> Self {
        Self {
            success,
            failure,
            seen: HashMap::new(),
        }
    }

    pub fn forget(&mut self, cluster: &str) {
        self.seen.remove(cluster);
    }

    /// The Ready condition to publish, given the one on the cluster (`current`) and the one
    /// just observed.
    pub fn adjust(
        &mut self,
        cluster: &str,
        current: Option<&Condition>,
        observed: Condition,
        now: Instant,
    ) -> Condition {
        let Some(saved) = self.seen.get_mut(cluster) else {
            self.seen.insert(
                cluster.to_owned(),
                Seen {
                    status: observed.status.clone(),
                    since: now,
                },
            );
            return observed;
        };
        let Some(current) = current else {
            return observed;
        };
        if saved.status != observed.status {
            *saved = Seen {
                status: observed.status.clone(),
                since: now,
            };
        }
        let to_true = observed.status == "True";
        let threshold = if to_true { self.success } else { self.failure };
        let flips = to_true != (current.status == "True");
        if flips && now < saved.since + threshold {
            return current.clone();
        }
        observed
    }
}

#[cfg(test)]
mod tests;
