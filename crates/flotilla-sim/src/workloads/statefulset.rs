//! The StatefulSet controller: pods `<name>-<ordinal>` with stable identity labels, created in
//! order (OrderedReady waits for each to be Running and Ready) or all at once (Parallel),
//! removed from the highest ordinal, rolled to a new template from the highest ordinal one at
//! a time; status replicas/readyReplicas/availableReplicas/currentReplicas/updatedReplicas and
//! the current/update revisions (`<name>-<hash>`).
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/statefulset (stateful_set_control.go) at v1.32,
//! without ControllerRevision objects or volume claims.

use std::sync::Arc;

use crate::pod::Pod;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::{
    Workloads, availability, create_pod, delete_pod, is_active, is_ready, owner_reference,
};
use crate::cluster::{Ctx, Stores};
use crate::lifted::hash::pod_template_hash;

const REVISION_LABEL: &str = "controller-revision-hash";

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.statefulsets.pop().await;
        let Some(sts) = stores.statefulsets.get(&key.0, &key.1) else {
            continue;
        };
        if let Err(error) = sync(&w, &ctx, &stores, &sts).await {
            tracing::debug!(statefulset = %key.1, %error, "sync failed; retrying");
            Workloads::requeue_after(&w.statefulsets, key, std::time::Duration::from_secs(1));
        }
    }
}

fn ordinal(name: &str, pod: &Pod) -> Option<i32> {
    pod.metadata
        .name
        .as_deref()?
        .strip_prefix(name)?
        .strip_prefix('-')?
        .parse()
        .ok()
}

fn revision(pod: &Pod) -> Option<&str> {
    pod.metadata
        .labels()?
        .get(REVISION_LABEL)
        .map(String::as_str)
}

async fn sync(
    w: &Workloads,
    ctx: &Ctx,
    stores: &Stores,
    sts: &StatefulSet,
) -> Result<(), kube::Error> {
    if sts.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let uid = sts.metadata.uid.clone().unwrap_or_default();
    let ns = sts.metadata.namespace.clone().unwrap_or_default();
    let name = sts.metadata.name.clone().unwrap_or_default();
    let spec = sts.spec.clone().unwrap_or_default();
    let replicas = spec.replicas.unwrap_or(1).max(0);
    let update_revision = format!(
        "{name}-{}",
        pod_template_hash(
            &spec.template,
            sts.status
                .as_ref()
                .and_then(|s| s.collision_count)
                .filter(|c| *c != 0)
        )
    );
    let parallel = spec.pod_management_policy.as_deref() == Some("Parallel");
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let mut pods: Vec<(i32, Arc<Pod>)> = w
        .owned_pods(stores, &uid)
        .into_iter()
        .filter(|p| is_active(p))
        .filter_map(|p| ordinal(&name, &p).map(|o| (o, p)))
        .collect();
    pods.sort_by_key(|(o, _)| *o);
    if w.expectations.satisfied(&uid) {
        let present: std::collections::BTreeSet<i32> = pods.iter().map(|(o, _)| *o).collect();
        let all_ready = pods.iter().all(|(_, p)| is_ready(p));
        // Create missing ordinals below `replicas`.
        for ordinal in 0..replicas {
            if present.contains(&ordinal) {
                continue;
            }
            if !parallel
                && !pods
                    .iter()
                    .filter(|(o, _)| *o < ordinal)
                    .all(|(_, p)| is_ready(p))
            {
                break;
            }
            let pod_name = format!("{name}-{ordinal}");
            w.expectations.expect_create(&uid, &pod_name);
            let service = spec.service_name.clone();
            let result = create_pod(
                ctx,
                &ns,
                &pod_name,
                &spec.template,
                &[
                    (REVISION_LABEL, update_revision.clone()),
                    ("statefulset.kubernetes.io/pod-name", pod_name.clone()),
                    ("apps.kubernetes.io/pod-index", ordinal.to_string()),
                ],
                &[],
                owner_reference(sts),
                |pod| {
                    if let Some(spec) = pod.spec.as_mut() {
                        spec.hostname = Some(pod_name.clone());
                        spec.subdomain = service.clone().filter(|s| !s.is_empty());
                    }
                },
            )
            .await;
            if let Err(e) = result {
                w.expectations.forget(&uid, &pod_name);
                return Err(e);
            }
            if !parallel {
                break;
            }
        }
        // Remove ordinals at or above `replicas`, highest first.
        let extra: Vec<&(i32, Arc<Pod>)> =
            pods.iter().rev().filter(|(o, _)| *o >= replicas).collect();
        if let Some((_, victim)) = extra.first()
            && (parallel || all_ready)
        {
            let victims: Vec<&(i32, Arc<Pod>)> = if parallel {
                extra.clone()
            } else {
                vec![extra[0]]
            };
            let _ = victim;
            for (_, pod) in victims {
                let pod_name = pod.metadata.name.clone().unwrap_or_default();
                w.expectations.expect_delete(&uid, &pod_name);
                if let Err(e) = delete_pod(ctx, &ns, &pod_name).await {
                    w.expectations.forget(&uid, &pod_name);
                    return Err(e);
                }
            }
        } else if extra.is_empty()
            && all_ready
            && pods.len() as i32 == replicas
            && spec
                .update_strategy
                .as_ref()
                .and_then(|u| u.type_.as_deref())
                != Some("OnDelete")
        {
            // Rolling update: the highest ordinal still on the old revision goes first.
            if let Some((_, pod)) = pods
                .iter()
                .rev()
                .find(|(_, p)| revision(p) != Some(update_revision.as_str()))
            {
                let pod_name = pod.metadata.name.clone().unwrap_or_default();
                w.expectations.expect_delete(&uid, &pod_name);
                if let Err(e) = delete_pod(ctx, &ns, &pod_name).await {
                    w.expectations.forget(&uid, &pod_name);
                    return Err(e);
                }
            }
        }
    }
    let count = |f: &dyn Fn(&Pod) -> bool| pods.iter().filter(|(_, p)| f(p)).count() as i32;
    let ready = count(&|p| is_ready(p));
    let available = count(&|p| availability(p, min_ready).is_ok());
    let updated = count(&|p| revision(p) == Some(update_revision.as_str()));
    let current_revision = if updated == pods.len() as i32 {
        update_revision.clone()
    } else {
        sts.status
            .as_ref()
            .and_then(|s| s.current_revision.clone())
            .unwrap_or_else(|| update_revision.clone())
    };
    let current = count(&|p| revision(p) == Some(current_revision.as_str()));
    let nonzero = |n: i32| if n == 0 { None } else { Some(n) };
    let status = json!({
        "observedGeneration": sts.metadata.generation,
        "replicas": pods.len(),
        "readyReplicas": nonzero(ready),
        "availableReplicas": available,
        "currentReplicas": nonzero(current),
        "updatedReplicas": nonzero(updated),
        "currentRevision": current_revision,
        "updateRevision": update_revision,
        "collisionCount": 0,
    });
    let old = serde_json::to_value(sts.status.clone().unwrap_or_default()).unwrap_or_default();
    let mut merged = old.clone();
    if let (Some(m), Some(s)) = (merged.as_object_mut(), status.as_object()) {
        for (k, v) in s {
            if v.is_null() {
                m.remove(k);
            } else {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    if merged == old {
        return Ok(());
    }
    let api: Api<StatefulSet> = Api::namespaced(ctx.client.clone(), &ns);
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": status})),
    )
    .await?;
    Ok(())
}
