//! A PodDisruptionBudget's status arithmetic.
//!
//! Behaviour of k8s.io/kubernetes `pkg/controller/disruption/disruption.go` at v1.32
//! (`getExpectedPodCount`, `countHealthyPods`, `updatePdbStatus`, `failSafe`) and
//! `pkg/apis/policy/helper` (`UpdateDisruptionAllowedCondition`), with apimachinery's
//! `intstr.GetScaledValueFromIntOrPercent`: the conditions' type, reasons and the messages of
//! the errors are kube-controller-manager's.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The condition kube's disruption controller writes.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
/// `DisruptionAllowed=True`: more pods are healthy than the budget needs.
pub const SUFFICIENT_PODS: &str = "SufficientPods";
/// `DisruptionAllowed=False`: no disruption is allowed now.
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
/// `DisruptionAllowed=False` with the error as message: the status could not be computed.
pub const SYNC_FAILED: &str = "SyncFailed";

/// What a budget asks for (`spec.minAvailable` / `spec.maxUnavailable`).
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    pub min_available: Option<&'a IntOrString>,
    pub max_unavailable: Option<&'a IntOrString>,
}

/// `GetScaledValueFromIntOrPercent`: an integer as is, `"N%"` of `total` rounded up (or down),
/// anything else an error worded as apimachinery's.
pub fn scaled(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, String> {
    match value {
        IntOrString::Int(n) => Ok(*n),
        IntOrString::String(s) => {
            let Some(number) = s.strip_suffix('%') else {
                return Err(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .to_owned(),
                );
            };
            let pct: i64 = number.parse().map_err(|_| {
                format!(
                    "invalid value for IntOrString: invalid value {s:?}: strconv.Atoi: parsing {number:?}: invalid syntax"
                )
            })?;
            let product = pct * i64::from(total);
            let v = if round_up {
                (product + 99).div_euclid(100)
            } else {
                product.div_euclid(100)
            };
            Ok(i32::try_from(v).unwrap_or(i32::MAX))
        }
    }
}

/// `getExpectedPodCount`: (expected pods, desired healthy). `pods` is how many pods the
/// budget selects; `scale` is the summed scale of their controllers, asked for only when a
/// percentage or `maxUnavailable` needs it (an error when a pod has no controller with a
/// scale). Neither field set: nothing expected, nothing desired.
pub fn expected_and_desired(
    budget: Budget<'_>,
    pods: i32,
    scale: impl FnOnce() -> Result<i32, String>,
) -> Result<(i32, i32), String> {
    if let Some(max_unavailable) = budget.max_unavailable {
        let expected = scale()?;
        let max_unavailable = scaled(max_unavailable, expected, true)?;
        return Ok((expected, (expected - max_unavailable).max(0)));
    }
    match budget.min_available {
        Some(IntOrString::Int(n)) => Ok((pods, *n)),
        Some(percent @ IntOrString::String(_)) => {
            let expected = scale()?;
            Ok((expected, scaled(percent, expected, true)?))
        }
        None => Ok((0, 0)),
    }
}

/// `updatePdbStatus`: disruptions allowed, never negative, none while nothing is expected.
pub fn disruptions_allowed(current_healthy: i32, desired_healthy: i32, expected: i32) -> i32 {
    let allowed = current_healthy - desired_healthy;
    if expected <= 0 || allowed <= 0 {
        0
    } else {
        allowed
    }
}

/// `UpdateDisruptionAllowedCondition`: the condition's (status, reason).
pub fn allowed_condition(disruptions_allowed: i32) -> (&'static str, &'static str) {
    if disruptions_allowed > 0 {
        ("True", SUFFICIENT_PODS)
    } else {
        ("False", INSUFFICIENT_PODS)
    }
}

/// `getExpectedScale`'s error for a selected pod no controller with a scale owns.
pub fn no_controller_error(pod: &str) -> String {
    format!("found no controllers for pod {pod:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(n: i32) -> IntOrString {
        IntOrString::Int(n)
    }

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.to_owned())
    }

    #[test]
    fn percentages_round_up_and_bad_strings_are_errors() {
        assert_eq!(scaled(&pct("50%"), 3, true), Ok(2));
        assert_eq!(scaled(&pct("50%"), 3, false), Ok(1));
        assert_eq!(scaled(&int(4), 3, true), Ok(4));
        assert_eq!(
            scaled(&pct("half"), 3, true),
            Err(
                "invalid value for IntOrString: invalid type: string is not a percentage"
                    .to_owned()
            )
        );
        assert_eq!(
            scaled(&pct("x%"), 3, true),
            Err("invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid syntax".to_owned())
        );
    }

    /// Karmada's e2e case: `maxUnavailable: 50%` over a 3-replica Deployment in each member
    /// allows ceil(1.5) = 2 disruptions there, and expects 3 pods.
    #[test]
    fn max_unavailable_counts_from_the_controllers_scale() {
        let budget = Budget {
            min_available: None,
            max_unavailable: Some(&pct("50%")),
        };
        let (expected, desired) = expected_and_desired(budget, 3, || Ok(3)).expect("computed");
        assert_eq!((expected, desired), (3, 1));
        assert_eq!(disruptions_allowed(3, desired, expected), 2);
        assert_eq!(allowed_condition(2), ("True", SUFFICIENT_PODS));
        // Two of three not ready yet: nothing may be disrupted.
        assert_eq!(disruptions_allowed(1, desired, expected), 0);
        assert_eq!(allowed_condition(0), ("False", INSUFFICIENT_PODS));
    }

    #[test]
    fn an_integer_min_available_counts_the_selected_pods_without_asking_for_scale() {
        let budget = Budget {
            min_available: Some(&int(2)),
            max_unavailable: None,
        };
        let computed = expected_and_desired(budget, 5, || Err("not asked".to_owned()));
        assert_eq!(computed, Ok((5, 2)));
        let percent = Budget {
            min_available: Some(&pct("60%")),
            max_unavailable: None,
        };
        assert_eq!(expected_and_desired(percent, 4, || Ok(5)), Ok((5, 3)));
        assert_eq!(
            expected_and_desired(percent, 1, || Err(no_controller_error("bare"))),
            Err("found no controllers for pod \"bare\"".to_owned())
        );
        // Nothing expected (no pods): no disruption even with a budget of zero.
        assert_eq!(disruptions_allowed(0, 0, 0), 0);
    }
}
