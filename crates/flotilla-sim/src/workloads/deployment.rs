//! The Deployment controller: one ReplicaSet per pod template (`<deployment>-<pod-template-hash>`),
//! rolling updates within maxSurge/maxUnavailable, Recreate, revision history cleanup, and the
//! status kube-controller-manager reports (replicas, updated, ready, available, unavailable,
//! observedGeneration, conditions Available and Progressing with kube's reasons and messages).
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/deployment (sync.go, rolling.go, recreate.go,
//! progress.go) at v1.32; the arithmetic is in [`crate::lifted::deployment`].

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

use super::{Workloads, controller_of, owner_reference};
use crate::cluster::{Ctx, Stores, now};
use crate::lifted::deployment as util;
use crate::lifted::hash::pod_template_hash;

pub const HASH_LABEL: &str = "pod-template-hash";
pub const REVISION: &str = "deployment.kubernetes.io/revision";
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.deployments.pop().await;
        let Some(d) = stores.deployments.get(&key.0, &key.1) else {
            continue;
        };
        if let Err(error) = sync(&w, &ctx, &stores, &d).await {
            tracing::debug!(deployment = %key.1, %error, "sync failed; retrying");
            Workloads::requeue_after(&w.deployments, key, std::time::Duration::from_secs(1));
        }
    }
}

/// One ReplicaSet as the sync sees it: its spec replicas may change during the sync.
#[derive(Debug, Clone)]
struct Rs {
    object: Arc<ReplicaSet>,
    replicas: i32,
}

impl Rs {
    fn name(&self) -> String {
        self.object.metadata.name.clone().unwrap_or_default()
    }
    fn status(
        &self,
        f: impl Fn(&k8s_openapi::api::apps::v1::ReplicaSetStatus) -> Option<i32>,
    ) -> i32 {
        self.object.status.as_ref().and_then(f).unwrap_or(0)
    }
    fn available(&self) -> i32 {
        self.status(|s| s.available_replicas)
    }
    fn revision(&self) -> i64 {
        self.object
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(REVISION))
            .and_then(|r| r.parse().ok())
            .unwrap_or(0)
    }
}

/// Whether two pod templates are equal but for the pod-template-hash label (the deployment
/// controller's `EqualIgnoreHash`). Compared typed, copying only the metadata: the JSON values
/// this once compared were built from the typed templates, so they were equal exactly when these
/// are.
fn equal_ignoring_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    let without_hash = |meta: Option<&ObjectMeta>| {
        meta.map(|meta| {
            let mut meta = meta.clone();
            if let Some(labels) = meta.labels.as_mut() {
                labels.remove(HASH_LABEL);
            }
            meta
        })
    };
    a.spec == b.spec && without_hash(a.metadata.as_ref()) == without_hash(b.metadata.as_ref())
}

async fn scale(
    ctx: &Ctx,
    ns: &str,
    rs: &mut Rs,
    replicas: i32,
    desired: i32,
    max: i32,
) -> Result<(), kube::Error> {
    let patch = json!({
        "metadata": {"annotations": {DESIRED_REPLICAS: desired.to_string(), MAX_REPLICAS: max.to_string()}},
        "spec": {"replicas": replicas},
    });
    crate::writes::merge_patch::<ReplicaSet>(ctx, Some(ns), &rs.name(), None, &patch).await?;
    rs.replicas = replicas;
    Ok(())
}

