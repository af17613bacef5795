//! The live scheduler against an in-process control plane: bindings created through the API are
//! placed, rescaled, refused with Karmada's conditions, and retried when capacity appears.

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::karmada::{Cluster, ResourceBinding};
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_runtime::Shutdown;
use flotilla_scheduler::run::{Metrics, Scheduler, SchedulerConfig};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

struct World {
    _running: flotilla_apiserver::Running,
    client: kube::Client,
    shutdown: Shutdown,
}

impl Drop for World {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn world() -> World {
    world_with(SchedulerConfig::default()).await
}

async fn world_with(config: SchedulerConfig) -> World {
    let store = Arc::new(flotilla_store::MemoryStore::new());
    let running = flotilla_apiserver::Builder::new(store)
        .start()
        .await
        .expect("API server starts");
    let client = flotilla_apiserver::client::in_process(
        &running.server,
        UserInfo {
            name: "scheduler-test".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..UserInfo::default()
        },
    );
    let shutdown = Shutdown::new();
    let scheduler = Scheduler::new(client.clone(), config, Metrics::default());
    tokio::spawn(scheduler.run(shutdown.clone()));
    World {
        _running: running,
        client,
        shutdown,
    }
}

/// A Ready member with room for `pods` one-CPU replicas.
async fn add_cluster(client: &kube::Client, name: &str, region: &str, cpus: u32) {
    let api = Api::<Cluster>::all(client.clone());
    let cluster: Cluster = serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {"syncMode": "Push", "apiEndpoint": format!("https://{name}.example:6443"), "region": region},
    }))
    .expect("cluster");
    api.create(&PostParams::default(), &cluster)
        .await
        .expect("cluster created");
    set_capacity(client, name, cpus).await;
}

async fn set_capacity(client: &kube::Client, name: &str, cpus: u32) {
    let api = Api::<Cluster>::all(client.clone());
    let status = json!({"status": {
        "kubernetesVersion": "v1.32.0",
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
            "message": "cluster is healthy and ready to accept workloads",
            "lastTransitionTime": "2026-12-01T00:00:00Z"}],
        "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
        "resourceSummary": {
            "allocatable": {"cpu": cpus.to_string(), "memory": "1Ti", "pods": "1000"},
            "allocated": {"cpu": "0", "memory": "0", "pods": "0"},
        },
    }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("cluster status");
}

async fn create_binding(client: &kube::Client, name: &str, replicas: i32, placement: Value) {
    let api = Api::<ResourceBinding>::namespaced(client.clone(), "default");
    let binding: ResourceBinding = serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": format!("{name}-deployment"), "namespace": "default",
            "labels": {"propagationpolicy.karmada.io/permanent-id": "6b8c1a5e-0000-4000-8000-000000000001"}},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                "name": name, "uid": "2f0d7a4c-1b7e-4a53-9c57-3f3c7a1d9e10"},
            "replicas": replicas,
            "replicaRequirements": {"resourceRequest": {"cpu": "1"}},
            "placement": placement,
        },
    }))
    .expect("binding");
    api.create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
}

/// Waits (patiently, without a timing assertion) for the binding to satisfy `done`.
async fn eventually(
    client: &kube::Client,
    name: &str,
    done: impl Fn(&ResourceBinding) -> bool,
) -> ResourceBinding {
    let api = Api::<ResourceBinding>::namespaced(client.clone(), "default");
    let mut last = None;
    for _ in 0..600 {
        if let Some(binding) = api.get_opt(name).await.expect("get binding") {
            if done(&binding) {
                return binding;
            }
            last = Some(binding);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("binding {name} never reached the expected state: {last:#?}");
}

fn placement_of(binding: &ResourceBinding) -> Vec<(String, i32)> {
    binding
        .spec
        .clusters
        .iter()
        .map(|t| (t.name.clone(), t.replicas))
        .collect()
}

fn scheduled(binding: &ResourceBinding) -> Option<(String, String, String)> {
    binding.status.as_ref().and_then(|s| {
        s.conditions
            .iter()
            .find(|c| c.type_ == "Scheduled")
            .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
    })
}

fn weighted() -> Value {
    json!({
        "clusterAffinity": {"clusterNames": ["cn-shanghai", "us-west-2", "eu-central-1"]},
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": ["cn-shanghai"]}, "weight": 5},
                {"targetCluster": {"clusterNames": ["us-west-2"]}, "weight": 3},
                {"targetCluster": {"clusterNames": ["eu-central-1"]}, "weight": 2},
            ]},
        },
    })
}

