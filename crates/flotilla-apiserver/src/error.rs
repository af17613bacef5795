//! API errors and the one place that turns them — and store errors — into Kubernetes `Status`
//! bodies with the right code and reason.

use flotilla_api::validation::{FieldError, invalid_message};
use flotilla_store::StoreError;
use serde_json::{Value, json};

use crate::catalog::ResourceInfo;

/// One cause in `Status.details.causes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, …
    pub reason: String,
    pub message: String,
    pub field: String,
}

/// An error answered to a client as a `metav1.Status`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    /// `details` of the Status: name, group, kind, causes, retryAfterSeconds.
    pub details: Option<Box<Details>>,
}

/// `Status.details`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Details {
    pub name: String,
    pub group: String,
    pub kind: String,
    pub causes: Vec<Cause>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    pub fn with_details(mut self, details: Details) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// The same error with another message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 404 for a path that names no resource at all.
    pub fn no_route() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    pub fn not_found(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", info.qualified_plural()),
        )
        .with_details(details(info, name))
    }

    pub fn already_exists(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", info.qualified_plural()),
        )
        .with_details(details(info, name))
    }

    pub fn conflict(info: &ResourceInfo, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again",
                info.qualified_plural()
            ),
        )
        .with_details(details(info, name))
    }

    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410 Expired: a resource version or continue token older than the history kept.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(413, "RequestEntityTooLarge", message)
    }

    pub fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got {content_type:?})"
            ),
        )
    }

    /// 422 Invalid with per-field causes, worded as kube-apiserver does
    /// (`Deployment.apps "web" is invalid: [...]`).
    pub fn invalid(info: &ResourceInfo, name: &str, errors: &[FieldError]) -> Self {
        let mut d = details(info, name);
        // kube-apiserver's NewInvalid names the kind (kubectl prints `The <Kind> "x" is invalid`).
        d.kind = info.kind.clone();
        d.causes = errors
            .iter()
            .map(|e| Cause {
                reason: e.kind.reason().to_owned(),
                message: e.body(),
                field: e.field.clone(),
            })
            .collect();
        Self::new(
            422,
            "Invalid",
            invalid_message(&info.group, &info.kind, name, errors),
        )
        .with_details(d)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 504 for a resource version the server has not reached yet.
    pub fn too_large_resource_version(requested: i64, current: i64) -> Self {
        Self::new(
            504,
            "Timeout",
            format!("Too large resource version: {requested}, current: {current}"),
        )
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            let mut details = serde_json::Map::new();
            if !d.name.is_empty() {
                details.insert("name".into(), d.name.clone().into());
            }
            if !d.group.is_empty() {
                details.insert("group".into(), d.group.clone().into());
            }
            if !d.kind.is_empty() {
                details.insert("kind".into(), d.kind.clone().into());
            }
            if !d.causes.is_empty() {
                details.insert(
                    "causes".into(),
                    d.causes
                        .iter()
                        .map(
                            |c| json!({"reason": c.reason, "message": c.message, "field": c.field}),
                        )
                        .collect(),
                );
            }
            status["details"] = Value::Object(details);
        }
        status
    }

    /// Maps a store error met while serving `info`/`name`.
    pub fn from_store(error: StoreError, info: &ResourceInfo, name: &str) -> Self {
        match error {
            StoreError::NotFound { .. } => Self::not_found(info, name),
            StoreError::AlreadyExists { .. } => Self::already_exists(info, name),
            StoreError::Conflict { .. } => Self::conflict(info, name),
            StoreError::Compacted {
                requested,
                compacted,
            } => Self::expired(format!(
                "too old resource version: {requested} ({compacted})"
            )),
            StoreError::FutureRevision { requested, current } => {
                Self::too_large_resource_version(requested, current)
            }
            StoreError::ValueTooLarge { .. } => Self::too_large(format!(
                "{} \"{name}\" is too large to store: {error}",
                info.qualified_plural()
            )),
            StoreError::InvalidKey { .. } | StoreError::InvalidTxn { .. } => {
                Self::bad_request(error.to_string())
            }
            StoreError::Unavailable { .. } => {
                Self::new(503, "ServiceUnavailable", error.to_string())
            }
            StoreError::Backend { .. } => Self::internal(error.to_string()),
        }
    }
}

fn details(info: &ResourceInfo, name: &str) -> Details {
    Details {
        name: name.to_owned(),
        group: info.group.clone(),
        kind: info.plural.clone(),
        causes: Vec::new(),
    }
}
