//! The cluster status controller's bookkeeping around a sync.

use std::sync::Arc;

use flotilla_member::StaticMemberClients;
use kube::runtime::reflector;
use prometheus_client::registry::Registry;

use super::*;

/// A client whose every request fails.
fn no_requests() -> kube::Client {
    let service = tower::service_fn(|request: http::Request<kube::client::Body>| async move {
        Err::<http::Response<kube::client::Body>, _>(
            format!("unexpected request {} {}", request.method(), request.uri()).into(),
        )
    });
    kube::Client::new(
        tower::util::MapErr::new(service, |e: Box<dyn std::error::Error + Send + Sync>| e),
        "default",
    )
}

fn controller(cluster: Cluster) -> Controller {
    let client = no_requests();
    let context = Context::new(client, Arc::new(StaticMemberClients::new()), None);
    let (clusters, mut writer) = reflector::store();
    writer.apply_watcher_event(&watcher::Event::Apply(cluster));
    let options = StatusOptions::default();
    Controller {
        thresholds: parking_lot::Mutex::new(Thresholds::new(
            options.success_threshold,
            options.failure_threshold,
        )),
        context,
        options,
        clusters,
        queue: WorkQueue::new(Backoff {
            base: Duration::from_millis(1),
            max: Duration::from_millis(1),
        }),
        members: parking_lot::Mutex::new(HashMap::new()),
        shutdown: Shutdown::new(),
    }
}

fn scrape(controller: &Controller) -> String {
    let mut registry = Registry::default();
    controller.context.metrics.cluster.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encodes");
    text
}

#[tokio::test]
async fn waiting_for_the_finalizer_is_not_timed_as_a_status_sync() {
    let cluster: Cluster = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "m1"},
        "spec": {"syncMode": "Push"},
    }))
    .expect("a cluster");
    let controller = controller(cluster);
    let after = controller.reconcile("m1").await.expect("no error");
    assert_eq!(after, Some(Duration::from_secs(1)), "looked at again");
    let text = scrape(&controller);
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("cluster_sync_status_duration_seconds_count{")),
        "a sync was timed:\n{text}"
    );
}
