//! What a pod needs from the cluster's ConfigMaps and Secrets before its containers start, as
//! the kubelet checks it (kubernetes/pkg/kubelet: the volume manager mounts a pod's volumes
//! before any container starts; `kubelet_pods.go`'s `makeEnvironmentVariables` builds each
//! container's environment when it starts).
//!
//! - A `configMap` or `secret` volume (or such a source of a `projected` volume) naming an object
//!   that does not exist, not marked `optional`: the pod stays `ContainerCreating`
//!   (`MountVolume.SetUp failed for volume "token" : secret "app-token" not found`).
//! - An `envFrom` source or an `env` value from a ConfigMap or Secret that does not exist, or a
//!   key the object lacks, not marked `optional`: that container waits in
//!   `CreateContainerConfigError` with the kubelet's message (`configmap "app-config" not
//!   found`, `couldn't find key MODE in ConfigMap shop/app-config`); the others start.
//!
//! The kubelet looks again when such an object is created or changed. Init containers are not
//! checked (the sim runs none).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Container, Secret, Volume};

use crate::informer::Cache;
use crate::pod::Pod;

/// The cluster's ConfigMaps and Secrets, as the kubelets read them.
#[derive(Debug, Clone)]
pub struct Sources {
    pub config_maps: Cache<ConfigMap>,
    pub secrets: Cache<Secret>,
}

/// Why a pod's containers cannot start yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// A volume cannot be set up: the pod stays `ContainerCreating` (the kubelet's
    /// `FailedMount` message).
    Volume(String),
    /// Containers (by name) whose environment cannot be made, with the kubelet's message.
    Containers(BTreeMap<String, String>),
}

impl Sources {
    /// What keeps `pod`'s containers from starting now, if anything.
    pub fn blocked(&self, pod: &Pod) -> Option<Blocked> {
        let spec = pod.spec.as_ref()?;
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
        for volume in spec.volumes.iter().flatten() {
            if let Some(message) = self.volume_missing(namespace, volume) {
                return Some(Blocked::Volume(format!(
                    "MountVolume.SetUp failed for volume {:?} : {message}",
                    volume.name
                )));
            }
        }
        let errors: BTreeMap<String, String> = spec
            .containers
            .iter()
            .filter_map(|c| Some((c.name.clone(), self.env_error(namespace, c)?)))
            .collect();
        (!errors.is_empty()).then_some(Blocked::Containers(errors))
    }

    fn config_map(&self, namespace: &str, name: &str) -> Result<std::sync::Arc<ConfigMap>, String> {
        self.config_maps
            .get(namespace, name)
            .ok_or_else(|| format!("configmap {name:?} not found"))
    }

    fn secret(&self, namespace: &str, name: &str) -> Result<std::sync::Arc<Secret>, String> {
        self.secrets
            .get(namespace, name)
            .ok_or_else(|| format!("secret {name:?} not found"))
    }

    /// The error of setting up `volume`: a missing ConfigMap or Secret it needs.
    fn volume_missing(&self, namespace: &str, volume: &Volume) -> Option<String> {
        let mut needs: Vec<(bool, &str, bool)> = Vec::new();
        if let Some(source) = &volume.config_map {
            needs.push((true, source.name.as_str(), source.optional == Some(true)));
        }
        if let Some(source) = &volume.secret {
            let name = source.secret_name.as_deref().unwrap_or("");
            needs.push((false, name, source.optional == Some(true)));
        }
        for source in volume
            .projected
            .iter()
            .flat_map(|p| p.sources.iter().flatten())
        {
            if let Some(cm) = &source.config_map {
                needs.push((true, cm.name.as_str(), cm.optional == Some(true)));
            }
            if let Some(secret) = &source.secret {
                needs.push((false, secret.name.as_str(), secret.optional == Some(true)));
            }
        }
        needs.into_iter().find_map(|(config_map, name, optional)| {
            if optional {
                return None;
            }
            let found = if config_map {
                self.config_map(namespace, name).map(drop)
            } else {
                self.secret(namespace, name).map(drop)
            };
            found.err()
        })
    }

    /// The first error making `container`'s environment, in the kubelet's order: `envFrom`
    /// sources, then `env` values.
    fn env_error(&self, namespace: &str, container: &Container) -> Option<String> {
        for source in container.env_from.iter().flatten() {
            if let Some(cm) = &source.config_map_ref
                && cm.optional != Some(true)
                && let Err(message) = self.config_map(namespace, &cm.name)
            {
                return Some(message);
            }
            if let Some(secret) = &source.secret_ref
                && secret.optional != Some(true)
                && let Err(message) = self.secret(namespace, &secret.name)
            {
                return Some(message);
            }
        }
        for var in container.env.iter().flatten() {
            let Some(from) = &var.value_from else {
                continue;
            };
            if let Some(key_ref) = &from.config_map_key_ref {
                let found = self.config_map(namespace, &key_ref.name).map(|cm| {
                    cm.data
                        .as_ref()
                        .is_some_and(|d| d.contains_key(&key_ref.key))
                });
                let error = key_error(found, key_ref.optional, || {
                    format!(
                        "couldn't find key {} in ConfigMap {namespace}/{}",
                        key_ref.key, key_ref.name
                    )
                });
                if error.is_some() {
                    return error;
                }
            }
            if let Some(key_ref) = &from.secret_key_ref {
                let found = self.secret(namespace, &key_ref.name).map(|secret| {
                    let key = &key_ref.key;
                    secret.data.as_ref().is_some_and(|d| d.contains_key(key))
                        || secret
                            .string_data
                            .as_ref()
                            .is_some_and(|d| d.contains_key(key))
                });
                let error = key_error(found, key_ref.optional, || {
                    format!(
                        "couldn't find key {} in Secret {namespace}/{}",
                        key_ref.key, key_ref.name
                    )
                });
                if error.is_some() {
                    return error;
                }
            }
        }
        None
    }
}

/// The error of an `env` value read from a key (`found`: whether the object holds it, or the
/// object's own error), unless the reference is `optional`.
fn key_error(
    found: Result<bool, String>,
    optional: Option<bool>,
    missing_key: impl FnOnce() -> String,
) -> Option<String> {
    if optional == Some(true) {
        return None;
    }
    match found {
        Err(message) => Some(message),
        Ok(false) => Some(missing_key()),
        Ok(true) => None,
    }
}

#[cfg(test)]
mod tests;
