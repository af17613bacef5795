//! Karmada's API types (`cluster.karmada.io`, `policy.karmada.io`, `work.karmada.io`,
//! `apps.karmada.io`, `autoscaling.karmada.io`, `remedy.karmada.io`) with the exact JSON field names of Karmada's Go types, plus the pure
//! helpers every component shares:
//! naming conventions ([`names`]), cluster affinity matching ([`affinity`]) and the replica
//! interpreter for native workloads ([`replicas`]).
//!
//! Field conventions mirror Go's `omitempty`: a Go string or slice is a Rust `String`/`Vec` that is
//! skipped when empty, a Go pointer is an `Option`. That keeps a JSON round trip lossless for every
//! field these types know. Every top-level kind implements `k8s_openapi::Resource`, `Metadata` and
//! `ListableResource`, so `kube::Api<Cluster>` and friends work directly.

pub mod affinity;
pub mod apps;
pub mod autoscaling;
pub mod cluster;
pub mod cluster_taint_policy;
pub mod cron;
pub mod interpreter_customization;
pub mod interpreter_webhook;
pub mod lua;
pub mod names;
pub mod networking;
pub mod overrides;
pub mod policy;
pub mod quota;
pub mod remedy;
pub mod replicas;
pub mod search;
pub mod webster;
pub mod work;
pub mod work_v1alpha1;

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

pub use apps::*;
pub use autoscaling::*;
pub use cluster::*;
pub use cluster_taint_policy::*;
pub use interpreter_customization::*;
pub use interpreter_webhook::*;
pub use networking::*;
pub use overrides::*;
pub use policy::*;
pub use remedy::*;
pub use search::*;
pub use work::*;
pub use work_v1alpha1::*;

/// Resource quantities keyed by resource name (Go's `corev1.ResourceList`), parsed.
pub type ResourceList = std::collections::BTreeMap<String, crate::Quantity>;

/// The `apiVersion` of a kind: always serialized as `K::API_VERSION`, accepted as any string on
/// input (the caller decides which kinds it reads).
pub struct ApiVersion<K>(PhantomData<fn() -> K>);

/// The `kind` of a kind: always serialized as `K::KIND`, accepted as any string on input.
pub struct Kind<K>(PhantomData<fn() -> K>);

macro_rules! type_tag {
    ($tag:ident, $constant:ident) => {
        impl<K> Default for $tag<K> {
            fn default() -> Self {
                Self(PhantomData)
            }
        }
        impl<K> Clone for $tag<K> {
            fn clone(&self) -> Self {
                Self(PhantomData)
            }
        }
        impl<K> PartialEq for $tag<K> {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }
        impl<K> Eq for $tag<K> {}
        impl<K: k8s_openapi::Resource> fmt::Debug for $tag<K> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(K::$constant)
            }
        }
        impl<K: k8s_openapi::Resource> Serialize for $tag<K> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(K::$constant)
            }
        }
        impl<'de, K> Deserialize<'de> for $tag<K> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct AnyString;
                impl Visitor<'_> for AnyString {
                    type Value = ();
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
                        Ok(())
                    }
                    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
                        Ok(())
                    }
                }
                deserializer.deserialize_any(AnyString)?;
                Ok(Self(PhantomData))
            }
        }
    };
}
type_tag!(ApiVersion, API_VERSION);
type_tag!(Kind, KIND);

impl<K> schemars::JsonSchema for ApiVersion<K> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ApiVersion".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "The group and version of this object's schema, as `<group>/<version>`.",
        })
    }
}

impl<K> schemars::JsonSchema for Kind<K> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Kind".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "The kind of this object, in CamelCase.",
        })
    }
}

/// Implements `k8s_openapi::{Resource, ListableResource, Metadata}` for a Karmada kind.
macro_rules! karmada_resource {
    ($ty:ty, group = $group:literal, version = $version:literal, kind = $kind:literal,
     plural = $plural:literal, scope = $scope:ident) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = concat!($group, "/", $version);
            const GROUP: &'static str = $group;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::$scope;
        }
        impl k8s_openapi::ListableResource for $ty {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
            fn metadata(&self) -> &Self::Ty {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut Self::Ty {
                &mut self.metadata
            }
        }
    };
}
pub(crate) use karmada_resource;

pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}

pub(crate) fn is_zero_i32(value: &i32) -> bool {
    *value == 0
}

pub(crate) fn is_zero_i64(value: &i64) -> bool {
    *value == 0
}

#[cfg(test)]
mod tests;
