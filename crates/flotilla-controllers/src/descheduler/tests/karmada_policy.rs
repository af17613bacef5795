//! Karmada's `util/helper/policy_test.go` cases of `IsReplicaDynamicDivided` ([`dynamic_divided`])
//! and `GetAppliedPlacement` (the binding's `policy.karmada.io/applied-placement` annotation,
//! which [`deschedulable`] reads).

use flotilla_api::karmada::ClusterAffinity;

use super::*;

fn placement(value: serde_json::Value) -> Placement {
    serde_json::from_value(value).expect("placement")
}

#[test]
fn replicas_are_dynamically_divided_by_available_replicas_or_aggregation() {
    for (case, strategy, expected) in [
        ("no strategy", None, false),
        (
            "Duplicated",
            Some(json!({"replicaSchedulingType": "Duplicated"})),
            false,
        ),
        (
            "Divided, Weighted by available replicas",
            Some(json!({"replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"}})),
            true,
        ),
        (
            "Divided, Aggregated",
            Some(json!({"replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Aggregated"})),
            true,
        ),
    ] {
        let value = match strategy {
            Some(strategy) => json!({"replicaScheduling": strategy}),
            None => json!({}),
        };
        assert_eq!(dynamic_divided(&placement(value)), expected, "{case}");
    }
}

#[test]
fn the_applied_placement_is_read_from_its_annotation() {
    let mut binding = binding(dynamic(), "Deployment");
    let annotations = binding.metadata.annotations.as_mut().expect("annotations");
    annotations.insert(
        ANNOTATION_APPLIED_PLACEMENT.into(),
        r#"{"clusterAffinity":{"clusterNames":["member1","member2"]}}"#.into(),
    );
    let applied: Placement =
        serde_json::from_str(&annotations[ANNOTATION_APPLIED_PLACEMENT]).expect("placement");
    assert_eq!(
        applied,
        Placement {
            cluster_affinity: Some(ClusterAffinity {
                cluster_names: vec!["member1".into(), "member2".into()],
                ..ClusterAffinity::default()
            }),
            ..Placement::default()
        }
    );
    // Not dynamically divided (no replicaScheduling is Duplicated): not descheduled.
    assert!(!deschedulable(&binding));
    // Without the annotation there is no applied placement.
    binding.metadata.annotations = Some([("foo".to_owned(), "bar".to_owned())].into());
    assert!(!deschedulable(&binding));
}
