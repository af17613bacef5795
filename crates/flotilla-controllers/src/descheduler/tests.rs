use std::time::Duration;

use flotilla_api::karmada::{ResourceBinding, TargetCluster};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;

mod karmada_core;
mod karmada_policy;
mod karmada_worker;

fn binding(placement: serde_json::Value, kind: &str) -> ResourceBinding {
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {
            "name": "web-deployment",
            "namespace": "default",
            "annotations": {"policy.karmada.io/applied-placement": placement.to_string()},
        },
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": kind, "namespace": "default", "name": "web"},
            "replicas": 10,
            "clusters": [
                {"name": "a", "replicas": 5},
                {"name": "b", "replicas": 3},
                {"name": "c", "replicas": 2},
            ],
        },
        "status": {
            "aggregatedStatus": [
                {"clusterName": "a", "status": {"readyReplicas": 5, "replicas": 5}, "applied": true},
                {"clusterName": "b", "status": {"readyReplicas": 1, "replicas": 3}, "applied": true},
                {"clusterName": "c", "status": {"replicas": 2}, "applied": true},
            ],
        },
    }))
    .unwrap()
}

fn dynamic() -> serde_json::Value {
    json!({"replicaScheduling": {
        "replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted",
        "weightPreference": {"dynamicWeight": "AvailableReplicas"},
    }})
}

#[test]
fn only_dynamically_divided_deployments_are_descheduled() {
    assert!(deschedulable(&binding(dynamic(), "Deployment")));
    let aggregated = json!({"replicaScheduling": {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}});
    assert!(deschedulable(&binding(aggregated, "Deployment")));
    // Karmada's descheduler supports Deployments only.
    assert!(!deschedulable(&binding(dynamic(), "StatefulSet")));
    let static_weights = json!({"replicaScheduling": {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
        "weightPreference": {"staticWeightList": [
            {"targetCluster": {"clusterNames": ["a"]}, "weight": 1}]}}});
    assert!(!deschedulable(&binding(static_weights, "Deployment")));
    let duplicated = json!({"replicaScheduling": {"replicaSchedulingType": "Duplicated"}});
    assert!(!deschedulable(&binding(duplicated, "Deployment")));
    // No replicaScheduling is Duplicated.
    assert!(!deschedulable(&binding(json!({}), "Deployment")));
    let mut unannotated = binding(dynamic(), "Deployment");
    unannotated.metadata.annotations = None;
    assert!(!deschedulable(&unannotated));
    let mut garbled = binding(dynamic(), "Deployment");
    garbled.metadata.annotations.as_mut().unwrap().insert(
        "policy.karmada.io/applied-placement".into(),
        "{not json".into(),
    );
    assert!(!deschedulable(&garbled));
}

#[test]
fn ready_replicas_come_from_the_aggregated_status() {
    let replicas = cluster_replicas(&binding(dynamic(), "Deployment"));
    let seen: Vec<(&str, i32, i32, bool)> = replicas
        .iter()
        .map(|r| (r.cluster.as_str(), r.spec, r.ready, r.short()))
        .collect();
    assert_eq!(
        seen,
        [
            ("a", 5, 5, false),
            ("b", 3, 1, true),
            // No readyReplicas: unknown, so worth asking.
            ("c", 2, UNKNOWN, true),
        ]
    );
}

fn targets() -> Vec<TargetCluster> {
    binding(dynamic(), "Deployment").spec.clusters
}

fn status(cluster: &str, spec: i32, ready: i32, unschedulable: i32) -> ClusterReplicas {
    ClusterReplicas {
        cluster: cluster.into(),
        spec,
        ready,
        unschedulable,
    }
}

#[test]
fn unschedulable_replicas_are_taken_but_never_below_the_ready_ones() {
    let plan = plan(
        &targets(),
        &[
            status("a", 5, 5, 0),
            status("b", 3, 1, 2),
            status("c", 2, UNKNOWN, 2),
        ],
    )
    .unwrap();
    let kept: Vec<(&str, i32)> = plan
        .clusters
        .iter()
        .map(|t| (t.name.as_str(), t.replicas))
        .collect();
    assert_eq!(kept, [("a", 5), ("b", 1), ("c", 0)]);
    assert_eq!(plan.taken, 4);
    assert_eq!(
        plan.message,
        "Binding has been descheduled, 2 replica(s) in cluster(b), 2 replica(s) in cluster(c), \
         4 total descheduled replica(s)"
    );

    // Three unschedulable but two ready of three: only one can go.
    let plan = plan_of(&[
        status("a", 5, 5, 0),
        status("b", 3, 2, 3),
        status("c", 2, 2, 0),
    ]);
    assert_eq!(replicas_of(&plan.unwrap()), [5, 2, 2]);
}

