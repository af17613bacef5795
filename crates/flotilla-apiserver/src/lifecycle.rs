//! Namespace lifecycle: a namespace being deleted has all its content deleted, then goes away
//! itself (what kube-controller-manager's namespace controller does for kube-apiserver).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::StoreError;
use tokio::sync::broadcast::error::RecvError;

use crate::cache::ChangeKind;
use crate::registry::{DeleteOptions, Registry};

/// How often a namespace whose content is still going away is checked again.
const RECHECK: Duration = Duration::from_millis(500);

/// Runs until dropped: finalizes namespaces that carry a deletion timestamp.
pub async fn run_namespace_finalizer(registry: Registry) {
    let namespaces = registry
        .catalog()
        .get("", "v1", "namespaces")
        .expect("namespaces are built in");
    let prefix = namespaces.storage_prefix();
    let mut in_progress: BTreeSet<String> = BTreeSet::new();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    loop {
        let subscription = match registry.cache().subscribe(prefix.as_bytes(), None) {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(RECHECK).await;
                continue;
            }
        };
        let mut live = subscription.live;
        let mut pending: Vec<Arc<crate::cache::Change>> = subscription.backlog;
        loop {
            for change in pending.drain(..) {
                if change.kind == ChangeKind::Deleted
                    || !change.object.key.starts_with(prefix.as_bytes())
                {
                    continue;
                }
                let value = change.object.value();
                if value["metadata"].get("deletionTimestamp").is_none() {
                    continue;
                }
                let Some(name) = crate::object::name(&value).map(str::to_owned) else {
                    continue;
                };
                if in_progress.insert(name.clone()) {
                    let registry = registry.clone();
                    let done = done_tx.clone();
                    tokio::spawn(async move {
                        finalize(&registry, &name).await;
                        let _ = done.send(name);
                    });
                }
            }
            tokio::select! {
                received = live.recv() => match received {
                    Ok(change) => pending.push(change),
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return,
                },
                Some(name) = done_rx.recv() => { in_progress.remove(&name); }
            }
        }
    }
}

/// Deletes everything in `namespace`, waits for it to be gone, then removes the namespace.
async fn finalize(registry: &Registry, namespace: &str) {
    let span = tracing::info_span!("namespace_finalizer", namespace);
    let _guard = span.enter();
    loop {
        let mut remaining = 0usize;
        let mut seen_prefixes = BTreeSet::new();
        for info in registry.catalog().all() {
            if !info.namespaced || !seen_prefixes.insert(info.storage_prefix()) {
                continue;
            }
            let prefix = info.storage_prefix_in(Some(namespace));
            let objects = match registry.current_objects(&prefix).await {
                Ok(objects) => objects,
                Err(error) => {
                    tracing::warn!(%error, resource = %info.plural, "cannot list namespace content");
                    remaining += 1;
                    continue;
                }
            };
            for object in objects {
                remaining += 1;
                let value = object.value();
                if value["metadata"].get("deletionTimestamp").is_some() {
                    continue;
                }
                let name = crate::object::name(&value).unwrap_or("").to_owned();
                let options = DeleteOptions {
                    propagation_policy: Some("Background".into()),
                    ..Default::default()
                };
                if let Err(error) = registry
                    .delete(&info, Some(namespace), &name, &options)
                    .await
                    && error.code != 404
                {
                    if error.code == 403 {
                        // Protected (`resourcetemplate.karmada.io/deletion-protected`): the
                        // namespace stays Terminating until the label goes; said once a pass.
                        tracing::debug!(%error, resource = %info.plural, name, "namespace content is protected");
                    } else {
                        tracing::warn!(%error, resource = %info.plural, name, "cannot delete namespace content");
                    }
                }
            }
        }
        if remaining == 0 {
            break;
        }
        tokio::time::sleep(RECHECK).await;
    }
    let info = registry
        .catalog()
        .get("", "v1", "namespaces")
        .expect("namespaces are built in");
    let key = Bytes::from(info.storage_key(None, namespace));
    match registry.store.get(&key).await {
        Ok(Some(kv)) => match registry.store.delete(key, Some(kv.mod_revision)).await {
            Ok((_, revision)) => {
                registry.fence_namespace_write(&info, revision);
                tracing::info!("namespace deleted");
            }
            Err(StoreError::NotFound { .. }) => {
                tracing::info!("namespace deleted");
            }
            Err(error) => tracing::warn!(%error, "cannot remove namespace"),
        },
        Ok(None) => {}
        Err(error) => tracing::warn!(%error, "cannot read namespace"),
    }
}
