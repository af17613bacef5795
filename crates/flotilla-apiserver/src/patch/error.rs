//! Errors of the patch engines, each naming where in the object or patch it happened, and the
//! HTTP status kube-apiserver answers with for it.

use serde_json::Value;

/// Why a patch could not be applied. Paths are written `spec.containers[name=web].ports` for
/// strategic and merge patches, and as JSON pointers for JSON patch operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    #[error("invalid patch JSON: {0}")]
    InvalidJson(#[source] serde_json::Error),

    #[error("invalid JSON patch: {0}")]
    InvalidJsonPatch(#[source] serde_json::Error),

    #[error("the JSON patch has {count} operations, which exceeds the limit of {limit}")]
    TooManyOperations { count: usize, limit: usize },

    #[error("JSON patch operation {index} (test) failed: the value at {path:?} does not match")]
    TestFailed { index: usize, path: String },

    #[error("JSON patch operation {index} ({op}): path {path:?} not found")]
    PathNotFound {
        index: usize,
        op: &'static str,
        path: String,
    },

    #[error("JSON patch operation {index} ({op}) at {path:?}: {reason}")]
    InvalidOperation {
        index: usize,
        op: &'static str,
        path: String,
        reason: String,
    },

    #[error("{what} must be a JSON object, got {found}")]
    NotAnObject {
        what: &'static str,
        found: &'static str,
    },

    #[error("invalid {directive} directive at {}: {reason}", display_path(path))]
    InvalidDirective {
        path: String,
        directive: String,
        reason: String,
    },

    #[error(
        "type mismatch at {}: expected {expected}, found {found}",
        display_path(path)
    )]
    TypeMismatch {
        path: String,
        expected: &'static str,
        found: &'static str,
    },

    #[error("list item at {} has no merge key {key:?}", display_path(path))]
    MissingMergeKey { path: String, key: String },

    #[error(
        "cannot merge the list of objects at {} without a merge key; send the whole list or use \
         a JSON merge patch",
        display_path(path)
    )]
    NoMergeKey { path: String },

    #[error(
        "the items of the list at {} are not in the order given by {directive}",
        display_path(path)
    )]
    SetElementOrderMismatch { path: String, directive: String },

    #[error(
        "strategic merge patch is not supported for {}; use a JSON merge patch \
         (application/merge-patch+json) or a JSON patch",
        display_gvk(group, version, kind)
    )]
    UnsupportedKind {
        group: String,
        version: String,
        kind: String,
    },
}

impl PatchError {
    /// The status kube-apiserver answers with for this error: 400 for a malformed patch, 413 for
    /// too many JSON patch operations, 415 for strategic merge patch on a kind without patch
    /// metadata (custom resources), 422 for a well-formed patch that cannot apply to this object.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::InvalidJson(_)
            | Self::InvalidJsonPatch(_)
            | Self::NotAnObject { .. }
            | Self::InvalidDirective { .. }
            | Self::SetElementOrderMismatch { .. } => 400,
            Self::TooManyOperations { .. } => 413,
            Self::UnsupportedKind { .. } => 415,
            Self::TestFailed { .. }
            | Self::PathNotFound { .. }
            | Self::InvalidOperation { .. }
            | Self::TypeMismatch { .. }
            | Self::MissingMergeKey { .. }
            | Self::NoMergeKey { .. } => 422,
        }
    }

    /// Prefixes the path of a strategic-merge error with the segment of its parent, as the error
    /// travels up the recursion (so paths cost nothing unless something fails).
    pub(crate) fn within(mut self, segment: &str) -> Self {
        if let Some(path) = self.path_mut() {
            *path = if path.is_empty() {
                segment.to_string()
            } else if path.starts_with('[') {
                format!("{segment}{path}")
            } else {
                format!("{segment}.{path}")
            };
        }
        self
    }

    fn path_mut(&mut self) -> Option<&mut String> {
        match self {
            Self::InvalidDirective { path, .. }
            | Self::TypeMismatch { path, .. }
            | Self::MissingMergeKey { path, .. }
            | Self::NoMergeKey { path }
            | Self::SetElementOrderMismatch { path, .. } => Some(path),
            _ => None,
        }
    }

    pub(crate) fn from_json_patch(
        index: usize,
        operation: &json_patch::PatchOperation,
        error: json_patch::PatchError,
    ) -> Self {
        let op = op_name(operation);
        let path = error.path.as_str().to_string();
        match error.kind {
            json_patch::PatchErrorKind::TestFailed => Self::TestFailed { index, path },
            json_patch::PatchErrorKind::InvalidPointer => Self::PathNotFound { index, op, path },
            json_patch::PatchErrorKind::InvalidFromPointer => {
                let from = match operation {
                    json_patch::PatchOperation::Move(op) => op.from.as_str(),
                    json_patch::PatchOperation::Copy(op) => op.from.as_str(),
                    _ => path.as_str(),
                };
                Self::PathNotFound {
                    index,
                    op,
                    path: from.to_string(),
                }
            }
            other => Self::InvalidOperation {
                index,
                op,
                path,
                reason: other.to_string(),
            },
        }
    }
}

pub(crate) fn op_name(operation: &json_patch::PatchOperation) -> &'static str {
    match operation {
        json_patch::PatchOperation::Add(_) => "add",
        json_patch::PatchOperation::Remove(_) => "remove",
        json_patch::PatchOperation::Replace(_) => "replace",
        json_patch::PatchOperation::Move(_) => "move",
        json_patch::PatchOperation::Copy(_) => "copy",
        json_patch::PatchOperation::Test(_) => "test",
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() {
        "the top level"
    } else {
        path
    }
}

fn display_gvk(group: &str, version: &str, kind: &str) -> String {
    if group.is_empty() {
        format!("{version}, Kind={kind}")
    } else {
        format!("{group}/{version}, Kind={kind}")
    }
}
