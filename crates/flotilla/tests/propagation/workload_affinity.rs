//! Gate `WorkloadAffinity` through the detector and the live scheduler: Karmada's four e2e cases
//! (`workloadaffinity_test.go`), with the Deployments of a group created back to back so that
//! the scheduler sees them together, and the gate off.

use flotilla_api::karmada::ResourceBinding;
use flotilla_controllers::ControllerOptions;
use flotilla_scheduler::Registry;
use flotilla_scheduler::run::SchedulerConfig;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::world::{World, eventually};

const CLUSTERS: [&str; 3] = ["member1", "member2", "member3"];

async fn gated_world() -> World {
    let mut options = ControllerOptions::default();
    options
        .gates
        .set("WorkloadAffinity", true)
        .expect("WorkloadAffinity is a known gate");
    let scheduler = SchedulerConfig {
        framework: Registry::in_tree_gated(true)
            .framework(&["*"])
            .expect("every plugin"),
        workload_affinity: true,
        ..SchedulerConfig::default()
    };
    World::start_with(&CLUSTERS, options, scheduler).await
}

fn deployment(namespace: &str, name: &str, labels: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {
                "containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
}

/// A policy selecting Deployments by `selector` with `placement`.
fn policy(namespace: &str, name: &str, selector: Value, placement: Value) -> Value {
    let mut selector = selector;
    selector["apiVersion"] = json!("apps/v1");
    selector["kind"] = json!("Deployment");
    json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resourceSelectors": [selector], "placement": placement}})
}

fn one_cluster() -> Value {
    json!([{"spreadByField": "cluster", "maxGroups": 1, "minGroups": 1}])
}

/// The binding's clusters once it is scheduled, sorted; empty once the scheduler found no
/// cluster fit (as Karmada's e2e helper `eventuallyGetBindingClusters` reads it).
async fn binding_clusters(client: &kube::Client, namespace: &str, name: &str) -> Vec<String> {
    let api = Api::<ResourceBinding>::namespaced(client.clone(), namespace);
    let binding = format!("{name}-deployment");
    eventually(&format!("{namespace}/{binding} scheduled"), || async {
        let rb = api.get_opt(&binding).await.ok()??;
        let mut clusters: Vec<String> = rb.spec.clusters.iter().map(|c| c.name.clone()).collect();
        clusters.sort();
        if !clusters.is_empty() {
            return Some(clusters);
        }
        let no_fit =
            rb.status.as_ref()?.conditions.iter().any(|c| {
                c.type_ == "Scheduled" && c.status == "False" && c.reason == "NoClusterFit"
            });
        no_fit.then(Vec::new)
    })
    .await
}

async fn groups_of(client: &kube::Client, namespace: &str, name: &str) -> Option<Value> {
    let api = Api::<ResourceBinding>::namespaced(client.clone(), namespace);
    let binding = format!("{name}-deployment");
    let rb = eventually("the binding", || async {
        api.get_opt(&binding).await.ok()?
    })
    .await;
    rb.spec
        .workload_affinity_groups
        .map(|g| serde_json::to_value(g).expect("encode"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anti_affinity_keeps_a_groups_workloads_apart() {
    let world = gated_world().await;
    let key = "karmada.io/group-anti";
    world
        .apply(policy(
            "default",
            "anti",
            json!({"labelSelector": {"matchLabels": {key: "ha"}}}),
            json!({"workloadAffinity": {"antiAffinity": {"groupByLabelKey": key}},
                "spreadConstraints": one_cluster()}),
        ))
        .await;
    world
        .apply(deployment("default", "ha-1", json!({key: "ha"})))
        .await;
    world
        .apply(deployment("default", "ha-2", json!({key: "ha"})))
        .await;
    let first = binding_clusters(&world.client, "default", "ha-1").await;
    let second = binding_clusters(&world.client, "default", "ha-2").await;
    assert_eq!((first.len(), second.len()), (1, 1), "{first:?} {second:?}");
    assert_ne!(first, second);
    assert_eq!(
        groups_of(&world.client, "default", "ha-1").await,
        Some(json!({"antiAffinityGroup": format!("{key}=ha")}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn affinity_puts_a_groups_workloads_together() {
    let world = gated_world().await;
    let key = "karmada.io/group-together";
    let affinity = json!({"affinity": {"groupByLabelKey": key}});
    // The group's first workload is pinned to member2, which the others would not choose
    // by themselves (without the filter they all go to member1).
    world
        .apply(policy(
            "default",
            "lead",
            json!({"name": "train-1"}),
            json!({"workloadAffinity": affinity,
                "clusterAffinity": {"clusterNames": ["member2"]}}),
        ))
        .await;
    world
        .apply(deployment("default", "train-1", json!({key: "train"})))
        .await;
    assert_eq!(
        binding_clusters(&world.client, "default", "train-1").await,
        ["member2"]
    );
    world
        .apply(policy(
            "default",
            "follow",
            json!({"labelSelector": {"matchLabels": {key: "train", "role": "follower"}}}),
            json!({"workloadAffinity": affinity, "spreadConstraints": one_cluster()}),
        ))
        .await;
    for name in ["train-2", "train-3"] {
        let labels = json!({key: "train", "role": "follower"});
        world.apply(deployment("default", name, labels)).await;
    }
    for name in ["train-2", "train-3"] {
        assert_eq!(
            binding_clusters(&world.client, "default", name).await,
            ["member2"],
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_are_scoped_to_a_namespace() {
    let world = gated_world().await;
    Api::<Namespace>::all(world.client.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "affinity-2"}})).expect("ns"),
        )
        .await
        .expect("namespace");
    let key = "karmada.io/group-svc";
    for namespace in ["default", "affinity-2"] {
        world
            .apply(policy(
                namespace,
                "svc",
                json!({"labelSelector": {"matchLabels": {key: "svc"}}}),
                json!({"workloadAffinity": {"antiAffinity": {"groupByLabelKey": key}},
                    "clusterAffinity": {"clusterNames": ["member1"]}}),
            ))
            .await;
        world
            .apply(deployment(namespace, "svc", json!({key: "svc"})))
            .await;
    }
    for namespace in ["default", "affinity-2"] {
        assert_eq!(
            binding_clusters(&world.client, namespace, "svc").await,
            ["member1"],
            "{namespace}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_both_terms_one_of_two_conflicting_workloads_stays_unscheduled() {
    let world = gated_world().await;
    let (affinity, anti) = ("karmada.io/affinity-mix", "karmada.io/antiaffinity-mix");
    let pinned = |terms: Value, spread: bool| {
        let mut placement = json!({"workloadAffinity": terms,
            "clusterAffinity": {"clusterNames": ["member1"]}});
        if spread {
            placement["spreadConstraints"] = one_cluster();
        }
        placement
    };
    world
        .apply(policy(
            "default",
            "mix-1",
            json!({"name": "mix-1"}),
            pinned(json!({"affinity": {"groupByLabelKey": affinity}}), false),
        ))
        .await;
    world
        .apply(deployment("default", "mix-1", json!({affinity: "mix"})))
        .await;
    world
        .apply(policy(
            "default",
            "mix-2",
            json!({"name": "mix-2"}),
            pinned(json!({"antiAffinity": {"groupByLabelKey": anti}}), false),
        ))
        .await;
    world
        .apply(deployment("default", "mix-2", json!({anti: "mix"})))
        .await;
    world
        .apply(policy(
            "default",
            "mix-3",
            json!({"name": "mix-3"}),
            pinned(
                json!({"affinity": {"groupByLabelKey": affinity},
                    "antiAffinity": {"groupByLabelKey": anti}}),
                true,
            ),
        ))
        .await;
    world
        .apply(deployment(
            "default",
            "mix-3",
            json!({affinity: "mix", anti: "mix"}),
        ))
        .await;
    let first = binding_clusters(&world.client, "default", "mix-1").await;
    assert_eq!(first, ["member1"]);
    let second = binding_clusters(&world.client, "default", "mix-2").await;
    let third = binding_clusters(&world.client, "default", "mix-3").await;
    // Only one of them may have member1.
    assert!(
        second.is_empty() != third.is_empty(),
        "mix-2 {second:?}, mix-3 {third:?}"
    );
    // The refused one says why, in Karmada's words.
    let refused = if second.is_empty() { "mix-2" } else { "mix-3" };
    let rb = Api::<ResourceBinding>::namespaced(world.client.clone(), "default")
        .get(&format!("{refused}-deployment"))
        .await
        .expect("binding");
    let message = rb
        .status
        .expect("status")
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Scheduled")
        .expect("Scheduled")
        .message;
    assert!(
        message.contains("1 cluster already has workload with the same anti-affinity group"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_gate_bindings_carry_no_groups() {
    let world = World::start(&CLUSTERS).await;
    let key = "karmada.io/group-off";
    world
        .apply(policy(
            "default",
            "off",
            json!({"labelSelector": {"matchLabels": {key: "x"}}}),
            json!({"workloadAffinity": {"antiAffinity": {"groupByLabelKey": key}},
                "clusterAffinity": {"clusterNames": ["member1"]}}),
        ))
        .await;
    world
        .apply(deployment("default", "off-1", json!({key: "x"})))
        .await;
    world
        .apply(deployment("default", "off-2", json!({key: "x"})))
        .await;
    // Both land on member1: nothing keeps them apart.
    for name in ["off-1", "off-2"] {
        assert_eq!(
            binding_clusters(&world.client, "default", name).await,
            ["member1"]
        );
        assert_eq!(groups_of(&world.client, "default", name).await, None);
    }
}
