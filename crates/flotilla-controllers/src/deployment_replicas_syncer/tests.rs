use serde_json::{Value, json};

use super::*;

mod karmada_syncer;

/// A binding of `replicas` scheduled to `clusters` (name, scheduled replicas) with the members
/// reporting `reported` (name, status.replicas; `None`: no status yet).
fn binding(
    scheduling: Value,
    replicas: i32,
    clusters: &[(&str, i32)],
    reported: &[(&str, Option<i32>)],
) -> ResourceBinding {
    let clusters: Vec<Value> = clusters
        .iter()
        .map(|(name, replicas)| json!({"name": name, "replicas": replicas}))
        .collect();
    let aggregated: Vec<Value> = reported
        .iter()
        .map(|(name, replicas)| match replicas {
            Some(replicas) => json!({"clusterName": name, "applied": true, "health": "Healthy",
                "status": {"replicas": replicas, "readyReplicas": replicas}}),
            None => json!({"clusterName": name, "applied": false, "health": "Unknown"}),
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
        "metadata": {"name": "web-deployment", "namespace": "prod", "generation": 3},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "prod", "name": "web"},
            "replicas": replicas,
            "clusters": clusters,
            "placement": {"replicaScheduling": scheduling},
        },
        "status": {"schedulerObservedGeneration": 3, "aggregatedStatus": aggregated},
    }))
    .expect("a binding")
}