async fn sync(
    w: &Workloads,
    ctx: &Ctx,
    stores: &Stores,
    d: &Deployment,
) -> Result<(), kube::Error> {
    if d.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let uid = d.metadata.uid.clone().unwrap_or_default();
    if !w.expectations.satisfied(&uid) {
        return Ok(());
    }
    let ns = d.metadata.namespace.clone().unwrap_or_default();
    let name = d.metadata.name.clone().unwrap_or_default();
    // Borrowed, not copied: a sync runs on every change of the Deployment or its ReplicaSets.
    let no_spec;
    let spec = match &d.spec {
        Some(spec) => spec,
        None => {
            no_spec = DeploymentSpec::default();
            &no_spec
        }
    };
    let desired = spec.replicas.unwrap_or(1).max(0);
    let template = &spec.template;
    let mut rss: Vec<Rs> = w
        .rs_by_owner
        .of(&uid)
        .into_iter()
        .filter_map(|(ns, n)| stores.replicasets.get(&ns, &n))
        .filter(|rs| controller_of(&rs.metadata).is_some_and(|o| o.uid == uid))
        .map(|rs| Rs {
            replicas: rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            object: rs,
        })
        .collect();
    rss.sort_by_key(|r| {
        (
            r.object.metadata.creation_timestamp.as_ref().map(|t| t.0),
            r.name(),
        )
    });
    let new_index = rss.iter().position(|r| {
        r.object
            .spec
            .as_ref()
            .and_then(|s| s.template.as_ref())
            .is_some_and(|t| equal_ignoring_hash(t, template))
    });
    let rolling = spec
        .strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .is_none_or(|t| t == "RollingUpdate");
    let ru = spec
        .strategy
        .as_ref()
        .and_then(|s| s.rolling_update.clone())
        .unwrap_or_default();
    let (surge, unavailable) = if rolling {
        util::resolve_fenceposts(ru.max_surge.as_ref(), ru.max_unavailable.as_ref(), desired)
    } else {
        (0, desired)
    };
    let paused = spec.paused.unwrap_or(false);
    let old_status = d.status.clone().unwrap_or_default();
    let mut status = old_status.clone();
    let deadline = spec.progress_deadline_seconds.unwrap_or(600) != i32::MAX;

    let Some(new_index) = new_index else {
        if paused {
            return write_status(
                ctx,
                d,
                &rss,
                None,
                status,
                &old_status,
                desired,
                unavailable,
            )
            .await;
        }
        let old_sum: i32 = rss.iter().map(|r| r.replicas).sum();
        let replicas = if rolling {
            util::new_rs_new_replicas(desired, surge, old_sum, 0)
        } else if old_sum == 0 {
            desired
        } else {
            0
        };
        let revision = rss.iter().map(Rs::revision).max().unwrap_or(0) + 1;
        let hash = pod_template_hash(template, old_status.collision_count);
        let rs_name = format!("{name}-{hash}");
        let mut rs_template = template.clone();
        rs_template
            .metadata
            .get_or_insert_with(Default::default)
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(HASH_LABEL.into(), hash.clone());
        let mut selector = spec.selector.clone();
        selector
            .match_labels
            .get_or_insert_with(BTreeMap::new)
            .insert(HASH_LABEL.into(), hash.clone());
        let labels = rs_template.metadata.as_ref().and_then(|m| m.labels.clone());
        let rs: ReplicaSet = serde_json::from_value(json!({
            "metadata": {
                "name": rs_name, "namespace": ns, "labels": labels,
                "annotations": {REVISION: revision.to_string(), DESIRED_REPLICAS: desired.to_string(),
                                MAX_REPLICAS: (desired + surge).to_string()},
                "ownerReferences": [owner_reference(d)],
            },
            "spec": {"replicas": replicas, "minReadySeconds": spec.min_ready_seconds.unwrap_or(0),
                     "selector": selector, "template": rs_template},
        }))
        .map_err(kube::Error::SerdeError)?;
        let api: Api<ReplicaSet> = Api::namespaced(ctx.client.clone(), &ns);
        w.expectations.expect_create(&uid, &rs_name);
        match crate::writes::create(ctx, Some(&ns), &rs).await {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {
                w.expectations.forget(&uid, &rs_name);
                let existing = api.get(&rs_name).await?;
                let same = existing
                    .spec
                    .as_ref()
                    .and_then(|s| s.template.as_ref())
                    .is_some_and(|t| equal_ignoring_hash(t, template));
                if same {
                    // Ours, created before; the watch will bring it.
                    return Ok(());
                }
                // A ReplicaSet of that name with another template: a hash collision.
                let count = old_status.collision_count.unwrap_or(0) + 1;
                let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ns);
                deployments
                    .patch_status(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {"collisionCount": count}})),
                    )
                    .await?;
                return Ok(());
            }
            Err(e) => {
                w.expectations.forget(&uid, &rs_name);
                return Err(e);
            }
        }
        if deadline {
            util::set(
                &mut status,
                util::condition(
                    util::PROGRESSING,
                    true,
                    util::NEW_RS_CREATED_REASON,
                    format!("Created new replica set {rs_name:?}"),
                    &now(),
                ),
            );
            crate::writes::merge_patch::<Deployment>(
                ctx,
                Some(&ns),
                &name,
                Some("status"),
                &json!({"status": {"conditions": status.conditions}}),
            )
            .await?;
        }
        return Ok(());
    };
    let mut new_rs = rss.remove(new_index);
    let mut old = rss;

    if !paused {
        if rolling {
            let old_sum: i32 = old.iter().map(|r| r.replicas).sum();
            let target = if old_sum == 0 || new_rs.replicas > desired {
                desired
            } else {
                util::new_rs_new_replicas(
                    desired,
                    surge,
                    old_sum + new_rs.replicas,
                    new_rs.replicas,
                )
            };
            if target != new_rs.replicas {
                scale(ctx, &ns, &mut new_rs, target, desired, desired + surge).await?;
            }
            let old_sum: i32 = old.iter().map(|r| r.replicas).sum();
            if old_sum > 0 {
                let all_sum = old_sum + new_rs.replicas;
                let min_available = desired - unavailable;
                let new_unavailable = new_rs.replicas - new_rs.available();
                let mut budget = all_sum - min_available - new_unavailable;
                // First the old ReplicaSets' unavailable pods, oldest first.
                for rs in old.iter_mut() {
                    if budget <= 0 {
                        break;
                    }
                    let unhealthy = rs.replicas - rs.available();
                    if rs.replicas == 0 || unhealthy <= 0 {
                        continue;
                    }
                    let down = unhealthy.min(budget);
                    scale(ctx, &ns, rs, rs.replicas - down, desired, desired + surge).await?;
                    budget -= down;
                }
                // Then available ones while availability stays above the minimum.
                let available: i32 =
                    old.iter().map(Rs::available).sum::<i32>() + new_rs.available();
                if budget > 0 && available > min_available {
                    let mut left = available - min_available;
                    for rs in old.iter_mut() {
                        if left <= 0 {
                            break;
                        }
                        if rs.replicas == 0 {
                            continue;
                        }
                        let down = rs.replicas.min(left);
                        scale(ctx, &ns, rs, rs.replicas - down, desired, desired + surge).await?;
                        left -= down;
                    }
                }
            }
        } else {
            // Recreate: every old pod gone before the new ReplicaSet scales up.
            let mut waiting = false;
            for rs in old.iter_mut() {
                if rs.replicas > 0 {
                    scale(ctx, &ns, rs, 0, desired, desired).await?;
                    waiting = true;
                }
                if rs.status(|s| Some(s.replicas)) > 0 {
                    waiting = true;
                }
            }
            if !waiting && new_rs.replicas != desired {
                scale(ctx, &ns, &mut new_rs, desired, desired, desired).await?;
            }
        }
        cleanup(ctx, &ns, &old, spec.revision_history_limit.unwrap_or(10)).await;
    }
    let mut all = old;
    all.push(new_rs.clone());
    write_status(
        ctx,
        d,
        &all,
        Some(&new_rs),
        status,
        &old_status,
        desired,
        unavailable,
    )
    .await
}