fn plan_of(statuses: &[ClusterReplicas]) -> Option<Plan> {
    plan(&targets(), statuses)
}

fn replicas_of(plan: &Plan) -> Vec<i32> {
    plan.clusters.iter().map(|t| t.replicas).collect()
}

#[test]
fn nothing_changes_without_unschedulable_replicas_or_when_they_exceed_the_cluster() {
    assert_eq!(
        plan_of(&[
            status("a", 5, 5, 0),
            status("b", 3, 1, 0),
            status("c", 2, 0, 0)
        ]),
        None
    );
    // More unschedulable than the cluster was given (another workload's pods?): left alone.
    assert_eq!(
        plan_of(&[
            status("a", 5, 5, 0),
            status("b", 3, 0, 4),
            status("c", 2, 2, 0)
        ]),
        None
    );
    // All of them unschedulable but as many ready (a stale count): nothing to take.
    assert_eq!(
        plan_of(&[
            status("a", 5, 5, 0),
            status("b", 3, 3, 3),
            status("c", 2, 2, 0)
        ]),
        None
    );
}

fn pod(scheduled: serde_json::Value) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "default"},
        "status": {"phase": "Pending", "conditions": [scheduled]},
    }))
    .unwrap()
}

#[test]
fn a_pod_counts_once_it_has_been_unschedulable_longer_than_the_threshold() {
    let now: jiff::Timestamp = "2026-12-07T02:00:00Z".parse().unwrap();
    let unschedulable = |since: &str| {
        pod(
            json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "lastTransitionTime": since}),
        )
    };
    let threshold = Duration::from_secs(300);
    assert!(pod_unschedulable(
        &unschedulable("2026-12-07T01:54:59Z"),
        threshold,
        now
    ));
    assert!(!pod_unschedulable(
        &unschedulable("2026-12-07T01:55:00Z"),
        threshold,
        now
    ));
    assert!(!pod_unschedulable(
        &unschedulable("2026-12-07T01:59:00Z"),
        threshold,
        now
    ));
    assert!(pod_unschedulable(
        &unschedulable("2026-12-07T01:59:00Z"),
        Duration::ZERO,
        now
    ));
    let scheduled = pod(json!({"type": "PodScheduled", "status": "True",
        "lastTransitionTime": "2026-12-07T01:00:00Z"}));
    assert!(!pod_unschedulable(&scheduled, threshold, now));
    let other_reason = pod(json!({"type": "PodScheduled", "status": "False",
        "reason": "SchedulerError", "lastTransitionTime": "2026-12-07T01:00:00Z"}));
    assert!(!pod_unschedulable(&other_reason, threshold, now));
    let no_conditions: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}})).unwrap();
    assert!(!pod_unschedulable(&no_conditions, threshold, now));
}

fn template(image: &str) -> serde_json::Value {
    json!({"metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": image}]}})
}

fn replica_set(name: &str, created: &str, owner: &str, image: &str) -> ReplicaSet {
    let mut template = template(image);
    template["metadata"]["labels"]["pod-template-hash"] = json!(format!("{name}-hash"));
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "uid": format!("{name}-uid"),
            "creationTimestamp": created,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                "uid": owner, "controller": true}]},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template},
    }))
    .unwrap()
}

#[test]
fn the_current_replica_set_is_the_oldest_owned_one_with_the_deployments_template() {
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default", "uid": "d-uid"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template("nginx:2")},
    }))
    .unwrap();
    let sets = [
        replica_set("old", "2026-12-07T01:00:00Z", "d-uid", "nginx:1"),
        replica_set("other-owner", "2026-12-07T01:00:00Z", "x-uid", "nginx:2"),
        replica_set("current", "2026-12-07T01:10:00Z", "d-uid", "nginx:2"),
        replica_set("later-twin", "2026-12-07T01:20:00Z", "d-uid", "nginx:2"),
    ];
    let found = new_replica_set(&deployment, &sets).unwrap();
    assert_eq!(found.metadata.name.as_deref(), Some("current"));
    assert!(new_replica_set(&deployment, &sets[..2]).is_none());
}
