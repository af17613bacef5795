//! The DaemonSet controller: one pod per eligible node (the template's nodeSelector and
//! required affinity, and taints beyond the tolerations every daemon pod gets), pinned with a
//! required `metadata.name` node affinity and bound by the scheduler, as kube does; status
//! desired/current/ready/available/updated/misscheduled counts.
//!
//! Behaviour of k8s.io/kubernetes pkg/controller/daemon (daemon_controller.go, util) at v1.32.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Toleration;

use crate::node::Node;
use crate::pod::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::{
    Workloads, availability, create_pod, delete_pod, is_active, is_ready, owner_reference,
};
use crate::cluster::{Ctx, Stores};
use crate::lifted::hash::pod_template_hash;
use crate::lifted::{affinity, taints};

pub async fn run(w: Arc<Workloads>, ctx: Arc<Ctx>, stores: Stores) {
    loop {
        let key = w.daemonsets.pop().await;
        let Some(ds) = stores.daemonsets.get(&key.0, &key.1) else {
            continue;
        };
        if let Err(error) = sync(&w, &ctx, &stores, &ds).await {
            tracing::debug!(daemonset = %key.1, %error, "sync failed; retrying");
            Workloads::requeue_after(&w.daemonsets, key, std::time::Duration::from_secs(1));
        }
    }
}

