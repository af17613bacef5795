//! `GET …/pods/{name}/log`: the options, the checks against the stored pod, and the body.
//!
//! The backend hands over timed entries; the options a kubelet applies when it reads a log file
//! are applied here, in its order: `tailLines` (the last N entries), then `sinceSeconds` /
//! `sinceTime` (entries before the cutoff dropped), `timestamps` (each entry prefixed with its
//! time, nanoseconds fixed, as the kubelet prints them), and `limitBytes` (the body stops
//! there, even mid-line). With `follow` the entries written later are streamed as they come,
//! until the container ends or the client goes away.

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use http::{HeaderValue, StatusCode, header};

use super::{ContainerLog, LogLine, LogRequest, SharedKubelet, decode_pod, unreachable};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::lifted::kubelet::{LogQuery, LogRun, container_of, log_query, log_run};
use crate::request::Query;
use crate::server::ApiServer;

/// Serves a log request for pod `name` (authorized as `get` on `pods/log`).
pub(crate) async fn serve(
    server: &ApiServer,
    info: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    query: &Query,
) -> Result<Response, ApiError> {
    let options = log_query(query, name)?;
    let pod = decode_pod(server.registry.get(info, namespace, name).await?)?;
    let container = container_of(&pod, name, options.container.as_deref())?;
    let Some(node) = super::node_of(&pod) else {
        // No node yet: kube-apiserver has no log location and answers an empty log.
        return Ok(text_body(Body::empty()));
    };
    let Some(backend) = server.kubelet.clone() else {
        return Err(unreachable(
            format!(
                "Get \"https://{node}:10250/containerLogs/{}/{name}/{container}\"",
                namespace.unwrap_or("")
            ),
            &node,
        ));
    };
    let run = log_run(&pod, name, &container, options.previous)?;
    let log = backend
        .logs(LogRequest {
            pod: Arc::new(pod),
            container,
            previous: run == LogRun::Previous,
            follow: options.follow,
        })
        .await?;
    Ok(text_body(body(log, &options, server.registry.clock.now())))
}

/// Shared by the tests: a backend's log through the options.
pub(crate) fn body(log: ContainerLog, options: &LogQuery, now: jiff::Timestamp) -> Body {
    let filter = Filter::new(options, now);
    let mut lines = log.lines;
    if let Some(tail) = options.tail_lines {
        let keep = usize::try_from(tail).unwrap_or(usize::MAX);
        if lines.len() > keep {
            lines.drain(..lines.len() - keep);
        }
    }
    let mut state = filter;
    let mut first = BytesMut::new();
    for line in &lines {
        if state.push(line, &mut first) {
            return Body::from(first.freeze());
        }
    }
    let first = first.freeze();
    let Some(later) = log.later else {
        return Body::from(first);
    };
    // The entries so far, then each later one as it comes; the stream ends at the byte limit.
    let head = futures::stream::once(async move { first });
    let tail = futures::stream::unfold((later, state), |(mut later, mut state)| async move {
        if state.done {
            return None;
        }
        let line = later.next().await?;
        let mut out = BytesMut::new();
        state.push(&line, &mut out);
        Some((out.freeze(), (later, state)))
    });
    let stream = head
        .chain(tail)
        .filter(|chunk| futures::future::ready(!chunk.is_empty()))
        .map(Ok::<Bytes, std::io::Error>);
    Body::from_stream(stream)
}

/// The per-entry options: since cutoff, timestamps, byte limit.
struct Filter {
    since: Option<jiff::Timestamp>,
    timestamps: bool,
    remaining: Option<usize>,
    done: bool,
}

impl Filter {
    fn new(options: &LogQuery, now: jiff::Timestamp) -> Self {
        let since = options.since_time.or_else(|| {
            options
                .since_seconds
                .and_then(|s| now.checked_sub(jiff::SignedDuration::from_secs(s)).ok())
        });
        Filter {
            since,
            timestamps: options.timestamps,
            remaining: options
                .limit_bytes
                .map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
            done: false,
        }
    }

    /// Appends `line` as served; true once the byte limit is reached.
    fn push(&mut self, line: &LogLine, out: &mut BytesMut) -> bool {
        if self.done || self.since.is_some_and(|since| line.time < since) {
            return self.done;
        }
        let mut entry = BytesMut::new();
        if self.timestamps {
            entry.extend_from_slice(timestamp(line.time).as_bytes());
            entry.extend_from_slice(b" ");
        }
        entry.extend_from_slice(&line.bytes);
        if let Some(remaining) = self.remaining.as_mut() {
            if entry.len() >= *remaining {
                entry.truncate(*remaining);
                *remaining = 0;
                self.done = true;
            } else {
                *remaining -= entry.len();
            }
        }
        out.extend_from_slice(&entry);
        self.done
    }
}

/// The kubelet's timestamp: RFC 3339 in UTC with nine fractional digits.
pub fn timestamp(time: jiff::Timestamp) -> String {
    format!(
        "{}.{:09}Z",
        time.strftime("%Y-%m-%dT%H:%M:%S"),
        time.subsec_nanosecond()
    )
}

fn text_body(body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    response
}

/// For the exec module: the backend or the kube-apiserver answer without one.
pub(crate) fn backend_or_unreachable(
    server: &ApiServer,
    what: impl FnOnce() -> String,
    node: &str,
) -> Result<SharedKubelet, ApiError> {
    server
        .kubelet
        .clone()
        .ok_or_else(|| unreachable(what(), node))
}
