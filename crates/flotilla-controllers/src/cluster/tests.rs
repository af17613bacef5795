//! The cluster controller's writes and Events against a scripted API server.

use std::sync::Mutex;

use http_body_util::BodyExt as _;
use kube::runtime::reflector;
use serde_json::{Value, json};

use super::*;

// Karmada's own `GenerateTaintsMessage` cases, restated.
mod karmada_taints_message;

/// One request the controller sent: method, path (with query), body.
type Sent = (String, String, Value);

/// A client answering like an API server without the execution space; every request is kept.
fn scripted() -> (kube::Client, Arc<Mutex<Vec<Sent>>>) {
    let sent = Arc::new(Mutex::new(Vec::<Sent>::new()));
    let log = sent.clone();
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let log = log.clone();
        async move {
            let method = request.method().to_string();
            let path = request.uri().to_string();
            let bytes = request.into_body().collect().await?.to_bytes();
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            log.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((method.clone(), path.clone(), body.clone()));
            let (status, answer) = if method == "GET" && path.contains("/namespaces/") {
                (
                    404,
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "NotFound", "code": 404, "message": "not found"}),
                )
            } else if method == "PATCH" && path.contains("/clusters/") {
                (200, cluster_json())
            } else {
                (201, body)
            };
            let response = http::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(kube::client::Body::from(serde_json::to_vec(&answer)?))?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
        }
    });
    (kube::Client::new(service, "default"), sent)
}

fn cluster_json() -> Value {
    json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "m1", "uid": "u-1", "resourceVersion": "7"},
        "spec": {"syncMode": "Push"},
    })
}

fn controller(client: kube::Client, cluster: Cluster) -> Controller {
    let (clusters, mut writer) = reflector::store();
    writer.apply_watcher_event(&watcher::Event::Apply(cluster));
    let (leases, _) = reflector::store();
    Controller {
        recorder: recorder(client.clone()),
        client,
        options: ClusterOptions::default(),
        clusters,
        leases,
        queue: WorkQueue::new(Backoff {
            base: Duration::from_millis(1),
            max: Duration::from_millis(1),
        }),
    }
}

fn events(sent: &[Sent]) -> Vec<(String, String, String, String)> {
    sent.iter()
        .filter(|(method, path, _)| method == "POST" && path.contains("/events"))
        .map(|(_, path, body)| {
            let field = |name: &str| body[name].as_str().unwrap_or_default().to_owned();
            (
                path.clone(),
                field("type"),
                field("reason"),
                field("message"),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_new_cluster_gets_its_execution_space_and_taint_with_karmadas_events() {
    let (client, sent) = scripted();
    let cluster: Cluster = serde_json::from_value(cluster_json()).expect("a cluster");
    let controller = controller(client, cluster);
    let after = controller.reconcile("m1").await.expect("reconciled");
    assert_eq!(after, None);
    let sent = sent
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let namespace = sent
        .iter()
        .find(|(m, p, _)| m == "POST" && p.starts_with("/api/v1/namespaces?"))
        .expect("the execution space is created");
    assert_eq!(namespace.2["metadata"]["name"], "karmada-es-m1");
    assert_eq!(namespace.2["metadata"]["labels"][SYSTEM_LABEL], "true");
    let events = events(&sent);
    let note = "Taint cluster succeed: cluster now has taints([{Key:cluster.karmada.io/not-ready,Effect:NoSchedule}]).";
    assert_eq!(
        events,
        [
            (
                "/api/v1/namespaces/default/events?".to_owned(),
                "Normal".to_owned(),
                EVENT_CREATE_EXECUTION_SPACE_SUCCEED.to_owned(),
                "Created execution space(karmada-es-m1) for cluster(m1).".to_owned(),
            ),
            (
                "/api/v1/namespaces/default/events?".to_owned(),
                "Normal".to_owned(),
                EVENT_TAINT_CLUSTER_SUCCEED.to_owned(),
                note.to_owned(),
            ),
        ]
    );
    let patch = sent
        .iter()
        .find(|(m, p, _)| m == "PATCH" && p.contains("/clusters/m1"))
        .expect("taint and finalizer written");
    assert_eq!(patch.2["metadata"]["finalizers"], json!([FINALIZER]));
}

#[test]
fn the_taint_message_reads_like_karmadas() {
    let taint = |key: &str, value: Option<&str>, effect: &str| Taint {
        key: key.to_owned(),
        value: value.map(str::to_owned),
        effect: effect.to_owned(),
        time_added: None,
    };
    assert_eq!(
        taints_message(&[]),
        "Taint cluster succeed: cluster now does not have taints."
    );
    assert_eq!(
        taints_message(&[
            taint("dedicated", Some("gpu"), "NoSchedule"),
            taint("cluster.karmada.io/unreachable", Some(""), "NoSchedule"),
        ]),
        "Taint cluster succeed: cluster now has taints([{Key:dedicated,Value:gpu,Effect:NoSchedule},\
         {Key:cluster.karmada.io/unreachable,Effect:NoSchedule}])."
    );
}
