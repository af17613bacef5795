//! `search.karmada.io/v1alpha1` `ResourceRegistry`: which member clusters' objects of which
//! kinds karmada-search caches, for the `search/cache` view and the `proxying` global proxy.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, ClusterAffinity, Kind, karmada_resource};

/// The annotation karmada-search puts on every object it serves from its cache: the member
/// cluster the object came from.
pub const CACHE_SOURCE_ANNOTATION: &str = "resource.karmada.io/cached-from-cluster";

/// A cluster-scoped registration of member objects to cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRegistry {
    /// Always `search.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<ResourceRegistry>,
    /// Always `ResourceRegistry`.
    #[serde(default)]
    pub kind: Kind<ResourceRegistry>,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What to cache.
    #[serde(default)]
    pub spec: ResourceRegistrySpec,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ResourceRegistryStatus>,
}
karmada_resource!(
    ResourceRegistry,
    group = "search.karmada.io",
    version = "v1alpha1",
    kind = "ResourceRegistry",
    plural = "resourceregistries",
    scope = ClusterResourceScope
);

/// `ResourceRegistry.spec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRegistrySpec {
    /// The clusters whose objects are cached (Karmada's placement `ClusterAffinity`).
    #[serde(default)]
    pub target_cluster: ClusterAffinity,
    /// The kinds (and optionally the namespace) cached.
    #[serde(default)]
    pub resource_selectors: Vec<SearchResourceSelector>,
    /// Where the cache is kept (OpenSearch); absent: in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_store: Option<BackendStoreConfig>,
}

/// One kind to cache.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResourceSelector {
    /// `group/version` (or `version` for the core group).
    #[serde(default)]
    pub api_version: String,
    /// The kind.
    #[serde(default)]
    pub kind: String,
    /// Only this namespace (empty: all namespaces).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// `spec.backendStore`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackendStoreConfig {
    /// An OpenSearch backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_search: Option<OpenSearchConfig>,
}

/// `spec.backendStore.openSearch`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenSearchConfig {
    /// Server addresses (`http(s)://host:port`).
    #[serde(default)]
    pub addresses: Vec<String>,
    /// The Secret with the credentials.
    #[serde(default)]
    pub secret_ref: OpenSearchSecretRef,
}

/// A Secret in the same namespace as the karmada-search component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenSearchSecretRef {
    /// The Secret's name.
    #[serde(default)]
    pub name: String,
}

/// `ResourceRegistry.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRegistryStatus {
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}
