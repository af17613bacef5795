//! Tests of protobuf decoding: the envelope and its errors here, converted objects in
//! `tests/objects.rs` and `tests/workloads.rs`. Bodies are built the way a Go client builds
//! them: k8s-pb structs with every non-pointer field written, encoded with prost, wrapped in
//! the envelope.

use k8s_pb::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use proptest::prelude::*;
use prost::Message as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::BTreeMap;

use super::{MAGIC, ProtobufError, decode, encode_envelope, supported_kinds};

mod objects;
mod workloads;

/// A request body for `message`, as kubectl sends it.
fn encode_for_tests<M: prost::Message>(api_version: &str, kind: &str, message: &M) -> Vec<u8> {
    encode_envelope(api_version, kind, message.encode_to_vec())
}

fn decode_ok<M: prost::Message>(api_version: &str, kind: &str, message: &M) -> Value {
    match decode(&encode_for_tests(api_version, kind, message)) {
        Ok(v) => v,
        Err(e) => panic!("decoding {kind}: {e}"),
    }
}

/// The JSON must be what k8s-openapi reads and writes back unchanged: a misspelt key would be
/// dropped on the way through, a wrong scalar type would fail to deserialize.
fn assert_openapi_round_trip<K: DeserializeOwned + Serialize>(json: &Value) {
    let typed: K = match serde_json::from_value(json.clone()) {
        Ok(t) => t,
        Err(e) => panic!("k8s-openapi rejects {json}: {e}"),
    };
    let back = serde_json::to_value(&typed).expect("k8s-openapi types serialize");
    assert_eq!(&back, json, "k8s-openapi round trip changed the object");
}

/// ObjectMeta as Go's generated marshaller writes it: every non-pointer field present, zero or
/// not, and an empty creationTimestamp message.
fn go_meta(name: &str, namespace: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        generate_name: Some(String::new()),
        namespace: Some(namespace.to_owned()),
        self_link: Some(String::new()),
        uid: Some(String::new()),
        resource_version: Some(String::new()),
        generation: Some(0),
        creation_timestamp: Some(Time::default()),
        labels: BTreeMap::new(),
        ..Default::default()
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

#[test]
fn garbage_is_rejected_as_missing_magic() {
    let err = decode(b"{\"kind\":\"Namespace\"}").expect_err("JSON is not protobuf");
    assert!(matches!(err, ProtobufError::MissingMagic), "{err}");
    assert_eq!(err.status_code(), 400);
}

#[test]
fn wrong_magic_is_rejected() {
    let mut body = encode_for_tests(
        "v1",
        "Namespace",
        &k8s_pb::api::core::v1::Namespace::default(),
    );
    body[3] = b'1';
    assert!(matches!(decode(&body), Err(ProtobufError::MissingMagic)));
}

#[test]
fn truncated_envelope_is_a_decode_error() {
    let ns = k8s_pb::api::core::v1::Namespace {
        metadata: Some(go_meta("a", "")),
        ..Default::default()
    };
    let body = encode_for_tests("v1", "Namespace", &ns);
    let err = decode(&body[..body.len() - 3]).expect_err("truncated");
    assert!(matches!(err, ProtobufError::Envelope(_)), "{err}");
    assert!(err.to_string().contains("runtime.Unknown"), "{err}");
    assert_eq!(err.status_code(), 400);
    assert!(matches!(
        decode(&MAGIC[..2]),
        Err(ProtobufError::MissingMagic)
    ));
}

#[test]
fn truncated_object_names_the_kind() {
    let ns = k8s_pb::api::core::v1::Namespace {
        metadata: Some(go_meta("a", "")),
        ..Default::default()
    };
    let mut raw = ns.encode_to_vec();
    raw.truncate(raw.len() - 1);
    let err = decode(&encode_envelope("v1", "Namespace", raw)).expect_err("truncated object");
    assert!(
        matches!(&err, ProtobufError::Object { kind, .. } if kind == "Namespace"),
        "{err}"
    );
}

#[test]
fn unknown_kind_is_unsupported_media_type() {
    let err =
        decode(&encode_envelope("example.com/v1", "Widget", Vec::new())).expect_err("unknown kind");
    assert!(
        matches!(&err, ProtobufError::UnsupportedKind { kind, .. } if kind == "Widget"),
        "{err}"
    );
    assert_eq!(err.status_code(), 415);
    assert!(err.to_string().contains("send JSON"), "{err}");
}

#[test]
fn envelope_without_type_meta_is_rejected() {
    let mut body = MAGIC.to_vec();
    Unknown {
        raw: Some(vec![]),
        ..Default::default()
    }
    .encode(&mut body)
    .expect("Vec grows");
    assert!(matches!(decode(&body), Err(ProtobufError::MissingTypeMeta)));
}

#[test]
fn compressed_envelope_is_unsupported() {
    let mut body = MAGIC.to_vec();
    Unknown {
        type_meta: Some(TypeMeta {
            api_version: s("v1"),
            kind: s("Namespace"),
        }),
        raw: Some(vec![]),
        content_encoding: s("gzip"),
        content_type: None,
    }
    .encode(&mut body)
    .expect("Vec grows");
    let err = decode(&body).expect_err("gzip");
    assert!(
        matches!(err, ProtobufError::UnsupportedEncoding(_)),
        "{err}"
    );
    assert_eq!(err.status_code(), 415);
}

/// An empty message leaves only the fields Go writes without `omitempty`, all zero.
#[test]
fn every_supported_kind_decodes_an_empty_object() {
    fn is_zero(v: &Value) -> bool {
        match v {
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            Value::String(s) => s.is_empty(),
            Value::Number(n) => n.as_i64() == Some(0),
            Value::Bool(b) => !b,
            Value::Null => false,
        }
    }
    for (api_version, kind) in supported_kinds() {
        let got =
            decode(&encode_envelope(api_version, kind, Vec::new())).expect("empty message decodes");
        let Value::Object(mut fields) = got else {
            panic!("{kind} is not an object")
        };
        assert_eq!(fields.shift_remove("apiVersion"), Some(json!(api_version)));
        assert_eq!(fields.shift_remove("kind"), Some(json!(kind)));
        assert!(
            fields.values().all(is_zero),
            "{api_version} {kind}: {fields:?}"
        );
    }
    let role = decode(&encode_envelope(
        "rbac.authorization.k8s.io/v1",
        "Role",
        Vec::new(),
    ))
    .expect("decodes");
    assert_eq!(
        role,
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": []})
    );
}

#[test]
fn delete_options_are_accepted_in_any_group_version() {
    let opts = k8s_pb::apimachinery::pkg::apis::meta::v1::DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: s("Foreground"),
        dry_run: vec!["All".to_owned()],
        ..Default::default()
    };
    let got = decode_ok("apps/v1", "DeleteOptions", &opts);
    assert_eq!(
        got,
        json!({"apiVersion": "apps/v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
               "propagationPolicy": "Foreground", "dryRun": ["All"]})
    );
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode(&bytes);
        let mut with_magic = MAGIC.to_vec();
        with_magic.extend_from_slice(&bytes);
        let _ = decode(&with_magic);
    }

    #[test]
    fn random_objects_never_panic(index in 0usize..64, raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        let kinds: Vec<_> = supported_kinds().collect();
        let (api_version, kind) = kinds[index % kinds.len()];
        let _ = decode(&encode_envelope(api_version, kind, raw));
    }
}
