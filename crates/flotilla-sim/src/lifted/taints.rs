//! Taints and tolerations.
//!
//! Behaviour of k8s.io/api core/v1 `toleration.go` (`ToleratesTaint`) and
//! k8s.io/component-helpers `scheduling/corev1/helpers.go`
//! (`FindMatchingUntoleratedTaint`) at v1.32.

use k8s_openapi::api::core::v1::{Taint, Toleration};

/// Whether `toleration` tolerates `taint` (effect, key and operator/value).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref()
        && !effect.is_empty()
        && effect != taint.effect
    {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => {
            // An empty key with Equal tolerates nothing (validation normally rejects it).
            !key.is_empty()
                && toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        _ => false,
    }
}

/// The first taint with an effect the scheduler honours (`NoSchedule`, `NoExecute`) that no
/// toleration tolerates.
pub fn first_untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
}

/// How long a pod tolerates a `NoExecute` taint: `None` = forever, `Some(0)` = not at all
/// (evict now), `Some(n)` = n seconds (the smallest `tolerationSeconds` of the matching
/// tolerations, as the taint eviction controller computes it).
pub fn toleration_seconds(taint: &Taint, tolerations: &[Toleration]) -> Option<i64> {
    let matching: Vec<&Toleration> = tolerations.iter().filter(|t| tolerates(t, taint)).collect();
    if matching.is_empty() {
        return Some(0);
    }
    if matching.iter().any(|t| t.toleration_seconds.is_none()) {
        return None;
    }
    matching
        .iter()
        .filter_map(|t| t.toleration_seconds)
        .min()
        .map(|s| s.max(0))
}

/// The scheduler's message for a node with an untolerated taint.
pub fn untolerated_message(taint: &Taint) -> String {
    format!(
        "node(s) had untolerated taint {{{}: {}}}",
        taint.key,
        taint.value.as_deref().unwrap_or("")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: Some(value.into()),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn tol(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
        Toleration {
            key: (!key.is_empty()).then(|| key.into()),
            operator: Some(op.into()),
            value: (!value.is_empty()).then(|| value.into()),
            effect: (!effect.is_empty()).then(|| effect.into()),
            toleration_seconds: None,
        }
    }

    #[test]
    fn equal_exists_effect_and_wildcard() {
        let gpu = taint("nvidia.com/gpu", "present", "NoSchedule");
        assert!(tolerates(
            &tol("nvidia.com/gpu", "Equal", "present", ""),
            &gpu
        ));
        assert!(!tolerates(
            &tol("nvidia.com/gpu", "Equal", "absent", ""),
            &gpu
        ));
        assert!(tolerates(
            &tol("nvidia.com/gpu", "Exists", "", "NoSchedule"),
            &gpu
        ));
        assert!(!tolerates(
            &tol("nvidia.com/gpu", "Exists", "", "NoExecute"),
            &gpu
        ));
        assert!(tolerates(&tol("", "Exists", "", ""), &gpu));
        assert!(!tolerates(&tol("other", "Exists", "", ""), &gpu));
    }

    #[test]
    fn prefer_no_schedule_is_ignored_and_message_has_kube_shape() {
        let taints = [
            taint("soft", "x", "PreferNoSchedule"),
            taint("node.kubernetes.io/unreachable", "", "NoExecute"),
        ];
        let found = first_untolerated(&taints, &[]).expect("the NoExecute taint");
        assert_eq!(
            untolerated_message(found),
            "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"
        );
    }

    #[test]
    fn toleration_seconds_takes_the_smallest() {
        let t = taint("node.kubernetes.io/unreachable", "", "NoExecute");
        let mut a = tol("node.kubernetes.io/unreachable", "Exists", "", "NoExecute");
        a.toleration_seconds = Some(300);
        let mut b = a.clone();
        b.toleration_seconds = Some(30);
        assert_eq!(toleration_seconds(&t, &[a.clone(), b]), Some(30));
        assert_eq!(toleration_seconds(&t, &[]), Some(0));
        a.toleration_seconds = None;
        assert_eq!(toleration_seconds(&t, &[a]), None);
    }
}
