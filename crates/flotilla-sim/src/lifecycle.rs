//! The node lifecycle controller's eviction: pods on NotReady nodes are deleted once their
//! toleration of the `unreachable:NoExecute` taint runs out. A pod without a matching toleration
//! gets the simulator's eviction timeout (what kube's DefaultTolerationSeconds admission would
//! have given it, 300 s unless configured). Their controllers then replace them elsewhere.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Taint;

use crate::informer::Cache;
use crate::pod::{Pod, WirePod};
use kube::api::{Api, DeleteParams};
use tokio::time::Instant;

use crate::cluster::Ctx;
use crate::lifted::taints::toleration_seconds;
use crate::nodes::{NodeTable, UNREACHABLE_TAINT};

/// How long `pod` stays on an unreachable node (`None`: forever).
pub fn eviction_delay(pod: &Pod, default: Duration) -> Option<Duration> {
    let taint = Taint {
        key: UNREACHABLE_TAINT.into(),
        value: None,
        effect: "NoExecute".into(),
        time_added: None,
    };
    let tolerations = pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.clone())
        .unwrap_or_default();
    let matches = tolerations
        .iter()
        .any(|t| crate::lifted::taints::tolerates(t, &taint));
    if !matches {
        return Some(default);
    }
    toleration_seconds(&taint, &tolerations).map(|s| Duration::from_secs(s.unsigned_abs()))
}

/// Spawns the eviction of pods on `nodes` (one task for the whole batch).
pub fn evict_after_toleration(
    ctx: Arc<Ctx>,
    table: Arc<NodeTable>,
    pods: Cache<Pod>,
    nodes: Vec<String>,
) {
    let start = Instant::now();
    let mut due: BTreeMap<Duration, Vec<(String, String, String)>> = BTreeMap::new();
    for pod in pods.state() {
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        if !nodes.contains(&node) || crate::scheduler::is_terminal(&pod) {
            continue;
        }
        if let Some(delay) = eviction_delay(&pod, ctx.settings.eviction_timeout) {
            due.entry(delay).or_default().push((
                pod.metadata.namespace.clone().unwrap_or_default(),
                pod.metadata.name.clone().unwrap_or_default(),
                node,
            ));
        }
    }
    tokio::spawn(async move {
        for (delay, batch) in due {
            tokio::time::sleep_until(start + delay).await;
            for (ns, name, node) in batch {
                if !table.is_down(&node) {
                    continue;
                }
                let api: Api<WirePod> = Api::namespaced(ctx.client.clone(), &ns);
                tracing::info!(cluster = %ctx.name, pod = %name, %node, "evicting from a NotReady node");
                if let Err(error) = api.delete(&name, &DeleteParams::default()).await {
                    tracing::debug!(pod = %name, %error, "eviction failed");
                }
            }
        }
    });
}
