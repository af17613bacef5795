//! Object metadata decoded without `managedFields`, for the kinds Flotilla's controllers hold
//! by the thousand and write many times each (Works and bindings).
//!
//! Every write's answer and every watch event of a Work or binding carries its managed fields:
//! two or three entries whose `fieldsV1` trees are as large as the rest of the metadata. No
//! controller reads them (the informers and the scheduler's cache dropped them after decoding),
//! so these types skip them while decoding instead: the member is read past without building
//! anything. Sending such an object back (an update) leaves the stored entries as they are, as
//! kube-apiserver does when a request carries none.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StrDeserializer};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// The key skipped.
const MANAGED_FIELDS: &str = "managedFields";

/// `#[serde(deserialize_with = …)]` for a `metadata: ObjectMeta` member: the metadata without
/// its `managedFields` (`None`).
pub fn without_managed_fields<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<ObjectMeta, D::Error> {
    deserializer.deserialize_map(MetaVisitor)
}

struct MetaVisitor;

impl<'de> Visitor<'de> for MetaVisitor {
    type Value = ObjectMeta;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("object metadata")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectMeta, A::Error> {
        ObjectMeta::deserialize(MapAccessDeserializer::new(Skipping(map)))
    }
}

/// The map of the metadata with the `managedFields` entry read past.
struct Skipping<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Skipping<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.0.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            if key.as_str() == MANAGED_FIELDS {
                self.0.next_value::<IgnoredAny>()?;
                continue;
            }
            return match key {
                Key::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
                Key::Owned(key) => seed.deserialize(StrDeserializer::new(&key)),
            }
            .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// A metadata key, borrowed from the input when it can be (JSON keys without escapes).
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(key) => key,
            Key::Owned(key) => key,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::karmada::{ResourceBinding, Work};

    fn metadata() -> serde_json::Value {
        json!({
            "name": "w", "namespace": "karmada-es-m1", "uid": "u1", "resourceVersion": "7",
            "generation": 2, "labels": {"a": "b"}, "annotations": {"c": "d"},
            "finalizers": ["karmada.io/execution-controller"],
            "managedFields": [{"manager": "karmada-controller-manager", "operation": "Update",
                "apiVersion": "work.karmada.io/v1alpha1", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:a": {}}}},
                "time": "2026-12-05T01:18:13Z"}],
            "creationTimestamp": "2026-12-05T01:18:13Z"
        })
    }

    #[test]
    fn works_and_bindings_decode_their_metadata_without_managed_fields() {
        let work = json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": metadata(), "spec": {"workload": {}}});
        let mut expected = metadata();
        expected
            .as_object_mut()
            .expect("object")
            .remove("managedFields");
        // From text (keys borrowed), from a `Value` (keys owned) and from YAML.
        let from_text: Work = serde_json::from_str(&work.to_string()).expect("text");
        let from_value: Work = serde_json::from_value(work.clone()).expect("value");
        let from_yaml: Work = yaml_serde::from_str(&work.to_string()).expect("yaml");
        for decoded in [&from_text, &from_value, &from_yaml] {
            assert_eq!(decoded.metadata.managed_fields, None);
            assert_eq!(
                serde_json::to_value(&decoded.metadata).expect("metadata"),
                expected
            );
        }
        // A key written with an escape still names its member; an unknown one is ignored.
        let escaped = r#"{"metadata": {"n\u0061me": "x", "managedFields": [], "future": 1}}"#;
        let binding: ResourceBinding = serde_json::from_str(escaped).expect("escaped");
        assert_eq!(binding.metadata.name.as_deref(), Some("x"));
        // Wrong types are still refused, naming the member.
        let error = serde_json::from_str::<Work>(r#"{"metadata": {"generation": "two"}}"#)
            .expect_err("a string generation");
        assert!(error.to_string().contains("invalid type"), "{error}");
        let error = serde_json::from_str::<Work>(r#"{"metadata": []}"#).expect_err("a list");
        assert!(error.to_string().contains("invalid type"), "{error}");
    }
}
