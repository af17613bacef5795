//! `pods/log` and `pods/exec`: what kube-apiserver does in front of a kubelet, with the
//! containers themselves behind an injected [`KubeletBackend`] ([`crate::Builder::kubelet`]).
//!
//! The server checks everything it can from the stored Pod before the backend is asked (the
//! pod exists, the container it names, that container's state, the options; see
//! [`crate::lifted::kubelet`]), then serves the answer: logs as `text/plain` (the backend gives
//! timed lines; `sinceSeconds`/`sinceTime`, `tailLines`, `timestamps` and `limitBytes` are
//! applied here, `follow` streams the lines that come later, [`log`]), and exec as a WebSocket
//! session in the `v5.channel.k8s.io`/`v4.channel.k8s.io` channel protocols ([`exec`]). SPDY is
//! refused with a clear Status (kubectl ≥ 1.30 tries WebSocket first). Without a backend a
//! request that passed the checks gets the 500 kube-apiserver answers when no kubelet can be
//! reached.
//!
//! Must not depend on the simulator: the backend is a trait object.

pub mod exec;
pub mod log;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use k8s_openapi::api::core::v1::Pod;
use tokio::sync::mpsc;

use crate::error::ApiError;

/// One entry of a container's log: when it was written and its bytes (a whole line ends with
/// `\n`; the last entry may be a partial line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub time: jiff::Timestamp,
    pub bytes: Bytes,
}

/// What a log request asks the backend for (options the server applies itself are not here).
#[derive(Debug, Clone)]
pub struct LogRequest {
    /// The stored pod (validated: scheduled, the container exists and has logs).
    pub pod: Arc<Pod>,
    pub container: String,
    /// The run before the last restart.
    pub previous: bool,
    /// Lines written later are wanted too.
    pub follow: bool,
}

/// A container's log: the entries written so far (oldest first) and, when following, the
/// entries written later; that stream ends when the container does.
pub struct ContainerLog {
    pub lines: Vec<LogLine>,
    pub later: Option<BoxStream<'static, LogLine>>,
}

impl std::fmt::Debug for ContainerLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContainerLog")
            .field("lines", &self.lines.len())
            .field("later", &self.later.is_some())
            .finish()
    }
}

/// What an exec request asks the backend to run.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// The stored pod (validated: the container exists and is running).
    pub pod: Arc<Pod>,
    pub container: String,
    pub command: Vec<String>,
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
}

/// Output of a running command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecOutput {
    Stdout(Bytes),
    Stderr(Bytes),
}

/// A terminal size (the resize channel's JSON: `{"Width":80,"Height":24}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub struct TerminalSize {
    #[serde(rename = "Width")]
    pub width: u16,
    #[serde(rename = "Height")]
    pub height: u16,
}

/// The streams of a running command. `stdin` ends (`None`) when the client closes it (or
/// did not ask for it); a send on `output` fails once the client is gone, which is how a
/// backend learns it should stop.
#[derive(Debug)]
pub struct ExecStreams {
    pub stdin: mpsc::Receiver<Bytes>,
    pub output: mpsc::Sender<ExecOutput>,
    pub resize: mpsc::Receiver<TerminalSize>,
}

pub use crate::lifted::kubelet::ExecExit;

/// The containers of the cluster's nodes, as their kubelets would serve them.
pub trait KubeletBackend: Send + Sync + std::fmt::Debug {
    /// The log of one container run.
    fn logs(&self, request: LogRequest) -> BoxFuture<'static, Result<ContainerLog, ApiError>>;
    /// Runs a command in a container until it exits (or the client goes away).
    fn exec(&self, request: ExecRequest, streams: ExecStreams) -> BoxFuture<'static, ExecExit>;
}

/// A shared backend.
pub type SharedKubelet = Arc<dyn KubeletBackend>;

/// The 500 kube-apiserver answers when the pod's kubelet cannot be reached: this server has no
/// kubelets at all.
pub(crate) fn unreachable(what: String, node: &str) -> ApiError {
    ApiError::internal(format!(
        "{what}: no kubelet is reachable for node {node:?}: this API server serves no node \
         agents (pods/log and pods/exec need a kubelet backend, as in a simulated cluster)"
    ))
}

/// The stored pod, typed.
pub(crate) fn decode_pod(value: serde_json::Value) -> Result<Pod, ApiError> {
    serde_json::from_value(value)
        .map_err(|e| ApiError::internal(format!("the stored pod does not decode: {e}")))
}

/// The node `pod` is bound to, if any.
pub(crate) fn node_of(pod: &Pod) -> Option<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests;