/// Deletes old, empty ReplicaSets beyond the history limit, oldest first.
async fn cleanup(ctx: &Ctx, ns: &str, old: &[Rs], limit: i32) {
    let empty: Vec<&Rs> = old
        .iter()
        .filter(|r| r.replicas == 0 && r.status(|s| Some(s.replicas)) == 0)
        .collect();
    let excess = empty.len().saturating_sub(limit.max(0) as usize);
    let api: Api<ReplicaSet> = Api::namespaced(ctx.client.clone(), ns);
    for rs in empty.into_iter().take(excess) {
        if let Err(error) = api.delete(&rs.name(), &DeleteParams::default()).await {
            tracing::debug!(replicaset = %rs.name(), %error, "history cleanup failed");
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn write_status(
    ctx: &Ctx,
    d: &Deployment,
    all: &[Rs],
    new_rs: Option<&Rs>,
    mut status: DeploymentStatus,
    old_status: &DeploymentStatus,
    desired: i32,
    max_unavailable: i32,
) -> Result<(), kube::Error> {
    let sum = |f: &dyn Fn(&Rs) -> i32| all.iter().map(f).sum::<i32>();
    let available = sum(&|r| r.available());
    let spec_total = sum(&|r| r.replicas);
    status.observed_generation = d.metadata.generation;
    status.replicas = Some(sum(&|r| r.status(|s| Some(s.replicas))));
    status.updated_replicas = Some(new_rs.map(|r| r.status(|s| Some(s.replicas))).unwrap_or(0));
    status.ready_replicas = Some(sum(&|r| r.status(|s| s.ready_replicas)));
    status.available_replicas = Some(available);
    status.unavailable_replicas = Some((spec_total - available).max(0));
    let at = now();
    if available >= desired - max_unavailable {
        util::set(
            &mut status,
            util::condition(
                util::AVAILABLE,
                true,
                util::MIN_AVAILABLE_REASON,
                util::MIN_AVAILABLE_MESSAGE.into(),
                &at,
            ),
        );
    } else {
        util::set(
            &mut status,
            util::condition(
                util::AVAILABLE,
                false,
                util::MIN_UNAVAILABLE_REASON,
                util::MIN_UNAVAILABLE_MESSAGE.into(),
                &at,
            ),
        );
    }
    let deadline = d
        .spec
        .as_ref()
        .and_then(|s| s.progress_deadline_seconds)
        .unwrap_or(600)
        != i32::MAX;
    let paused = d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false);
    if let (Some(new_rs), true, false) = (new_rs, deadline, paused) {
        let current = util::get(&status, util::PROGRESSING).cloned();
        let already_complete = status.replicas == status.updated_replicas
            && current.as_ref().and_then(|c| c.reason.as_deref())
                == Some(util::NEW_RS_AVAILABLE_REASON);
        if !already_complete {
            let generation = d.metadata.generation.unwrap_or(0);
            if util::complete(desired, generation, &status) {
                util::set(
                    &mut status,
                    util::condition(
                        util::PROGRESSING,
                        true,
                        util::NEW_RS_AVAILABLE_REASON,
                        format!(
                            "ReplicaSet {:?} has successfully progressed.",
                            new_rs.name()
                        ),
                        &at,
                    ),
                );
            } else if util::progressing(old_status, &status) {
                let mut c = util::condition(
                    util::PROGRESSING,
                    true,
                    util::RS_UPDATED_REASON,
                    format!("ReplicaSet {:?} is progressing.", new_rs.name()),
                    &at,
                );
                if let Some(current) = &current
                    && current.status == "True"
                {
                    c.last_transition_time = current.last_transition_time.clone();
                }
                util::remove(&mut status, util::PROGRESSING);
                util::set(&mut status, c);
            }
        }
    }
    let nonzero = |n: Option<i32>| n.filter(|n| *n != 0);
    status.replicas = nonzero(status.replicas);
    status.updated_replicas = nonzero(status.updated_replicas);
    status.ready_replicas = nonzero(status.ready_replicas);
    status.available_replicas = nonzero(status.available_replicas);
    status.unavailable_replicas = nonzero(status.unavailable_replicas);
    if &status == old_status {
        return Ok(());
    }
    let body = json!({"status": {
        "observedGeneration": status.observed_generation,
        "replicas": status.replicas,
        "updatedReplicas": status.updated_replicas,
        "readyReplicas": status.ready_replicas,
        "availableReplicas": status.available_replicas,
        "unavailableReplicas": status.unavailable_replicas,
        "conditions": status.conditions,
        "collisionCount": status.collision_count,
    }});
    crate::writes::merge_patch::<Deployment>(
        ctx,
        d.metadata.namespace.as_deref(),
        d.metadata.name.as_deref().unwrap_or(""),
        Some("status"),
        &body,
    )
    .await
}
