//! The bootstrap signer (kube-controller-manager's `bootstrapsigner`, run inside the API
//! server): the `kubeconfig` of ConfigMap `kube-public/cluster-info` is signed with every
//! bootstrap token marked `usage-bootstrap-signing: "true"` and not expired, one detached JWS
//! per token under `jws-kubeconfig-<token-id>`; signatures of tokens that are gone are removed.
//! A client that knows a token checks the (anonymously read) ConfigMap was written by someone
//! who knows it too. Follows `pkg/controller/bootstrap/bootstrapsigner.go` (Kubernetes v1.32).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::lifted::bootstrap_token::{self, NAMESPACE};
use super::lifted::jws;
use crate::catalog::ResourceInfo;
use crate::registry::write::Part;
use crate::registry::{Registry, WriteOptions};

/// The namespace and name of the ConfigMap.
pub const CLUSTER_INFO_NAMESPACE: &str = "kube-public";
pub const CLUSTER_INFO_NAME: &str = "cluster-info";
/// Its kubeconfig entry, and the prefix of its signature entries.
pub const KUBECONFIG_KEY: &str = "kubeconfig";
pub const JWS_KEY_PREFIX: &str = "jws-kubeconfig-";
/// The field manager of the signer's writes.
const MANAGER: &str = "flotilla-bootstrap-signer";

/// Runs until dropped.
pub async fn run(registry: Registry) {
    let configmaps = registry
        .catalog()
        .get("", "v1", "configmaps")
        .expect("configmaps are built in");
    let secrets_prefix = format!("/registry/core/secrets/{NAMESPACE}/");
    let info_key =
        format!("/registry/core/configmaps/{CLUSTER_INFO_NAMESPACE}/{CLUSTER_INFO_NAME}");
    loop {
        // One feed of every change in the store (the subscription's prefix only chooses its
        // backlog, unused here): sign again for a Secret of the namespace or for cluster-info
        // itself, and for nothing else.
        let Ok(subscription) = registry.cache().subscribe(secrets_prefix.as_bytes(), None) else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let mut live = subscription.live;
        sign(&registry, &configmaps, &secrets_prefix, &info_key).await;
        loop {
            match live.recv().await {
                Ok(change)
                    if change.object.key.starts_with(secrets_prefix.as_bytes())
                        || change.object.key == info_key.as_bytes() =>
                {
                    sign(&registry, &configmaps, &secrets_prefix, &info_key).await;
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// The `data` of `cluster-info` signed with `tokens` (id → secret): `None` when it has no
/// kubeconfig to sign or is signed so already.
pub fn signed_data(data: &Value, tokens: &BTreeMap<String, String>) -> Option<Value> {
    let map = data.as_object()?;
    let content = map.get(KUBECONFIG_KEY)?.as_str()?;
    let mut signed: serde_json::Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !k.starts_with(JWS_KEY_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (id, secret) in tokens {
        signed.insert(
            format!("{JWS_KEY_PREFIX}{id}"),
            jws::detached_signature(content, id, secret).into(),
        );
    }
    (signed != *map).then_some(Value::Object(signed))
}

async fn sign(
    registry: &Registry,
    configmaps: &Arc<ResourceInfo>,
    secrets_prefix: &str,
    info_key: &str,
) {
    let Some(cached) = registry.cache().get(info_key.as_bytes()) else {
        return;
    };
    let mut cluster_info = cached.value();
    let now = registry.clock.now();
    let (secrets, _) = registry.cache().list(secrets_prefix.as_bytes(), None);
    let tokens: BTreeMap<String, String> = secrets
        .iter()
        .filter_map(|s| bootstrap_token::signing_token(&s.value(), now))
        .collect();
    let Some(data) = signed_data(&cluster_info["data"], &tokens) else {
        return;
    };
    cluster_info["data"] = data;
    crate::object::set_resource_version(&mut cluster_info, cached.revision);
    let options = WriteOptions {
        field_manager: Some(MANAGER.to_owned()),
        ..WriteOptions::default()
    };
    match registry
        .update(
            configmaps,
            Some(CLUSTER_INFO_NAMESPACE),
            CLUSTER_INFO_NAME,
            cluster_info,
            Part::Main,
            &options,
        )
        .await
    {
        Ok(_) => tracing::info!(tokens = tokens.len(), "signed cluster-info"),
        // Changed meanwhile: its change arrives and is signed then.
        Err(e) if e.code == 409 || e.code == 404 => {}
        Err(e) => tracing::warn!(error = %e, "cannot sign cluster-info"),
    }
}
