//! How an API error reads in what users see (Events, conditions, Work and binding status):
//! as the Go client's `err.Error()` does, the Status message alone
//! (`namespaces "karmada-es-member1" not found`), not kube's rendering with the Status's debug
//! form (`ApiError: … (Status { status: Some(Failure), … })`).

/// The Go client's rendering of `error`: an API error's Status message; other errors as kube
/// renders them.
pub fn message(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// [`message`] of `error` when it is a kube error, its own rendering otherwise: for the
/// places that report errors of several types.
pub fn describe<E: std::error::Error + 'static>(error: &E) -> String {
    match (error as &dyn std::error::Error).downcast_ref::<kube::Error>() {
        Some(kube) => message(kube),
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_error_reads_as_its_status_message() {
        let status =
            kube::core::Status::failure("namespaces \"karmada-es-member1\" not found", "NotFound")
                .with_code(404);
        let error = kube::Error::Api(Box::new(status));
        assert_eq!(
            message(&error),
            "namespaces \"karmada-es-member1\" not found"
        );
        assert!(
            error.to_string().contains("Status {"),
            "kube's own rendering"
        );
        assert_eq!(describe(&error), message(&error));
        let other = std::io::Error::other("disk full");
        assert_eq!(describe(&other), "disk full");
    }
}
