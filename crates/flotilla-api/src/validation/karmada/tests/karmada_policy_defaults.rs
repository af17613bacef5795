//! Karmada's `util/helper/policy_test.go` defaulting cases (`SetDefaultSpreadConstraints`,
//! `SetReplicaDivisionPreferenceWeighted`, `SetDefaultGracePeriodSeconds`), as admission
//! defaults a (Cluster)PropagationPolicy written with that placement or failover.

use serde_json::{Value, json};

use super::*;

/// `spec` of a PropagationPolicy and a ClusterPropagationPolicy defaulted on create: a spec
/// selecting a Deployment, with the fields of `extra`.
fn defaulted_specs(extra: Value) -> [Value; 2] {
    let mut spec = json!({"resourceSelectors": selector()});
    for (key, value) in extra.as_object().into_iter().flatten() {
        spec[key] = value.clone();
    }
    let cpp = defaulted(
        Kind::ClusterPropagationPolicy,
        json!({"metadata": {"name": "p"}, "spec": spec.clone()}),
    );
    [pp(spec)["spec"].clone(), cpp["spec"].clone()]
}

#[test]
fn spread_constraints_default_to_cluster_and_one_group() {
    for (case, constraint, expected) in [
        (
            "neither field nor label: spread by cluster",
            json!({"minGroups": 1}),
            json!({"spreadByField": "cluster", "minGroups": 1}),
        ),
        (
            "no minGroups: one",
            json!({"spreadByField": "cluster"}),
            json!({"spreadByField": "cluster", "minGroups": 1}),
        ),
    ] {
        for spec in defaulted_specs(json!({"placement": {"spreadConstraints": [constraint]}})) {
            assert_eq!(
                spec["placement"]["spreadConstraints"],
                json!([expected]),
                "{case}"
            );
        }
    }
}

#[test]
fn a_divided_placement_without_a_preference_is_weighted() {
    for (case, placement, expected) in [
        (
            "no replica scheduling declared: none added",
            json!({}),
            Value::Null,
        ),
        (
            "an Aggregated preference is kept",
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
                "replicaDivisionPreference": "Aggregated"}}),
            json!({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}),
        ),
        (
            "Divided without a preference: Weighted",
            json!({"replicaScheduling": {"replicaSchedulingType": "Divided"}}),
            json!({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}),
        ),
    ] {
        for spec in defaulted_specs(json!({"placement": placement})) {
            assert_eq!(spec["placement"]["replicaScheduling"], expected, "{case}");
        }
    }
}

#[test]
fn graceful_application_failover_waits_600_seconds_unless_told() {
    for (case, application, grace) in [
        (
            "purgeMode Never: no grace period",
            json!({"purgeMode": "Never"}),
            Value::Null,
        ),
        (
            "Gracefully with a grace period: kept",
            json!({"purgeMode": "Gracefully", "gracePeriodSeconds": 200}),
            json!(200),
        ),
        (
            "Gracefully without a grace period: 600",
            json!({"purgeMode": "Gracefully"}),
            json!(600),
        ),
    ] {
        let purge_mode = application["purgeMode"].clone();
        let failover = json!({"failover": {"application": application}});
        for spec in defaulted_specs(failover) {
            let application = &spec["failover"]["application"];
            assert_eq!(application["gracePeriodSeconds"], grace, "{case}");
            assert_eq!(application["purgeMode"], purge_mode, "{case}");
        }
    }
}
