//! One connection per etcd member, and failover between them.
//!
//! etcd-client balances over several endpoints with tower's power-of-two-choices, which keeps
//! picking a member that refuses connections (it fails fast, so it looks lightly loaded): with
//! one member of three dead, most requests failed. So the store holds a client per member, sends
//! each request to the next member in turn that is not marked down, and moves on to another
//! member when the request provably never reached etcd (connection refused, no leader on that
//! member), marking the failed one down for a while. Reads also move on after any transient
//! failure, since repeating a read is harmless; a write whose fate is unknown (the connection
//! broke after it was sent, a timeout) is never repeated here: the caller gets `Unavailable`.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use etcd_client::{Client, ConnectOptions, KvClient, WatchClient};
use flotilla_store::StoreError;
use parking_lot::Mutex;
use tokio::time::Instant;
use tonic::Code;

use crate::error::{Failure, classify};

/// The largest response accepted (tonic's default is 4 MiB, less than one page of large
/// objects). etcd itself sends up to 2 GiB.
const MAX_RESPONSE_BYTES: usize = i32::MAX as usize;

/// How long a member that refused a request is passed over.
const DOWN_FOR: Duration = Duration::from_secs(1);

/// Whether a request may be sent again after a failure whose outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idempotent {
    /// Reads: repeat on any transient failure.
    Yes,
    /// Writes: repeat only when the request provably was not applied.
    No,
}

#[derive(Debug)]
pub(crate) struct Pool {
    members: Vec<Member>,
    next: AtomicUsize,
}

struct Member {
    url: String,
    kv: KvClient,
    watch: WatchClient,
    down_until: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("url", &self.url)
            .field("down_until", &*self.down_until.lock())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// Clients for every endpoint. Connections are made lazily, on first use.
    pub(crate) async fn connect(
        endpoints: &[String],
        options: ConnectOptions,
    ) -> Result<Pool, StoreError> {
        let mut members = Vec::with_capacity(endpoints.len());
        for url in endpoints {
            let client = Client::connect([url], Some(options.clone()))
                .await
                .map_err(|e| classify("connect", e).into_store_error("connect"))?;
            members.push(Member {
                url: url.clone(),
                kv: client
                    .kv_client()
                    .max_decoding_message_size(MAX_RESPONSE_BYTES),
                watch: client
                    .watch_client()
                    .max_decoding_message_size(MAX_RESPONSE_BYTES),
                down_until: Mutex::new(None),
            });
        }
        Ok(Pool {
            members,
            next: AtomicUsize::new(0),
        })
    }

    /// Runs a KV request, moving to other members as described in the module docs; the whole
    /// exchange gets `timeout`.
    pub(crate) async fn kv<T, F, Fut>(
        &self,
        step: &'static str,
        idempotent: Idempotent,
        timeout: Duration,
        request: F,
    ) -> Result<T, Failure>
    where
        F: FnMut(KvClient) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.run(step, idempotent, timeout, |m| m.kv.clone(), request)
            .await
    }

    /// Opens a watch stream (or any watch request), moving to other members when a member
    /// cannot take it.
    pub(crate) async fn watch<T, F, Fut>(
        &self,
        step: &'static str,
        timeout: Duration,
        request: F,
    ) -> Result<T, Failure>
    where
        F: FnMut(WatchClient) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.run(step, Idempotent::Yes, timeout, |m| m.watch.clone(), request)
            .await
    }

    async fn run<C, T, F, Fut>(
        &self,
        step: &'static str,
        idempotent: Idempotent,
        timeout: Duration,
        client: impl Fn(&Member) -> C,
        mut request: F,
    ) -> Result<T, Failure>
    where
        F: FnMut(C) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let deadline = Instant::now() + timeout;
        let mut last = None;
        for _ in 0..self.members.len() {
            let member = self.pick();
            let attempt = tokio::time::timeout_at(deadline, request(client(member))).await;
            let error = match attempt {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(error)) => error,
                Err(_) => break,
            };
            let unsent = never_reached_etcd(&error);
            if unsent {
                *member.down_until.lock() = Some(Instant::now() + DOWN_FOR);
                tracing::debug!(member = %member.url, %error, "etcd member passed over");
            }
            let failure = classify(step, error);
            let transient = matches!(&failure, Failure::Store(e) if e.is_retryable());
            if !(unsent || (transient && idempotent == Idempotent::Yes)) {
                return Err(failure);
            }
            last = Some(failure);
        }
        Err(last.unwrap_or_else(|| {
            Failure::Store(StoreError::Unavailable {
                message: format!("{step}: no answer from etcd within {timeout:?}"),
                source: None,
            })
        }))
    }

    /// The next member in turn that is not marked down; if all are, the one marked longest ago.
    fn pick(&self) -> &Member {
        let now = Instant::now();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let count = self.members.len();
        let mut fallback: Option<(&Member, Instant)> = None;
        for offset in 0..count {
            let member = &self.members[(start + offset) % count];
            match *member.down_until.lock() {
                Some(until) if until > now => {
                    if fallback.is_none_or(|(_, earliest)| until < earliest) {
                        fallback = Some((member, until));
                    }
                }
                _ => return member,
            }
        }
        match fallback {
            Some((member, _)) => member,
            None => &self.members[start % count],
        }
    }
}

/// Whether a failed request provably never reached etcd's state machine: the connection could
/// not be made, or the member refused it up front for lack of a leader.
fn never_reached_etcd(error: &etcd_client::Error) -> bool {
    match error {
        etcd_client::Error::TransportError(_) => true,
        etcd_client::Error::GRpcStatus(status) => {
            let message = status.message();
            status.code() == Code::Unavailable
                && (message.contains("connect error")
                    || message.contains("connect timeout")
                    || message.contains("no leader"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: Code, message: &str) -> etcd_client::Error {
        etcd_client::Error::GRpcStatus(tonic::Status::new(code, message))
    }

    #[test]
    fn only_failures_before_etcd_saw_the_request_count_as_unsent() {
        assert!(never_reached_etcd(&status(
            Code::Unavailable,
            "tcp connect error"
        )));
        assert!(never_reached_etcd(&status(
            Code::Unavailable,
            "etcdserver: no leader"
        )));
        assert!(!never_reached_etcd(&status(
            Code::Unavailable,
            "etcdserver: request timed out"
        )));
        assert!(!never_reached_etcd(&status(
            Code::Unknown,
            "connection reset"
        )));
    }
}
