//! The fault control endpoint of a `flotilla sim` process: plain HTTP on 127.0.0.1 only, one
//! bearer token (random per run, recorded in the kubeconfig extension), and the client
//! `flotilla sim fault` uses.
//!
//! `POST /v1/faults` with `{"cluster": "member1", "fault": "slow", "delay": "2s"}` (faults:
//! `down`, `up`, `blackhole`, `slow` + `delay`, `readyz-fail`, `nodes-notready` + `count`)
//! answers `{"cluster": …, "network": …, "notReadyNodes": […]}`. `GET /v1/clusters` lists the
//! clusters with their endpoints and faults.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use http_body_util::{BodyExt, Full};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::SimError;
use crate::kubeconfig::ControlAddress;
use crate::serve::{Mode, NetFault};
use crate::sim::Sim;

/// A fault to apply to one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultRequest {
    pub cluster: String,
    /// `down`, `up`, `blackhole`, `slow`, `readyz-fail` or `nodes-notready`.
    pub fault: String,
    /// For `slow`: `2s`, `500ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
    /// For `nodes-notready`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
}

impl Sim {
    /// Applies a fault. `up` lifts every fault of the cluster, NotReady nodes included.
    pub async fn apply_fault(&self, request: &FaultRequest) -> Result<Value, SimError> {
        let cluster = self
            .cluster(&request.cluster)
            .ok_or_else(|| SimError::UnknownCluster(request.cluster.clone()))?;
        let mut fault = cluster.net_fault();
        match request.fault.as_str() {
            "down" => fault.mode = Mode::Down,
            "blackhole" => fault.mode = Mode::Blackhole,
            "up" => {
                fault = NetFault::default();
                cluster.nodes_ready().await?;
            }
            "slow" => {
                let text = request
                    .delay
                    .as_deref()
                    .ok_or_else(|| SimError::Control("slow needs a delay (--delay 2s)".into()))?;
                fault.delay = crate::config::parse_duration(text).map_err(SimError::Control)?;
            }
            "readyz-fail" => fault.readyz_fail = true,
            "nodes-notready" => {
                let count = request.count.unwrap_or(1);
                cluster.nodes_not_ready(count).await?;
            }
            other => {
                return Err(SimError::Control(format!(
                    "unknown fault {other:?}: use down, up, blackhole, slow, readyz-fail or nodes-notready"
                )));
            }
        }
        cluster.set_net_fault(fault);
        tracing::info!(cluster = %cluster.name, fault = %request.fault, "fault applied");
        Ok(describe(cluster))
    }
}

fn describe(cluster: &crate::SimCluster) -> Value {
    let fault = cluster.net_fault();
    json!({
        "cluster": cluster.name,
        "endpoint": cluster.url,
        "network": match fault.mode { Mode::Up => "up", Mode::Down => "down", Mode::Blackhole => "blackhole" },
        "delayMs": fault.delay.as_millis() as u64,
        "readyzFail": fault.readyz_fail,
        "notReadyNodes": cluster.nodes.down_nodes(),
    })
}

#[derive(Debug, Clone)]
struct ControlState {
    sim: Arc<Sim>,
    token: String,
}

fn authorized(state: &ControlState, headers: &HeaderMap) -> bool {
    headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t == state.token)
}

async fn faults(
    State(state): State<ControlState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> (StatusCode, axum::Json<Value>) {
    if !authorized(&state, &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "bad token"})),
        );
    }
    let request: FaultRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": e.to_string()})),
            );
        }
    };
    match state.sim.apply_fault(&request).await {
        Ok(v) => (StatusCode::OK, axum::Json(v)),
        Err(e @ SimError::UnknownCluster(_)) => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": e.to_string()})),
        ),
        Err(e) => (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": error_chain(&e)})),
        ),
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

async fn clusters(
    State(state): State<ControlState>,
    headers: HeaderMap,
) -> (StatusCode, axum::Json<Value>) {
    if !authorized(&state, &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "bad token"})),
        );
    }
    let list: Vec<Value> = state.sim.clusters.iter().map(describe).collect();
    (StatusCode::OK, axum::Json(json!({"clusters": list})))
}

/// Serves the control endpoint on 127.0.0.1 (a free port); returns its address and the task.
pub async fn start(
    sim: Arc<Sim>,
) -> Result<(ControlAddress, tokio::task::JoinHandle<()>), SimError> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .map_err(|source| SimError::Listen {
            address: "127.0.0.1:0".into(),
            source,
        })?;
    let address = listener.local_addr().map_err(|source| SimError::Listen {
        address: "127.0.0.1:0".into(),
        source,
    })?;
    let token = uuid::Uuid::new_v4().simple().to_string();
    let state = ControlState {
        sim,
        token: token.clone(),
    };
    let app = Router::new()
        .route("/v1/faults", post(faults))
        .route("/v1/clusters", get(clusters))
        .with_state(state);
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::warn!(%error, "the fault control endpoint stopped");
        }
    });
    Ok((
        ControlAddress {
            url: format!("http://{address}"),
            token,
        },
        task,
    ))
}

/// Sends a request to a control endpoint; returns the JSON answer or the error it reported.
pub async fn call(
    control: &ControlAddress,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value, SimError> {
    let authority = control
        .url
        .strip_prefix("http://")
        .ok_or_else(|| SimError::Control(format!("unsupported control URL {}", control.url)))?
        .to_owned();
    let tcp = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect(&authority),
    )
    .await
    .map_err(|_| SimError::Control(format!("timed out connecting to {authority}")))?
    .map_err(|e| {
        SimError::Control(format!(
            "cannot reach the sim at {authority} (is `flotilla sim` running?): {e}"
        ))
    })?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
            .await
            .map_err(|e| SimError::Control(e.to_string()))?;
    tokio::spawn(connection);
    let bytes = body.map(|b| b.to_string()).unwrap_or_default();
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, &authority)
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {}", control.token),
        )
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(bytes::Bytes::from(bytes)))
        .map_err(|e| SimError::Control(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| SimError::Control(e.to_string()))?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| SimError::Control(e.to_string()))?
        .to_bytes();
    let value: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| json!({"error": String::from_utf8_lossy(&body)}));
    if status.is_success() {
        Ok(value)
    } else {
        Err(SimError::Control(
            value["error"]
                .as_str()
                .unwrap_or("request failed")
                .to_owned(),
        ))
    }
}
