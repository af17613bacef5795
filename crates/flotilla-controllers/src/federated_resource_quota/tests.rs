use std::sync::Arc;

use flotilla_api::Quantity;
use flotilla_api::karmada::quota::{FederatedResourceQuota, StaticClusterAssignment};
use flotilla_api::karmada::work::{ReplicaRequirements, TargetCluster};
use flotilla_api::karmada::{ResourceBinding, ResourceList, Work};
use serde_json::json;

use super::*;

mod karmada_enforcement;
mod karmada_status;
mod karmada_sync;

fn list(entries: &[(&str, &str)]) -> ResourceList {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Quantity::parse(v).expect("quantity")))
        .collect()
}

fn quota(assigned: &[&str]) -> FederatedResourceQuota {
    let mut quota = FederatedResourceQuota::default();
    quota.metadata.namespace = Some("shop".into());
    quota.metadata.name = Some("team".into());
    quota.spec.overall = list(&[("cpu", "10")]);
    quota.spec.static_assignments = assigned
        .iter()
        .map(|c| StaticClusterAssignment {
            cluster_name: (*c).into(),
            hard: list(&[("cpu", "1"), ("memory", "2Gi")]),
        })
        .collect();
    quota
}

fn key() -> QuotaKey {
    ("shop".into(), "team".into())
}

fn work_in(cluster: &str, status: Option<serde_json::Value>) -> Arc<Work> {
    let mut work = quota_work(&quota(&[cluster]), cluster).expect("assigned");
    if let Some(status) = status {
        work.status = Some(
            serde_json::from_value(json!({
                "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedSuccessful",
                    "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}],
                "manifestStatuses": [{"identifier": {"ordinal": 0, "version": "v1",
                    "kind": "ResourceQuota", "resource": "resourcequotas", "namespace": "shop",
                    "name": "team"}, "status": status}],
            }))
            .expect("work status"),
        );
    }
    Arc::new(work)
}

#[test]
fn an_assigned_cluster_gets_a_resource_quota_work_named_as_karmada_names_it() {
    let work = quota_work(&quota(&["member1"]), "member1").expect("assigned");
    assert_eq!(
        work.metadata.namespace.as_deref(),
        Some("karmada-es-member1")
    );
    assert_eq!(
        work.metadata.name.as_deref(),
        Some(work_name("ResourceQuota", "team", "shop").as_str())
    );
    let labels = work.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels[QUOTA_NAMESPACE_LABEL], "shop");
    assert_eq!(labels[QUOTA_NAME_LABEL], "team");
    let manifest = work.spec.workload.manifests[0].to_value();
    assert_eq!(manifest["kind"], "ResourceQuota");
    assert_eq!(manifest["metadata"]["namespace"], "shop");
    assert_eq!(manifest["metadata"]["name"], "team");
    assert_eq!(
        manifest["spec"]["hard"],
        json!({"cpu": "1", "memory": "2Gi"})
    );
    assert!(quota_work(&quota(&["member1"]), "member2").is_none());
}

#[test]
fn works_of_unassigned_clusters_and_of_a_deleted_quota_are_removed() {
    let works = vec![work_in("member1", None), work_in("member2", None)];
    let remaining = quota(&["member1"]);
    assert_eq!(
        works_to_remove(&key(), Some(&remaining), &works),
        vec![(
            "karmada-es-member2".to_owned(),
            work_name("ResourceQuota", "team", "shop")
        )]
    );
    assert_eq!(works_to_remove(&key(), None, &works).len(), 2);
    // Another quota's Works are not touched.
    assert!(works_to_remove(&("shop".into(), "other".into()), None, &works).is_empty());
}

#[test]
fn member_statuses_are_aggregated_by_cluster_and_summed() {
    let works = vec![
        work_in(
            "member2",
            Some(json!({"hard": {"cpu": "1"}, "used": {"cpu": "300m"}})),
        ),
        work_in(
            "member1",
            Some(json!({"hard": {"cpu": "1"}, "used": {"cpu": "200m"}})),
        ),
        // Not applied yet: skipped.
        work_in("member3", None),
    ];
    let aggregated = aggregate(&key(), &works).expect("aggregated");
    let clusters: Vec<&str> = aggregated.iter().map(|s| s.cluster_name.as_str()).collect();
    assert_eq!(clusters, ["member1", "member2"]);
    assert_eq!(aggregated[0].used, list(&[("cpu", "200m")]));
    assert_eq!(members_used(&aggregated), list(&[("cpu", "500m")]));
}

#[test]
fn binding_usage_counts_only_the_quota_namespace_and_resources() {
    let binding = |namespace: &str, replicas: i32| {
        let mut b = ResourceBinding::default();
        b.metadata.namespace = Some(namespace.into());
        b.spec.replica_requirements = Some(ReplicaRequirements {
            resource_request: Some(list(&[("cpu", "10m"), ("memory", "64Mi")])),
            ..ReplicaRequirements::default()
        });
        b.spec.clusters = vec![TargetCluster::new("member1", replicas)];
        b
    };
    let bindings = [binding("shop", 2), binding("shop", 1), binding("other", 5)];
    assert_eq!(
        bindings_used("shop", bindings.iter(), &list(&[("cpu", "1")])),
        list(&[("cpu", "30m")])
    );
}

#[test]
fn empty_status_fields_are_removed_by_the_patch() {
    let patch = status_patch(&[
        ("aggregatedStatus", json!([])),
        ("overall", json!({"cpu": "1"})),
    ]);
    assert_eq!(
        patch,
        json!({"status": {"aggregatedStatus": null, "overall": {"cpu": "1"}}})
    );
}
