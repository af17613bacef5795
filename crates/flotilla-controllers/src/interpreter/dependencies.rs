//! `InterpretDependency`: the objects a workload needs in every cluster it runs in —
//! ConfigMaps, Secrets, ServiceAccounts (other than `default`) and PVCs its pod template
//! references (StatefulSets' volumeClaimTemplates excluded, since the member creates those), and
//! an Ingress's TLS Secrets. Order: ConfigMaps, Secrets, ServiceAccounts, PVCs, each by name.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One dependency (the JSON of `resourcebinding.karmada.io/dependencies`).
/// Either `name` or `labelSelector` picks the objects (a selector: every matching object of the
/// kind in the namespace, as Karmada's distributor lists them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DependentObjectReference {
    pub api_version: String,
    pub kind: String,
    /// Empty for cluster-scoped objects, and then left out as Karmada's `omitempty` does.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
}

impl DependentObjectReference {
    /// What orders and identifies a reference (the selector as its JSON text).
    fn key(&self) -> (&str, &str, &str, &str, String) {
        (
            &self.api_version,
            &self.kind,
            &self.namespace,
            &self.name,
            self.label_selector
                .as_ref()
                .and_then(|s| serde_json::to_string(s).ok())
                .unwrap_or_default(),
        )
    }
}

impl Eq for DependentObjectReference {}

