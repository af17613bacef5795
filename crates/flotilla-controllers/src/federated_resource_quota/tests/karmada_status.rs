//! Karmada's `federated_resource_quota_status_controller_test.go`
//! (`aggregatedStatusFormWorks`, `calculateUsed`), against [`aggregate`] and [`members_used`].

use super::*;
use flotilla_api::karmada::quota::ClusterQuotaStatus;

/// The quota's Work in `namespace` with an `Applied` condition and these manifest statuses.
fn work(namespace: &str, applied: bool, statuses: &[serde_json::Value]) -> Arc<Work> {
    let mut work = quota_work(&quota(&["member"]), "member").expect("assigned");
    work.metadata.namespace = Some(namespace.into());
    let manifests: Vec<serde_json::Value> = statuses
        .iter()
        .map(|status| {
            json!({"identifier": {"ordinal": 0, "version": "v1", "kind": "ResourceQuota",
                "resource": "resourcequotas", "namespace": "shop", "name": "team"},
                "status": status})
        })
        .collect();
    work.status = Some(
        serde_json::from_value(json!({
            "conditions": [{"type": "Applied", "status": if applied { "True" } else { "False" },
                "reason": "", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}],
            "manifestStatuses": manifests,
        }))
        .expect("work status"),
    );
    Arc::new(work)
}

fn used_by(aggregated: &[ClusterQuotaStatus]) -> Vec<(&str, ResourceList)> {
    aggregated
        .iter()
        .map(|s| (s.cluster_name.as_str(), s.used.clone()))
        .collect()
}

#[test]
fn applied_works_report_their_clusters_usage() {
    let one = [work(
        "karmada-es-member-cluster-1",
        true,
        &[json!({"used": {"cpu": "1"}})],
    )];
    let aggregated = aggregate(&key(), &one).expect("aggregated");
    assert_eq!(
        used_by(&aggregated),
        [("member-cluster-1", list(&[("cpu", "1")]))]
    );
    let two = [
        one[0].clone(),
        work(
            "karmada-es-member-cluster-2",
            true,
            &[json!({"used": {"memory": "1Gi"}})],
        ),
    ];
    let aggregated = aggregate(&key(), &two).expect("aggregated");
    assert_eq!(
        used_by(&aggregated),
        [
            ("member-cluster-1", list(&[("cpu", "1")])),
            ("member-cluster-2", list(&[("memory", "1Gi")])),
        ]
    );
}

#[test]
fn works_not_applied_or_without_manifest_status_are_skipped() {
    let not_applied = [work("karmada-es-member-cluster-1", false, &[])];
    assert!(aggregate(&key(), &not_applied).expect("ok").is_empty());
    let no_status = [work("karmada-es-member-cluster-1", true, &[])];
    assert!(aggregate(&key(), &no_status).expect("ok").is_empty());
}

#[test]
fn an_unreadable_status_or_a_work_outside_an_execution_space_is_an_error() {
    // Flotilla's Work cannot hold text that is not JSON; a status that is not a
    // ResourceQuotaStatus stands for Karmada's `invalid json`.
    let invalid = [work(
        "karmada-es-member-cluster-1",
        true,
        &[json!("invalid json")],
    )];
    assert!(matches!(
        aggregate(&key(), &invalid),
        Err(AggregateError::Status { .. })
    ));
    let outside = [work(
        "invalid-namespace",
        true,
        &[json!({"used": {"cpu": "1"}})],
    )];
    assert!(matches!(
        aggregate(&key(), &outside),
        Err(AggregateError::NotExecutionSpace { .. })
    ));
}

#[test]
fn the_members_usage_is_summed_per_resource() {
    let status = |cluster: &str, cpu: &str, memory: &str| ClusterQuotaStatus {
        cluster_name: cluster.into(),
        used: list(&[("cpu", cpu), ("memory", memory)]),
        ..ClusterQuotaStatus::default()
    };
    assert_eq!(
        members_used(&[status("cluster1", "1", "1Gi")]),
        list(&[("cpu", "1"), ("memory", "1Gi")])
    );
    assert_eq!(
        members_used(&[
            status("cluster1", "1", "1Gi"),
            status("cluster2", "2", "2Gi")
        ]),
        list(&[("cpu", "3"), ("memory", "3Gi")])
    );
}
