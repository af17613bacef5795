//! Watch streams: newline-delimited JSON events, served from the watch cache, with bookmarks
//! when asked, in-stream 410 for too-old versions, and a bounded lifetime.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderValue, StatusCode, header};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

use crate::cache::{Change, ChangeKind, Subscription, WatchCache};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::filter::Filter;
use crate::object;
use crate::registry::Registry;
use crate::request::Query;
use flotilla_store::Revision;

/// How often a bookmark is sent when the client allows them.
const BOOKMARK_PERIOD: Duration = Duration::from_secs(60);

pub async fn serve(
    registry: &Registry,
    info: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    query: &Query,
    _table: bool,
) -> Result<Response, ApiError> {
    let filter = Filter::parse(info, query.get("labelSelector"), query.get("fieldSelector"))?;
    let requested = match query.get("resourceVersion") {
        Some(rv) => object::parse_resource_version(rv)?,
        None => None,
    };
    let send_initial = query.flag("sendInitialEvents")?;
    let bookmarks = query.flag("allowWatchBookmarks")?;
    let timeout = match query.int("timeoutSeconds")? {
        Some(seconds) if seconds > 0 => Duration::from_secs(seconds as u64),
        // kube-apiserver picks between 30 and 60 minutes.
        _ => Duration::from_secs(1800 + u64::from(uuid::Uuid::new_v4().as_bytes()[0]) * 7),
    };
    let after = match requested {
        Some(0) | None => None,
        Some(_) if send_initial => None,
        Some(revision) => Some(revision),
    };
    if let Some(revision) = after
        && revision > registry.cache().revision()
        && !registry
            .cache()
            .wait_for(revision, Duration::from_secs(3))
            .await
    {
        return Err(ApiError::too_large_resource_version(
            revision,
            registry.cache().revision(),
        ));
    }
    if after.is_none() {
        // The initial state includes every write acknowledged before the watch started.
        registry.cache_is_current().await?;
    }
    let prefix = info.storage_prefix_in(namespace);
    let stream = match registry.subscribe(&prefix, after).await? {
        Ok(subscription) => events(
            registry.cache().clone(),
            info.clone(),
            prefix.clone(),
            filter,
            subscription,
            send_initial && bookmarks,
            bookmarks,
            timeout,
        )
        .boxed(),
        Err(too_old) => {
            let status = ApiError::expired(format!(
                "too old resource version: {} ({})",
                too_old.requested, too_old.oldest
            ))
            .to_status();
            let line = event_line("ERROR", status.to_string().as_bytes());
            futures::stream::once(async move { Ok::<_, std::convert::Infallible>(line) }).boxed()
        }
    };
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn event_line(kind: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + 32);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    line.into()
}

/// [`event_line`] of a cached object, written straight into the line.
fn object_event_line(kind: &str, object: &crate::cache::CachedObject) -> Bytes {
    let mut line = Vec::with_capacity(object.json_len() + 32);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    object.write_json(&mut line);
    line.extend_from_slice(b"}\n");
    line.into()
}