#[tokio::test]
async fn bindings_are_placed_by_weight_and_follow_replica_changes() {
    let w = world().await;
    for (name, region) in [
        ("cn-shanghai", "cn-shanghai"),
        ("us-west-2", "us-west-2"),
        ("eu-central-1", "eu-central-1"),
    ] {
        add_cluster(&w.client, name, region, 100).await;
    }
    create_binding(&w.client, "vllm", 10, weighted()).await;
    let binding = eventually(&w.client, "vllm-deployment", |b| {
        scheduled(b).is_some_and(|(status, ..)| status == "True")
    })
    .await;
    assert_eq!(
        placement_of(&binding),
        [
            ("cn-shanghai".to_owned(), 5),
            ("eu-central-1".to_owned(), 2),
            ("us-west-2".to_owned(), 3)
        ]
    );
    let status = binding.status.clone().expect("status");
    assert_eq!(
        scheduled(&binding),
        Some((
            "True".into(),
            "Success".into(),
            "Binding has been scheduled successfully.".into()
        ))
    );
    assert_eq!(
        status.scheduler_observed_generation,
        binding.metadata.generation.expect("generation")
    );
    assert!(status.last_scheduled_time.is_some());
    let applied = binding
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("policy.karmada.io/applied-placement"))
        .expect("applied placement recorded");
    let applied: Value = serde_json::from_str(applied).expect("placement JSON");
    assert_eq!(
        applied["replicaScheduling"]["replicaDivisionPreference"],
        "Weighted"
    );

    // Scaling the binding redistributes by the same weights.
    Api::<ResourceBinding>::namespaced(w.client.clone(), "default")
        .patch(
            "vllm-deployment",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 20}})),
        )
        .await
        .expect("scale");
    let binding = eventually(&w.client, "vllm-deployment", |b| {
        b.spec.clusters.iter().map(|t| t.replicas).sum::<i32>() == 20
    })
    .await;
    assert_eq!(
        placement_of(&binding),
        [
            ("cn-shanghai".to_owned(), 10),
            ("eu-central-1".to_owned(), 4),
            ("us-west-2".to_owned(), 6)
        ]
    );

    // Both decisions were recorded on the binding and on its template: client-go's recorder
    // (what Karmada uses) counts a repeat of the same message on the first Event and writes a
    // new Event for a new message, so the rescale is a second Event.
    let expected = [
        "Binding has been scheduled successfully. Result: {cn-shanghai:5, eu-central-1:2, us-west-2:3}",
        "Binding has been scheduled successfully. Result: {cn-shanghai:10, eu-central-1:4, us-west-2:6}",
    ];
    for (kind, name) in [
        ("ResourceBinding", "vllm-deployment"),
        ("Deployment", "vllm"),
    ] {
        let events = eventually_events(&w.client, kind, name, |events| events.len() >= 2).await;
        let mut messages: Vec<&str> = events
            .iter()
            .map(|e| e.message.as_deref().unwrap_or_default())
            .collect();
        messages.sort_unstable();
        let mut want = expected.to_vec();
        want.sort_unstable();
        assert_eq!(messages, want, "{kind} {name}: {events:#?}");
        for event in &events {
            assert_eq!(event.reason.as_deref(), Some("ScheduleBindingSucceed"));
            assert_eq!(event.type_.as_deref(), Some("Normal"));
            assert_eq!(event.count, Some(1));
            assert_eq!(
                event.reporting_component.as_deref(),
                Some("karmada-scheduler")
            );
        }
    }
}

