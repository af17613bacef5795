//! Taints and tolerations.
//!
//! Provenance: kubernetes/kubernetes v1.33, `staging/src/k8s.io/api/core/v1/toleration.go`
//! (`Toleration.ToleratesTaint`, comparison operators disabled as Karmada passes `false`),
//! `taint.go` (`Taint.ToString`) and `k8s.io/component-helpers/scheduling/corev1/helpers.go`
//! (`FindMatchingUntoleratedTaint`, `TolerationsTolerateTaint`).

use k8s_openapi::api::core::v1::{Taint, Toleration};

/// Whether `toleration` tolerates `taint`: matching effect (empty = all), matching key (empty =
/// all), and `Equal` (or empty) compares values while `Exists` ignores them. Any other operator
/// (including `Lt`/`Gt`) tolerates nothing.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or_default();
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or_default();
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// Whether any toleration tolerates `taint`.
pub fn tolerations_tolerate(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint))
}

/// The first taint (in order) that `filter` selects and no toleration tolerates.
pub fn find_untolerated_taint<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    filter: impl Fn(&Taint) -> bool,
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| filter(t))
        .find(|t| !tolerations_tolerate(tolerations, t))
}

/// NoSchedule and NoExecute taints (PreferNoSchedule is ignored).
pub fn is_do_not_schedule(taint: &Taint) -> bool {
    taint.effect == "NoSchedule" || taint.effect == "NoExecute"
}

/// `key=value:Effect`, `key:Effect`, `key=value:` or `key`.
pub fn taint_to_string(taint: &Taint) -> String {
    let value = taint.value.as_deref().unwrap_or_default();
    match (taint.effect.is_empty(), value.is_empty()) {
        (true, true) => taint.key.clone(),
        (true, false) => format!("{}={}:", taint.key, value),
        (false, true) => format!("{}:{}", taint.key, taint.effect),
        (false, false) => format!("{}={}:{}", taint.key, value, taint.effect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn toleration(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
        let opt = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Toleration {
            key: opt(key),
            operator: opt(op),
            value: opt(value),
            effect: opt(effect),
            toleration_seconds: None,
        }
    }

    #[test]
    fn toleration_table() {
        let t = taint("k", Some("v"), "NoSchedule");
        let table = [
            (toleration("k", "Equal", "v", "NoSchedule"), true),
            (toleration("k", "", "v", ""), true),
            (toleration("k", "Equal", "w", ""), false),
            (toleration("k", "Exists", "", ""), true),
            (toleration("", "Exists", "", ""), true),
            (toleration("k", "Exists", "", "NoExecute"), false),
            (toleration("other", "Exists", "", ""), false),
            (toleration("k", "Gt", "1", ""), false),
        ];
        for (tol, want) in table {
            assert_eq!(tolerates(&tol, &t), want, "{tol:?}");
        }
    }

    #[test]
    fn taint_strings() {
        assert_eq!(
            taint_to_string(&taint("k", Some("v"), "NoSchedule")),
            "k=v:NoSchedule"
        );
        assert_eq!(
            taint_to_string(&taint("k", None, "NoExecute")),
            "k:NoExecute"
        );
        assert_eq!(taint_to_string(&taint("k", Some("v"), "")), "k=v:");
        assert_eq!(taint_to_string(&taint("k", None, "")), "k");
    }
}
