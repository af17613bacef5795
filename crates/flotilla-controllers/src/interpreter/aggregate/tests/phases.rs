//! Pod, PersistentVolume and PersistentVolumeClaim: phases from the members' phases.

use serde_json::{Value, json};

use super::{aggregate_status, item};

/// The aggregated status of a `kind` template whose members report `phases` (`None`: no
/// collected status; `Some("")`: a status without a phase).
fn status_of(kind: &str, old: Value, phases: &[Option<&str>]) -> Value {
    let template = json!({"apiVersion": "v1", "kind": kind, "status": old});
    let items: Vec<_> = phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let status = p.map(|p| {
                if p.is_empty() {
                    json!({})
                } else {
                    json!({"phase": p})
                }
            });
            item(&i.to_string(), status)
        })
        .collect();
    aggregate_status(&template, &items).expect("hook")
}

fn phase(kind: &str, phases: &[Option<&str>]) -> Value {
    status_of(kind, json!({}), phases)
        .get("phase")
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn pod_phase_comes_from_the_member_phases() {
    let pod = |phases: &[Option<&str>]| phase("Pod", phases);
    assert_eq!(pod(&[Some("Running"), Some("Running")]), "Running");
    assert_eq!(pod(&[Some("Running"), None]), "Pending");
    assert_eq!(pod(&[Some("Succeeded"), Some("Failed")]), "Failed");
    assert_eq!(pod(&[Some("Succeeded"), Some("Succeeded")]), "Succeeded");
    assert_eq!(pod(&[Some("Running"), Some("Succeeded")]), "Running");
    // Unknown (deprecated) and phases Karmada does not know are ignored.
    assert_eq!(pod(&[Some("Running"), Some("Unknown")]), "Running");
    assert_eq!(pod(&[Some("Succeeded"), Some("")]), "Succeeded");
    assert_eq!(pod(&[Some("Unknown")]), Value::Null);
    assert_eq!(pod(&[Some("")]), Value::Null);
}

#[test]
fn pod_status_is_replaced_with_ready_and_state_of_each_container() {
    let template = json!({"apiVersion": "v1", "kind": "Pod",
        "status": {"phase": "Pending", "podIP": "10.0.0.1", "qosClass": "BestEffort",
            "conditions": [{"type": "Ready", "status": "False"}]}});
    let running = json!({"running": {"startedAt": "2026-01-01T00:00:00Z"}});
    let member = json!({"phase": "Running", "podIP": "10.1.0.1",
        "containerStatuses": [{"name": "web", "image": "nginx", "imageID": "sha",
            "containerID": "containerd://1", "restartCount": 2, "started": true,
            "ready": true, "state": running,
            "lastState": {"terminated": {"exitCode": 1}}}],
        "initContainerStatuses": [{"name": "init", "ready": false,
            "state": {"terminated": {"exitCode": 0}}}]});
    let status = aggregate_status(
        &template,
        &[
            item("a", Some(member)),
            item("b", Some(json!({"phase": "Running"}))),
        ],
    )
    .expect("hook");
    // Go writes the fields of ContainerStatus that have no `omitempty`, left empty.
    let reduced = |ready: bool, state: Value| {
        json!({"name": "", "state": state, "lastState": {}, "ready": ready,
            "restartCount": 0, "image": "", "imageID": ""})
    };
    assert_eq!(
        status,
        json!({"phase": "Running",
            "containerStatuses": [reduced(true, running)],
            "initContainerStatuses": [reduced(false, json!({"terminated": {"exitCode": 0}}))]})
    );
}

#[test]
fn pod_status_is_emptied_while_no_member_is_listed() {
    let old = json!({"phase": "Running", "qosClass": "BestEffort"});
    assert_eq!(status_of("Pod", old, &[]), json!({}));
}

#[test]
fn persistent_volume_phase_by_precedence() {
    let pv = |phases: &[Option<&str>]| phase("PersistentVolume", phases);
    assert_eq!(pv(&[Some("Available"), Some("Available")]), "Available");
    assert_eq!(pv(&[Some("Released"), Some("Released")]), "Released");
    assert_eq!(pv(&[Some("Bound"), Some("Released")]), "Bound");
    assert_eq!(pv(&[Some("Available"), Some("Bound")]), "Available");
    assert_eq!(pv(&[Some("Available"), Some("Pending")]), "Pending");
    assert_eq!(pv(&[Some("Pending"), Some("Failed")]), "Failed");
    assert_eq!(pv(&[Some("Bound"), None]), "Pending");
    assert_eq!(pv(&[Some("Bound"), Some("")]), "Bound");
    assert_eq!(pv(&[Some("")]), Value::Null);
    // A new status: the template's own fields are not kept.
    assert_eq!(
        status_of(
            "PersistentVolume",
            json!({"phase": "Pending", "message": "waiting"}),
            &[Some("Bound")]
        ),
        json!({"phase": "Bound"})
    );
}

#[test]
fn pvc_phase_starts_bound_and_skips_members_without_status() {
    let pvc = |phases: &[Option<&str>]| phase("PersistentVolumeClaim", phases);
    assert_eq!(pvc(&[Some("Bound"), Some("Bound")]), "Bound");
    assert_eq!(pvc(&[Some("Bound"), Some("Lost")]), "Lost");
    assert_eq!(pvc(&[Some("Lost"), Some("Pending")]), "Lost");
    assert_eq!(pvc(&[Some("Bound"), Some("Pending")]), "Pending");
    // Members without a collected status are skipped; no member at all ⇒ Bound.
    assert_eq!(pvc(&[Some("Bound"), None]), "Bound");
    assert_eq!(pvc(&[None]), "Bound");
    assert_eq!(pvc(&[]), "Bound");
    // The last phase other than Bound wins, an empty one (written as no phase) included.
    assert_eq!(
        pvc(&[Some("Pending"), Some("Bound"), Some("")]),
        Value::Null
    );
    assert_eq!(pvc(&[Some(""), Some("Pending")]), "Pending");
    // A new status: capacity and access modes of the template are not kept.
    assert_eq!(
        status_of(
            "PersistentVolumeClaim",
            json!({"phase": "Pending", "capacity": {"storage": "1Gi"}}),
            &[Some("Bound")]
        ),
        json!({"phase": "Bound"})
    );
}
