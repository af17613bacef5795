//! A joined member goes Ready and reports exactly what its nodes and pods hold, GPUs included.

use std::collections::BTreeMap;

use flotilla_api::Quantity;
use flotilla_api::karmada::{CONDITION_COMPLETE_API_ENABLEMENTS, ResourceList};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

use crate::support::{PATIENCE, World, eventually, ready, taint_keys};

const SIM: &str = "seed: 3\nstartLatency: '0'\nclusters:\n- name: gpu1\n  region: us-west-2\n  nodePools:\n  - {name: a100, count: 3, profile: gpu-a100}\n  - {name: cpu, count: 2, profile: cpu}\n";

fn add(into: &mut ResourceList, name: &str, q: &Quantity) {
    let sum = into
        .get(name)
        .map(|c| c.checked_add(q).expect("no overflow"))
        .unwrap_or(*q);
    into.insert(name.to_owned(), sum);
}

/// What the member's own objects say the summary must be.
async fn expected(member: &kube::Client) -> (ResourceList, ResourceList, usize) {
    let mut allocatable = ResourceList::new();
    let nodes = Api::<Node>::all(member.clone())
        .list(&ListParams::default())
        .await
        .expect("nodes");
    for node in &nodes.items {
        let list = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.clone())
            .unwrap_or_default();
        for (name, q) in list {
            add(
                &mut allocatable,
                &name,
                &Quantity::parse(&q.0).expect("a quantity"),
            );
        }
    }
    let mut allocated = ResourceList::new();
    let pods = Api::<Pod>::all(member.clone())
        .list(&ListParams::default())
        .await
        .expect("pods");
    let mut count = 0i64;
    for pod in &pods.items {
        let spec = pod.spec.as_ref().expect("a spec");
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        if spec.node_name.is_none() || phase == "Succeeded" || phase == "Failed" {
            continue;
        }
        count += 1;
        for c in &spec.containers {
            let requests = c
                .resources
                .as_ref()
                .and_then(|r| r.requests.clone())
                .unwrap_or_default();
            for (name, q) in requests {
                add(
                    &mut allocated,
                    &name,
                    &Quantity::parse(&q.0).expect("a quantity"),
                );
            }
        }
    }
    allocated.insert(
        "pods".into(),
        Quantity::from_i64(count, flotilla_api::QuantityFormat::DecimalSI),
    );
    (allocatable, allocated, nodes.items.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joined_member_goes_ready_with_exact_resource_summaries_including_gpus() {
    let world = World::start(SIM).await;
    let member = world.member("gpu1").client();
    // GPU pods: 2 replicas of 4 GPUs each on the a100 nodes.
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "train"}},
            "template": {"metadata": {"labels": {"app": "train"}},
                "spec": {"containers": [{"name": "t", "image": "trainer",
                    "resources": {"requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "4"},
                                  "limits": {"nvidia.com/gpu": "4"}}}]}}},
    }))
    .expect("a deployment");
    Api::<Deployment>::namespaced(member.clone(), "default")
        .create(&PostParams::default(), &deployment)
        .await
        .expect("created");
    let pods = Api::<Pod>::namespaced(member.clone(), "default");
    eventually(PATIENCE, "both GPU pods are bound", || async {
        let list = pods.list(&ListParams::default()).await.ok()?;
        let bound = list
            .items
            .iter()
            .filter(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some()))
            .count();
        (bound == 2).then_some(())
    })
    .await;

    world.join("gpu1").await;
    let (allocatable, allocated, nodes) = expected(&member).await;
    assert!(
        allocatable.contains_key("nvidia.com/gpu"),
        "{allocatable:?}"
    );
    assert_eq!(
        allocated.get("nvidia.com/gpu"),
        Some(&Quantity::parse("8").expect("8"))
    );
    let cluster = world
        .cluster_until(
            "gpu1",
            "Ready, untainted, with the pods' requests allocated",
            |c| {
                let summary = c.status.as_ref().and_then(|s| s.resource_summary.as_ref());
                ready(c).is_some_and(|(s, _)| s == "True")
                    && summary.is_some_and(|s| s.allocated.as_ref() == Some(&allocated))
                    && taint_keys(c).is_empty()
            },
        )
        .await;
    assert_eq!(
        ready(&cluster),
        Some(("True".into(), "ClusterReady".into()))
    );
    let status = cluster.status.as_ref().expect("a status");
    let summary = status.resource_summary.as_ref().expect("a summary");
    assert_eq!(summary.allocatable.as_ref(), Some(&allocatable));
    assert_eq!(summary.allocating, None, "every pod is bound");
    assert_eq!(summary.allocated.as_ref(), Some(&allocated));
    let node_summary = status.node_summary.as_ref().expect("a node summary");
    assert_eq!(node_summary.total_num as usize, nodes);
    assert_eq!(node_summary.ready_num as usize, nodes);
    // The default nine grades, and every node counted in one of them.
    assert_eq!(summary.allocatable_modelings.len(), 9);
    let counted: i64 = summary.allocatable_modelings.iter().map(|m| m.count).sum();
    assert_eq!(counted as usize, nodes);
    assert!(
        status.kubernetes_version.starts_with("v1."),
        "{}",
        status.kubernetes_version
    );
    let complete = status
        .conditions
        .iter()
        .find(|c| c.type_ == CONDITION_COMPLETE_API_ENABLEMENTS)
        .expect("CompleteAPIEnablements");
    assert_eq!(
        (complete.status.as_str(), complete.reason.as_str()),
        ("True", "Complete")
    );
    let apps: BTreeMap<_, _> = status
        .api_enablements
        .iter()
        .map(|e| (e.group_version.as_str(), e.resources.len()))
        .collect();
    assert!(
        apps.contains_key("apps/v1") && apps.contains_key("v1"),
        "{apps:?}"
    );
    assert!(
        status
            .api_enablements
            .windows(2)
            .all(|w| w[0].group_version < w[1].group_version),
        "sorted by group version"
    );
    assert!(
        taint_keys(&cluster).is_empty(),
        "a Ready cluster has no taints: {:?}",
        cluster.spec.taints
    );
    assert!(
        cluster
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|f| f == "karmada.io/cluster-controller"))
    );

    // A pod that cannot be placed counts as allocating, from the watch alone.
    let huge: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "huge", "namespace": "default"},
        "spec": {"containers": [{"name": "h", "image": "x",
            "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "64"}}}]},
    }))
    .expect("a pod");
    pods.create(&PostParams::default(), &huge)
        .await
        .expect("created");
    world
        .cluster_until("gpu1", "the unschedulable pod is allocating", |c| {
            let allocating = c
                .status
                .as_ref()
                .and_then(|s| s.resource_summary.as_ref())
                .and_then(|s| s.allocating.clone());
            allocating.is_some_and(|a| {
                a.get("nvidia.com/gpu") == Some(&Quantity::parse("64").expect("64"))
                    && a.get("pods") == Some(&Quantity::parse("1").expect("1"))
            })
        })
        .await;
}
