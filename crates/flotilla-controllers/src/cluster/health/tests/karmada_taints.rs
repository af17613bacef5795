//! Karmada's `TestSetCurrentClusterTaints` and `TestTaintExists` (`pkg/util/helper/taint_test.go`)
//! restated against `desired_taints` and the key-and-effect match it uses. Karmada's helper
//! takes the taints to add and remove; its cluster controller derives them from the Ready
//! condition exactly as each row's name says (False ⇒ add not-ready, remove unreachable;
//! Unknown ⇒ the reverse; True ⇒ remove both), which is what `desired_taints` does. Karmada's
//! test templates carry `NoExecute`, its controller's (and ours) `NoSchedule`; matching is by key
//! and effect either way, so the rows use the controller's effect. Karmada returns the taints
//! unchanged when nothing is added or removed: our `None`.

use super::*;

fn taint(key: &str, effect: &str) -> Taint {
    Taint {
        key: key.to_owned(),
        effect: effect.to_owned(),
        ..Taint::default()
    }
}

/// (key, effect) pairs of `taints`, in order.
fn pairs(taints: &[Taint]) -> Vec<(&str, &str)> {
    taints
        .iter()
        .map(|t| (t.key.as_str(), t.effect.as_str()))
        .collect()
}

#[test]
fn ready_transitions_swap_the_not_ready_and_unreachable_taints() {
    const NR: &str = TAINT_CLUSTER_NOT_READY;
    const UR: &str = TAINT_CLUSTER_UNREACHABLE;
    type Row = (
        &'static str,
        &'static [&'static str],
        &'static str,
        Option<&'static [&'static str]>,
    );
    let table: [Row; 7] = [
        ("ready true -> false", &[], "False", Some(&[NR])),
        ("ready true -> unknown", &[], "Unknown", Some(&[UR])),
        ("ready false -> unknown", &[NR], "Unknown", Some(&[UR])),
        ("ready false -> true", &[NR], "True", Some(&[])),
        ("ready unknown -> true", &[UR], "True", Some(&[])),
        ("ready unknown -> false", &[UR], "False", Some(&[NR])),
        (
            "nothing to add or remove: unchanged",
            &[UR],
            "Unknown",
            None,
        ),
    ];
    for (desc, current, ready, want) in table {
        let current: Vec<_> = current
            .iter()
            .map(|k| json!({"key": k, "effect": "NoSchedule"}))
            .collect();
        let got = desired_taints(&cluster("Push", Some(ready), json!(current)), wall());
        match want {
            None => assert_eq!(got, None, "{desc}"),
            Some(want) => {
                let got = got.unwrap_or_else(|| panic!("{desc}: expected a change"));
                let want: Vec<(&str, &str)> = want.iter().map(|k| (*k, "NoSchedule")).collect();
                assert_eq!(pairs(&got), want, "{desc}");
                // Every taint left here was just added, stamped now.
                for t in &got {
                    assert_eq!(t.time_added, Some(wall()), "{desc}: {}", t.key);
                }
            }
        }
    }
}

#[test]
fn a_taint_exists_when_key_and_effect_match() {
    let taints = [
        taint(TAINT_CLUSTER_UNREACHABLE, "NoExecute"),
        taint(TAINT_CLUSTER_NOT_READY, "NoExecute"),
    ];
    let exists = |find: &Taint| taints.iter().any(|t| matches(t, find));
    assert!(exists(&taint(TAINT_CLUSTER_UNREACHABLE, "NoExecute")));
    // Same key, other effect: not the same taint.
    assert!(!exists(&taint(TAINT_CLUSTER_NOT_READY, "NoSchedule")));
}
