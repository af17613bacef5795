//! The Kubernetes multi-cluster services API (`multicluster.x-k8s.io/v1alpha1`,
//! sigs.k8s.io/mcs-api) as Karmada uses it: the ServiceExport and ServiceImport kinds (only
//! the fields the controllers read), and their CustomResourceDefinitions, which `flotilla up`
//! creates on the control plane when absent, as Karmada's installer does.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The API group.
pub const GROUP: &str = "multicluster.x-k8s.io";
/// `apiVersion` of both kinds.
pub const API_VERSION: &str = "multicluster.x-k8s.io/v1alpha1";
/// ServiceImport type whose derived Service Karmada writes.
pub const CLUSTER_SET_IP: &str = "ClusterSetIP";

/// Implements `k8s_openapi::{Resource, ListableResource, Metadata}` for a namespaced kind of
/// the group.
macro_rules! mcs_resource {
    ($ty:ty, kind = $kind:literal, plural = $plural:literal) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = API_VERSION;
            const GROUP: &'static str = GROUP;
            const KIND: &'static str = $kind;
            const VERSION: &'static str = "v1alpha1";
            const URL_PATH_SEGMENT: &'static str = $plural;
            type Scope = k8s_openapi::NamespaceResourceScope;
        }
        impl k8s_openapi::ListableResource for $ty {
            const LIST_KIND: &'static str = concat!($kind, "List");
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = ObjectMeta;
            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// A ServiceExport: the Service of the same namespace and name is exported from its cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceExport {
    #[serde(default)]
    pub metadata: ObjectMeta,
}
mcs_resource!(
    ServiceExport,
    kind = "ServiceExport",
    plural = "serviceexports"
);

/// A ServiceImport: a Service made of the endpoints exported from other clusters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceImport {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ServiceImportSpec,
}
mcs_resource!(
    ServiceImport,
    kind = "ServiceImport",
    plural = "serviceimports"
);

/// `spec` of a ServiceImport.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceImportSpec {
    #[serde(default)]
    pub ports: Vec<ServicePort>,
    /// `ClusterSetIP` or `Headless`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// The cluster-set IP (at most one).
    #[serde(default)]
    pub ips: Vec<String>,
}

/// One port of a ServiceImport.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_protocol: Option<String>,
    #[serde(default)]
    pub port: i32,
}

fn string() -> Value {
    json!({"type": "string"})
}

/// One CRD of the group, its version served and stored, with a status subresource.
fn crd(kind: &str, plural: &str, short: &str, schema: Value, columns: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.to_ascii_lowercase(),
                "kind": kind,
                "listKind": format!("{kind}List"),
                "shortNames": [short],
            },
            "versions": [{
                "name": "v1alpha1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    })
}

/// The ServiceExport CRD: no spec; `status.conditions` are metav1.Conditions.
pub fn service_export_crd() -> Value {
    let condition = json!({
        "type": "object",
        "required": ["lastTransitionTime", "message", "reason", "status", "type"],
        "properties": {
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "message": {"type": "string", "maxLength": 32768},
            "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
            "reason": {
                "type": "string", "maxLength": 1024, "minLength": 1,
                "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
            },
            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
            "type": {
                "type": "string", "maxLength": 316,
                "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
            },
        },
    });
    let schema = json!({
        "type": "object",
        "properties": {
            "apiVersion": string(),
            "kind": string(),
            "metadata": {"type": "object"},
            "status": {
                "type": "object",
                "properties": {
                    "conditions": {
                        "type": "array",
                        "items": condition,
                        "x-kubernetes-list-map-keys": ["type"],
                        "x-kubernetes-list-type": "map",
                    },
                },
            },
        },
    });
    crd(
        "ServiceExport",
        "serviceexports",
        "svcex",
        schema,
        json!([{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]),
    )
}

/// The ServiceImport CRD: ports, type (`ClusterSetIP` or `Headless`), IPs, session affinity;
/// `status.clusters` lists the clusters the endpoints come from.
pub fn service_import_crd() -> Value {
    let port = json!({
        "type": "object",
        "required": ["port"],
        "properties": {
            "appProtocol": string(),
            "name": string(),
            "port": {"type": "integer", "format": "int32"},
            "protocol": string(),
        },
    });
    let schema = json!({
        "type": "object",
        "properties": {
            "apiVersion": string(),
            "kind": string(),
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["ports", "type"],
                "properties": {
                    "ips": {"type": "array", "maxItems": 1, "items": string()},
                    "ports": {
                        "type": "array",
                        "items": port,
                        "x-kubernetes-list-type": "atomic",
                    },
                    "sessionAffinity": string(),
                    "sessionAffinityConfig": {
                        "type": "object",
                        "properties": {
                            "clientIP": {
                                "type": "object",
                                "properties": {
                                    "timeoutSeconds": {"type": "integer", "format": "int32"},
                                },
                            },
                        },
                    },
                    "type": {"type": "string", "enum": ["ClusterSetIP", "Headless"]},
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "clusters": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["cluster"],
                            "properties": {"cluster": string()},
                        },
                        "x-kubernetes-list-map-keys": ["cluster"],
                        "x-kubernetes-list-type": "map",
                    },
                },
            },
        },
    });
    crd(
        "ServiceImport",
        "serviceimports",
        "svcim",
        schema,
        json!([
            {"name": "Type", "type": "string", "jsonPath": ".spec.type"},
            {"name": "IP", "type": "string", "jsonPath": ".spec.ips"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]),
    )
}

/// Why the CRDs could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("decoding the built-in CRD: {0}")]
    Decode(#[from] serde_json::Error),
    #[error("creating CustomResourceDefinition {name}: {source}")]
    Create {
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// Creates the ServiceExport and ServiceImport CRDs where they are absent (existing ones, a
/// user's newer version say, are left alone).
pub async fn ensure_crds(client: &kube::Client) -> Result<(), InstallError> {
    let api = Api::<CustomResourceDefinition>::all(client.clone());
    for crd in [service_export_crd(), service_import_crd()] {
        let crd: CustomResourceDefinition = serde_json::from_value(crd)?;
        let name = crd.metadata.name.clone().unwrap_or_default();
        match api.create(&PostParams::default(), &crd).await {
            Ok(_) => tracing::info!(crd = %name, "installed"),
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(source) => return Err(InstallError::Create { name, source }),
        }
    }
    Ok(())
}
