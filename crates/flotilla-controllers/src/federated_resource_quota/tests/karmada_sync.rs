//! Karmada's `federated_resource_quota_sync_controller_test.go` (`buildWorks`,
//! `extractClusterHardResourceList`, `cleanUpWorks`, `cleanUpOrphanWorks`), against
//! [`quota_work`], `hard_for` and [`works_to_remove`].

use super::*;

fn default_quota(assignments: &[(&str, &[(&str, &str)])]) -> FederatedResourceQuota {
    let mut quota = FederatedResourceQuota::default();
    quota.metadata.namespace = Some("default".into());
    quota.metadata.name = Some("test-quota".into());
    quota.spec.static_assignments = assignments
        .iter()
        .map(|(cluster, hard)| StaticClusterAssignment {
            cluster_name: (*cluster).into(),
            hard: list(hard),
        })
        .collect();
    quota
}

fn default_key() -> QuotaKey {
    ("default".into(), "test-quota".into())
}

fn two_clusters() -> FederatedResourceQuota {
    default_quota(&[("cluster1", &[("cpu", "1")]), ("cluster2", &[("cpu", "2")])])
}

#[test]
fn a_work_is_built_for_each_cluster_with_a_static_assignment() {
    let clusters = ["cluster1", "cluster2"];
    let built = |quota: &FederatedResourceQuota| {
        clusters.iter().filter_map(|c| quota_work(quota, c)).count()
    };
    assert_eq!(built(&two_clusters()), 2);
    assert_eq!(built(&default_quota(&[])), 0);
}

#[test]
fn a_clusters_hard_limits_come_from_its_static_assignment() {
    let one = default_quota(&[("cluster1", &[("cpu", "1"), ("memory", "1Gi")])]);
    assert_eq!(
        one.spec.hard_for("cluster1").cloned(),
        Some(list(&[("cpu", "1"), ("memory", "1Gi")]))
    );
    assert_eq!(one.spec.hard_for("cluster2"), None);
    assert_eq!(default_quota(&[]).spec.hard_for("cluster1"), None);
    assert_eq!(
        two_clusters().spec.hard_for("cluster2").cloned(),
        Some(list(&[("cpu", "2")]))
    );
}

/// A Work labelled for `default/test-quota` in `namespace`.
fn labelled(namespace: &str, name: &str) -> Arc<Work> {
    let mut work = quota_work(&two_clusters(), "cluster1").expect("assigned");
    work.metadata.namespace = Some(namespace.into());
    work.metadata.name = Some(name.into());
    Arc::new(work)
}

#[test]
fn every_work_of_a_deleted_quota_is_removed() {
    let works = [labelled("default", "work-1"), labelled("default", "work-2")];
    assert_eq!(
        works_to_remove(&default_key(), None, &works),
        [
            ("default".to_owned(), "work-1".to_owned()),
            ("default".to_owned(), "work-2".to_owned()),
        ]
    );
    assert!(works_to_remove(&default_key(), None, &[]).is_empty());
}

#[test]
fn works_of_clusters_no_longer_assigned_are_orphans() {
    let name = "test-quota-resourcequota";
    let works = [
        labelled("karmada-es-cluster1", name),
        labelled("karmada-es-cluster2", name),
        labelled("karmada-es-cluster3", name),
    ];
    let quota = two_clusters();
    let orphans = works_to_remove(&default_key(), Some(&quota), &works);
    assert_eq!(orphans.len(), 1);
    assert_eq!(orphans[0].0, "karmada-es-cluster3");
}