fn divided() -> Value {
    json!({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"})
}

#[test]
fn member_replicas_scaled_by_their_hpas_become_the_template_replicas() {
    // Template 4 (2+2), member HPAs scaled both to 3: the template's status says 6.
    let binding = binding(
        divided(),
        4,
        &[("a", 2), ("b", 2)],
        &[("a", Some(3)), ("b", Some(3))],
    );
    assert_eq!(
        decide(Some(4), 6, &binding),
        Decision::Sync { from: 4, to: 6 }
    );
}

#[test]
fn a_users_scale_of_the_template_is_undone_once_the_members_report() {
    // The user scaled the template to 10; the binding and the scheduler followed, the members
    // kept their 3 each.
    let binding = binding(
        divided(),
        10,
        &[("a", 5), ("b", 5)],
        &[("a", Some(3)), ("b", Some(3))],
    );
    assert_eq!(
        decide(Some(10), 6, &binding),
        Decision::Sync { from: 10, to: 6 }
    );
}

#[test]
fn duplicated_and_unplaced_bindings_are_left_alone() {
    let duplicated = binding(
        json!({"replicaSchedulingType": "Duplicated"}),
        2,
        &[("a", 2), ("b", 2)],
        &[("a", Some(3)), ("b", Some(3))],
    );
    assert_eq!(
        decide(Some(2), 6, &duplicated),
        Decision::Nothing("not divided")
    );
    let mut no_placement = duplicated.clone();
    no_placement.spec.placement = None;
    assert_eq!(
        decide(Some(2), 6, &no_placement),
        Decision::Nothing("not divided")
    );
    // No replicaScheduling at all means Duplicated.
    let mut default = duplicated;
    if let Some(placement) = default.spec.placement.as_mut() {
        placement.replica_scheduling = None;
    }
    assert_eq!(
        decide(Some(2), 6, &default),
        Decision::Nothing("not divided")
    );
}

#[test]
fn a_template_in_step_with_its_status_is_not_written() {
    let binding = binding(
        divided(),
        4,
        &[("a", 2), ("b", 2)],
        &[("a", Some(2)), ("b", Some(2))],
    );
    assert!(matches!(decide(Some(4), 4, &binding), Decision::Nothing(_)));
}

#[test]
fn the_binding_must_carry_the_templates_replicas() {
    // The user just scaled to 10; the detector has not updated the binding yet.
    let binding = binding(
        divided(),
        6,
        &[("a", 3), ("b", 3)],
        &[("a", Some(3)), ("b", Some(3))],
    );
    assert_eq!(
        decide(Some(10), 6, &binding),
        Decision::Wait(Stale::BindingReplicas {
            binding: 6,
            template: 10
        })
    );
}

#[test]
fn the_scheduler_must_have_seen_the_bindings_generation() {
    let mut binding = binding(
        divided(),
        10,
        &[("a", 3), ("b", 3)],
        &[("a", Some(3)), ("b", Some(3))],
    );
    binding.metadata.generation = Some(4);
    assert_eq!(
        decide(Some(10), 6, &binding),
        Decision::Wait(Stale::SchedulerGeneration {
            observed: 3,
            generation: 4
        })
    );
}

#[test]
fn every_scheduled_cluster_must_report_positive_replicas() {
    let one_missing = binding(divided(), 4, &[("a", 2), ("b", 2)], &[("a", Some(3))]);
    assert_eq!(
        decide(Some(4), 3, &one_missing),
        Decision::Wait(Stale::Clusters {
            reported: 1,
            scheduled: 2
        })
    );
    let not_applied = binding(
        divided(),
        4,
        &[("a", 2), ("b", 2)],
        &[("a", Some(3)), ("b", None)],
    );
    assert_eq!(
        decide(Some(4), 3, &not_applied),
        Decision::Wait(Stale::Cluster("b".into()))
    );
    let zero = binding(
        divided(),
        4,
        &[("a", 2), ("b", 2)],
        &[("a", Some(0)), ("b", Some(3))],
    );
    assert_eq!(
        decide(Some(4), 3, &zero),
        Decision::Wait(Stale::Cluster("a".into()))
    );
}

#[test]
fn the_template_status_must_be_the_members_sum() {
    // The members report 3+3 but the template's status still says 4 (not aggregated yet).
    let binding = binding(
        divided(),
        10,
        &[("a", 5), ("b", 5)],
        &[("a", Some(3)), ("b", Some(3))],
    );
    assert_eq!(
        decide(Some(10), 4, &binding),
        Decision::Wait(Stale::TemplateStatus {
            template: 4,
            members: 6
        })
    );
}

#[test]
fn a_cluster_dropped_from_the_placement_no_longer_counts() {
    // Template 2 → 1: one cluster keeps 1, the other's share (and Work) is gone.
    let binding = binding(divided(), 1, &[("a", 1)], &[("a", Some(1))]);
    assert!(matches!(decide(Some(1), 1, &binding), Decision::Nothing(_)));
    // A member HPA with minReplicas 2 raised the only member to 2.
    let raised = binding_with(1, &[("a", 1)], &[("a", Some(2))]);
    assert_eq!(
        decide(Some(1), 2, &raised),
        Decision::Sync { from: 1, to: 2 }
    );
}

fn binding_with(
    replicas: i32,
    clusters: &[(&str, i32)],
    reported: &[(&str, Option<i32>)],
) -> ResourceBinding {
    binding(divided(), replicas, clusters, reported)
}

fn observed(retained: bool, spec: i32, status: i32) -> Observed {
    Observed {
        retained,
        spec_replicas: Some(spec),
        status_replicas: status,
    }
}

#[test]
fn only_labelled_deployments_whose_replicas_changed_are_looked_at() {
    // Not labelled: never.
    assert!(!worth_a_look(
        &observed(false, 2, 2),
        &observed(false, 3, 2)
    ));
    // The label just came: always (the status may have changed before it).
    assert!(worth_a_look(&observed(false, 2, 2), &observed(true, 2, 2)));
    // Labelled: a change of spec.replicas or status.replicas.
    assert!(worth_a_look(&observed(true, 2, 2), &observed(true, 3, 2)));
    assert!(worth_a_look(&observed(true, 2, 2), &observed(true, 2, 3)));
    assert!(!worth_a_look(&observed(true, 2, 2), &observed(true, 2, 2)));
    // The label went: no.
    assert!(!worth_a_look(&observed(true, 2, 2), &observed(false, 3, 2)));
}

#[test]
fn the_label_counts_only_with_the_value_true() {
    let deployment = |labels: Value| -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "prod", "labels": labels},
            "spec": {"replicas": 4, "selector": {}, "template": {}},
            "status": {"replicas": 6},
        }))
        .expect("a deployment")
    };
    assert_eq!(
        Observed::of(&deployment(json!({RETAIN_REPLICAS_LABEL: "true"}))),
        observed(true, 4, 6)
    );
    assert!(!Observed::of(&deployment(json!({RETAIN_REPLICAS_LABEL: "True"}))).retained);
    assert!(!Observed::of(&deployment(json!({}))).retained);
}
