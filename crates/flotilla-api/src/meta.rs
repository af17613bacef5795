//! Object metadata decoded without the members no reader of it needs, skipped while parsing
//! (`IgnoredAny`) so that they are never built.
//!
//! `managedFields` (one entry per writer, each with its `fieldsV1` tree) is often as large as the
//! rest of an object; decoded by `ObjectMeta`'s own `Deserialize` it becomes a tree of
//! `serde_json::Value`s on every watch event and write answer, and the caches that hold such
//! objects drop it right after. Users: the simulated clusters' slim Pod and Node, and the
//! Karmada kinds the controllers hold by the thousand (Work, ResourceBinding,
//! ClusterResourceBinding: an update sent from such an object leaves the stored entries as they
//! are, as kube-apiserver does when a request carries none).

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    DeserializeSeed, Deserializer, Error, IgnoredAny, IntoDeserializer, MapAccess, Visitor,
};
use serde::{Deserialize, forward_to_deserialize_any};

/// `ObjectMeta` without `managedFields` (for pods: annotations are read).
pub fn without_managed_fields<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<ObjectMeta, D::Error> {
    ObjectMeta::deserialize(Skipping {
        inner: deserializer,
        skip: &["managedFields"],
    })
}

/// `ObjectMeta` without `managedFields` and `annotations` (for nodes: the GPU topology JSON is
/// an annotation nobody here reads).
pub fn without_managed_fields_and_annotations<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<ObjectMeta, D::Error> {
    ObjectMeta::deserialize(Skipping {
        inner: deserializer,
        skip: &["managedFields", "annotations"],
    })
}

/// A deserializer of a JSON object that hides the entries whose keys are in `skip`.
struct Skipping<D> {
    inner: D,
    skip: &'static [&'static str],
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Skipping<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(SkipVisitor {
            visitor,
            skip: self.skip,
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_struct(
            name,
            fields,
            SkipVisitor {
                visitor,
                skip: self.skip,
            },
        )
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct enum identifier
        ignored_any
    }
}

struct SkipVisitor<V> {
    visitor: V,
    skip: &'static [&'static str],
}

impl<'de, V: Visitor<'de>> Visitor<'de> for SkipVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(SkipMap {
            map,
            skip: self.skip,
        })
    }
}

struct SkipMap<A> {
    map: A,
    skip: &'static [&'static str],
}

/// A map key, borrowed from the input where it can be.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> Key<'de> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
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
            fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E: Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkipMap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            if self.skip.contains(&key.as_str()) {
                self.map.next_value::<IgnoredAny>()?;
                continue;
            }
            return match key {
                Key::Borrowed(s) => seed.deserialize(BorrowedStrDeserializer::<A::Error>::new(s)),
                Key::Owned(s) => {
                    seed.deserialize(IntoDeserializer::<A::Error>::into_deserializer(s))
                }
            }
            .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[derive(Deserialize)]
    struct Pod {
        #[serde(deserialize_with = "super::without_managed_fields")]
        metadata: ObjectMeta,
    }

    #[derive(Deserialize)]
    struct Node {
        #[serde(deserialize_with = "super::without_managed_fields_and_annotations")]
        metadata: ObjectMeta,
    }

    fn metadata() -> serde_json::Value {
        json!({"metadata": {"name": "p", "namespace": "default", "uid": "u1",
            "resourceVersion": "7", "labels": {"app": "a"}, "annotations": {"k": "v"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                "uid": "u0", "controller": true}],
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]}})
    }

    #[test]
    fn skips_managed_fields_and_keeps_the_rest() {
        // From bytes (keys borrowed) and from a Value (keys owned): the same result.
        let text = serde_json::to_vec(&metadata()).expect("JSON");
        for pod in [
            serde_json::from_slice::<Pod>(&text).expect("a pod"),
            serde_json::from_value::<Pod>(metadata()).expect("a pod"),
        ] {
            let m = pod.metadata;
            assert_eq!(m.managed_fields, None);
            assert_eq!(m.name.as_deref(), Some("p"));
            assert_eq!(m.namespace.as_deref(), Some("default"));
            assert_eq!(m.uid.as_deref(), Some("u1"));
            assert_eq!(m.resource_version.as_deref(), Some("7"));
            assert_eq!(m.labels.expect("labels")["app"], "a");
            assert_eq!(m.annotations.expect("annotations")["k"], "v");
            assert_eq!(m.owner_references.expect("owners")[0].name, "rs");
            assert!(m.creation_timestamp.is_some());
        }
    }

    #[test]
    fn nodes_skip_annotations_too() {
        let node: Node = serde_json::from_value(metadata()).expect("a node");
        assert_eq!(node.metadata.annotations, None);
        assert_eq!(node.metadata.managed_fields, None);
        assert_eq!(node.metadata.labels.expect("labels")["app"], "a");
    }

    #[test]
    fn works_and_bindings_decode_their_metadata_without_managed_fields() {
        use crate::karmada::{ResourceBinding, Work};
        let work = json!({"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
            "metadata": metadata()["metadata"].clone(), "spec": {"workload": {}}});
        let mut expected = metadata()["metadata"].clone();
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
        // Wrong types are still refused.
        let error = serde_json::from_str::<Work>(r#"{"metadata": {"generation": "two"}}"#)
            .expect_err("a string generation");
        assert!(error.to_string().contains("invalid type"), "{error}");
        let error = serde_json::from_str::<Work>(r#"{"metadata": []}"#).expect_err("a list");
        assert!(error.to_string().contains("invalid type"), "{error}");
    }

    #[test]
    fn a_malformed_skipped_field_is_still_an_error() {
        let text = br#"{"metadata": {"name": "p", "managedFields": [1, }}"#;
        assert!(serde_json::from_slice::<Pod>(text).is_err());
    }
}
