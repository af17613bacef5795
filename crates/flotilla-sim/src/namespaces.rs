//! What every namespace of a cluster holds, after kube-controller-manager's `serviceaccount`
//! and `root-ca-cert-publisher` controllers (`pkg/controller/serviceaccount` and
//! `pkg/controller/certificates/rootcacertpublisher`, Kubernetes v1.32, behaviour only): the
//! ServiceAccount `default` and the ConfigMap `kube-root-ca.crt` (`ca.crt`: the cluster's CA,
//! with kube's description annotation).
//!
//! Each active namespace gets both when it appears; they are created again when deleted, and the
//! ConfigMap's `ca.crt` and annotation are put back when edited. A namespace being deleted gets
//! nothing. (Flotilla's control plane runs neither controller, as Karmada's does not.)

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::Api;

use crate::cluster::{AbortOnDrop, Ctx};
use crate::informer::{Cache, Change, Informer};
use crate::queue::Queue;

pub const SERVICE_ACCOUNT: &str = "default";
pub const ROOT_CA: &str = "kube-root-ca.crt";
const DESCRIPTION: &str = "kubernetes.io/description";
const DESCRIPTION_TEXT: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";
/// How long a failed write waits before its namespace is synced again.
const RETRY: Duration = Duration::from_secs(1);

/// The ConfigMap `kube-root-ca.crt` of `namespace`.
pub fn root_ca(namespace: &str, ca: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(ROOT_CA.to_owned()),
            namespace: Some(namespace.to_owned()),
            annotations: Some(BTreeMap::from([(
                DESCRIPTION.to_owned(),
                DESCRIPTION_TEXT.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("ca.crt".to_owned(), ca.to_owned())])),
        ..ConfigMap::default()
    }
}

/// Whether a stored `kube-root-ca.crt` holds the CA and the annotation.
fn root_ca_current(config_map: &ConfigMap, ca: &str) -> bool {
    config_map
        .data
        .as_ref()
        .and_then(|d| d.get("ca.crt"))
        .is_some_and(|c| c == ca)
        && config_map
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(DESCRIPTION))
            .is_some_and(|d| d == DESCRIPTION_TEXT)
}

struct Caches {
    namespaces: Cache<Namespace>,
    accounts: Cache<ServiceAccount>,
    config_maps: Cache<ConfigMap>,
}

/// The controller of one cluster.
#[derive(Debug)]
pub struct NamespaceDefaults {
    queue: Arc<Queue<String>>,
}

fn namespace_of(meta: &ObjectMeta) -> String {
    meta.namespace.clone().unwrap_or_default()
}

impl NamespaceDefaults {
    /// Subscribes to the cluster's ConfigMap informer (before it starts): a changed or deleted
    /// `kube-root-ca.crt` queues its namespace.
    pub fn watch(config_map_informer: &mut Informer<ConfigMap>) -> NamespaceDefaults {
        let queue: Arc<Queue<String>> = Queue::new();
        let handler_queue = queue.clone();
        config_map_informer.on(move |change| match change {
            Change::Applied(c) | Change::Deleted(c)
                if c.metadata.name.as_deref() == Some(ROOT_CA) =>
            {
                handler_queue.add(namespace_of(&c.metadata));
            }
            _ => {}
        });
        NamespaceDefaults { queue }
    }

    /// Starts the Namespace and ServiceAccount informers and the worker; `ca` is the cluster's
    /// CA (PEM).
    pub fn start(
        self,
        ctx: Arc<Ctx>,
        ca: String,
        config_maps: Cache<ConfigMap>,
    ) -> Vec<AbortOnDrop> {
        let queue = self.queue;
        let mut namespaces = Informer::<Namespace>::new(Api::all(ctx.client.clone()));
        let namespace_queue = queue.clone();
        namespaces.on(move |change| {
            if let Change::Applied(n) = change {
                namespace_queue.add(n.metadata.name.clone().unwrap_or_default());
            }
        });
        let mut accounts = Informer::<ServiceAccount>::new(Api::all(ctx.client.clone()));
        let account_queue = queue.clone();
        accounts.on(move |change| {
            if let Change::Deleted(a) = change
                && a.metadata.name.as_deref() == Some(SERVICE_ACCOUNT)
            {
                account_queue.add(namespace_of(&a.metadata));
            }
        });
        let (namespaces, a) = namespaces.start();
        let (accounts, b) = accounts.start();
        let caches = Caches {
            namespaces,
            accounts,
            config_maps,
        };
        let worker = tokio::spawn(async move {
            caches.namespaces.wait_until_ready().await;
            caches.accounts.wait_until_ready().await;
            caches.config_maps.wait_until_ready().await;
            loop {
                let namespace = queue.pop().await;
                if let Err(error) = sync(&ctx, &caches, &ca, &namespace).await {
                    tracing::debug!(%namespace, %error, "namespace defaults not written; retrying");
                    let queue = queue.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(RETRY).await;
                        queue.add(namespace);
                    });
                }
            }
        });
        vec![AbortOnDrop(a), AbortOnDrop(b), AbortOnDrop(worker)]
    }
}

async fn sync(ctx: &Ctx, caches: &Caches, ca: &str, namespace: &str) -> Result<(), kube::Error> {
    let active = caches.namespaces.get("", namespace).is_some_and(|n| {
        n.metadata.deletion_timestamp.is_none()
            && n.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Terminating")
    });
    if !active {
        return Ok(());
    }
    if caches.accounts.get(namespace, SERVICE_ACCOUNT).is_none() {
        let account = ServiceAccount {
            metadata: ObjectMeta {
                name: Some(SERVICE_ACCOUNT.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            ..ServiceAccount::default()
        };
        created(crate::writes::create(ctx, Some(namespace), &account).await)?;
    }
    match caches.config_maps.get(namespace, ROOT_CA) {
        None => created(crate::writes::create(ctx, Some(namespace), &root_ca(namespace, ca)).await),
        Some(current) if root_ca_current(&current, ca) => Ok(()),
        Some(current) => {
            let mut fixed = (*current).clone();
            fixed.metadata.managed_fields = None;
            fixed
                .data
                .get_or_insert_with(BTreeMap::new)
                .insert("ca.crt".to_owned(), ca.to_owned());
            fixed
                .metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(DESCRIPTION.to_owned(), DESCRIPTION_TEXT.to_owned());
            crate::writes::replace(ctx, Some(namespace), ROOT_CA, &fixed).await
        }
    }
}

/// A create that finds the object already there (written meanwhile, or a namespace being
/// deleted) is done.
fn created(result: Result<(), kube::Error>) -> Result<(), kube::Error> {
    match result {
        Err(kube::Error::Api(e)) if e.code == 409 || e.code == 403 => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_ca_config_map_is_kubes() {
        let config_map = root_ca("team-a", "PEM");
        assert_eq!(
            config_map.metadata.name.as_deref(),
            Some("kube-root-ca.crt")
        );
        assert!(root_ca_current(&config_map, "PEM"));
        assert!(!root_ca_current(&config_map, "OTHER"));
        let mut edited = config_map.clone();
        edited.metadata.annotations = None;
        assert!(!root_ca_current(&edited, "PEM"));
    }
}
