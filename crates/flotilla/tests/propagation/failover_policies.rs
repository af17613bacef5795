//! ClusterTaintPolicy and WorkloadRebalancer on the in-process control plane: taints follow
//! cluster conditions (and keep new workloads off the tainted cluster), and a rebalancer makes
//! the scheduler place its workloads afresh, records the outcome per workload and deletes itself
//! after its TTL.

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_api::karmada::{
    Cluster, ClusterResourceBinding, ResourceBinding, WorkloadRebalancer, WorkloadRebalancerStatus,
};
use flotilla_controllers::{ControllerOptions, cluster_taint_policy, workload_rebalancer};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use crate::world::{World, deployment, eventually, policy};

const TAINT_KEY: &str = "testing/network-not-ready";

fn failover_on() -> ControllerOptions {
    let mut options = ControllerOptions::default();
    options
        .gates
        .set("Failover", true)
        .expect("Failover is a known gate");
    options
}

/// Sets the cluster's conditions: Ready=True plus `NetworkReady=<network>`.
async fn set_network_ready(client: &kube::Client, cluster: &str, network: &str) {
    let condition = |type_: &str, status: &str| {
        json!({"type": type_, "status": status, "reason": "Test", "message": "",
            "lastTransitionTime": "2026-12-01T00:00:00Z"})
    };
    let status = json!({"status": {"conditions": [
        condition("Ready", "True"),
        condition("NetworkReady", network),
    ]}});
    Api::<Cluster>::all(client.clone())
        .patch_status(cluster, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("cluster conditions");
}

fn network_taint_policy(target: &str) -> Value {
    json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterTaintPolicy",
        "metadata": {"name": "network"},
        "spec": {
            "targetClusters": {"clusterNames": [target]},
            "addOnConditions": [{"conditionType": "NetworkReady", "operator": "In",
                "statusValues": ["False", "Unknown"]}],
            "removeOnConditions": [{"conditionType": "NetworkReady", "operator": "In",
                "statusValues": ["True"]}],
            "taints": [{"key": TAINT_KEY, "effect": "NoSchedule"}]}})
}

