//! The pure decisions of the cluster controller: which NoSchedule taints the Ready condition
//! calls for, and the health monitor that marks a `Pull` cluster `Unknown` when neither its
//! status nor its Lease moved within the grace period. Times are tokio [`Instant`]s of when
//! the controller observed something (as Karmada uses its local clock), so tests run on a
//! paused clock.

use std::collections::HashMap;
use std::time::Duration;

use flotilla_api::karmada::{
    CONDITION_READY, Cluster, TAINT_CLUSTER_NOT_READY, TAINT_CLUSTER_UNREACHABLE,
};
use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, MicroTime, Time};
use tokio::time::Instant;

/// Karmada's `cluster-monitor-period`, `cluster-monitor-grace-period`,
/// `cluster-startup-grace-period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorTimings {
    pub period: Duration,
    pub grace: Duration,
    pub startup_grace: Duration,
}

impl Default for MonitorTimings {
    fn default() -> Self {
        Self {
            period: Duration::from_secs(5),
            grace: Duration::from_secs(40),
            startup_grace: Duration::from_secs(60),
        }
    }
}

fn no_schedule(key: &str) -> Taint {
    Taint {
        key: key.to_owned(),
        effect: "NoSchedule".to_owned(),
        ..Taint::default()
    }
}

fn matches(a: &Taint, b: &Taint) -> bool {
    a.key == b.key && a.effect == b.effect
}

/// The Ready condition, if any.
pub fn ready_condition(cluster: &Cluster) -> Option<&Condition> {
    cluster
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == CONDITION_READY)
}

/// The taints Karmada's `taintClusterByCondition` leaves on the cluster, or `None` when they
/// stay as they are: Ready False ⇒ not-ready (unreachable removed); Unknown ⇒ unreachable
/// (not-ready removed); True ⇒ neither; no Ready condition ⇒ not-ready. Added taints get
/// `timeAdded = now`; the others keep their order.
pub fn desired_taints(cluster: &Cluster, now: Time) -> Option<Vec<Taint>> {
    let not_ready = no_schedule(TAINT_CLUSTER_NOT_READY);
    let unreachable = no_schedule(TAINT_CLUSTER_UNREACHABLE);
    let (add, remove): (Vec<&Taint>, Vec<&Taint>) =
        match ready_condition(cluster).map(|c| c.status.as_str()) {
            None => (vec![&not_ready], vec![]),
            Some("False") => (vec![&not_ready], vec![&unreachable]),
            Some("Unknown") => (vec![&unreachable], vec![&not_ready]),
            Some("True") => (vec![], vec![&not_ready, &unreachable]),
            Some(_) => return None,
        };
    let current = &cluster.spec.taints;
    let to_add: Vec<&Taint> = add
        .into_iter()
        .filter(|t| !current.iter().any(|c| matches(c, t)))
        .collect();
    let to_remove: Vec<&Taint> = remove
        .into_iter()
        .filter(|t| current.iter().any(|c| matches(c, t)))
        .collect();
    if to_add.is_empty() && to_remove.is_empty() {
        return None;
    }
    let mut taints: Vec<Taint> = current
        .iter()
        .filter(|c| !to_remove.iter().any(|r| matches(c, r)))
        .cloned()
        .collect();
    for taint in to_add {
        let mut taint = taint.clone();
        taint.time_added = Some(now.clone());
        taints.push(taint);
    }
    Some(taints)
}

/// The monitor-clock instant `cluster` was created at, given that `now` is `wall`: never later
/// than `now`, and never more than `grace` earlier (only the comparison with `grace` matters,
/// and a monotonic clock cannot always go back further). No creation time: `now`.
fn since_creation(cluster: &Cluster, now: Instant, wall: &Time, grace: Duration) -> Instant {
    let Some(created) = cluster.metadata.creation_timestamp.as_ref() else {
        return now;
    };
    let age = wall.0.duration_since(created.0);
    let age = Duration::try_from(age).unwrap_or(Duration::ZERO).min(grace);
    now.checked_sub(age).unwrap_or(now)
}

#[derive(Debug, Clone)]
struct Observed {
    probe: Instant,
    ready: Option<Condition>,
    lease_renew: Option<MicroTime>,
}

/// Karmada's `clusterHealthMap` and `tryUpdateClusterHealth`.
#[derive(Debug, Default)]
pub struct HealthMonitor {
    clusters: HashMap<String, Observed>,
}

impl HealthMonitor {
    pub fn forget(&mut self, cluster: &str) {
        self.clusters.remove(cluster);
    }

    /// Keeps only the clusters `keep` says still exist.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.clusters.retain(|name, _| keep(name));
    }

    /// Records what the cluster and its Lease look like now and returns the Ready condition to
    /// write when the cluster's health signal is older than its grace period (`Pull` clusters
    /// only: a `Push` cluster's status controller probes it and reports unreachability itself).
    /// A cluster first seen without a Ready condition counts its startup grace from its
    /// `creationTimestamp` (as Karmada's `tryUpdateClusterHealth`), so a controller restart does
    /// not give a long-silent cluster another full grace period.
    pub fn observe(
        &mut self,
        cluster: &Cluster,
        lease_renew: Option<&MicroTime>,
        now: Instant,
        wall: Time,
        timings: &MonitorTimings,
    ) -> Option<Condition> {
        let name = cluster.name().to_owned();
        let current = ready_condition(cluster).cloned();
        let grace = if current.is_none() {
            timings.startup_grace
        } else {
            timings.grace
        };
        let entry = self.clusters.entry(name).or_insert_with(|| Observed {
            probe: match &current {
                // Karmada starts a never-reported cluster's clock at its creation.
                None => since_creation(cluster, now, &wall, grace),
                Some(_) => now,
            },
            ready: current.clone(),
            lease_renew: None,
        });
        if entry.ready != current {
            entry.ready = current.clone();
            entry.probe = now;
        }
        if cluster.spec.sync_mode == "Push" {
            return None;
        }
        if let Some(renew) = lease_renew
            && entry
                .lease_renew
                .as_ref()
                .is_none_or(|seen| seen.0 < renew.0)
        {
            entry.lease_renew = Some(renew.clone());
            entry.probe = now;
        }
        if now < entry.probe + grace {
            return None;
        }
        let next = match &current {
            None => Condition {
                type_: CONDITION_READY.into(),
                status: "Unknown".into(),
                reason: "ClusterStatusNeverUpdated".into(),
                message: "Cluster status controller never posted cluster status.".into(),
                last_transition_time: wall,
                observed_generation: None,
            },
            Some(c) if c.status != "Unknown" => Condition {
                status: "Unknown".into(),
                reason: "ClusterStatusUnknown".into(),
                message: "Cluster status controller stopped posting cluster status.".into(),
                last_transition_time: wall,
                ..c.clone()
            },
            Some(_) => return None,
        };
        // What we write is what we will read back: not a change of the health signal.
        entry.ready = Some(next.clone());
        Some(next)
    }
}

#[cfg(test)]
mod tests;
