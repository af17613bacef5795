//! Typed store errors. The API server maps them to Kubernetes `Status` codes in one place.

use std::sync::Arc;

use crate::Revision;

/// Everything a store operation can fail with.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The key does not exist (at the revision read).
    #[error("key {key:?} not found")]
    NotFound { key: String },
    /// A create found the key already present.
    #[error("key {key:?} already exists")]
    AlreadyExists { key: String },
    /// A compare-and-swap found another modification revision than expected.
    #[error(
        "conflict on key {key:?}: expected modification revision {expected}, current is {current}"
    )]
    Conflict {
        key: String,
        expected: Revision,
        /// The key's current modification revision (0 when it does not exist).
        current: Revision,
    },
    /// The requested revision is below the compacted revision: its history is gone.
    #[error("required revision {requested} has been compacted (compacted revision is {compacted})")]
    Compacted {
        requested: Revision,
        compacted: Revision,
    },
    /// The requested revision is above the current store revision.
    #[error("required revision {requested} is a future revision (current revision is {current})")]
    FutureRevision {
        requested: Revision,
        current: Revision,
    },
    /// A key was empty or longer than allowed.
    #[error("invalid key: {reason}")]
    InvalidKey { reason: String },
    /// A value exceeded the configured limit.
    #[error("value for key {key:?} is {size} bytes, over the limit of {limit} bytes")]
    ValueTooLarge {
        key: String,
        size: usize,
        limit: usize,
    },
    /// A transaction is malformed (e.g. touches one key twice, or has too many operations).
    #[error("invalid transaction: {reason}")]
    InvalidTxn { reason: String },
    /// The backend cannot serve the request now (connection lost, no quorum, store closed).
    #[error("store unavailable: {message}")]
    Unavailable {
        message: String,
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
    /// The backend failed in a way that is not the caller's fault (I/O error, corruption).
    #[error("storage backend error: {message}")]
    Backend {
        message: String,
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
}

impl StoreError {
    /// An [`StoreError::Unavailable`] with a source error.
    pub fn unavailable(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Unavailable {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// A [`StoreError::Backend`] with a source error.
    pub fn backend(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError::Backend {
            message: message.into(),
            source: Some(Arc::new(source)),
        }
    }

    /// Whether retrying the same request later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}

/// Renders a key for error messages: UTF-8 when it is, escaped bytes otherwise.
pub fn display_key(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(s) => s.to_owned(),
        Err(_) => key.escape_ascii().to_string(),
    }
}
