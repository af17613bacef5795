//! Rolling-update arithmetic and Deployment conditions.
//!
//! Behaviour of k8s.io/kubernetes `pkg/controller/deployment/util/deployment_util.go`
//! (`ResolveFenceposts`, `NewRSNewReplicas`, `MaxUnavailable`, `SetDeploymentCondition`,
//! `DeploymentComplete`, `DeploymentProgressing`) and `pkg/controller/deployment/rolling.go` at
//! v1.32, with the reasons and messages kube-controller-manager writes.

use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

pub const AVAILABLE: &str = "Available";
pub const PROGRESSING: &str = "Progressing";
pub const MIN_AVAILABLE_REASON: &str = "MinimumReplicasAvailable";
pub const MIN_AVAILABLE_MESSAGE: &str = "Deployment has minimum availability.";
pub const MIN_UNAVAILABLE_REASON: &str = "MinimumReplicasUnavailable";
pub const MIN_UNAVAILABLE_MESSAGE: &str = "Deployment does not have minimum availability.";
pub const NEW_RS_CREATED_REASON: &str = "NewReplicaSetCreated";
pub const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
pub const RS_UPDATED_REASON: &str = "ReplicaSetUpdated";
pub const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";

/// `intOrPercent` of `total`, percentages rounded up or down.
pub fn scaled(value: Option<&IntOrString>, total: i32, round_up: bool, default_pct: i32) -> i32 {
    match value {
        Some(IntOrString::Int(n)) => *n,
        Some(IntOrString::String(s)) => {
            let pct = s
                .strip_suffix('%')
                .and_then(|p| p.parse::<i64>().ok())
                .unwrap_or(i64::from(default_pct));
            percent_of(pct, total, round_up)
        }
        None => percent_of(i64::from(default_pct), total, round_up),
    }
}

fn percent_of(pct: i64, total: i32, round_up: bool) -> i32 {
    let product = pct * i64::from(total);
    let v = if round_up {
        (product + 99).div_euclid(100)
    } else {
        product.div_euclid(100)
    };
    i32::try_from(v).unwrap_or(i32::MAX)
}

/// (maxSurge, maxUnavailable) for `desired` replicas; both zero becomes unavailable = 1.
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> (i32, i32) {
    let surge = scaled(max_surge, desired, true, 25);
    let unavailable = scaled(max_unavailable, desired, false, 25);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// How many replicas the new ReplicaSet may have now, during a rolling update.
pub fn new_rs_new_replicas(
    desired: i32,
    surge: i32,
    all_spec_replicas: i32,
    new_rs_replicas: i32,
) -> i32 {
    let max_total = desired + surge;
    if all_spec_replicas >= max_total {
        return new_rs_replicas;
    }
    let scale_up = (max_total - all_spec_replicas).min(desired - new_rs_replicas);
    new_rs_replicas + scale_up.max(0)
}

/// A condition with both timestamps at `now`.
pub fn condition(
    kind: &str,
    status: bool,
    reason: &str,
    message: String,
    now: &str,
) -> DeploymentCondition {
    let time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        now.parse().expect("an RFC 3339 timestamp"),
    );
    DeploymentCondition {
        type_: kind.to_owned(),
        status: if status { "True" } else { "False" }.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message),
        last_transition_time: Some(time.clone()),
        last_update_time: Some(time),
    }
}

pub fn get<'a>(status: &'a DeploymentStatus, kind: &str) -> Option<&'a DeploymentCondition> {
    status
        .conditions
        .as_deref()?
        .iter()
        .find(|c| c.type_ == kind)
}

/// Sets a condition: no change when status and reason are the same; the transition time is
/// kept when only the reason changes; the condition moves to the end.
pub fn set(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = get(status, &condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time.clone();
        }
    }
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != condition.type_);
    conditions.push(condition);
}

pub fn remove(status: &mut DeploymentStatus, kind: &str) {
    if let Some(c) = status.conditions.as_mut() {
        c.retain(|c| c.type_ != kind);
    }
}

/// All replicas updated and available, and the latest spec observed.
pub fn complete(desired: i32, generation: i64, status: &DeploymentStatus) -> bool {
    status.updated_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
        && status.available_replicas.unwrap_or(0) == desired
        && status.observed_generation.unwrap_or(0) >= generation
}

/// Whether the rollout moved forward between two statuses.
pub fn progressing(old: &DeploymentStatus, new: &DeploymentStatus) -> bool {
    let old_old = old.replicas.unwrap_or(0) - old.updated_replicas.unwrap_or(0);
    let new_old = new.replicas.unwrap_or(0) - new.updated_replicas.unwrap_or(0);
    new.updated_replicas.unwrap_or(0) > old.updated_replicas.unwrap_or(0)
        || new_old < old_old
        || new.ready_replicas.unwrap_or(0) > old.ready_replicas.unwrap_or(0)
        || new.available_replicas.unwrap_or(0) > old.available_replicas.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenceposts_round_surge_up_and_unavailable_down() {
        let pct = |s: &str| IntOrString::String(s.into());
        assert_eq!(resolve_fenceposts(None, None, 3), (1, 0));
        assert_eq!(resolve_fenceposts(None, None, 10), (3, 2));
        assert_eq!(
            resolve_fenceposts(Some(&IntOrString::Int(0)), Some(&IntOrString::Int(0)), 3),
            (0, 1)
        );
        assert_eq!(
            resolve_fenceposts(Some(&pct("50%")), Some(&IntOrString::Int(2)), 5),
            (3, 2)
        );
    }

    #[test]
    fn new_replicas_respect_surge() {
        assert_eq!(new_rs_new_replicas(3, 1, 3, 0), 1);
        assert_eq!(new_rs_new_replicas(3, 1, 4, 1), 1);
        assert_eq!(new_rs_new_replicas(3, 1, 2, 1), 3);
        assert_eq!(new_rs_new_replicas(3, 0, 0, 0), 3);
    }

    #[test]
    fn set_keeps_transition_time_and_moves_to_end() {
        let mut s = DeploymentStatus::default();
        set(
            &mut s,
            condition(
                PROGRESSING,
                true,
                NEW_RS_CREATED_REASON,
                "a".into(),
                "2024-01-01T00:00:00Z",
            ),
        );
        set(
            &mut s,
            condition(
                AVAILABLE,
                false,
                MIN_UNAVAILABLE_REASON,
                "b".into(),
                "2024-01-01T00:00:01Z",
            ),
        );
        set(
            &mut s,
            condition(
                PROGRESSING,
                true,
                NEW_RS_AVAILABLE_REASON,
                "c".into(),
                "2024-01-01T00:00:02Z",
            ),
        );
        let c = s.conditions.as_ref().expect("conditions");
        assert_eq!(c[0].type_, AVAILABLE);
        assert_eq!(c[1].reason.as_deref(), Some(NEW_RS_AVAILABLE_REASON));
        assert_eq!(
            c[1].last_transition_time.as_ref().map(|t| t.0.to_string()),
            Some("2024-01-01T00:00:00Z".to_owned())
        );
    }
}
