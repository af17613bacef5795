//! The ReplicaSet controller: keeps `spec.replicas` active pods (names `<rs>-<5 chars>`),
//! deletes the least useful pods first when scaling down (kube's ranking: unbound, pending,
//! not ready, newest), and reports `replicas`, `fullyLabeledReplicas`, `readyReplicas`,
//! `availableReplicas` and `observedGeneration`.
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/replicaset/replica_set.go and
//! replica_set_utils.go (`calculateStatus`) at v1.32.

use std::cmp::Reverse;
use std::sync::Arc;

use crate::pod::Pod;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use serde_json::json;

use super::{
    Workloads, availability, create_pod, delete_pod, is_active, is_ready, owner_reference,
};
use crate::cluster::{Ctx, Stores};

/// Pod writes in flight per ReplicaSet sync (kube's slow start goes to 500).
const BURST: usize = 64;

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.replicasets.pop().await;
        let Some(rs) = stores.replicasets.get(&key.0, &key.1) else {
            continue;
        };
        sync(&w, &ctx, &stores, &rs).await;
    }
}

/// Lower sorts first = deleted first.
type Rank = (
    bool,
    u8,
    bool,
    Reverse<Option<jiff::Timestamp>>,
    Option<String>,
);

fn deletion_rank(pod: &Pod) -> Rank {
    let bound = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    let phase = match pod.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Pending") | None => 0,
        Some("Running") => 2,
        _ => 1,
    };
    let created = pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
    (
        bound,
        phase,
        is_ready(pod),
        Reverse(created),
        pod.metadata.name.clone(),
    )
}

async fn sync(w: &Workloads, ctx: &Ctx, stores: &Stores, rs: &ReplicaSet) {
    if rs.metadata.deletion_timestamp.is_some() {
        return;
    }
    let uid = rs.metadata.uid.clone().unwrap_or_default();
    let ns = rs.metadata.namespace.clone().unwrap_or_default();
    let name = rs.metadata.name.clone().unwrap_or_default();
    let desired = rs
        .spec
        .as_ref()
        .and_then(|s| s.replicas)
        .unwrap_or(1)
        .max(0) as usize;
    let mut pods: Vec<Arc<Pod>> = w
        .owned_pods(stores, &uid)
        .into_iter()
        .filter(|p| is_active(p))
        .collect();
    if w.expectations.satisfied(&uid) {
        if pods.len() < desired {
            let Some(template) = rs.spec.as_ref().and_then(|s| s.template.clone()) else {
                return;
            };
            let missing = desired - pods.len();
            let names: Vec<String> = (0..missing)
                .map(|_| {
                    w.child_name(
                        ctx.settings.seed,
                        &format!("{}/rs/{ns}/{name}", ctx.name),
                        &name,
                    )
                })
                .collect();
            for n in &names {
                w.expectations.expect_create(&uid, n);
            }
            let owner = owner_reference(rs);
            let rs_name = name.clone();
            futures::stream::iter(names)
                .map(|pod_name| {
                    let template = template.clone();
                    let owner = owner.clone();
                    let ns = ns.clone();
                    let uid = uid.clone();
                    let rs_name = rs_name.clone();
                    async move {
                        if let Err(error) =
                            create_pod(ctx, &ns, &pod_name, &template, &[], &[], owner, |_| {})
                                .await
                        {
                            tracing::debug!(pod = %pod_name, %error, "pod creation failed");
                            w.expectations.forget(&uid, &pod_name);
                            Workloads::requeue_after(
                                &w.replicasets,
                                (ns.clone(), rs_name),
                                std::time::Duration::from_secs(1),
                            );
                        }
                    }
                })
                .buffer_unordered(BURST)
                .collect::<Vec<()>>()
                .await;
        } else if pods.len() > desired {
            pods.sort_by_key(|p| deletion_rank(p));
            let victims: Vec<String> = pods[..pods.len() - desired]
                .iter()
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            for v in &victims {
                w.expectations.expect_delete(&uid, v);
            }
            futures::stream::iter(victims)
                .map(|pod_name| {
                    let ns = ns.clone();
                    let uid = uid.clone();
                    async move {
                        if let Err(error) = delete_pod(ctx, &ns, &pod_name).await {
                            tracing::debug!(pod = %pod_name, %error, "pod deletion failed");
                            w.expectations.forget(&uid, &pod_name);
                        }
                    }
                })
                .buffer_unordered(BURST)
                .collect::<Vec<()>>()
                .await;
        }
    }
    update_status(w, ctx, stores, rs).await;
}

async fn update_status(w: &Workloads, ctx: &Ctx, stores: &Stores, rs: &ReplicaSet) {
    let uid = rs.metadata.uid.clone().unwrap_or_default();
    let ns = rs.metadata.namespace.clone().unwrap_or_default();
    let name = rs.metadata.name.clone().unwrap_or_default();
    let spec = rs.spec.as_ref();
    let min_ready = spec.and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let template_labels = spec
        .and_then(|s| s.template.as_ref())
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let pods: Vec<Arc<Pod>> = w
        .owned_pods(stores, &uid)
        .into_iter()
        .filter(|p| is_active(p))
        .collect();
    let mut ready = 0;
    let mut available = 0;
    let mut fully_labeled = 0;
    let mut recheck = None;
    for p in &pods {
        let labels = p.metadata.labels();
        if template_labels
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
        {
            fully_labeled += 1;
        }
        if is_ready(p) {
            ready += 1;
        }
        match availability(p, min_ready) {
            Ok(()) => available += 1,
            Err(Some(after)) => {
                recheck = Some(recheck.map_or(after, |r: std::time::Duration| r.min(after)))
            }
            Err(None) => {}
        }
    }
    if let Some(after) = recheck {
        Workloads::requeue_after(&w.replicasets, (ns.clone(), name.clone()), after);
    }
    let nonzero = |n: i32| if n == 0 { None } else { Some(n) };
    let status = json!({
        "replicas": pods.len(),
        "fullyLabeledReplicas": nonzero(fully_labeled),
        "readyReplicas": nonzero(ready),
        "availableReplicas": nonzero(available),
        "observedGeneration": rs.metadata.generation,
    });
    let current = rs.status.clone().unwrap_or_default();
    let same = current.replicas == pods.len() as i32
        && current.fully_labeled_replicas.unwrap_or(0) == fully_labeled
        && current.ready_replicas.unwrap_or(0) == ready
        && current.available_replicas.unwrap_or(0) == available
        && current.observed_generation == rs.metadata.generation;
    if same {
        return;
    }
    let patch = json!({"status": status});
    if let Err(error) =
        crate::writes::merge_patch::<ReplicaSet>(ctx, Some(&ns), &name, Some("status"), &patch)
            .await
    {
        tracing::debug!(replicaset = %name, %error, "status write failed");
        Workloads::requeue_after(
            &w.replicasets,
            (ns, name),
            std::time::Duration::from_secs(1),
        );
    }
}
