//! Kubernetes protobuf request bodies (`Content-Type: application/vnd.kubernetes.protobuf`),
//! decoded into the JSON the rest of the API server works on.
//!
//! A body is the magic `k8s\0` followed by a `runtime.Unknown` envelope ([`envelope`]) whose
//! `raw` bytes are the object's own message. [`decode`] looks the envelope's apiVersion and kind
//! up in [`kinds`], decodes `raw` into the k8s-pb struct and converts it with the per-message
//! field tables (one module per API group) into exactly the JSON object the JSON API would carry:
//! Go's `omitempty`, pointer and `inline` rules, `Time` as RFC 3339, `Quantity` and `IntOrString`
//! as scalars, `bytes` as base64. Responses are always JSON, so there is no encoder.
//!
//! Depends on `k8s-pb` and `prost` only; it knows nothing about storage or HTTP.

use serde_json::Value;

mod apps;
mod authentication;
mod authorization;
mod autoscaling;
mod batch;
mod certificates;
mod coordination;
mod core;
mod envelope;
mod json;
mod kinds;
mod meta;
mod networking;
mod policy;
mod rbac;
mod scheduling;
mod special;

pub use envelope::{CONTENT_TYPE, MAGIC, encode_envelope};
pub use kinds::{is_supported, supported_kinds};

/// Why a protobuf body could not be turned into JSON.
#[derive(Debug, thiserror::Error)]
pub enum ProtobufError {
    #[error("protobuf body does not start with the Kubernetes magic number \"k8s\\0\"")]
    MissingMagic,
    #[error("cannot decode the protobuf envelope (runtime.Unknown): {0}")]
    Envelope(#[source] prost::DecodeError),
    #[error("protobuf envelope carries no apiVersion or kind")]
    MissingTypeMeta,
    #[error("protobuf envelope has unsupported content encoding {0:?}")]
    UnsupportedEncoding(String),
    #[error("protobuf bodies of kind {kind} in {api_version} are not supported; send JSON instead")]
    UnsupportedKind { api_version: String, kind: String },
    #[error("cannot decode protobuf {kind} ({api_version}): {source}")]
    Object {
        api_version: String,
        kind: String,
        #[source]
        source: prost::DecodeError,
    },
    #[error("protobuf {field} does not hold valid JSON: {source}")]
    EmbeddedJson {
        field: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("protobuf timestamp out of range (seconds {seconds}, nanos {nanos})")]
    InvalidTime { seconds: i64, nanos: i32 },
}

impl ProtobufError {
    /// The HTTP status to answer with: 415 when the body is well formed but of a kind or
    /// encoding we do not read as protobuf (the client can resend it as JSON), 400 otherwise.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::UnsupportedKind { .. } | Self::UnsupportedEncoding(_) => 415,
            _ => 400,
        }
    }
}

/// Decodes a protobuf request body into the object's JSON, `apiVersion` and `kind` first.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let unknown = envelope::open(body)?;
    kinds::convert(&unknown.api_version, &unknown.kind, &unknown.raw)
}

#[cfg(test)]
mod tests;