impl PartialOrd for DependentObjectReference {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DependentObjectReference {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// The dependencies of `object` (empty for kinds without the hook).
pub fn dependencies(object: &Value) -> Vec<DependentObjectReference> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let pod_spec = match (api_version, kind) {
        ("v1", "Pod") => object.get("spec"),
        ("apps/v1", "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet")
        | ("batch/v1", "Job") => object.pointer("/spec/template/spec"),
        ("batch/v1", "CronJob") => object.pointer("/spec/jobTemplate/spec/template/spec"),
        ("multicluster.x-k8s.io/v1alpha1", "ServiceImport") => {
            return service_import_dependencies(object, &namespace);
        }
        ("networking.k8s.io/v1", "Ingress") => {
            let secrets: BTreeSet<String> = object
                .pointer("/spec/tls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("secretName").and_then(Value::as_str))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            return refs("Secret", &namespace, secrets);
        }
        _ => None,
    };
    let Some(pod_spec) = pod_spec else {
        return Vec::new();
    };
    let excluded_claims: BTreeSet<String> = if kind == "StatefulSet" {
        object
            .pointer("/spec/volumeClaimTemplates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.pointer("/metadata/name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    } else {
        BTreeSet::new()
    };
    let mut found = PodReferences::default();
    found.visit(pod_spec);
    found.claims.retain(|c| !excluded_claims.contains(c));
    let mut out = refs("ConfigMap", &namespace, found.config_maps);
    out.extend(refs("Secret", &namespace, found.secrets));
    out.extend(refs("ServiceAccount", &namespace, found.service_accounts));
    out.extend(refs("PersistentVolumeClaim", &namespace, found.claims));
    out
}

/// A ServiceImport needs its derived Service `derived-<name>` and the EndpointSlices labelled
/// `kubernetes.io/service-name: derived-<name>` (Karmada's `getServiceImportDependencies`).
fn service_import_dependencies(object: &Value, namespace: &str) -> Vec<DependentObjectReference> {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let derived = crate::service_export::derived_service_name(name);
    vec![
        DependentObjectReference {
            api_version: "v1".to_owned(),
            kind: "Service".to_owned(),
            namespace: namespace.to_owned(),
            name: derived.clone(),
            label_selector: None,
        },
        DependentObjectReference {
            api_version: "discovery.k8s.io/v1".to_owned(),
            kind: "EndpointSlice".to_owned(),
            namespace: namespace.to_owned(),
            name: String::new(),
            label_selector: Some(LabelSelector {
                match_labels: Some([("kubernetes.io/service-name".to_owned(), derived)].into()),
                match_expressions: None,
            }),
        },
    ]
}

fn refs(kind: &str, namespace: &str, names: BTreeSet<String>) -> Vec<DependentObjectReference> {
    names
        .into_iter()
        .map(|name| DependentObjectReference {
            api_version: "v1".to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name,
            label_selector: None,
        })
        .collect()
}

#[derive(Debug, Default)]
struct PodReferences {
    config_maps: BTreeSet<String>,
    secrets: BTreeSet<String>,
    service_accounts: BTreeSet<String>,
    claims: BTreeSet<String>,
}

fn name_at(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn list<'a>(value: &'a Value, field: &str) -> impl Iterator<Item = &'a Value> {
    value
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

impl PodReferences {
    fn visit(&mut self, spec: &Value) {
        if let Some(sa) = name_at(spec, "/serviceAccountName")
            && sa != "default"
        {
            self.service_accounts.insert(sa);
        }
        self.secrets
            .extend(list(spec, "imagePullSecrets").filter_map(|s| name_at(s, "/name")));
        for volume in list(spec, "volumes") {
            self.config_maps.extend(name_at(volume, "/configMap/name"));
            self.secrets.extend(name_at(volume, "/secret/secretName"));
            self.claims
                .extend(name_at(volume, "/persistentVolumeClaim/claimName"));
            for pointer in [
                "/azureFile/secretName",
                "/cephfs/secretRef/name",
                "/cinder/secretRef/name",
                "/flexVolume/secretRef/name",
                "/rbd/secretRef/name",
                "/scaleIO/secretRef/name",
                "/iscsi/secretRef/name",
                "/storageos/secretRef/name",
                "/csi/nodePublishSecretRef/name",
            ] {
                self.secrets.extend(name_at(volume, pointer));
            }
            for source in volume
                .pointer("/projected/sources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.config_maps.extend(name_at(source, "/configMap/name"));
                self.secrets.extend(name_at(source, "/secret/name"));
            }
        }
        for field in ["containers", "initContainers", "ephemeralContainers"] {
            for container in list(spec, field) {
                for env in list(container, "env") {
                    self.config_maps
                        .extend(name_at(env, "/valueFrom/configMapKeyRef/name"));
                    self.secrets
                        .extend(name_at(env, "/valueFrom/secretKeyRef/name"));
                }
                for env_from in list(container, "envFrom") {
                    self.config_maps
                        .extend(name_at(env_from, "/configMapRef/name"));
                    self.secrets.extend(name_at(env_from, "/secretRef/name"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    mod karmada_cases;

    #[test]
    fn a_deployment_depends_on_what_its_pods_reference() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"template": {"spec": {
                "serviceAccountName": "web-sa",
                "imagePullSecrets": [{"name": "registry"}],
                "volumes": [
                    {"name": "a", "configMap": {"name": "settings"}},
                    {"name": "b", "secret": {"secretName": "tls"}},
                    {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "d", "projected": {"sources": [{"configMap": {"name": "extra"}}]}}],
                "containers": [{"name": "web", "image": "web",
                    "env": [{"name": "X", "valueFrom": {"secretKeyRef": {"name": "db", "key": "p"}}}],
                    "envFrom": [{"configMapRef": {"name": "settings"}}]}]}}}});
        let found: Vec<(String, String)> = dependencies(&deployment)
            .into_iter()
            .map(|d| (d.kind, d.name))
            .collect();
        let expected: Vec<(String, String)> = [
            ("ConfigMap", "extra"),
            ("ConfigMap", "settings"),
            ("Secret", "db"),
            ("Secret", "registry"),
            ("Secret", "tls"),
            ("ServiceAccount", "web-sa"),
            ("PersistentVolumeClaim", "data"),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_owned(), n.to_owned()))
        .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn default_service_account_and_claim_templates_are_not_dependencies() {
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "shop"},
            "spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}],
                "template": {"spec": {"serviceAccountName": "default",
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
                    "containers": [{"name": "db", "image": "db"}]}}}});
        assert!(dependencies(&sts).is_empty());
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        assert!(dependencies(&config).is_empty());
    }
}
