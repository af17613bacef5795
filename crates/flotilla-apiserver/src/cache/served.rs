//! The served form of stored bytes without decoding the object: the store keeps an object's
//! JSON without `resourceVersion` ([`crate::object::encode`]), and the served JSON is that
//! JSON with `"resourceVersion":"<revision>"` as the last member of `metadata` — exactly what
//! decoding into a `serde_json::Value` (which keeps member order), stamping the revision and
//! encoding again produce, at a fraction of the cost: one scan that allocates nothing but the
//! labels finds where the version goes, and serving copies the stored bytes around it.
//!
//! Anything unusual before the end of `metadata` (no `metadata` object, a `resourceVersion`
//! already present, a repeated `labels`, an escaped key) returns `None`, and the caller takes the
//! decoding path. The bytes are the store's, written by [`crate::object::encode`] from a map, so
//! a second `metadata` after the first cannot occur and is not looked for.

use serde_json::Value;

use super::Labels;
use crate::object::scan;

/// Where the served form of stored bytes differs from them: `resourceVersion` goes in at
/// byte `at` (metadata's closing brace), after a comma unless metadata is empty.
pub(super) struct Splice {
    pub at: usize,
    pub comma: bool,
    pub labels: Labels,
}

/// Where `resourceVersion` goes into stored `bytes`, and their labels, or `None` when the
/// bytes need the decoding path. One pass ([`scan::pick_nested`]) up to the end of `metadata`:
/// its members are skipped by their brackets (managedFields too) but for the labels' value, and
/// what follows `metadata` (spec, status) is not read at all.
pub(super) fn locate(bytes: &[u8]) -> Option<Splice> {
    let ([], metadata, [resource_version, labels]) =
        scan::pick_nested(bytes, [], "metadata", ["resourceVersion", "labels"])?;
    if resource_version.is_some() {
        return None;
    }
    let raw = &bytes[metadata.clone()];
    let labels = match labels {
        Some(span) => match serde_json::from_slice::<Value>(&bytes[span]).ok()? {
            Value::Object(map) => Labels::from_pairs(
                map.iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
            ),
            _ => Labels::default(),
        },
        None => Labels::default(),
    };
    Some(Splice {
        // `pick_nested` checked that `raw` is an object, so it ends with its closing brace.
        at: metadata.end - 1,
        comma: !scan::is_empty_object(raw)?,
        labels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CachedObject;
    use bytes::Bytes;
    use flotilla_store::Revision;

    /// The served JSON and labels of stored `bytes` at `revision`, if they splice.
    fn splice(bytes: &[u8], revision: Revision) -> Option<(Bytes, Labels)> {
        locate(bytes)?;
        let object =
            CachedObject::from_stored(Bytes::new(), &Bytes::copy_from_slice(bytes), revision)?;
        Some((object.json(), object.labels.clone()))
    }

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
    fn cached_objects_hold_the_stored_bytes_not_a_copy() {
        let stored = Bytes::from(br#"{"kind":"ConfigMap","metadata":{"name":"a"}}"#.to_vec());
        let object = CachedObject::from_stored(Bytes::new(), &stored, 7).expect("splices");
        assert_eq!(object.raw().as_ptr(), stored.as_ptr());
        let mut served = b"[".to_vec();
        object.write_json(&mut served);
        assert_eq!(
            String::from_utf8_lossy(&served),
            r#"[{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"}}"#
        );
        assert_eq!(object.json(), served[1..]);
    }

    #[test]
    fn unusual_objects_take_the_decoding_path() {
        for object in [
            r#"{"kind":"X"}"#,
            r#"{"metadata":null}"#,
            r#"{"metadata":["name"]}"#,
            r#"{"metadata":{"name":"a","resourceVersion":"3"}}"#,
            r#"{"metadata":{"name":"a","resourceVersion":null}}"#,
            r#"{"metadata":{"labels":{},"labels":{"a":"b"}}}"#,
            r#"{"metadata":{"name":"a","labels":{"a":"b"}"#,
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
