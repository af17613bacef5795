//! Karmada's `deployment_replicas_syncer_controller_test.go`: `TestPredicateFunc` (update
//! events, [`worth_a_look`]), the pure part of `TestReconcile` ([`decide`]) and
//! `TestIsDeploymentStatusCollected` (`staleness`).

use super::*;

/// A binding as Karmada's cases write it: `clusters` without replicas of their own, and the
/// members' raw statuses (`None`: no status collected).
fn collected(
    generation: i64,
    observed: i64,
    replicas: i32,
    clusters: &[&str],
    statuses: &[(&str, Option<&str>)],
) -> ResourceBinding {
    let clusters: Vec<Value> = clusters.iter().map(|name| json!({"name": name})).collect();
    let items: Vec<Value> = statuses
        .iter()
        .map(|(name, raw)| match raw {
            Some(raw) => json!({"clusterName": name,
                "status": serde_json::from_str::<Value>(raw).expect("status JSON")}),
            None => json!({"clusterName": name}),
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "test-deployment-deployment", "namespace": "default",
            "generation": generation},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test-deployment"},
            "replicas": replicas,
            "clusters": clusters,
            "placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}},
        },
        "status": {"schedulerObservedGeneration": observed, "aggregatedStatus": items},
    }))
    .expect("a binding")
}

#[test]
fn status_is_collected_only_when_binding_scheduler_and_members_have_caught_up() {
    let two = &["cluster1", "cluster2"][..];
    let one = &["cluster1"][..];
    let cases: [(&str, ResourceBinding, bool); 8] = [
        (
            "fully collected",
            collected(
                1,
                1,
                3,
                two,
                &[
                    ("cluster1", Some(r#"{"replicas": 2}"#)),
                    ("cluster2", Some(r#"{"replicas": 1}"#)),
                ],
            ),
            true,
        ),
        (
            "binding replicas differ from the template's",
            collected(0, 0, 2, &[], &[]),
            false,
        ),
        (
            "scheduler has not observed the generation",
            collected(2, 1, 3, &[], &[]),
            false,
        ),
        (
            "a scheduled cluster has no aggregated status",
            collected(1, 1, 3, two, &[("cluster1", Some(r#"{"replicas": 2}"#))]),
            false,
        ),
        (
            "an aggregated status without a status",
            collected(1, 1, 3, one, &[("cluster1", None)]),
            false,
        ),
        (
            // Karmada's bytes are not JSON; a stored status always is, so a JSON string that
            // is no Deployment status stands in for them.
            "an unreadable status",
            collected(1, 1, 3, one, &[("cluster1", Some(r#""invalid json""#))]),
            false,
        ),
        (
            "a member reports zero replicas",
            collected(1, 1, 3, one, &[("cluster1", Some(r#"{"replicas": 0}"#))]),
            false,
        ),
        (
            "the members' sum is not the template's status",
            collected(1, 1, 3, one, &[("cluster1", Some(r#"{"replicas": 2}"#))]),
            false,
        ),
    ];
    for (case, binding, expected) in cases {
        // The template: spec.replicas 3, status.replicas 3.
        let stale = staleness(3, 3, &binding);
        assert_eq!(stale.is_none(), expected, "{case}: {stale:?}");
    }
}

#[test]
fn the_template_takes_the_members_sum_once_collected() {
    // Template spec 3, status 4; members report 3 and 1.
    let binding = collected(
        1,
        1,
        3,
        &["cluster1", "cluster2"],
        &[
            (
                "cluster1",
                Some(
                    r#"{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3}"#,
                ),
            ),
            (
                "cluster2",
                Some(
                    r#"{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1}"#,
                ),
            ),
        ],
    );
    assert_eq!(
        decide(Some(3), 4, &binding),
        Decision::Sync { from: 3, to: 4 }
    );
}

#[test]
fn a_binding_that_is_not_divided_or_a_template_in_step_is_left_alone() {
    let mut not_divided = collected(0, 0, 0, &[], &[]);
    not_divided.spec.placement = Some(Default::default());
    assert!(matches!(
        decide(None, 0, &not_divided),
        Decision::Nothing(_)
    ));
    let in_step = collected(0, 0, 3, &[], &[]);
    assert!(matches!(decide(Some(3), 3, &in_step), Decision::Nothing(_)));
}

#[test]
fn update_events_are_worth_a_look_on_a_new_label_or_a_replicas_change() {
    let labelled = |spec: Option<i32>, status: i32| Observed {
        retained: true,
        spec_replicas: spec,
        status_replicas: status,
    };
    let unlabelled = Observed {
        retained: false,
        spec_replicas: None,
        status_replicas: 0,
    };
    for (case, old, new, expected) in [
        (
            "retain-replicas label added",
            unlabelled,
            labelled(None, 0),
            true,
        ),
        (
            "status.replicas changed",
            labelled(Some(3), 3),
            labelled(Some(3), 4),
            true,
        ),
        (
            "no relevant change",
            labelled(Some(3), 3),
            labelled(Some(3), 3),
            false,
        ),
        // Karmada logs and ignores a missing spec.replicas on either side.
        (
            "spec.replicas missing",
            labelled(None, 3),
            labelled(Some(3), 4),
            false,
        ),
    ] {
        assert_eq!(worth_a_look(&old, &new), expected, "{case}");
    }
}
