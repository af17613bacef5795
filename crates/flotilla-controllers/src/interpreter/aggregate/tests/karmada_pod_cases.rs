//! The cases of Karmada's `aggregatestatus_test.go` (pkg/resourceinterpreter/default/native)
//! for Pod, PersistentVolume, PersistentVolumeClaim and PodDisruptionBudget: the same inputs,
//! Karmada's expected status.

use serde_json::{Value, json};

use super::{aggregate_status, item};

const STARTED: &str = "2022-06-05T10:00:00Z";

/// The aggregated status of a `kind` template (status `old`) whose members report `statuses`
/// (`None`: not collected yet), named `member1`, `member2`… as in Karmada's tables.
fn aggregated(kind: &str, old: Value, statuses: &[Option<Value>]) -> Value {
    let api_version = if kind == "PodDisruptionBudget" {
        "policy/v1"
    } else {
        "v1"
    };
    let template = json!({"apiVersion": api_version, "kind": kind, "status": old});
    let items: Vec<_> = statuses
        .iter()
        .enumerate()
        .map(|(i, s)| item(&format!("member{}", i + 1), s.clone()))
        .collect();
    aggregate_status(&template, &items).expect("the kind has a hook")
}

/// A full member container status, as a kubelet reports it.
fn member_container(ready: bool, state: Value, id: &str) -> Value {
    json!({"name": "busybox-2", "containerID": format!("containerd://{id}"),
        "image": "nginx:latest", "imageID": "docker.io/library/import-2022-06-05@sha256:dfb593",
        "ready": ready, "restartCount": 0, "started": true, "state": state})
}

/// What Karmada keeps of a container status: `ready` and `state`, the rest Go's zero values.
fn reduced(ready: bool, state: Value) -> Value {
    json!({"name": "", "state": state, "lastState": {}, "ready": ready, "restartCount": 0,
        "image": "", "imageID": ""})
}

fn running() -> Value {
    json!({"running": {"startedAt": STARTED}})
}

fn pod_member(phase: &str, containers: Value) -> Option<Value> {
    Some(json!({"phase": phase, "containerStatuses": containers}))
}

#[test]
fn pod_init_container_statuses_are_reduced_to_ready_and_state() {
    let waiting = json!({"waiting": {"reason": "PodInitializing"}});
    let member = json!({"phase": "Pending", "initContainerStatuses": [
        reduced(false, waiting.clone()), reduced(false, running())]});
    assert_eq!(
        aggregated("Pod", json!({}), &[Some(member)]),
        json!({"phase": "Pending",
            "initContainerStatuses": [reduced(false, waiting), reduced(false, running())]})
    );
}

#[test]
fn pod_container_statuses_of_all_members_are_listed() {
    let members = [
        pod_member(
            "Running",
            json!([member_container(true, running(), "6cee")]),
        ),
        pod_member(
            "Running",
            json!([member_container(true, running(), "b373")]),
        ),
    ];
    let expected = json!({"phase": "Running",
        "containerStatuses": [reduced(true, running()), reduced(true, running())]});
    assert_eq!(aggregated("Pod", json!({}), &members), expected);
    // Up to date.
    assert_eq!(aggregated("Pod", expected.clone(), &members), expected);
    // One member's Pod is still pending.
    let members = [
        pod_member(
            "Running",
            json!([member_container(true, running(), "6cee")]),
        ),
        pod_member(
            "Pending",
            json!([member_container(false, running(), "b373")]),
        ),
    ];
    assert_eq!(
        aggregated("Pod", expected, &members),
        json!({"phase": "Pending",
            "containerStatuses": [reduced(true, running()), reduced(false, running())]})
    );
}