async fn taint_keys(client: &kube::Client, cluster: &str) -> Vec<String> {
    Api::<Cluster>::all(client.clone())
        .get(cluster)
        .await
        .expect("get cluster")
        .spec
        .taints
        .into_iter()
        .map(|t| t.key)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taints_follow_the_conditions_of_targeted_clusters_and_keep_new_workloads_off() {
    let world = World::start(&["member1", "member2"]).await;
    world.run_controller(cluster_taint_policy::start, failover_on());
    let clusters = Api::<Cluster>::all(world.client.clone());

    // The condition comes first: creating the policy is what taints the cluster.
    set_network_ready(&world.client, "member1", "False").await;
    set_network_ready(&world.client, "member2", "False").await;
    world.apply(network_taint_policy("member1")).await;
    let tainted = eventually("member1 tainted", || async {
        let cluster = clusters.get("member1").await.expect("get member1");
        cluster
            .spec
            .taints
            .iter()
            .find(|t| t.key == TAINT_KEY)
            .cloned()
    })
    .await;
    assert_eq!(tainted.effect, "NoSchedule");
    assert!(tainted.time_added.is_some(), "added taints are stamped");
    let events = Api::<Event>::namespaced(world.client.clone(), "default");
    let event = eventually("TaintClusterSucceed event", || async {
        events
            .list(&ListParams::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .find(|e| {
                e.involved_object.name.as_deref() == Some("member1")
                    && e.reason.as_deref() == Some("TaintClusterSucceed")
            })
    })
    .await;
    assert_eq!(
        event.message.as_deref(),
        Some(
            "Update Cluster(member1) with taints(cluster now has taints([{Key:testing/network-not-ready,Effect:NoSchedule}])) succeed"
        )
    );
    assert_eq!(
        event.source.and_then(|s| s.component).as_deref(),
        Some("cluster-taint-policy-controller")
    );
    assert!(
        taint_keys(&world.client, "member2").await.is_empty(),
        "member2 is not targeted"
    );

    // The NoSchedule taint keeps a new workload off member1.
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tainted"}}))
        .await;
    let mut placement = policy("tainted", "web", "web", "member1");
    placement["spec"]["placement"]["clusterAffinity"]["clusterNames"] =
        json!(["member1", "member2"]);
    world.apply(placement).await;
    world.apply(deployment("tainted", "web")).await;
    let bindings = Api::<ResourceBinding>::namespaced(world.client.clone(), "tainted");
    let placed = eventually("web scheduled", || async {
        let binding = bindings
            .get_opt("web-deployment")
            .await
            .expect("get binding")?;
        (!binding.spec.clusters.is_empty()).then(|| {
            binding
                .spec
                .clusters
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
        })
    })
    .await;
    assert_eq!(placed, ["member2"]);

    // The removal conditions take the taint away, the addition conditions bring it back.
    set_network_ready(&world.client, "member1", "True").await;
    eventually("member1 untainted", || async {
        taint_keys(&world.client, "member1")
            .await
            .is_empty()
            .then_some(())
    })
    .await;
    set_network_ready(&world.client, "member1", "Unknown").await;
    eventually("member1 tainted again", || async {
        (taint_keys(&world.client, "member1").await == [TAINT_KEY]).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_failover_gate_policies_taint_nothing() {
    let world = World::start(&["member1"]).await;
    world.run_controller(cluster_taint_policy::start, ControllerOptions::default());
    set_network_ready(&world.client, "member1", "False").await;
    world.apply(network_taint_policy("member1")).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(taint_keys(&world.client, "member1").await.is_empty());
}

/// Sets the pods member1 and member2 can still take (the general estimator's only limit for a
/// workload without requests).
async fn set_room(client: &kube::Client, pods: &[(&str, u32)]) {
    for (cluster, pods) in pods {
        let status = json!({"status": {"resourceSummary": {
            "allocatable": {"cpu": "1000", "memory": "100Ti", "pods": pods.to_string()},
            "allocated": {"cpu": "0", "memory": "0", "pods": "0"}}}});
        Api::<Cluster>::all(client.clone())
            .patch_status(cluster, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .expect("resource summary");
    }
}

fn targets(binding: &ResourceBinding) -> BTreeMap<String, i32> {
    binding
        .spec
        .clusters
        .iter()
        .map(|c| (c.name.clone(), c.replicas))
        .collect()
}

fn observed(status: &WorkloadRebalancerStatus) -> Vec<(String, String, String, String)> {
    status
        .observed_workloads
        .iter()
        .map(|o| {
            (
                o.workload.kind.clone(),
                o.workload.name.clone(),
                o.result.clone(),
                o.reason.clone(),
            )
        })
        .collect()
}

fn row(kind: &str, name: &str, result: &str, reason: &str) -> (String, String, String, String) {
    (kind.into(), name.into(), result.into(), reason.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebalancer_reschedules_its_workloads_afresh_and_records_each_outcome() {
    const NS: &str = "rebalance";
    let world = World::start(&["member1", "member2"]).await;
    world.run_controller(workload_rebalancer::start, ControllerOptions::default());
    set_room(&world.client, &[("member1", 100), ("member2", 10)]).await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    let mut web = deployment(NS, "web");
    web["spec"]["replicas"] = json!(2);
    world.apply(web).await;
    world.apply(deployment(NS, "web-3")).await;
    world
        .apply(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
        )
        .await;
    world
        .apply(
            json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "dynamic", "namespace": NS},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]},
                    "replicaScheduling": {"replicaSchedulingType": "Divided",
                        "replicaDivisionPreference": "Weighted",
                        "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}}}),
        )
        .await;
    world
        .apply(
            json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
            "metadata": {"name": "reader"},
            "spec": {"resourceSelectors": [{"apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRole", "name": "reader"}],
                "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}}}}),
        )
        .await;

    let bindings = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    let cluster_bindings = Api::<ClusterResourceBinding>::all(world.client.clone());
    let first = eventually("web divided by room: all on member1", || async {
        let binding = bindings.get_opt("web-deployment").await.expect("get rb")?;
        (targets(&binding) == BTreeMap::from([("member1".to_owned(), 2)])).then_some(binding)
    })
    .await;
    eventually("web-3 and the ClusterRole scheduled", || async {
        let web3 = bindings
            .get_opt("web-3-deployment")
            .await
            .expect("get rb")?;
        let role = cluster_bindings
            .get_opt("reader-clusterrole")
            .await
            .expect("get crb")?;
        (!web3.spec.clusters.is_empty() && !role.spec.clusters.is_empty()).then_some(())
    })
    .await;

    // member2 now has far more room, but a Divided binding is not moved by capacity alone
    // (Steady mode keeps what is placed).
    set_room(&world.client, &[("member1", 3), ("member2", 100)]).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let still = bindings.get("web-deployment").await.expect("get rb");
    assert_eq!(
        targets(&still),
        targets(&first),
        "no reschedule without a trigger"
    );

    let rebalancers = Api::<WorkloadRebalancer>::all(world.client.clone());
    world
        .apply(json!({"apiVersion": "apps.karmada.io/v1alpha1", "kind": "WorkloadRebalancer",
            "metadata": {"name": "move"},
            "spec": {"workloads": [
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"},
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-2", "namespace": NS},
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": NS}]}}))
        .await;
    let rebalancer = eventually("the rebalancer finished", || async {
        let r = rebalancers.get("move").await.expect("get rebalancer");
        r.status.finish_time.is_some().then_some(r)
    })
    .await;
    assert_eq!(
        observed(&rebalancer.status),
        [
            row("Deployment", "web", "Successful", ""),
            row("Deployment", "web-2", "Failed", "ReferencedBindingNotFound"),
            row("ClusterRole", "reader", "Successful", ""),
        ]
    );
    assert_eq!(rebalancer.status.observed_generation, 1);
    let created = rebalancer
        .metadata
        .creation_timestamp
        .clone()
        .expect("created");

    // The scheduler writes the placement, then its status (`lastScheduledTime`): wait for both.
    let moved = eventually("web rescheduled afresh onto member2", || async {
        let binding = bindings.get("web-deployment").await.expect("get rb");
        let scheduled = binding.status.as_ref()?.last_scheduled_time.clone()?;
        (targets(&binding) == BTreeMap::from([("member2".to_owned(), 2)])
            && scheduled.0 >= created.0)
            .then_some(binding)
    })
    .await;
    assert_eq!(moved.spec.reschedule_triggered_at, Some(created.clone()));
    eventually("the ClusterRole's binding rescheduled", || async {
        let role = cluster_bindings
            .get("reader-clusterrole")
            .await
            .expect("get crb");
        let scheduled = role.status.as_ref()?.last_scheduled_time.as_ref()?;
        (role.spec.reschedule_triggered_at.as_ref() == Some(&created) && scheduled.0 >= created.0)
            .then_some(())
    })
    .await;
    let untouched = bindings.get("web-3-deployment").await.expect("get rb");
    assert_eq!(
        untouched.spec.reschedule_triggered_at, None,
        "only the listed workloads"
    );

    // A new list: the success no longer listed stays, the failure goes, web-3 is added.
    rebalancers
        .patch(
            "move",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"workloads": [
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "reader"},
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-3", "namespace": NS}]}})),
        )
        .await
        .expect("workloads changed");
    let rebalancer = eventually("the new list observed", || async {
        let r = rebalancers.get("move").await.expect("get rebalancer");
        (r.status.observed_generation == 2).then_some(r)
    })
    .await;
    assert_eq!(
        observed(&rebalancer.status),
        [
            row("Deployment", "web", "Successful", ""),
            row("Deployment", "web-3", "Successful", ""),
            row("ClusterRole", "reader", "Successful", ""),
        ]
    );
    eventually("web-3 triggered", || async {
        let binding = bindings.get("web-3-deployment").await.expect("get rb");
        (binding.spec.reschedule_triggered_at.as_ref() == Some(&created)).then_some(())
    })
    .await;

    // With a TTL the finished rebalancer goes.
    rebalancers
        .patch(
            "move",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"ttlSecondsAfterFinished": 1}})),
        )
        .await
        .expect("ttl set");
    eventually("the rebalancer deleted after its TTL", || async {
        rebalancers
            .get_opt("move")
            .await
            .expect("get rebalancer")
            .is_none()
            .then_some(())
    })
    .await;
}

async fn label_cluster(client: &kube::Client, cluster: &str, value: &str) {
    Api::<Cluster>::all(client.clone())
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"group": value}}})),
        )
        .await
        .expect("cluster labelled");
}

/// The cluster and the clusterAffinities term of `web-deployment` once it settled there.
async fn placed_by_term(
    bindings: &Api<ResourceBinding>,
    cluster: &str,
    term: &str,
) -> ResourceBinding {
    eventually(&format!("web on {cluster} by {term}"), || async {
        let binding = bindings.get_opt("web-deployment").await.expect("get rb")?;
        let status = binding.status.as_ref()?;
        let names: Vec<&str> = binding
            .spec
            .clusters
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        (names == [cluster]
            && status.scheduler_observing_affinity_name == term
            && status.scheduler_observed_generation == binding.metadata.generation.unwrap_or(0))
        .then_some(binding)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebalancer_restarts_cluster_affinities_from_the_first_term() {
    const NS: &str = "affinities";
    let world = World::start(&["member1", "member2"]).await;
    world.run_controller(workload_rebalancer::start, ControllerOptions::default());
    label_cluster(&world.client, "member1", "ok").await;
    world
        .apply(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}))
        .await;
    world
        .apply(json!({"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "placement": {"clusterAffinities": [
                    {"affinityName": "group1", "labelSelector": {"matchLabels": {"group": "ok"}}},
                    {"affinityName": "group2", "clusterNames": ["member2"]}]}}}))
        .await;
    world.apply(deployment(NS, "web")).await;
    let bindings = Api::<ResourceBinding>::namespaced(world.client.clone(), NS);
    placed_by_term(&bindings, "member1", "group1").await;

    // group1 stops matching: the binding falls back to group2, and stays there when group1
    // matches again.
    label_cluster(&world.client, "member1", "not-ok").await;
    placed_by_term(&bindings, "member2", "group2").await;
    label_cluster(&world.client, "member1", "ok").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    placed_by_term(&bindings, "member2", "group2").await;

    world
        .apply(
            json!({"apiVersion": "apps.karmada.io/v1alpha1", "kind": "WorkloadRebalancer",
            "metadata": {"name": "back-to-first"},
            "spec": {"workloads": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": NS}]}}),
        )
        .await;
    let back = placed_by_term(&bindings, "member1", "group1").await;
    assert!(back.spec.reschedule_triggered_at.is_some());
}
