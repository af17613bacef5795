//! `pods/log` and `pods/exec` through the tower service: authorization as kube-apiserver ≥ 1.31
//! does it, the answers without a kubelet backend, and a fake backend's log served with the
//! options; exec refuses requests that are not WebSocket upgrades.

use std::sync::Arc;

use bytes::Bytes;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::kubelet::{
    ContainerLog, ExecExit, ExecRequest, ExecStreams, KubeletBackend, LogLine, LogRequest,
};
use flotilla_apiserver::{ApiError, Builder, Running};
use flotilla_store::{MemoryStore, Store};
use futures::future::BoxFuture;
use http::{Request, StatusCode};
use serde_json::json;

use crate::support::{control_plane, get, json, merge, send, send_as};

#[derive(Debug)]
struct Fake;

impl KubeletBackend for Fake {
    fn logs(&self, request: LogRequest) -> BoxFuture<'static, Result<ContainerLog, ApiError>> {
        let lines = (1..=3)
            .map(|i| LogLine {
                time: jiff::Timestamp::from_second(1_700_000_000 + i).expect("in range"),
                bytes: Bytes::from(format!("{} line {i}\n", request.container)),
            })
            .collect();
        Box::pin(async move { Ok(ContainerLog { lines, later: None }) })
    }
    fn exec(&self, _: ExecRequest, _: ExecStreams) -> BoxFuture<'static, ExecExit> {
        Box::pin(async { ExecExit::Code(0) })
    }
}

/// A pod `web` on node `n1` whose container `c` runs.
async fn running_pod(cp: &Running) {
    let created = send(
        cp,
        json(
            "POST",
            "/api/v1/namespaces/default/pods",
            &json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}}),
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let patched = send(cp, merge("/api/v1/namespaces/default/pods/web/status", json!({"status": {
        "phase": "Running", "containerStatuses": [{"name": "c", "image": "nginx", "imageID": "",
            "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]}}))).await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
}

#[tokio::test]
async fn without_a_kubelet_backend_logs_say_no_kubelet_is_reachable() {
    let cp = control_plane().await;
    running_pod(&cp).await;
    let reply = send(&cp, get("/api/v1/namespaces/default/pods/web/log")).await;
    assert_eq!(
        reply.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        reply.body
    );
    let message = reply.body["message"].as_str().unwrap_or("");
    assert!(
        message.contains("containerLogs/default/web/c")
            && message.contains("no kubelet is reachable for node \"n1\""),
        "{message}"
    );
    let ghost = send(&cp, get("/api/v1/namespaces/default/pods/ghost/log")).await;
    assert_eq!(ghost.status, StatusCode::NOT_FOUND);
    assert_eq!(ghost.body["message"], "pods \"ghost\" not found");
    let exec = send(
        &cp,
        get("/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true"),
    )
    .await;
    assert_eq!(
        exec.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        exec.body
    );
    assert!(
        exec.body["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("error dialing backend"),
        "{}",
        exec.body
    );
}

#[tokio::test]
async fn exec_is_authorized_as_create_even_for_the_websocket_get() {
    let cp = control_plane().await;
    let alice = UserInfo {
        name: "alice".into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    };
    let exec = send_as(
        &cp,
        Some(alice.clone()),
        get("/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=1"),
    )
    .await;
    assert_eq!(exec.status, StatusCode::FORBIDDEN);
    assert!(
        exec.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("cannot create resource \"pods/exec\""),
        "{}",
        exec.body
    );
    let log = send_as(
        &cp,
        Some(alice),
        get("/api/v1/namespaces/default/pods/web/log"),
    )
    .await;
    assert!(
        log.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("cannot get resource \"pods/log\""),
        "{}",
        log.body
    );
}

#[tokio::test]
async fn a_backends_log_is_served_as_text_with_the_options() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let cp = Builder::new(store)
        .kubelet(Arc::new(Fake))
        .start()
        .await
        .expect("starts");
    running_pod(&cp).await;
    let response = cp
        .server
        .clone()
        .router()
        .oneshot_as_admin(get(
            "/api/v1/namespaces/default/pods/web/log?tailLines=2&timestamps=true",
        ))
        .await;
    assert_eq!(response.0, StatusCode::OK);
    assert_eq!(response.1, "text/plain");
    assert_eq!(
        response.2,
        "2023-11-14T22:13:22.000000000Z c line 2\n2023-11-14T22:13:23.000000000Z c line 3\n"
    );
    let plain = send(
        &cp,
        get("/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true"),
    )
    .await;
    assert_eq!(plain.status, StatusCode::BAD_REQUEST);
    assert_eq!(plain.body["message"], "Upgrade request required");
    let spdy = Request::post("/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true")
        .header("Connection", "Upgrade")
        .header("Upgrade", "SPDY/3.1")
        .body(axum::body::Body::empty())
        .expect("request");
    let spdy = send(&cp, spdy).await;
    assert_eq!(spdy.status, StatusCode::BAD_REQUEST);
    assert!(
        spdy.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("WebSocket only"),
        "{}",
        spdy.body
    );
    let unknown = send(
        &cp,
        get("/api/v1/namespaces/default/pods/web/exec?command=true&stdout=true&container=y"),
    )
    .await;
    assert_eq!(
        unknown.body["message"],
        "container y is not valid for pod web"
    );
}

/// The raw text of a reply (the shared helper parses JSON).
trait OneshotAsAdmin {
    async fn oneshot_as_admin(
        self,
        request: Request<axum::body::Body>,
    ) -> (StatusCode, String, String);
}

impl OneshotAsAdmin for axum::Router {
    async fn oneshot_as_admin(
        self,
        mut request: Request<axum::body::Body>,
    ) -> (StatusCode, String, String) {
        use tower::ServiceExt as _;
        request
            .extensions_mut()
            .insert(flotilla_apiserver::Identity(Some(crate::support::admin())));
        let response = self.oneshot(request).await.expect("infallible");
        let status = response.status();
        let content_type = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        (
            status,
            content_type,
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }
}