fn bookmark(info: &ResourceInfo, revision: i64, initial_end: bool) -> Bytes {
    let mut metadata = json!({"resourceVersion": revision.to_string()});
    if initial_end {
        metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let object = json!({"apiVersion": info.api_version(), "kind": info.kind, "metadata": metadata});
    event_line("BOOKMARK", object.to_string().as_bytes())
}

/// What a change looks like to a watcher with a filter: objects moving into the selection are
/// added, moving out are deleted.
fn translate(info: &ResourceInfo, filter: &Filter, change: &Change) -> Option<Bytes> {
    let now = filter.matches(info, &change.object);
    let before = change
        .prev
        .as_ref()
        .is_some_and(|prev| filter.matches(info, prev));
    let kind = match (change.kind, before, now) {
        (ChangeKind::Deleted, true, _) => "DELETED",
        (ChangeKind::Deleted, false, _) => return None,
        (ChangeKind::Added, _, true) => "ADDED",
        (ChangeKind::Modified, true, true) => "MODIFIED",
        (ChangeKind::Modified, false, true) => "ADDED",
        (ChangeKind::Modified, true, false) => "DELETED",
        _ => return None,
    };
    if !crate::conversion::converts(info) {
        return Some(object_event_line(kind, &change.object));
    }
    Some(event_line(
        kind,
        &crate::conversion::to_served_bytes(info, &change.object.json()),
    ))
}

/// The changes at the newest revision a watcher has handled (a transaction's events can arrive
/// one by one with equal revisions), so a catch-up from the window skips exactly those.
#[derive(Default)]
struct Handled {
    revision: Revision,
    at_revision: Vec<Arc<Change>>,
}

impl Handled {
    fn record(&mut self, change: &Arc<Change>) {
        if change.revision > self.revision {
            self.revision = change.revision;
            self.at_revision.clear();
        }
        if change.revision == self.revision {
            self.at_revision.push(change.clone());
        }
    }

    fn contains(&self, change: &Arc<Change>) -> bool {
        change.revision < self.revision
            || (change.revision == self.revision
                && self
                    .at_revision
                    .iter()
                    .any(|seen| Arc::ptr_eq(seen, change)))
    }
}

#[allow(clippy::too_many_arguments)]
fn events(
    cache: Arc<WatchCache>,
    info: Arc<ResourceInfo>,
    prefix: String,
    filter: Filter,
    subscription: Subscription,
    initial_end_bookmark: bool,
    bookmarks: bool,
    timeout: Duration,
) -> impl futures::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send {
    async_stream(move |tx| async move {
        let Subscription {
            revision,
            backlog,
            mut live,
        } = subscription;
        let mut last = revision;
        let mut handled = Handled {
            revision,
            at_revision: Vec::new(),
        };
        for change in &backlog {
            if let Some(line) = translate(&info, &filter, change)
                && tx.send(line).await.is_err()
            {
                return;
            }
            last = last.max(change.revision);
            handled.record(change);
        }
        if initial_end_bookmark && tx.send(bookmark(&info, revision, true)).await.is_err() {
            return;
        }
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut ticker = tokio::time::interval(BOOKMARK_PERIOD);
        ticker.tick().await;
        loop {
            tokio::select! {
                _ = &mut deadline => {
                    // As kube-apiserver does before a watch times out: a client resuming from
                    // this version stays inside the window of recent changes instead of
                    // getting a 410 and relisting (a quiet watch's newest event can be older
                    // than the window, which keeps only seconds on a busy simulated member).
                    if bookmarks {
                        let _ = tx.send(bookmark(&info, last, false)).await;
                    }
                    return;
                }
                _ = ticker.tick(), if bookmarks => {
                    if tx.send(bookmark(&info, last, false)).await.is_err() {
                        return;
                    }
                }
                received = live.recv() => match received {
                    Ok(change) => {
                        // The backlog already covered everything up to the subscription.
                        if change.revision <= revision {
                            continue;
                        }
                        last = last.max(change.revision);
                        handled.record(&change);
                        if !change.object.key.starts_with(prefix.as_bytes()) {
                            continue;
                        }
                        if let Some(line) = translate(&info, &filter, &change)
                            && tx.send(line).await.is_err()
                        {
                            return;
                        }
                    }
                    Err(RecvError::Lagged(_)) => {
                        // Too slow for the live feed: catch up from the window of recent
                        // changes, as a watch resuming from `last` would. Only a watcher that
                        // fell out of the window too gets a 410 (and must relist).
                        let resume = match cache.subscribe(prefix.as_bytes(), Some(handled.revision - 1)) {
                            Ok(resume) => resume,
                            Err(_) => {
                                let status = ApiError::expired(format!(
                                    "too old resource version: {last}: the watcher fell behind"
                                ))
                                .to_status();
                                let _ = tx.send(event_line("ERROR", status.to_string().as_bytes())).await;
                                return;
                            }
                        };
                        tracing::debug!(
                            resource = %info.plural,
                            behind = resume.backlog.len(),
                            "slow watcher catching up from the window"
                        );
                        live = resume.live;
                        for change in &resume.backlog {
                            if handled.contains(change) {
                                continue;
                            }
                            last = last.max(change.revision);
                            handled.record(change);
                            if let Some(line) = translate(&info, &filter, change)
                                && tx.send(line).await.is_err()
                            {
                                return;
                            }
                        }
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        }
    })
}

/// A stream fed by a task through a small channel; the task ends when the client goes away.
fn async_stream<F, Fut>(
    f: F,
) -> impl futures::Stream<Item = Result<Bytes, std::convert::Infallible>> + Send
where
    F: FnOnce(tokio::sync::mpsc::Sender<Bytes>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(f(tx));
    Coalesced { rx }
}

/// Largest body frame [`Coalesced`] builds from queued lines.
const FRAME_BYTES: usize = 64 * 1024;

/// The watch body: each frame carries every line already queued when it is polled (up to
/// [`FRAME_BYTES`]), never waiting for more. Under load one frame, one TLS record run and one
/// write then carry many events instead of one each; an idle watch still sends each event as
/// soon as it comes. Clients split the body into lines (JSON) or length-prefixed frames
/// (protobuf), not by body frame.
struct Coalesced {
    rx: tokio::sync::mpsc::Receiver<Bytes>,
}

impl futures::Stream for Coalesced {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let first = match self.rx.poll_recv(cx) {
            std::task::Poll::Ready(Some(line)) => line,
            std::task::Poll::Ready(None) => return std::task::Poll::Ready(None),
            std::task::Poll::Pending => return std::task::Poll::Pending,
        };
        let Ok(second) = self.rx.try_recv() else {
            return std::task::Poll::Ready(Some(Ok(first)));
        };
        let mut frame = bytes::BytesMut::with_capacity((first.len() + second.len()) * 2);
        frame.extend_from_slice(&first);
        frame.extend_from_slice(&second);
        while frame.len() < FRAME_BYTES {
            match self.rx.try_recv() {
                Ok(line) => frame.extend_from_slice(&line),
                Err(_) => break,
            }
        }
        std::task::Poll::Ready(Some(Ok(frame.freeze())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn queued_lines_share_a_frame_and_a_lone_line_is_not_held_back() {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let mut body = Coalesced { rx };
        for line in ["{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}\n"] {
            tx.send(Bytes::from_static(line.as_bytes())).await.unwrap();
        }
        let frame = body.next().await.unwrap().unwrap();
        assert_eq!(&frame[..], b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");

        // Nothing else queued: the next line is its own frame, sent as soon as it comes.
        tx.send(Bytes::from_static(b"{\"d\":4}\n")).await.unwrap();
        let frame = body.next().await.unwrap().unwrap();
        assert_eq!(&frame[..], b"{\"d\":4}\n");

        drop(tx);
        assert!(body.next().await.is_none());
    }

    #[tokio::test]
    async fn a_frame_stops_growing_at_its_size_limit() {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        let mut body = Coalesced { rx };
        let line = Bytes::from(vec![b'x'; FRAME_BYTES / 4]);
        for _ in 0..6 {
            tx.send(line.clone()).await.unwrap();
        }
        drop(tx);
        let first = body.next().await.unwrap().unwrap();
        assert_eq!(first.len(), FRAME_BYTES);
        let rest = body.next().await.unwrap().unwrap();
        assert_eq!(rest.len(), FRAME_BYTES / 2);
        assert!(body.next().await.is_none());
    }
}
