//! Karmada's `TestGenerateTaintsMessage` (`pkg/util/helper/taint_test.go`) restated against the
//! two notes that embed it: the cluster controller's `TaintClusterSucceed` (`taints_message`)
//! and the ClusterTaintPolicy controller's (`succeed_message`).

use super::*;
use crate::cluster_taint_policy::succeed_message;

#[test]
fn taint_notes_list_key_value_and_effect_like_karmada() {
    let taint = |key: &str, value: &str, effect: &str| Taint {
        key: key.to_owned(),
        value: Some(value.to_owned()),
        effect: effect.to_owned(),
        time_added: None,
    };
    type Row = (&'static str, Vec<Taint>, &'static str);
    let table: [Row; 3] = [
        ("no taint", vec![], "cluster now does not have taints"),
        (
            "one taint with a value",
            vec![taint("key1", "value1", "NoSchedule")],
            "cluster now has taints([{Key:key1,Value:value1,Effect:NoSchedule}])",
        ),
        (
            "an empty value is left out",
            vec![
                taint("key1", "value1", "NoSchedule"),
                taint("key2", "", "PreferNoSchedule"),
            ],
            "cluster now has taints([{Key:key1,Value:value1,Effect:NoSchedule},\
             {Key:key2,Effect:PreferNoSchedule}])",
        ),
    ];
    for (desc, taints, listed) in table {
        assert_eq!(
            taints_message(&taints),
            format!("Taint cluster succeed: {listed}."),
            "{desc}"
        );
        assert_eq!(
            succeed_message("member1", &taints),
            format!("Update Cluster(member1) with taints({listed}) succeed"),
            "{desc}"
        );
    }
}
