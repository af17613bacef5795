//! Mapping redb's errors to [`StoreError`], naming the step that failed.

use flotilla_store::StoreError;

/// A closure turning a redb error met during `step` into a [`StoreError::Backend`].
pub(crate) fn storage<E>(step: &'static str) -> impl Fn(E) -> StoreError
where
    E: Into<redb::Error>,
{
    move |error| {
        let error: redb::Error = error.into();
        StoreError::backend(format!("redb: {step} failed"), error)
    }
}

/// The error every caller waiting on a closed store gets.
pub(crate) fn closed() -> StoreError {
    StoreError::Unavailable {
        message: "the redb store is closed".into(),
        source: None,
    }
}
