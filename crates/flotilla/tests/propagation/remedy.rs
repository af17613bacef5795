//! Remedy on the in-process control plane (Karmada's `remedy_test.go`): a Remedy's actions
//! appear in `Cluster.status.remedyActions` while the cluster's conditions match it, and go when
//! the condition recovers or the Remedy is deleted; a Remedy without decision matches acts at
//! once. The test plays the third-party system that reports the condition.

use flotilla_api::karmada::Cluster;
use flotilla_controllers::{ControllerOptions, remedy};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use crate::world::{World, eventually};

const DNS: &str = "ServiceDomainNameResolutionReady";
const TRAFFIC_CONTROL: &str = "TrafficControl";

/// Sets one condition of the cluster the way Karmada's e2e framework does: read, set (the
/// transition time moves with the status), write the status back; again on a conflict.
async fn set_condition(client: &kube::Client, cluster: &str, type_: &str, status: &str) {
    let api = Api::<Cluster>::all(client.clone());
    for _ in 0..10 {
        let mut current = api.get(cluster).await.expect("get cluster");
        let conditions = &mut current.status.get_or_insert_default().conditions;
        conditions.retain(|c| c.type_ != type_);
        conditions.push(
            serde_json::from_value(json!({"type": type_, "status": status, "reason": "Probe",
                "message": "", "lastTransitionTime": "2026-12-01T00:00:00Z"}))
            .expect("condition"),
        );
        match api
            .replace_status(cluster, &PostParams::default(), &current)
            .await
        {
            Ok(_) => return,
            Err(kube::Error::Api(e)) if e.code == 409 => continue,
            Err(error) => panic!("cluster status write failed: {error}"),
        }
    }
    panic!("cluster status write kept conflicting");
}

fn dns_remedy(name: &str, cluster: &str) -> Value {
    json!({"apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy",
        "metadata": {"name": name},
        "spec": {
            "clusterAffinity": {"clusterNames": [cluster]},
            "decisionMatches": [{"clusterConditionMatch": {
                "conditionType": DNS, "operator": "Equal", "conditionStatus": "False"}}],
            "actions": [TRAFFIC_CONTROL]}})
}

async fn actions(client: &kube::Client, cluster: &str) -> Vec<String> {
    Api::<Cluster>::all(client.clone())
        .get(cluster)
        .await
        .expect("get cluster")
        .status
        .map(|s| s.remedy_actions)
        .unwrap_or_default()
}

async fn wait_for_actions(client: &kube::Client, cluster: &str, wanted: &[&str]) -> Cluster {
    eventually(&format!("{cluster} remedy actions {wanted:?}"), || async {
        let current = Api::<Cluster>::all(client.clone())
            .get(cluster)
            .await
            .expect("get cluster");
        let actions = current
            .status
            .as_ref()
            .map(|s| s.remedy_actions.clone())
            .unwrap_or_default();
        (actions == wanted).then_some(current)
    })
    .await
}