/// The tolerations kube adds to every daemon pod.
fn daemon_tolerations() -> Vec<Toleration> {
    let t = |key: &str, effect: &str| Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        value: None,
        toleration_seconds: None,
    };
    vec![
        t("node.kubernetes.io/not-ready", "NoExecute"),
        t("node.kubernetes.io/unreachable", "NoExecute"),
        t("node.kubernetes.io/disk-pressure", "NoSchedule"),
        t("node.kubernetes.io/memory-pressure", "NoSchedule"),
        t("node.kubernetes.io/pid-pressure", "NoSchedule"),
        t("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
}

fn eligible(template_pod: &Pod, node: &Node, tolerations: &[Toleration]) -> bool {
    let name = node.metadata.name.as_deref().unwrap_or("");
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let node_taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    affinity::pod_matches_node(template_pod, name, &labels)
        && taints::first_untolerated(&node_taints, tolerations).is_none()
}

async fn sync(
    w: &Workloads,
    ctx: &Ctx,
    stores: &Stores,
    ds: &DaemonSet,
) -> Result<(), kube::Error> {
    if ds.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let uid = ds.metadata.uid.clone().unwrap_or_default();
    let ns = ds.metadata.namespace.clone().unwrap_or_default();
    let name = ds.metadata.name.clone().unwrap_or_default();
    let spec = ds.spec.clone().unwrap_or_default();
    let hash = pod_template_hash(
        &spec.template,
        ds.status
            .as_ref()
            .and_then(|s| s.collision_count)
            .filter(|c| *c != 0),
    );
    let generation = ds.metadata.generation.unwrap_or(1).to_string();
    let mut tolerations = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.clone())
        .unwrap_or_default();
    tolerations.extend(daemon_tolerations());
    let template_pod = Pod::from_spec(spec.template.spec.clone());
    let pods: Vec<Arc<Pod>> = w
        .owned_pods(stores, &uid)
        .into_iter()
        .filter(|p| is_active(p))
        .collect();
    let mut by_node: BTreeMap<String, Vec<Arc<Pod>>> = BTreeMap::new();
    for p in &pods {
        let node = daemon_node(p).unwrap_or_default();
        by_node.entry(node).or_default().push(p.clone());
    }
    let mut nodes: Vec<Arc<Node>> = stores.nodes.state();
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let mut desired = 0;
    let mut misscheduled = 0;
    if w.expectations.satisfied(&uid) {
        for node in &nodes {
            let node_name = node.metadata.name.clone().unwrap_or_default();
            let should = eligible(&template_pod, node, &tolerations);
            let existing = by_node.get(&node_name).cloned().unwrap_or_default();
            if should && existing.is_empty() {
                let pod_name = w.child_name(
                    ctx.settings.seed,
                    &format!("{}/ds/{ns}/{name}", ctx.name),
                    &name,
                );
                w.expectations.expect_create(&uid, &pod_name);
                let tolerations = tolerations.clone();
                let pin = node_name.clone();
                let result = create_pod(
                    ctx,
                    &ns,
                    &pod_name,
                    &spec.template,
                    &[("controller-revision-hash", hash.clone()), ("pod-template-generation", generation.clone())],
                    &[],
                    owner_reference(ds),
                    |pod| {
                        if let Some(spec) = pod.spec.as_mut() {
                            spec.tolerations = Some(tolerations);
                            let affinity = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [{"matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [pin]}]}]}}});
                            spec.affinity = serde_json::from_value(affinity).ok();
                        }
                    },
                )
                .await;
                if let Err(e) = result {
                    w.expectations.forget(&uid, &pod_name);
                    return Err(e);
                }
            } else if !should {
                for p in existing {
                    let pod_name = p.metadata.name.clone().unwrap_or_default();
                    w.expectations.expect_delete(&uid, &pod_name);
                    if let Err(e) = delete_pod(ctx, &ns, &pod_name).await {
                        w.expectations.forget(&uid, &pod_name);
                        return Err(e);
                    }
                }
            } else if existing.len() > 1 {
                for p in &existing[1..] {
                    let pod_name = p.metadata.name.clone().unwrap_or_default();
                    w.expectations.expect_delete(&uid, &pod_name);
                    let _ = delete_pod(ctx, &ns, &pod_name).await;
                }
            } else if let Some(p) = existing.first()
                && p.metadata
                    .labels()
                    .and_then(|l| l.get("controller-revision-hash"))
                    != Some(&hash)
                && is_ready(p)
            {
                // Rolling update, one node at a time (maxUnavailable 1).
                let not_ready = pods.iter().filter(|p| !is_ready(p)).count();
                if not_ready == 0 {
                    let pod_name = p.metadata.name.clone().unwrap_or_default();
                    w.expectations.expect_delete(&uid, &pod_name);
                    let _ = delete_pod(ctx, &ns, &pod_name).await;
                }
            }
        }
    }
    for node in &nodes {
        let node_name = node.metadata.name.clone().unwrap_or_default();
        let should = eligible(&template_pod, node, &tolerations);
        let has = by_node.contains_key(&node_name);
        if should {
            desired += 1;
        } else if has {
            misscheduled += 1;
        }
    }
    let scheduled = pods
        .iter()
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some())
        .count() as i32;
    let ready = pods.iter().filter(|p| is_ready(p)).count() as i32;
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    let available = pods
        .iter()
        .filter(|p| availability(p, min_ready).is_ok())
        .count() as i32;
    let updated = pods
        .iter()
        .filter(|p| {
            p.metadata
                .labels()
                .and_then(|l| l.get("controller-revision-hash"))
                == Some(&hash)
        })
        .count() as i32;
    let nonzero = |n: i32| if n == 0 { None } else { Some(n) };
    let status = json!({
        "observedGeneration": ds.metadata.generation,
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": scheduled.min(desired),
        "numberMisscheduled": misscheduled,
        "numberReady": ready,
        "numberAvailable": nonzero(available),
        "numberUnavailable": nonzero((desired - available).max(0)),
        "updatedNumberScheduled": nonzero(updated),
    });
    let old = ds.status.clone().unwrap_or_default();
    let same = old.observed_generation == ds.metadata.generation
        && old.desired_number_scheduled == desired
        && old.current_number_scheduled == scheduled.min(desired)
        && old.number_misscheduled == misscheduled
        && old.number_ready == ready
        && old.number_available.unwrap_or(0) == available
        && old.number_unavailable.unwrap_or(0) == (desired - available).max(0)
        && old.updated_number_scheduled.unwrap_or(0) == updated;
    if same {
        return Ok(());
    }
    let api: Api<DaemonSet> = Api::namespaced(ctx.client.clone(), &ns);
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": status})),
    )
    .await?;
    Ok(())
}

/// The node a daemon pod is for: where it is bound, or its pinned affinity.
fn daemon_node(pod: &Pod) -> Option<String> {
    let spec = pod.spec.as_ref()?;
    if let Some(n) = spec.node_name.clone().filter(|n| !n.is_empty()) {
        return Some(n);
    }
    spec.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms
        .first()?
        .match_fields
        .as_ref()?
        .first()?
        .values
        .as_ref()?
        .first()
        .cloned()
}
