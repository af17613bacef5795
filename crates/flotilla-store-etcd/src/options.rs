//! How to reach etcd and where in its key space to live.

use std::time::Duration;

use bytes::Bytes;
use flotilla_store::StoreLimits;

/// Connection settings of an [`EtcdStore`](crate::EtcdStore).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdOptions {
    /// Client URLs of the etcd members (`http://127.0.0.1:2379`); requests are balanced over
    /// them and move away from a member that stops answering.
    pub endpoints: Vec<String>,
    /// Every key lives under this prefix in etcd (default empty). It separates key spaces only:
    /// the revision and compaction are shared with everyone using the same etcd.
    pub prefix: Bytes,
    /// Checked before anything is sent. etcd's own `--max-request-bytes` (default 1.5 MiB) must
    /// leave room for `max_value_bytes` plus the key and framing, or etcd refuses large values.
    pub limits: StoreLimits,
    /// How long opening a connection to one member may take.
    pub connect_timeout: Duration,
    /// How long one request may take before it fails with `Unavailable` (its outcome unknown).
    pub request_timeout: Duration,
}

impl EtcdOptions {
    /// Options for these endpoints, with no prefix, default limits, a 5 s connect timeout and a
    /// 10 s request timeout.
    pub fn new(endpoints: impl IntoIterator<Item = impl Into<String>>) -> Self {
        EtcdOptions {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            prefix: Bytes::new(),
            limits: StoreLimits::default(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
        }
    }

    pub fn with_prefix(mut self, prefix: impl Into<Bytes>) -> Self {
        self.prefix = prefix.into();
        self
    }

    pub fn with_limits(mut self, limits: StoreLimits) -> Self {
        self.limits = limits;
        self
    }

    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
}
