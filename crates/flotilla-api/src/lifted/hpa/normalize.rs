//! Kubernetes' `normalizeDesiredReplicas` and `normalizeDesiredReplicasWithBehaviors`
//! (`pkg/controller/podautoscaler/horizontal.go`) over an autoscaling/v2 status: a proposal
//! stabilized, bounded and rate-limited into the replicas to set, with the `AbleToScale` and
//! `ScalingLimited` conditions they write; and the autoscaling/v2 defaults of a behavior's
//! rules. Shared by Karmada's FederatedHPA controller and the simulated members' HPAs.

use k8s_openapi::api::autoscaling::v2::{
    HPAScalingRules, HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerCondition,
    HorizontalPodAutoscalerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{History, Policy, Rules, Tunables};

/// Sets a condition as Kubernetes' HPA controller does (`setConditionInList`): appended when new,
/// the transition time moved only when the status changes, reason and message always replaced.
pub fn set_condition(
    status: &mut HorizontalPodAutoscalerStatus,
    type_: &str,
    value: &str,
    reason: &str,
    message: String,
    now: &Time,
) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let index = match conditions.iter().position(|c| c.type_ == type_) {
        Some(index) => index,
        None => {
            conditions.push(HorizontalPodAutoscalerCondition {
                type_: type_.to_owned(),
                ..HorizontalPodAutoscalerCondition::default()
            });
            conditions.len() - 1
        }
    };
    let condition = &mut conditions[index];
    if condition.status != value {
        condition.last_transition_time = Some(now.clone());
    }
    condition.status = value.to_owned();
    condition.reason = Some(reason.to_owned());
    condition.message = Some(message);
}

fn policy_defaults(up: bool) -> Vec<Policy> {
    if up {
        vec![
            Policy {
                kind: "Pods".into(),
                value: 4,
                period_seconds: 15,
            },
            Policy {
                kind: "Percent".into(),
                value: 100,
                period_seconds: 15,
            },
        ]
    } else {
        vec![Policy {
            kind: "Percent".into(),
            value: 100,
            period_seconds: 15,
        }]
    }
}

fn to_rules(rules: Option<&HPAScalingRules>, up: bool, tunables: &Tunables) -> Rules {
    let window = rules
        .and_then(|r| r.stabilization_window_seconds)
        .unwrap_or(if up {
            0
        } else {
            tunables.downscale_stabilization.as_secs() as i32
        });
    let policies = rules
        .and_then(|r| r.policies.as_ref())
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.iter()
                .map(|p| Policy {
                    kind: p.type_.clone(),
                    value: p.value,
                    period_seconds: p.period_seconds,
                })
                .collect()
        })
        .unwrap_or_else(|| policy_defaults(up));
    Rules {
        stabilization_window_seconds: window,
        select_policy: rules
            .and_then(|r| r.select_policy.clone())
            .unwrap_or_else(|| "Max".into()),
        policies,
    }
}

/// The scale-up and scale-down rules of a behavior (the autoscaling/v2 defaults fill what it
/// leaves out; a scale-down window left out is the controller's
/// `--horizontal-pod-autoscaler-downscale-stabilization`); `None` without a behavior.
pub fn rules(
    behavior: Option<&HorizontalPodAutoscalerBehavior>,
    tunables: &Tunables,
) -> Option<(Rules, Rules)> {
    let behavior = behavior?;
    Some((
        to_rules(behavior.scale_up.as_ref(), true, tunables),
        to_rules(behavior.scale_down.as_ref(), false, tunables),
    ))
}

/// The replicas to set for `proposed` (current `current`, bounds `min`..=`max`), recording
/// the recommendation in `history` and the conditions in `status`.
#[allow(clippy::too_many_arguments)]
pub fn normalize(
    history: &mut History,
    status: &mut HorizontalPodAutoscalerStatus,
    rules: Option<(Rules, Rules)>,
    tunables: &Tunables,
    current: i32,
    proposed: i32,
    min: i32,
    max: i32,
    now: &Time,
) -> i32 {
    let (stabilized, limited) = match rules {
        None => {
            let stabilized =
                super::stabilize(history, proposed, tunables.downscale_stabilization, now.0);
            if stabilized != proposed {
                set_condition(
                        status,
                        "AbleToScale",
                        "True",
                        "ScaleDownStabilized",
                        "recent recommendations were higher than current one, applying the highest recent recommendation".into(),
                        now,
                    );
            } else {
                ready_for_new_scale(status, now);
            }
            (stabilized, super::bound(current, stabilized, min, max))
        }
        Some((up, down)) => {
            let stabilized =
                super::stabilize_with_behaviors(history, current, proposed, &up, &down, now.0);
            if stabilized.replicas != proposed {
                set_condition(
                    status,
                    "AbleToScale",
                    "True",
                    stabilized.reason,
                    stabilized.message.into(),
                    now,
                );
            } else {
                ready_for_new_scale(status, now);
            }
            let limited = super::rate_limit(
                history,
                current,
                stabilized.replicas,
                min,
                max,
                &up,
                &down,
                now.0,
            );
            (stabilized.replicas, limited)
        }
    };
    let value = if limited.replicas == stabilized {
        "False"
    } else {
        "True"
    };
    set_condition(
        status,
        "ScalingLimited",
        value,
        limited.reason,
        limited.message.into(),
        now,
    );
    limited.replicas
}

fn ready_for_new_scale(status: &mut HorizontalPodAutoscalerStatus, now: &Time) {
    set_condition(
        status,
        "AbleToScale",
        "True",
        "ReadyForNewScale",
        "recommended size matches current size".into(),
        now,
    );
}
