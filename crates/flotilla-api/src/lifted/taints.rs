//! Taints and tolerations.
//!
//! Provenance: kubernetes/kubernetes v1.33, `staging/src/k8s.io/api/core/v1/toleration.go`
//! (`Toleration.ToleratesTaint`, comparison operators disabled as Karmada passes `false`),
//! `taint.go` (`Taint.ToString`) and `k8s.io/component-helpers/scheduling/corev1/helpers.go`
//! (`FindMatchingUntoleratedTaint`, `TolerationsTolerateTaint`); the NoExecute timing from
//! `pkg/controller/tainteviction/taint_eviction.go` (`getMatchingTolerations`,
//! `getMinTolerationTime`), with Karmada's reading of them (`pkg/util/helper/taint.go`: a taint
//! without `timeAdded` starts no clock).

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

/// The NoExecute taints of `taints`, in order.
pub fn no_execute_taints(taints: &[Taint]) -> Vec<Taint> {
    taints
        .iter()
        .filter(|t| t.effect == "NoExecute")
        .cloned()
        .collect()
}

/// For each taint the first toleration that tolerates it; `None` when some taint is not
/// tolerated at all.
pub fn matching_tolerations<'a>(
    taints: &[Taint],
    tolerations: &'a [Toleration],
) -> Option<Vec<&'a Toleration>> {
    taints
        .iter()
        .map(|taint| tolerations.iter().find(|t| tolerates(t, taint)))
        .collect()
}

/// When tolerated NoExecute `taints` stop being tolerated: the earliest `timeAdded +
/// tolerationSeconds` over each used toleration with seconds and each taint (with `timeAdded`)
/// it tolerates, as seconds from `now` (`Some(0)` when already passed). `None`: tolerated
/// forever. No used toleration at all means now.
pub fn min_toleration_time(
    taints: &[Taint],
    used: &[&Toleration],
    now: jiff::Timestamp,
) -> Option<std::time::Duration> {
    if taints.is_empty() {
        return None;
    }
    if used.is_empty() {
        return Some(std::time::Duration::ZERO);
    }
    let mut earliest: Option<jiff::Timestamp> = None;
    for toleration in used {
        let Some(seconds) = toleration.toleration_seconds else {
            continue;
        };
        for taint in taints {
            let Some(added) = &taint.time_added else {
                continue;
            };
            if !tolerates(toleration, taint) {
                continue;
            }
            let Ok(trigger) = added
                .0
                .checked_add(jiff::SignedDuration::from_secs(seconds))
            else {
                continue;
            };
            earliest = Some(earliest.map_or(trigger, |e| e.min(trigger)));
        }
    }
    let trigger = earliest?;
    if trigger <= now {
        return Some(std::time::Duration::ZERO);
    }
    Some(trigger.duration_since(now).unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Karmada's own taint-helper cases, restated.
    mod karmada_taints;

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

    fn added(mut t: Taint, at: &str) -> Taint {
        t.time_added = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            at.parse().expect("timestamp"),
        ));
        t
    }

    #[test]
    fn no_execute_timing() {
        let now: jiff::Timestamp = "2026-12-06T10:00:00Z".parse().unwrap();
        let taints = vec![added(
            taint("fail-test", None, "NoExecute"),
            "2026-12-06T09:59:58Z",
        )];
        // Not tolerated at all: evict now.
        assert!(matching_tolerations(&taints, &[]).is_none());
        // Tolerated for 3 s from 09:59:58: one second left.
        let mut tol = toleration("fail-test", "Exists", "", "NoExecute");
        tol.toleration_seconds = Some(3);
        let tolerations = [tol.clone()];
        let used = matching_tolerations(&taints, &tolerations).unwrap();
        assert_eq!(
            min_toleration_time(&taints, &used, now),
            Some(std::time::Duration::from_secs(1))
        );
        // Two seconds: already due.
        tol.toleration_seconds = Some(2);
        let tolerations = [tol.clone()];
        let used = matching_tolerations(&taints, &tolerations).unwrap();
        assert_eq!(
            min_toleration_time(&taints, &used, now),
            Some(std::time::Duration::ZERO)
        );
        // Without seconds: tolerated forever.
        tol.toleration_seconds = None;
        let tolerations = [tol];
        let used = matching_tolerations(&taints, &tolerations).unwrap();
        assert_eq!(min_toleration_time(&taints, &used, now), None);
        // A taint without timeAdded starts no clock.
        let bare = vec![taint("fail-test", None, "NoExecute")];
        let mut tol = toleration("fail-test", "Exists", "", "NoExecute");
        tol.toleration_seconds = Some(1);
        let tolerations = [tol];
        let used = matching_tolerations(&bare, &tolerations).unwrap();
        assert_eq!(min_toleration_time(&bare, &used, now), None);
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
