use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;

use super::*;

/// A control plane whose Cluster list answers a moment after it was asked (its watch never
/// answers): the callers below are all waiting for that first list when it arrives.
fn control_plane() -> kube::Client {
    let service = tower::service_fn(|request: http::Request<kube::client::Body>| async move {
        if request
            .uri()
            .query()
            .unwrap_or_default()
            .contains("watch=true")
        {
            futures::future::pending::<()>().await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let list = serde_json::json!({
            "apiVersion": "cluster.karmada.io/v1alpha1",
            "kind": "ClusterList",
            "metadata": {"resourceVersion": "1"},
            "items": [],
        });
        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(
            list.to_string(),
        ))))
    });
    kube::Client::new(service, "default")
}

/// Every worker of a controller asks for a member client at once after a restart: all of them
/// get their answer as soon as the Clusters are listed (here: no such cluster), none waits out
/// the sync timeout (kube's `Store::wait_until_ready` wakes only one of several waiters).
#[tokio::test(start_paused = true)]
async fn concurrent_first_callers_all_proceed_once_the_clusters_are_listed() {
    let shutdown = Shutdown::new();
    let clients = SecretMemberClients::start(control_plane(), shutdown.clone());
    let started = tokio::time::Instant::now();
    // Each caller is its own task, as the controllers' workers are.
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let clients = clients.clone();
            tokio::spawn(async move { clients.client("absent").await })
        })
        .collect();
    for call in calls {
        let result = call.await.expect("the caller finishes");
        let error = result.err().map(|e| e.to_string());
        let unknown = MemberError::UnknownCluster {
            cluster: "absent".to_owned(),
        };
        assert_eq!(error, Some(unknown.to_string()));
    }
    // Paused (virtual) time: this is the sync timeout not being reached, not a speed check.
    assert!(started.elapsed() < SYNC_TIMEOUT, "{:?}", started.elapsed());
    shutdown.cancel();
}
