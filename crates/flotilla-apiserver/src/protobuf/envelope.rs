//! The protobuf envelope: the 4-byte magic `k8s\0` and the `runtime.Unknown` message that
//! carries the object's TypeMeta next to its encoded bytes (apimachinery
//! pkg/runtime/serializer/protobuf/protobuf.go describes the layout).

use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message as _;

use super::ProtobufError;

/// The prefix of every Kubernetes protobuf body.
pub const MAGIC: [u8; 4] = *b"k8s\0";

/// The media type of Kubernetes protobuf bodies.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The envelope's content, checked.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) raw: Vec<u8>,
}

pub(crate) fn open(body: &[u8]) -> Result<Opened, ProtobufError> {
    let rest = body
        .strip_prefix(&MAGIC)
        .ok_or(ProtobufError::MissingMagic)?;
    let unknown = Unknown::decode(rest).map_err(ProtobufError::Envelope)?;
    if let Some(encoding) = unknown.content_encoding.filter(|e| !e.is_empty()) {
        return Err(ProtobufError::UnsupportedEncoding(encoding));
    }
    let meta = unknown.type_meta.unwrap_or_default();
    match (meta.api_version, meta.kind) {
        (Some(api_version), Some(kind)) if !api_version.is_empty() && !kind.is_empty() => {
            Ok(Opened {
                api_version,
                kind,
                raw: unknown.raw.unwrap_or_default(),
            })
        }
        _ => Err(ProtobufError::MissingTypeMeta),
    }
}

/// Wraps an encoded object in the envelope, as a Kubernetes protobuf client sends it.
/// For tests (here and in callers) that build request bodies from k8s-pb structs.
pub fn encode_envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.to_owned()),
            kind: Some(kind.to_owned()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = MAGIC.to_vec();
    unknown
        .encode(&mut out)
        .expect("a Vec grows to fit any message");
    out
}
