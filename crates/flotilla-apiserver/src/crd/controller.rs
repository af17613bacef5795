//! The CRD controller: establishes CRDs (catalog + status) as the watch cache reports them,
//! and finalizes deleted ones by deleting their custom resources first (kube's
//! `customresourcecleanup.apiextensions.k8s.io` finalizer).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tracing::Instrument as _;

use super::definition::{self, CLEANUP_FINALIZER};
use crate::cache::{Change, ChangeKind};
use crate::catalog::ResourceInfo;
use crate::registry::write::Part;
use crate::registry::{DeleteOptions, Registry, WriteOptions, format_time};

/// How often a CRD whose custom resources are held by finalizers is checked again.
const RECHECK: Duration = Duration::from_millis(500);

fn definitions(registry: &Registry) -> Arc<ResourceInfo> {
    registry
        .catalog()
        .get(super::GROUP, "v1", "customresourcedefinitions")
        .expect("customresourcedefinitions are built in")
}

/// Runs until dropped.
pub async fn run(registry: Registry) {
    let info = definitions(&registry);
    let prefix = info.storage_prefix();
    let mut in_progress: BTreeSet<String> = BTreeSet::new();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    loop {
        let Ok(subscription) = registry.cache().subscribe(prefix.as_bytes(), None) else {
            tokio::time::sleep(RECHECK).await;
            continue;
        };
        // CRDs deleted while we were not listening.
        let present: BTreeSet<String> = subscription
            .backlog
            .iter()
            .filter_map(|c| crate::object::name(&c.object.value()).map(str::to_owned))
            .collect();
        let served: BTreeSet<String> = registry
            .catalog()
            .all()
            .iter()
            .filter_map(|i| i.crd.clone())
            .collect();
        for gone in served.difference(&present) {
            registry.catalog().remove_crd(gone);
        }
        let mut live = subscription.live;
        let mut pending: Vec<Arc<Change>> = subscription.backlog;
        loop {
            for change in pending.drain(..) {
                if !change.object.key.starts_with(prefix.as_bytes()) {
                    continue;
                }
                let crd = change.object.value();
                let Some(name) = crate::object::name(&crd).map(str::to_owned) else {
                    continue;
                };
                if change.kind == ChangeKind::Deleted {
                    // Unless it was created again meanwhile (and served by `after_write`).
                    if registry.cache().get(&change.object.key).is_none() {
                        registry.catalog().remove_crd(&name);
                        // Names it held may now be free for another CRD of its group.
                        let group = crd["spec"]["group"].clone();
                        let (others, _) = registry.cache().list(prefix.as_bytes(), None);
                        for other in others {
                            let other = other.value();
                            if other["spec"]["group"] == group
                                && other["metadata"].get("deletionTimestamp").is_none()
                            {
                                establish(&registry, &info, other).await;
                            }
                        }
                    }
                    continue;
                }
                if crd["metadata"].get("deletionTimestamp").is_some() {
                    if in_progress.insert(name.clone()) {
                        let registry = registry.clone();
                        let done = done_tx.clone();
                        let span = tracing::info_span!("crd_finalizer", crd = %name);
                        tokio::spawn(
                            async move {
                                finalize(&registry, &name).await;
                                let _ = done.send(name);
                            }
                            .instrument(span),
                        );
                    }
                    continue;
                }
                establish(&registry, &info, crd).await;
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

/// Serves a CRD and writes its status when it differs from what kube would report.
async fn establish(registry: &Registry, info: &ResourceInfo, crd: Value) {
    let now = format_time(registry.clock.now());
    let status = match super::register(registry.catalog(), &crd) {
        Ok(()) => definition::established_status(&crd, &now),
        Err(conflict) => {
            let mut status = crd
                .get("status")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            definition::set_condition(
                &mut status,
                definition::condition(
                    "NamesAccepted",
                    false,
                    conflict.reason,
                    &conflict.message,
                    &now,
                ),
            );
            definition::set_condition(
                &mut status,
                definition::condition(
                    "Established",
                    false,
                    "NotAccepted",
                    "not all names are accepted",
                    &now,
                ),
            );
            status
        }
    };
    write_status(registry, info, crd, status).await;
}

async fn write_status(registry: &Registry, info: &ResourceInfo, mut crd: Value, status: Value) {
    if crd.get("status") == Some(&status) {
        return;
    }
    crd["status"] = status;
    let name = crate::object::name(&crd).unwrap_or("").to_owned();
    match registry
        .update(
            info,
            None,
            &name,
            crd,
            Part::Status,
            &WriteOptions::default(),
        )
        .await
    {
        Ok(_) => {}
        // A newer version of the CRD is on its way through the cache.
        Err(e) if e.code == 409 || e.code == 404 => {}
        Err(error) => tracing::warn!(%error, crd = name, "cannot write CRD status"),
    }
}

/// Deletes every custom resource of CRD `name`, waits for them to be gone, then releases the
/// CRD.
async fn finalize(registry: &Registry, name: &str) {
    let info = definitions(registry);
    let Ok(crd) = registry.get(&info, None, name).await else {
        return;
    };
    let now = format_time(registry.clock.now());
    let mut status = crd
        .get("status")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    let resource = registry
        .catalog()
        .all()
        .into_iter()
        .find(|i| i.crd.as_deref() == Some(name))
        .or_else(|| {
            definition::resource_infos(&crd)?
                .into_iter()
                .next()
                .map(Arc::new)
        });
    // As kube's CRD finalizer: the objects of a built-in resource under the same group and
    // plural (Karmada's kinds, whose CRDs a Karmada chart brings) are never the CRD's to
    // delete. (Unlike kube, a CRD not yet marked Established has its instances deleted too:
    // here its kind is served from the moment it is stored.)
    let skip = match &resource {
        Some(resource) if super::overlaps_built_in(registry.catalog(), resource) => Some((
            "OverlappingBuiltInResource",
            "instances overlap with built-in resources in storage",
        )),
        _ => None,
    };
    let terminating = match skip {
        Some((reason, message)) => {
            definition::condition("Terminating", false, reason, message, &now)
        }
        None => definition::condition(
            "Terminating",
            true,
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
            &now,
        ),
    };
    definition::set_condition(&mut status, terminating);
    write_status(registry, &info, crd.clone(), status).await;
    if let (None, Some(resource)) = (skip, resource) {
        delete_all(registry, &resource).await;
    }
    for _ in 0..8 {
        let Ok(mut crd) = registry.get(&info, None, name).await else {
            return;
        };
        let finalizers: Vec<String> = crate::object::finalizers(&crd)
            .into_iter()
            .filter(|f| f != CLEANUP_FINALIZER)
            .collect();
        crate::object::metadata_mut(&mut crd).insert("finalizers".into(), finalizers.into());
        match registry
            .update(&info, None, name, crd, Part::Main, &WriteOptions::default())
            .await
        {
            Ok(_) => return,
            Err(e) if e.code == 409 => continue,
            Err(error) => {
                tracing::warn!(%error, "cannot release CRD");
                return;
            }
        }
    }
}

async fn delete_all(registry: &Registry, resource: &ResourceInfo) {
    let prefix = resource.storage_prefix();
    loop {
        if let Err(error) = registry.cache_is_current().await {
            tracing::warn!(%error, "cannot read custom resources");
        }
        let (objects, _) = registry.cache().list(prefix.as_bytes(), None);
        if objects.is_empty() {
            return;
        }
        let mut deleted = false;
        for object in objects {
            let value = object.value();
            if value["metadata"].get("deletionTimestamp").is_some() {
                continue;
            }
            let name = crate::object::name(&value).unwrap_or("").to_owned();
            let namespace = crate::object::namespace(&value).map(str::to_owned);
            let options = DeleteOptions {
                propagation_policy: Some("Background".into()),
                ..Default::default()
            };
            match registry
                .delete(resource, namespace.as_deref(), &name, &options)
                .await
            {
                Ok(_) => deleted = true,
                Err(e) if e.code == 404 => deleted = true,
                Err(error) => tracing::warn!(%error, name, "cannot delete custom resource"),
            }
        }
        if !deleted {
            tokio::time::sleep(RECHECK).await;
        }
    }
}
