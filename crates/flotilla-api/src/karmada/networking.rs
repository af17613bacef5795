//! `networking.karmada.io/v1alpha1` `MultiClusterService`: exposes a Service across clusters.
//! With exposure type `CrossCluster`, the Service goes to the provider and consumer clusters
//! and the providers' EndpointSlices are copied into the consumers.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApiVersion, Kind, karmada_resource};

/// Label: the MultiClusterService's permanent id (added on create by the webhook).
pub const MCS_PERMANENT_ID_LABEL: &str = "multiclusterservice.karmada.io/permanent-id";
/// Annotation on a claimed Service and its binding: the MultiClusterService's name.
pub const MCS_NAME_ANNOTATION: &str = "multiclusterservice.karmada.io/name";
/// Annotation on a claimed Service and its binding: the MultiClusterService's namespace.
pub const MCS_NAMESPACE_ANNOTATION: &str = "multiclusterservice.karmada.io/namespace";
/// Label on Works a MultiClusterService manages: its name.
pub const MCS_NAME_LABEL: &str = "multiclusterservice.karmada.io/name";
/// Label on Works a MultiClusterService manages: its namespace.
pub const MCS_NAMESPACE_LABEL: &str = "multiclusterservice.karmada.io/namespace";
/// Exposure type: the Service and its endpoints reach the consumer clusters.
pub const EXPOSURE_CROSS_CLUSTER: &str = "CrossCluster";
/// Condition type: the Service was propagated.
pub const MCS_SERVICE_APPLIED: &str = "ServiceApplied";
/// Condition type: the providers' EndpointSlices were dispatched to the consumers.
pub const MCS_ENDPOINT_SLICE_DISPATCHED: &str = "EndpointSliceDispatched";
/// The kind name Karmada uses as a label value for MultiClusterService ownership.
pub const MULTI_CLUSTER_SERVICE_KIND: &str = "MultiClusterService";

/// A MultiClusterService.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MultiClusterService {
    /// Always `networking.karmada.io/v1alpha1`.
    #[serde(default)]
    pub api_version: ApiVersion<MultiClusterService>,
    /// Always `MultiClusterService`.
    #[serde(default)]
    pub kind: Kind<MultiClusterService>,
    /// Standard object metadata (namespace and name are the Service's).
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What to expose where.
    #[serde(default)]
    pub spec: MultiClusterServiceSpec,
    /// A Service status (load balancer) plus conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<MultiClusterServiceStatus>,
}
karmada_resource!(
    MultiClusterService,
    group = "networking.karmada.io",
    version = "v1alpha1",
    kind = "MultiClusterService",
    plural = "multiclusterservices",
    scope = NamespaceResourceScope
);

impl MultiClusterService {
    /// Whether `spec.types` has `CrossCluster`.
    pub fn cross_cluster(&self) -> bool {
        self.spec.types.iter().any(|t| t == EXPOSURE_CROSS_CLUSTER)
    }
}

/// `MultiClusterService.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MultiClusterServiceSpec {
    /// `CrossCluster` and/or `LoadBalancer`.
    #[serde(default)]
    pub types: Vec<String>,
    /// Exposed ports (LoadBalancer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<ExposurePortSchema>")]
    pub ports: Vec<serde_json::Value>,
    /// Deprecated range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ExposureRangeSchema>")]
    pub range: Option<serde_json::Value>,
    /// Deprecated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_provision_clusters: Vec<String>,
    /// Deprecated.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_consumption_clusters: Vec<String>,
    /// Clusters whose pods serve (empty: every cluster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_clusters: Vec<ClusterSelector>,
    /// Clusters that reach the service (empty: every cluster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consumer_clusters: Vec<ClusterSelector>,
}

/// A cluster by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterSelector {
    /// The cluster's name.
    #[serde(default)]
    pub name: String,
}

/// `MultiClusterService.status` (a Service status).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MultiClusterServiceStatus {
    /// Load balancer ingress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<k8s_openapi::api::core::v1::LoadBalancerStatus>")]
    pub load_balancer: Option<serde_json::Value>,
    /// Conditions (`ServiceApplied`, `EndpointSliceDispatched`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The shape of a `MultiClusterService.spec.ports` entry, for the published schema.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct ExposurePortSchema {
    /// The port's name, unique within the service.
    name: Option<String>,
    /// The exposed port.
    port: i32,
}

/// The shape of the deprecated `MultiClusterService.spec.range`, for the published schema.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ExposureRangeSchema {
    /// The clusters the service is exposed to.
    cluster_names: Option<Vec<String>>,
}

/// The shape of a `MultiClusterIngress` (`networking.karmada.io/v1alpha1`), for the published
/// schema only: no controller of Flotilla reads the kind, which the API server stores as sent.
#[derive(Debug, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct MultiClusterIngressSchema {
    /// `networking.karmada.io/v1alpha1`.
    api_version: Option<String>,
    /// `MultiClusterIngress`.
    kind: Option<String>,
    /// Standard object metadata.
    metadata: Option<ObjectMeta>,
    /// The ingress wanted, as a `networking.k8s.io/v1` Ingress's spec.
    spec: Option<k8s_openapi::api::networking::v1::IngressSpec>,
    /// What the clusters report.
    status: Option<MultiClusterIngressStatusSchema>,
}

/// `MultiClusterIngress.status`.
#[derive(Debug, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct MultiClusterIngressStatusSchema {
    /// The load balancer's addresses.
    load_balancer: Option<k8s_openapi::api::networking::v1::IngressLoadBalancerStatus>,
    /// Clusters whose traffic is blocked.
    traffic_block_clusters: Option<Vec<String>>,
    /// Where each backend Service runs.
    service_locations: Option<Vec<ServiceLocationSchema>>,
}

/// One entry of `MultiClusterIngress.status.serviceLocations`.
#[derive(Debug, JsonSchema)]
#[allow(dead_code)]
struct ServiceLocationSchema {
    /// The Service's name.
    name: String,
    /// The clusters it runs in.
    clusters: Option<Vec<String>>,
}
