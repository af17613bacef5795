//! Builders for a control plane under test and small HTTP helpers.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::{Builder, Identity, Running};
use flotilla_store::{MemoryStore, Store};
use http::{Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt as _;

/// A control plane on a fresh memory store.
pub async fn control_plane() -> Running {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    Builder::new(store)
        .start()
        .await
        .expect("API server starts")
}

pub fn admin() -> UserInfo {
    UserInfo {
        name: "test-admin".into(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        ..Default::default()
    }
}

/// A response: status, content type and body parsed as JSON when it is.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub body: Value,
}

/// Sends one request as the admin.
pub async fn send(cp: &Running, request: Request<Body>) -> Reply {
    send_as(cp, Some(admin()), request).await
}

pub async fn send_as(cp: &Running, user: Option<UserInfo>, mut request: Request<Body>) -> Reply {
    request.extensions_mut().insert(Identity(user));
    let response = cp
        .server
        .clone()
        .router()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let raw = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body")
        .to_vec();
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Reply {
        status,
        content_type,
        body,
    }
}

pub fn get(uri: &str) -> Request<Body> {
    Request::get(uri).body(Body::empty()).expect("request")
}

pub fn with_body(
    method: &str,
    uri: &str,
    content_type: &str,
    body: impl Into<Body>,
) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body.into())
        .expect("request")
}

pub fn json(method: &str, uri: &str, body: &Value) -> Request<Body> {
    with_body(method, uri, "application/json", body.to_string())
}

/// Waits for a condition, polling, for at most `patience`.
pub async fn eventually<F, Fut>(patience: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        if check().await {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not met within {patience:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn deployment(name: &str, replicas: i64) -> Value {
    serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}]}
            }
        }
    })
}

/// A JSON merge patch of `uri` with `patch`.
pub fn merge(uri: &str, patch: Value) -> Request<Body> {
    with_body(
        "PATCH",
        uri,
        "application/merge-patch+json",
        patch.to_string(),
    )
}
