//! The conditions the execution controller writes on Works, and the cluster readiness it
//! (and the controllers reaching members) checks first.

use flotilla_api::karmada::Cluster;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// Whether the cluster's `Ready` condition is True.
pub fn is_ready(cluster: &Cluster) -> bool {
    cluster.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == flotilla_api::karmada::CONDITION_READY && c.status == "True")
    })
}

pub(super) fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: Time(jiff::Timestamp::now()),
        observed_generation: None,
    }
}

/// apimachinery's `meta.SetStatusCondition`; returns whether anything changed.
pub fn set_status_condition(conditions: &mut Vec<Condition>, wanted: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == wanted.type_) else {
        conditions.push(wanted);
        return true;
    };
    let mut changed = false;
    if existing.status != wanted.status {
        existing.status = wanted.status;
        existing.last_transition_time = wanted.last_transition_time;
        changed = true;
    }
    if existing.reason != wanted.reason {
        existing.reason = wanted.reason;
        changed = true;
    }
    if existing.message != wanted.message {
        existing.message = wanted.message;
        changed = true;
    }
    if existing.observed_generation != wanted.observed_generation {
        existing.observed_generation = wanted.observed_generation;
        changed = true;
    }
    changed
}