#[test]
fn pod_phase_follows_karmadas_precedence() {
    let failed = json!({"terminated": {"exitCode": 125}});
    let succeeded = json!({"terminated": {"exitCode": 0}});
    let running_member = pod_member("Running", json!([reduced(true, running())]));
    // Running + Failed ⇒ Failed.
    assert_eq!(
        aggregated(
            "Pod",
            json!({}),
            &[
                running_member.clone(),
                pod_member("Failed", json!([reduced(false, failed.clone())]))
            ]
        ),
        json!({"phase": "Failed",
            "containerStatuses": [reduced(true, running()), reduced(false, failed)]})
    );
    // Running + Succeeded ⇒ Running.
    assert_eq!(
        aggregated(
            "Pod",
            json!({}),
            &[
                running_member.clone(),
                pod_member("Succeeded", json!([reduced(false, succeeded.clone())]))
            ]
        ),
        json!({"phase": "Running",
            "containerStatuses": [reduced(true, running()), reduced(false, succeeded)]})
    );
    // Running + not collected ⇒ Pending.
    assert_eq!(
        aggregated("Pod", json!({}), &[running_member, None]),
        json!({"phase": "Pending", "containerStatuses": [reduced(true, running())]})
    );
}

fn phases(kind: &str, old: Value, member_phases: &[&str]) -> Value {
    let statuses: Vec<_> = member_phases
        .iter()
        .map(|p| Some(json!({"phase": p})))
        .collect();
    aggregated(kind, old, &statuses)
}

#[test]
fn pvc_phase_is_bound_unless_a_member_lost_or_waits_for_it() {
    let rows = [
        (["Bound", "Bound"], "Bound"),
        (["Bound", "Lost"], "Lost"),
        (["Bound", "Pending"], "Pending"),
    ];
    for (members, expected) in rows {
        assert_eq!(
            phases("PersistentVolumeClaim", json!({}), &members),
            json!({"phase": expected}),
            "{members:?}"
        );
    }
    let bound = json!({"phase": "Bound"});
    assert_eq!(
        phases("PersistentVolumeClaim", bound.clone(), &["Bound", "Bound"]),
        bound
    );
}

#[test]
fn pv_phase_follows_karmadas_precedence() {
    let rows = [
        (["Available", "Available"], "Available"),
        (["Released", "Released"], "Released"),
        (["Bound", "Released"], "Bound"),
        (["Released", "Failed"], "Failed"),
        (["Available", "Pending"], "Pending"),
    ];
    for (members, expected) in rows {
        assert_eq!(
            phases("PersistentVolume", json!({}), &members),
            json!({"phase": expected}),
            "{members:?}"
        );
    }
    let available = json!({"phase": "Available"});
    assert_eq!(
        phases(
            "PersistentVolume",
            available.clone(),
            &["Available", "Available"]
        ),
        available
    );
}

#[test]
fn pdb_counters_are_summed_and_disrupted_pods_named_per_cluster() {
    let healthy = json!({"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 1,
        "expectedPods": 1});
    let summed = json!({"currentHealthy": 2, "desiredHealthy": 2, "disruptionsAllowed": 2,
        "expectedPods": 2});
    let members = [Some(healthy.clone()), Some(healthy.clone())];
    assert_eq!(
        aggregated("PodDisruptionBudget", healthy.clone(), &members),
        summed
    );
    // Up to date.
    assert_eq!(
        aggregated("PodDisruptionBudget", summed.clone(), &members),
        summed
    );
    let evicted = "2024-05-06T07:08:09Z";
    let unhealthy = json!({"currentHealthy": 0, "desiredHealthy": 1, "disruptionsAllowed": 0,
        "expectedPods": 1, "disruptedPods": {"pod-1234": evicted}});
    assert_eq!(
        aggregated(
            "PodDisruptionBudget",
            healthy,
            &[Some(unhealthy.clone()), Some(unhealthy)]
        ),
        json!({"currentHealthy": 0, "desiredHealthy": 2, "disruptionsAllowed": 0,
            "expectedPods": 2,
            "disruptedPods": {"member1/pod-1234": evicted, "member2/pod-1234": evicted}})
    );
}