/// Waits for the scheduler's events about `kind`/`name` in `default` to satisfy `done`.
async fn eventually_events(
    client: &kube::Client,
    kind: &str,
    name: &str,
    done: impl Fn(&[k8s_openapi::api::core::v1::Event]) -> bool,
) -> Vec<k8s_openapi::api::core::v1::Event> {
    let api = Api::<k8s_openapi::api::core::v1::Event>::namespaced(client.clone(), "default");
    let mut last = Vec::new();
    for _ in 0..600 {
        last = api
            .list(&Default::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .filter(|e| {
                e.involved_object.kind.as_deref() == Some(kind)
                    && e.involved_object.name.as_deref() == Some(name)
            })
            .collect();
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("events about {kind} {name} never reached the expected state: {last:#?}");
}

#[tokio::test]
async fn no_fitting_cluster_clears_the_result_with_karmadas_message() {
    let w = world().await;
    add_cluster(&w.client, "member1", "r1", 10).await;
    add_cluster(&w.client, "member2", "r2", 10).await;
    create_binding(
        &w.client,
        "nowhere",
        2,
        json!({"clusterAffinity": {"clusterNames": ["member9"]}}),
    )
    .await;
    let binding = eventually(&w.client, "nowhere-deployment", |b| scheduled(b).is_some()).await;
    assert_eq!(
        scheduled(&binding),
        Some((
            "False".into(),
            "NoClusterFit".into(),
            "0/2 clusters are available: 2 cluster(s) did not match the placement cluster affinity constraint.".into()
        ))
    );
    assert!(binding.spec.clusters.is_empty());
}

#[tokio::test]
async fn an_unschedulable_binding_is_placed_once_a_cluster_gains_capacity() {
    let w = world().await;
    add_cluster(&w.client, "member1", "r1", 2).await;
    add_cluster(&w.client, "member2", "r2", 3).await;
    let dynamic = json!({
        "replicaScheduling": {
            "replicaSchedulingType": "Divided",
            "replicaDivisionPreference": "Weighted",
            "weightPreference": {"dynamicWeight": "AvailableReplicas"},
        },
    });
    create_binding(&w.client, "big", 9, dynamic).await;
    let binding = eventually(&w.client, "big-deployment", |b| scheduled(b).is_some()).await;
    assert_eq!(
        scheduled(&binding),
        Some((
            "False".into(),
            "Unschedulable".into(),
            "failed to assign replicas: failed to scale up: Clusters available replicas 5 are not enough to schedule.".into()
        ))
    );
    assert!(
        binding.spec.clusters.is_empty(),
        "never a partial placement"
    );

    // Capacity appears: retried on the cluster status change, not after Karmada's 5 minutes.
    set_capacity(&w.client, "member2", 7).await;
    let binding = eventually(&w.client, "big-deployment", |b| !b.spec.clusters.is_empty()).await;
    assert_eq!(
        binding
            .spec
            .clusters
            .iter()
            .map(|t| t.replicas)
            .sum::<i32>(),
        9
    );
    assert_eq!(scheduled(&binding).map(|s| s.1), Some("Success".into()));
}

#[tokio::test]
async fn bindings_of_another_scheduler_or_without_a_policy_are_left_alone() {
    let w = world().await;
    add_cluster(&w.client, "member1", "r1", 10).await;
    create_binding(
        &w.client,
        "other",
        1,
        json!({"clusterAffinity": {"clusterNames": ["member1"]}}),
    )
    .await;
    let api = Api::<ResourceBinding>::namespaced(w.client.clone(), "default");
    // Hand the first binding to another scheduler before ours sees a change it would act on.
    api.patch(
        "other-deployment",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"schedulerName": "gpu-scheduler", "replicas": 2}})),
    )
    .await
    .expect("patch");
    // A control binding proves the scheduler ran meanwhile.
    create_binding(
        &w.client,
        "mine",
        1,
        json!({"clusterAffinity": {"clusterNames": ["member1"]}}),
    )
    .await;
    eventually(&w.client, "mine-deployment", |b| {
        !b.spec.clusters.is_empty()
    })
    .await;
    let other = api.get("other-deployment").await.expect("get");
    assert!(
        other.spec.clusters.is_empty()
            || other.spec.clusters.iter().map(|t| t.replicas).sum::<i32>() == 1,
        "the other scheduler's binding is not rescheduled by us: {:?}",
        other.spec.clusters
    );
}

