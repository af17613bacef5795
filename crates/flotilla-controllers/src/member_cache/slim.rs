//! The member informers' decoding: a [`DynamicObject`] read without its
//! `metadata.managedFields`, in one pass.
//!
//! `DynamicObject`'s derived decoding flattens two members (the type and the rest of the
//! object), so serde first buffers the whole object into an intermediate tree and then decodes
//! each part from it; and it decodes `managedFields` (on a member Deployment the control plane
//! created, a tree as large as the spec) only for the informer to drop them. Every member
//! watch event of every Work goes through here.

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ApiResource, DynamicObject};
use kube::core::{DynamicResourceScope, Resource, TypeMeta};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

/// A member object decoded without `metadata.managedFields` (see the module).
#[derive(Debug, Clone)]
pub(crate) struct Slim(pub DynamicObject);

impl Resource for Slim {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::kind(dt)
    }

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::group(dt)
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::version(dt)
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::api_version(dt)
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        DynamicObject::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

impl<'de> Deserialize<'de> for Slim {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Slim;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Slim, A::Error> {
        let mut api_version = None;
        let mut kind = None;
        let mut metadata = None;
        let mut data = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => api_version = Some(map.next_value::<String>()?),
                "kind" => kind = Some(map.next_value::<String>()?),
                "metadata" => metadata = Some(map.next_value::<MetaWithoutManagedFields>()?.0),
                _ => {
                    let value = map.next_value::<Value>()?;
                    data.insert(key, value);
                }
            }
        }
        let types = match (api_version, kind) {
            (Some(api_version), Some(kind)) => Some(TypeMeta { api_version, kind }),
            _ => None,
        };
        Ok(Slim(DynamicObject {
            types,
            metadata: metadata.ok_or_else(|| de::Error::missing_field("metadata"))?,
            data: Value::Object(data),
        }))
    }
}

/// `ObjectMeta` decoded with its `managedFields` skipped ([`flotilla_api::meta`]).
struct MetaWithoutManagedFields(ObjectMeta);

impl<'de> Deserialize<'de> for MetaWithoutManagedFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        flotilla_api::meta::without_managed_fields(deserializer).map(MetaWithoutManagedFields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn member_deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
                "generation": 2, "labels": {"karmada.io/managed": "true"},
                "annotations": {"a": "b"}, "creationTimestamp": "2026-12-05T00:00:00Z",
                "managedFields": [{
                    "manager": "karmada-controller-manager", "operation": "Update",
                    "apiVersion": "apps/v1", "time": "2026-12-05T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {}}}},
                }],
            },
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
            "status": {"readyReplicas": 2, "conditions": [{"type": "Available", "status": "True"}]},
        })
    }

    /// The same object `DynamicObject`'s own decoding gives, managed fields dropped.
    #[test]
    fn decodes_as_dynamic_object_does_without_managed_fields() {
        let text = member_deployment().to_string();
        let slim: Slim = serde_json::from_str(&text).unwrap();
        let mut full: DynamicObject = serde_json::from_str(&text).unwrap();
        assert!(full.metadata.managed_fields.is_some());
        full.metadata.managed_fields = None;
        assert_eq!(slim.0, full);
        assert_eq!(slim.0.data["status"]["readyReplicas"], 2);
        assert!(slim.0.data.get("apiVersion").is_none());
    }

    #[test]
    fn objects_without_types_or_managed_fields_decode_too() {
        let mut object = member_deployment();
        let map = object.as_object_mut().unwrap();
        map.remove("apiVersion");
        map.remove("kind");
        map["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        let text = object.to_string();
        let slim: Slim = serde_json::from_str(&text).unwrap();
        let full: DynamicObject = serde_json::from_str(&text).unwrap();
        assert_eq!(slim.0, full);
        assert!(slim.0.types.is_none());
        // Not an object: an error, not a panic.
        assert!(serde_json::from_str::<Slim>("[1]").is_err());
        assert!(serde_json::from_str::<Slim>(r#"{"metadata": 3}"#).is_err());
    }
}
