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
