//! `GET`/`POST …/pods/{name}/exec`: the checks, the upgrade, and the channel protocol.
//!
//! kubectl ≥ 1.30 opens exec as a WebSocket offering `v5.channel.k8s.io` (client-go's
//! `remotecommand.NewWebSocketExecutor`); other clients offer `v4.channel.k8s.io`. Every binary
//! message starts with its channel: 0 stdin, 1 stdout, 2 stderr, 3 error (one JSON `Status`
//! when the command is over: Success, or Failure with reason `NonZeroExitCode` and the exit code
//! as the `ExitCode` cause), 4 resize (`{"Width":…,"Height":…}`); v5 adds 255, close (`[255, 0]`:
//! the client has no more stdin). As the kubelet does, the server first sends an empty message
//! on the lowest output channel, and ends with a normal close, which the client reads as the end
//! of every stream. A SPDY upgrade (older kubectl, and the one newer ones fall back to when the
//! WebSocket upgrade fails) is refused with a Status saying so, after the same checks: a client
//! that fell back shows that answer, so it must carry the real error when there is one.

use std::sync::Arc;

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Request};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use http::header;
use tokio::sync::mpsc;

use super::log::backend_or_unreachable;
use super::{ExecOutput, ExecRequest, ExecStreams, SharedKubelet, TerminalSize, decode_pod};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::lifted::kubelet::{
    ExecExit, container_of, exec_container_running, exec_query, exec_status,
};
use crate::server::ApiServer;

/// The subprotocols served, preferred first.
pub const PROTOCOLS: [&str; 2] = [V5, V4];
const V5: &str = "v5.channel.k8s.io";
const V4: &str = "v4.channel.k8s.io";

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
const CLOSE: u8 = 255;

/// Serves an exec request for pod `name` (authorized as `create` on `pods/exec`).
pub(crate) async fn serve(
    server: &ApiServer,
    info: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    request: Request,
) -> Result<Response, ApiError> {
    let query = exec_query(request.uri().query())?;
    let pod = decode_pod(server.registry.get(info, namespace, name).await?)?;
    let container = container_of(&pod, name, query.container.as_deref())?;
    let Some(node) = super::node_of(&pod) else {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    };
    let backend = backend_or_unreachable(server, || "error dialing backend".to_owned(), &node)?;
    exec_container_running(&pod, &container)?;
    let upgrade = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if upgrade.starts_with("spdy") {
        return Err(ApiError::bad_request(format!(
            "this API server serves pods/exec over WebSocket only (subprotocols {}), not \
             SPDY: use kubectl 1.30 or later (kubectl 1.29: set KUBECTL_REMOTE_COMMAND_WEBSOCKETS=true)",
            PROTOCOLS.join(", ")
        )));
    }
    if upgrade != "websocket" {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    let (mut parts, _body) = request.into_parts();
    let ws = WebSocketUpgrade::from_request_parts(&mut parts, &())
        .await
        .map_err(|rejection| {
            ApiError::bad_request(format!("unable to upgrade connection: {rejection}"))
        })?
        .protocols(PROTOCOLS);
    let v5 = match ws.selected_protocol().and_then(|p| p.to_str().ok()) {
        Some(V5) => true,
        Some(_) => false,
        None => {
            let offered: Vec<String> = ws
                .requested_protocols()
                .filter_map(|p| p.to_str().ok().map(str::to_owned))
                .collect();
            return Err(ApiError::bad_request(format!(
                "unable to upgrade connection: none of the offered subprotocols {offered:?} is \
                 served (this server speaks {})",
                PROTOCOLS.join(", ")
            )));
        }
    };
    let exec = ExecRequest {
        pod: Arc::new(pod),
        container,
        command: query.command,
        stdin: query.stdin,
        stdout: query.stdout,
        stderr: query.stderr,
        tty: query.tty,
    };
    Ok(ws.on_upgrade(move |socket| session(socket, v5, backend, exec)))
}

fn frame(channel: u8, data: &[u8]) -> Message {
    let mut bytes = BytesMut::with_capacity(data.len() + 1);
    bytes.put_u8(channel);
    bytes.extend_from_slice(data);
    Message::Binary(bytes.freeze())
}

/// One exec session over an upgraded connection.
pub(crate) async fn session(
    socket: WebSocket,
    v5: bool,
    backend: SharedKubelet,
    exec: ExecRequest,
) {
    let (mut sink, mut incoming) = socket.split();
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
    let (output_tx, mut output_rx) = mpsc::channel::<ExecOutput>(16);
    let (resize_tx, resize_rx) = mpsc::channel::<TerminalSize>(4);
    let first = if exec.stdout {
        STDOUT
    } else if exec.stderr {
        STDERR
    } else {
        ERROR
    };
    if sink.send(frame(first, &[])).await.is_err() {
        return;
    }
    let command = exec.command.clone();
    let mut stdin_tx = exec.stdin.then_some(stdin_tx);
    let (gone_tx, mut gone) = tokio::sync::oneshot::channel::<()>();
    // Client → command: stdin, resizes, v5's close of stdin; the end of the connection.
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = incoming.next().await {
            let data = match message {
                Message::Binary(data) => data,
                Message::Close(_) => break,
                _ => continue,
            };
            let Some((&channel, rest)) = data.split_first() else {
                continue;
            };
            match channel {
                STDIN => {
                    if let Some(tx) = &stdin_tx
                        && !rest.is_empty()
                        && tx.send(data.slice(1..)).await.is_err()
                    {
                        stdin_tx = None;
                    }
                }
                RESIZE => {
                    if let Ok(size) = serde_json::from_slice::<TerminalSize>(rest) {
                        let _ = resize_tx.try_send(size);
                    }
                }
                CLOSE if v5 && rest.first() == Some(&STDIN) => stdin_tx = None,
                _ => {}
            }
        }
        let _ = gone_tx.send(());
    });
    let streams = ExecStreams {
        stdin: stdin_rx,
        output: output_tx,
        resize: resize_rx,
    };
    let running = tokio::spawn(backend.exec(exec, streams));
    let mut client_gone = false;
    loop {
        tokio::select! {
            output = output_rx.recv() => {
                let Some(output) = output else { break };
                let message = match output {
                    ExecOutput::Stdout(bytes) => frame(STDOUT, &bytes),
                    ExecOutput::Stderr(bytes) => frame(STDERR, &bytes),
                };
                if sink.send(message).await.is_err() {
                    client_gone = true;
                    break;
                }
            }
            _ = &mut gone, if !client_gone => {
                client_gone = true;
                break;
            }
        }
    }
    if client_gone {
        // Nobody reads the output any more: a backend learns it from its next send.
        drop(output_rx);
        running.abort();
        reader.abort();
        return;
    }
    let exit = match running.await {
        Ok(exit) => exit,
        Err(error) => ExecExit::Error(format!("the command's task failed: {error}")),
    };
    let status = serde_json::to_vec(&exec_status(&command, &exit)).expect("JSON values serialize");
    let _ = sink.send(frame(ERROR, &status)).await;
    let _ = sink
        .send(Message::Close(Some(CloseFrame {
            code: 1000,
            reason: "".into(),
        })))
        .await;
    let _ = sink.flush().await;
    reader.abort();
}
