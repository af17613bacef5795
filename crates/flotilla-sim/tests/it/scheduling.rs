//! The scheduler and kubelets through the API: pending pods say why, bound pods report what a
//! kubelet reports.

use k8s_openapi::api::core::v1::{Event, Node, Pod};
use kube::api::{Api, ListParams};
use serde_json::json;

use crate::support::{PATIENCE, World, condition, create, eventually};

#[tokio::test(start_paused = true)]
async fn a_pod_that_fits_nowhere_stays_pending_with_kube_scheduler_reason() {
    let world = World::cpu(3, "").await;
    let client = world.client();
    create::<Pod>(&client, "default", json!({
        "metadata": {"name": "trainer"},
        "spec": {"containers": [{"name": "c", "image": "cuda:12", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    }))
    .await;
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = eventually(PATIENCE, "PodScheduled=False", || async {
        let pod = api.get("trainer").await.ok()?;
        condition(&pod, "PodScheduled")
            .filter(|c| c.status == "False")
            .map(|_| pod.clone())
    })
    .await;
    let c = condition(&pod, "PodScheduled").expect("the condition");
    assert_eq!(c.reason.as_deref(), Some("Unschedulable"));
    assert_eq!(
        c.message.as_deref(),
        Some(
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        )
    );
    assert_eq!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let list = events
        .list(&ListParams::default().fields("involvedObject.name=trainer"))
        .await
        .expect("events");
    let event = list.items.first().expect("a FailedScheduling event");
    assert_eq!(event.reason.as_deref(), Some("FailedScheduling"));
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("default-scheduler")
    );
}

#[tokio::test(start_paused = true)]
async fn a_bound_pod_runs_with_kubelet_status_after_the_start_latency() {
    let world = World::cpu(2, "startLatency: 3s").await;
    let client = world.client();
    create::<Pod>(
        &client,
        "default",
        json!({
            "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                     "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}]},
        }),
    )
    .await;
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let started = tokio::time::Instant::now();
    let creating = eventually(PATIENCE, "ContainerCreating", || async {
        let pod = api.get("web").await.ok()?;
        let waiting = pod
            .status
            .as_ref()?
            .container_statuses
            .as_ref()?
            .first()?
            .state
            .as_ref()?
            .waiting
            .clone()?;
        (waiting.reason.as_deref() == Some("ContainerCreating")).then_some(pod)
    })
    .await;
    assert_eq!(
        creating.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );
    let pod = eventually(PATIENCE, "Running", || async {
        let pod = api.get("web").await.ok()?;
        (pod.status.as_ref()?.phase.as_deref() == Some("Running")).then_some(pod)
    })
    .await;
    assert!(tokio::time::Instant::now() - started >= std::time::Duration::from_secs(3));
    let status = pod.status.as_ref().expect("status");
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .expect("bound");
    assert!(node.starts_with("c1-cpu-"));
    assert!(
        status
            .pod_ip
            .as_deref()
            .is_some_and(|ip| ip.starts_with("10."))
    );
    assert!(
        status
            .host_ip
            .as_deref()
            .is_some_and(|ip| ip.starts_with("172."))
    );
    assert!(status.start_time.is_some());
    assert_eq!(status.qos_class.as_deref(), Some("Burstable"));
    for kind in [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ] {
        assert_eq!(
            condition(&pod, kind).map(|c| c.status.as_str()),
            Some("True"),
            "{kind}"
        );
    }
    let container = &status
        .container_statuses
        .as_ref()
        .expect("container statuses")[0];
    assert!(container.ready && container.started == Some(true));
    assert!(
        container
            .state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .is_some()
    );
    assert!(
        container
            .container_id
            .as_deref()
            .is_some_and(|id| id.starts_with("containerd://"))
    );
    assert!(container.image_id.starts_with("nginx@sha256:"));
}

#[tokio::test(start_paused = true)]
async fn gpu_nodes_carry_labels_topology_and_take_tolerating_gpu_pods() {
    let world = World::from_yaml(
        "seed: 3\nstartLatency: '0'\nclusters:\n- name: g\n  region: us-east-1\n  zones: [us-east-1a]\n  nodePools:\n  - {name: a100, count: 2, profile: gpu-a100, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n  - {name: cpu, count: 1, profile: cpu}\n",
    )
    .await;
    let client = world.client();
    let nodes: Api<Node> = Api::all(client.clone());
    let list = nodes
        .list(&ListParams::default().labels("nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB"))
        .await
        .expect("nodes");
    assert_eq!(list.items.len(), 2);
    let gpu = &list.items[0];
    let labels = gpu.metadata.labels.as_ref().expect("labels");
    assert_eq!(labels["nvidia.com/gpu.memory"], "81920");
    assert_eq!(labels["nvidia.com/gpu.count"], "8");
    assert_eq!(labels["topology.kubernetes.io/region"], "us-east-1");
    assert_eq!(labels["topology.kubernetes.io/zone"], "us-east-1a");
    let topology: serde_json::Value = serde_json::from_str(
        &gpu.metadata.annotations.as_ref().expect("annotations")["karmada.io/gpu-topology"],
    )
    .expect("JSON");
    assert_eq!(topology["gpus"].as_array().map(Vec::len), Some(8));
    let capacity = gpu
        .status
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .expect("capacity");
    assert_eq!(capacity["nvidia.com/gpu"].0, "8");
    create::<Pod>(&client, "default", json!({
        "metadata": {"name": "train"},
        "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
                 "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
    }))
    .await;
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let pod = eventually(PATIENCE, "the GPU pod runs", || async {
        let pod = api.get("train").await.ok()?;
        (pod.status.as_ref()?.phase.as_deref() == Some("Running")).then_some(pod)
    })
    .await;
    assert!(
        pod.spec
            .and_then(|s| s.node_name)
            .is_some_and(|n| n.starts_with("g-a100-"))
    );
}
