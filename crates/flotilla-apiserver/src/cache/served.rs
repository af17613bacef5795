//! The served form of stored bytes without decoding the object: the store keeps an object's
//! JSON without `resourceVersion` ([`crate::object::encode`]), and the served JSON is that
//! JSON with `"resourceVersion":"<revision>"` as the last member of `metadata` — exactly what
//! decoding into a `serde_json::Value` (which keeps member order), stamping the revision and
//! encoding again produce, at a fraction of the cost: one scan that allocates nothing but the
//! labels, and one copy.
//!
//! Anything unusual (no `metadata` object, a `resourceVersion` already present, a repeated
//! member) returns `None`, and the caller takes the decoding path.

use bytes::Bytes;
use flotilla_store::Revision;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::Labels;

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow)]
    metadata: &'a RawValue,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default, rename = "resourceVersion", deserialize_with = "present")]
    has_resource_version: bool,
    #[serde(default)]
    labels: Option<Value>,
}

/// True for any value (`null` included), so that a member that is present counts.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// The served JSON and labels of stored `bytes` at `revision`, or `None` when the bytes need
/// the decoding path.
pub(super) fn splice(bytes: &[u8], revision: Revision) -> Option<(Bytes, Labels)> {
    let top: Top<'_> = serde_json::from_slice(bytes).ok()?;
    let raw = top.metadata.get();
    if !(raw.starts_with('{') && raw.ends_with('}')) {
        return None;
    }
    let metadata: Metadata = serde_json::from_str(raw).ok()?;
    if metadata.has_resource_version {
        return None;
    }
    // `raw` borrows from `bytes`: its end is the offset just past metadata's closing brace.
    let start = (raw.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
    let close = start + raw.len() - 1;
    let empty = raw[1..raw.len() - 1].trim_ascii().is_empty();
    let revision = revision.to_string();
    let mut out = Vec::with_capacity(bytes.len() + revision.len() + 22);
    out.extend_from_slice(&bytes[..close]);
    if !empty {
        out.push(b',');
    }
    out.extend_from_slice(b"\"resourceVersion\":\"");
    out.extend_from_slice(revision.as_bytes());
    out.push(b'"');
    out.extend_from_slice(&bytes[close..]);
    let labels = match &metadata.labels {
        Some(Value::Object(map)) => Labels::from_pairs(
            map.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
        ),
        _ => Labels::default(),
    };
    Some((out.into(), labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the decoding path serves.
    fn decoded(bytes: &[u8], revision: Revision) -> (Vec<u8>, Labels) {
        let value = crate::object::decode_at(bytes, revision).expect("JSON");
        let labels = Labels::of(&value);
        (serde_json::to_vec(&value).expect("encodes"), labels)
    }

    #[test]
    fn splicing_serves_what_decoding_serves() {
        let objects = [
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"app":"web","tier":"fe"}},"data":{"metadata":"{\"x\":1}"}}"#,
            r#"{"metadata":{"name":"b","annotations":{"a":"}\"{"},"labels":{"k\"ey":"v\\u"}},"kind":"Secret"}"#,
            r#"{"kind":"Namespace","metadata":{}}"#,
            r#"{"kind":"Namespace","metadata":{"labels":{"n":1,"s":"x"},"finalizers":["a"]},"spec":{}}"#,
            r#"{"kind":"X","spec":{"metadata":{"resourceVersion":"9"}},"metadata":{"name":"c","ownerReferences":[{"uid":"u"}]}}"#,
            "{\"kind\":\"X\", \"metadata\" : { \"name\" : \"d\" } }",
            "{\"kind\":\"X\",\"metadata\":{ }}",
        ];
        for object in objects {
            let (json, labels) = splice(object.as_bytes(), 42).expect(object);
            let (expected_json, expected_labels) = decoded(object.as_bytes(), 42);
            let served: Value = serde_json::from_slice(&json).expect(object);
            let expected: Value = serde_json::from_slice(&expected_json).expect(object);
            assert_eq!(served, expected, "{object}");
            assert_eq!(labels, expected_labels, "{object}");
            if !object.contains(' ') {
                // Compact input (what the registry stores) gives identical bytes.
                assert_eq!(
                    String::from_utf8_lossy(&json),
                    String::from_utf8_lossy(&expected_json)
                );
            }
        }
    }

    #[test]
    fn unusual_objects_take_the_decoding_path() {
        for object in [
            r#"{"kind":"X"}"#,
            r#"{"metadata":null}"#,
            r#"{"metadata":["name"]}"#,
            r#"{"metadata":{"name":"a","resourceVersion":"3"}}"#,
            r#"{"metadata":{"name":"a","resourceVersion":null}}"#,
            r#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#,
            r#"{"metadata":{"labels":{},"labels":{"a":"b"}}}"#,
            r#"[1,2]"#,
            "not json",
        ] {
            assert!(splice(object.as_bytes(), 1).is_none(), "{object}");
        }
    }

    #[test]
    fn labels_keep_string_values_only() {
        let (_, labels) = splice(
            br#"{"metadata":{"labels":{"a":"1","b":2,"c":"","d":null}}}"#,
            1,
        )
        .expect("splices");
        assert_eq!(labels.iter().collect::<Vec<_>>(), [("a", "1"), ("c", "")]);
        assert_eq!(labels.get("c"), Some(""));
        assert_eq!(labels.get("b"), None);
    }
}
