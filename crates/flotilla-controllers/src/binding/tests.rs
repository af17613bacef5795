//! The messages a failed sync reports.

use super::SyncError;

/// The `SyncFailed` event and the binding's condition carry what the API server said, as
/// Karmada's do, not kube's debug rendering of the Status.
#[test]
fn a_failed_sync_reads_as_the_api_servers_message() {
    let status = kube::core::Status::failure(
        "works.work.karmada.io \"web-687f7fb96f\" is forbidden: unable to create new content in namespace karmada-es-member1 because it is being terminated",
        "Forbidden",
    )
    .with_code(403);
    let error = SyncError::from(kube::Error::Api(Box::new(status)));
    assert_eq!(
        format!("Failed to sync work: {error}"),
        "Failed to sync work: works.work.karmada.io \"web-687f7fb96f\" is forbidden: unable to create new content in namespace karmada-es-member1 because it is being terminated"
    );
}

/// Karmada's `mergeTargetClusters`: scheduled clusters first with their replicas, then each
/// `requiredBy` cluster not among them with the requiring binding's replicas there (the first
/// requiring binding naming it wins).
#[test]
fn required_by_clusters_come_with_the_requiring_bindings_replicas() {
    use flotilla_api::karmada::work::{BindingSnapshot, TargetCluster};
    let spec = flotilla_api::karmada::ResourceBindingSpec {
        replicas: 4,
        clusters: vec![
            TargetCluster::new("member1", 3),
            TargetCluster::new("member2", 1),
        ],
        required_by: vec![
            BindingSnapshot {
                namespace: "default".into(),
                name: "app-a".into(),
                clusters: vec![
                    TargetCluster::new("member2", 5),
                    TargetCluster::new("member3", 2),
                ],
            },
            BindingSnapshot {
                namespace: "default".into(),
                name: "app-b".into(),
                clusters: vec![
                    TargetCluster::new("member3", 7),
                    TargetCluster::new("member4", 1),
                ],
            },
        ],
        ..Default::default()
    };
    assert_eq!(
        super::render_targets(&spec),
        [
            ("member1".to_owned(), Some(3)),
            ("member2".to_owned(), Some(1)),
            ("member3".to_owned(), Some(2)),
            ("member4".to_owned(), Some(1)),
        ]
    );
}