/// Two simulated GPU members (1 and 3 nodes of 8 A100s) whose Cluster objects claim the same
/// summary capacity, so only the accurate estimator can tell them apart.
async fn gpu_world() -> (World, flotilla_sim::Sim, tempfile::TempDir) {
    let (w, sim, dir, nodes) = gpu_world_with_nodes().await;
    // Wait (patiently, no timing assertion) until both members' nodes and pods are listed.
    for _ in 0..600 {
        if nodes.estimator().members().count() == 2 {
            return (w, sim, dir);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the estimator never listed both members: {nodes:?}");
}

async fn gpu_world_with_nodes() -> (
    World,
    flotilla_sim::Sim,
    tempfile::TempDir,
    Arc<flotilla_scheduler::run::members::MemberNodes>,
) {
    let spec = flotilla_sim::SimConfig::from_yaml(
        "seed: 7\nclusters:\n- name: small\n  nodePools: [{name: gpu, count: 1, profile: gpu-a100}]\n- name: large\n  nodePools: [{name: gpu, count: 3, profile: gpu-a100}]\n",
    )
    .and_then(|c| c.validate())
    .expect("valid sim config");
    let dir = tempfile::tempdir().expect("dir");
    let sim = flotilla_sim::Sim::start(&spec, std::net::Ipv4Addr::LOCALHOST.into(), dir.path())
        .await
        .expect("sim starts");
    let members = Arc::new(flotilla_member::StaticMemberClients::new());
    for name in ["small", "large"] {
        members.insert(name, sim.cluster(name).expect("member").client());
    }
    #[derive(Debug)]
    struct Connector(Arc<flotilla_member::StaticMemberClients>);
    impl flotilla_scheduler::run::members::MemberConnector for Connector {
        fn connect(
            &self,
            cluster: &str,
        ) -> futures::future::BoxFuture<'static, Result<kube::Client, String>> {
            use flotilla_member::MemberClients as _;
            let members = self.0.clone();
            let cluster = cluster.to_owned();
            Box::pin(async move { members.client(&cluster).await.map_err(|e| e.to_string()) })
        }
    }
    let nodes = flotilla_scheduler::run::members::MemberNodes::new(Arc::new(Connector(members)));
    let config = SchedulerConfig {
        members: Some(nodes.clone()),
        ..SchedulerConfig::default()
    };
    let w = world_with(config).await;
    for name in ["small", "large"] {
        let api = Api::<Cluster>::all(w.client.clone());
        let cluster: Cluster = serde_json::from_value(json!({
            "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": format!("https://{name}.example:6443")},
        }))
        .expect("cluster");
        api.create(&PostParams::default(), &cluster)
            .await
            .expect("cluster created");
        let status = json!({"status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
                "message": "cluster is healthy and ready to accept workloads",
                "lastTransitionTime": "2026-12-01T00:00:00Z"}],
            "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}],
            "resourceSummary": {"allocatable": {"cpu": "1000", "memory": "10Ti", "pods": "1000", "nvidia.com/gpu": "32"}},
        }});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .expect("cluster status");
    }
    (w, sim, dir, nodes)
}

async fn create_gpu_binding(
    client: &kube::Client,
    name: &str,
    replicas: i32,
    gpus: &str,
    placement: Value,
    annotations: Value,
) {
    let api = Api::<ResourceBinding>::namespaced(client.clone(), "default");
    let binding: ResourceBinding = serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": format!("{name}-deployment"), "namespace": "default",
            "annotations": annotations,
            "labels": {"propagationpolicy.karmada.io/permanent-id": "6b8c1a5e-0000-4000-8000-000000000002"}},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                "name": name, "uid": "2f0d7a4c-1b7e-4a53-9c57-3f3c7a1d9e11"},
            "replicas": replicas,
            "replicaRequirements": {"resourceRequest": {"nvidia.com/gpu": gpus}},
            "placement": placement,
        },
    }))
    .expect("binding");
    api.create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
}

#[tokio::test]
async fn the_in_process_accurate_estimator_counts_member_nodes() {
    let (w, _sim, _dir) = gpu_world().await;
    // Both Clusters claim 32 GPUs; the members have 8 and 24. Dynamic weights follow what the
    // members really have: 8 replicas of 2 GPUs divide 4 (small) : 12 (large) → 2 / 6.
    let dynamic = json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted", "weightPreference": {"dynamicWeight": "AvailableReplicas"}}});
    create_gpu_binding(&w.client, "llm", 8, "2", dynamic, json!({})).await;
    let binding = eventually(&w.client, "llm-deployment", |b| {
        scheduled(b).is_some_and(|(status, ..)| status == "True")
    })
    .await;
    assert_eq!(
        placement_of(&binding),
        [("large".to_owned(), 6), ("small".to_owned(), 2)]
    );

    // Division by node count (the flotilla.io extension the detector copies from the policy):
    // static weights 1:1 would give 2 / 2; node counts 1 : 3 give 1 / 3.
    let equal = json!({"replicaScheduling": {"replicaSchedulingType": "Divided",
        "replicaDivisionPreference": "Weighted", "weightPreference": {"staticWeightList": [
            {"targetCluster": {"clusterNames": ["small", "large"]}, "weight": 1}]}}});
    create_gpu_binding(
        &w.client,
        "per-node",
        4,
        "1",
        equal,
        json!({"flotilla.io/replica-division": "NodeCount"}),
    )
    .await;
    let binding = eventually(&w.client, "per-node-deployment", |b| {
        scheduled(b).is_some_and(|(status, ..)| status == "True")
    })
    .await;
    assert_eq!(
        placement_of(&binding),
        [("large".to_owned(), 3), ("small".to_owned(), 1)]
    );
}