async fn delete_remedy(world: &World, name: &str) {
    let api = Api::<flotilla_api::karmada::Remedy>::all(world.client.clone());
    api.delete(name, &DeleteParams::default())
        .await
        .expect("remedy deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_condition_turns_into_traffic_control_until_it_recovers() {
    let world = World::start(&["member1", "member2"]).await;
    world.run_controller(remedy::start, ControllerOptions::default());
    world.apply(dns_remedy("dns", "member1")).await;

    set_condition(&world.client, "member1", DNS, "False").await;
    set_condition(&world.client, "member2", DNS, "False").await;
    let member1 = wait_for_actions(&world.client, "member1", &[TRAFFIC_CONTROL]).await;
    // Only the field is written: what the cluster status controller and the prober reported
    // stays as it was.
    let status = member1.status.expect("status");
    assert_eq!(status.kubernetes_version, "v1.32.0");
    assert!(status.resource_summary.is_some());
    let types: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Ready", DNS]);

    set_condition(&world.client, "member1", DNS, "True").await;
    wait_for_actions(&world.client, "member1", &[]).await;
    // member2's condition failed too, but the Remedy names member1 only (its conditions were
    // queued before member1's recovery, so a wrong action would be there by now).
    assert!(actions(&world.client, "member2").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_remedy_withdraws_its_actions() {
    let world = World::start(&["member1"]).await;
    world.run_controller(remedy::start, ControllerOptions::default());
    world.apply(dns_remedy("dns", "member1")).await;
    set_condition(&world.client, "member1", DNS, "False").await;
    wait_for_actions(&world.client, "member1", &[TRAFFIC_CONTROL]).await;

    delete_remedy(&world, "dns").await;
    wait_for_actions(&world.client, "member1", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remedy_without_decision_matches_acts_at_once_until_deleted() {
    let world = World::start(&["member1", "member2"]).await;
    world.run_controller(remedy::start, ControllerOptions::default());
    // An empty list is not the same as none: Karmada's controller never acts on it. It is
    // created first, so when the other Remedy's action shows the empty one has been seen too.
    world
        .apply(
            json!({"apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy",
            "metadata": {"name": "empty-matches"},
            "spec": {"clusterAffinity": {"clusterNames": ["member1"]},
                "decisionMatches": [], "actions": ["IsolateSchedule"]}}),
        )
        .await;
    world
        .apply(
            json!({"apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy",
            "metadata": {"name": "immediate"},
            "spec": {"clusterAffinity": {"clusterNames": ["member1"]},
                "actions": [TRAFFIC_CONTROL]}}),
        )
        .await;
    wait_for_actions(&world.client, "member1", &[TRAFFIC_CONTROL]).await;

    delete_remedy(&world, "immediate").await;
    wait_for_actions(&world.client, "member1", &[]).await;

    // Without an affinity every cluster is looked at; actions of several Remedies are merged,
    // sorted and listed once.
    world
        .apply(
            json!({"apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy",
            "metadata": {"name": "everywhere"},
            "spec": {"actions": [TRAFFIC_CONTROL, "Alert", TRAFFIC_CONTROL]}}),
        )
        .await;
    wait_for_actions(&world.client, "member1", &["Alert", TRAFFIC_CONTROL]).await;
    wait_for_actions(&world.client, "member2", &["Alert", TRAFFIC_CONTROL]).await;
    delete_remedy(&world, "everywhere").await;
    wait_for_actions(&world.client, "member1", &[]).await;
    wait_for_actions(&world.client, "member2", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_written_by_someone_else_are_put_right() {
    let world = World::start(&["member1"]).await;
    world.run_controller(remedy::start, ControllerOptions::default());
    world.apply(dns_remedy("dns", "member1")).await;
    set_condition(&world.client, "member1", DNS, "False").await;
    wait_for_actions(&world.client, "member1", &[TRAFFIC_CONTROL]).await;

    // A writer that replaces the whole status without the field (as a stale full-status update
    // would) does not make the action disappear for good.
    let api = Api::<Cluster>::all(world.client.clone());
    let mut current = api.get("member1").await.expect("get cluster");
    if let Some(status) = current.status.as_mut() {
        status.remedy_actions.clear();
    }
    let cleared = api
        .replace_status("member1", &PostParams::default(), &current)
        .await
        .expect("status replaced");
    let cleared_at = revision(&cleared);
    eventually("member1 TrafficControl written again", || async {
        let now = api.get("member1").await.expect("get cluster");
        let restored = now
            .status
            .as_ref()
            .is_some_and(|s| s.remedy_actions == [TRAFFIC_CONTROL]);
        (revision(&now) > cleared_at && restored).then_some(())
    })
    .await;
}

fn revision(cluster: &Cluster) -> u64 {
    cluster
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .expect("numeric resourceVersion")
}
