//! etcd's errors as store errors. etcd reports most conditions as a gRPC code plus a fixed
//! message (`etcdserver: …`, see etcd's `api/v3rpc/rpctypes`), so the code decides the family
//! and the message the case.

use std::future::Future;
use std::time::Duration;

use flotilla_store::StoreError;
use tonic::Code;

/// A failed etcd call, before the caller adds what it knows about revisions.
#[derive(Debug)]
pub(crate) enum Failure {
    /// `mvcc: required revision has been compacted`: the caller knows which revision it asked
    /// for and finds out the compacted one.
    Compacted,
    /// `mvcc: required revision is a future revision`: the caller knows which revision it asked
    /// for and finds out the current one.
    FutureRevision,
    /// Everything else, already a store error.
    Store(StoreError),
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Store(error)
    }
}

impl Failure {
    /// The store error, for callers that cannot meet a revision error (they sent no revision).
    pub(crate) fn into_store_error(self, step: &str) -> StoreError {
        match self {
            Failure::Store(error) => error,
            Failure::Compacted | Failure::FutureRevision => StoreError::Backend {
                message: format!(
                    "{step}: etcd reported a revision error for a request without a revision"
                ),
                source: None,
            },
        }
    }
}

/// Runs one etcd call with a deadline; a missed deadline is `Unavailable`, like a lost
/// connection (the request may or may not have been applied).
pub(crate) async fn call<T>(
    step: &'static str,
    timeout: Duration,
    request: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(classify(step, error)),
        Err(_) => Err(Failure::Store(StoreError::Unavailable {
            message: format!("{step}: no answer from etcd within {timeout:?}"),
            source: None,
        })),
    }
}

/// Sorts an etcd-client error into a revision error or a store error.
pub(crate) fn classify(step: &str, error: etcd_client::Error) -> Failure {
    let status = match error {
        etcd_client::Error::GRpcStatus(status) => status,
        etcd_client::Error::TransportError(_)
        | etcd_client::Error::IoError(_)
        | etcd_client::Error::WatchError(_) => {
            return Failure::Store(StoreError::unavailable(
                format!("{step}: etcd unreachable"),
                error,
            ));
        }
        other => {
            return Failure::Store(StoreError::backend(
                format!("{step}: etcd client error"),
                other,
            ));
        }
    };
    let message = status.message().to_owned();
    let has = |needle: &str| message.contains(needle);
    let invalid = |reason: String| StoreError::InvalidTxn { reason };
    let error = match status.code() {
        Code::OutOfRange if has("compacted") => return Failure::Compacted,
        Code::OutOfRange if has("future revision") => return Failure::FutureRevision,
        Code::InvalidArgument if has("key is not provided") => StoreError::InvalidKey {
            reason: format!("etcd: {message}"),
        },
        Code::InvalidArgument
            if has("too many operations") || has("duplicate key") || has("too large") =>
        {
            invalid(format!("etcd refused the transaction: {message}"))
        }
        // gRPC's own size check on the server (`--max-request-bytes` plus overhead).
        Code::ResourceExhausted if has("larger than max") => {
            invalid(format!("etcd refused the request as too large: {message}"))
        }
        // An alarm (`database space exceeded`) needs an operator; retrying does not help.
        Code::ResourceExhausted if has("space exceeded") => {
            StoreError::backend(format!("{step}: etcd is out of space"), status)
        }
        // No leader, leader changed, request timed out, too many requests, connection
        // trouble reported by tonic: the same request may succeed later.
        Code::Unavailable
        | Code::DeadlineExceeded
        | Code::Cancelled
        | Code::Aborted
        | Code::ResourceExhausted
        | Code::Unknown => StoreError::unavailable(format!("{step}: etcd unavailable"), status),
        _ => StoreError::backend(format!("{step}: etcd failed"), status),
    };
    Failure::Store(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: Code, message: &str) -> etcd_client::Error {
        etcd_client::Error::GRpcStatus(tonic::Status::new(code, message))
    }

    #[test]
    fn revision_errors_are_recognised_by_code_and_message() {
        let compacted = status(
            Code::OutOfRange,
            "etcdserver: mvcc: required revision has been compacted",
        );
        assert!(matches!(classify("range", compacted), Failure::Compacted));
        let future = status(
            Code::OutOfRange,
            "etcdserver: mvcc: required revision is a future revision",
        );
        assert!(matches!(classify("range", future), Failure::FutureRevision));
    }

    #[test]
    fn invalid_arguments_become_typed_errors() {
        let cases = [
            ("etcdserver: duplicate key given in txn request", "txn"),
            ("etcdserver: too many operations in txn request", "txn"),
            ("etcdserver: request is too large", "txn"),
            ("etcdserver: key is not provided", "key"),
        ];
        for (message, kind) in cases {
            match (
                classify("txn", status(Code::InvalidArgument, message)),
                kind,
            ) {
                (Failure::Store(StoreError::InvalidTxn { .. }), "txn")
                | (Failure::Store(StoreError::InvalidKey { .. }), "key") => {}
                (other, _) => panic!("{message}: {other:?}"),
            }
        }
    }

    #[test]
    fn leader_loss_and_timeouts_are_retryable_but_space_alarms_are_not() {
        for (code, message) in [
            (Code::Unavailable, "etcdserver: no leader"),
            (Code::Unavailable, "etcdserver: request timed out"),
            (Code::ResourceExhausted, "etcdserver: too many requests"),
            (Code::Unknown, "transport error"),
        ] {
            match classify("txn", status(code, message)) {
                Failure::Store(error) => assert!(error.is_retryable(), "{message}: {error:?}"),
                other => panic!("{message}: {other:?}"),
            }
        }
        match classify(
            "txn",
            status(
                Code::ResourceExhausted,
                "etcdserver: mvcc: database space exceeded",
            ),
        ) {
            Failure::Store(error) => assert!(!error.is_retryable(), "{error:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_missed_deadline_is_unavailable() {
        let never = std::future::pending::<Result<(), etcd_client::Error>>();
        match call("txn", Duration::from_secs(5), never).await {
            Err(Failure::Store(error)) => assert!(error.is_retryable(), "{error:?}"),
            other => panic!("{other:?}"),
        }
    }
}
