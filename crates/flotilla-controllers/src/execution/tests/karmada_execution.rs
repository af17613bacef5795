//! Karmada's `execution_controller_test.go` (`pkg/controllers/execution`) restated against the
//! execution controller's pure decisions: the `Dispatching` condition and its event
//! (`dispatching_condition`), what a deleting Work does to its member objects (`cleanup_for`),
//! `workKeyFromWorkload` (`work_key_from_workload`) and the member events that re-apply a Work
//! (`requeue_after_change` for `onAdd`/`onUpdate`, `requeue_after_delete` for `onDelete`).

use flotilla_api::karmada::Work;
use serde_json::Value;

use super::drift::{Seen, observed, work_key_from_workload};
use super::*;

const WORK_NS: &str = "karmada-es-cluster";
const WORK_NAME: &str = "work";

fn work(spec: Value, conditions: Value) -> Work {
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha1", "kind": "Work",
        "metadata": {"name": WORK_NAME, "namespace": WORK_NS},
        "spec": spec,
        "status": {"conditions": conditions},
    }))
    .expect("a work")
}

fn cluster(ready: &str, deleting: bool) -> Cluster {
    let mut metadata = json!({"name": "cluster"});
    if deleting {
        metadata["deletionTimestamp"] = json!("2026-12-01T00:00:00Z");
        metadata["finalizers"] = json!(["karmada.io/cluster-controller"]);
    }
    serde_json::from_value(json!({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": metadata,
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": ready, "reason": "R",
            "message": "m", "lastTransitionTime": "2026-12-01T00:00:00Z"}]},
    }))
    .expect("a cluster")
}

#[test]
fn a_suspended_work_gets_a_false_dispatching_condition_once() {
    let suspended = json!({"suspendDispatching": true});
    let wanted = dispatching_condition(&work(suspended.clone(), json!([]))).expect("written");
    assert_eq!(
        (
            wanted.type_.as_str(),
            wanted.status.as_str(),
            wanted.reason.as_str(),
            wanted.message.as_str()
        ),
        (
            "Dispatching",
            "False",
            "SuspendDispatching",
            // Also the note of the `Normal WorkDispatching` event.
            "Work dispatching is in a suspended state."
        )
    );
    // An existing `Dispatching=True` is overwritten.
    let dispatching = json!([{"type": "Dispatching", "status": "True", "reason": "Dispatching",
        "message": "", "lastTransitionTime": "2026-12-01T00:00:00Z"}]);
    let overwritten = dispatching_condition(&work(suspended.clone(), dispatching.clone()));
    assert_eq!(overwritten.map(|c| c.status), Some("False".to_owned()));
    // Already False: nothing written, no event.
    let already = json!([{"type": "Dispatching", "status": "False", "reason": "Other",
        "message": "", "lastTransitionTime": "2026-12-01T00:00:00Z"}]);
    assert!(dispatching_condition(&work(suspended, already)).is_none());
    // Not suspended: True, unless it is already.
    let resumed = dispatching_condition(&work(json!({}), json!([]))).expect("written");
    assert_eq!(
        (
            resumed.status.as_str(),
            resumed.reason.as_str(),
            resumed.message.as_str()
        ),
        (
            "True",
            "Dispatching",
            "Work is being dispatched to member clusters."
        )
    );
    assert!(dispatching_condition(&work(json!({}), dispatching)).is_none());
}

#[test]
fn a_deleting_work_deletes_its_member_objects_unless_told_to_preserve_them() {
    let ready = cluster("True", false);
    let rows = [
        (
            "preserveResourcesOnDeletion=true",
            json!({"preserveResourcesOnDeletion": true}),
            Cleanup::Release,
        ),
        (
            "preserveResourcesOnDeletion=false",
            json!({"preserveResourcesOnDeletion": false}),
            Cleanup::Delete,
        ),
        (
            "preserveResourcesOnDeletion unset",
            json!({}),
            Cleanup::Delete,
        ),
        // Deletion comes before the suspension check.
        (
            "suspended",
            json!({"suspendDispatching": true}),
            Cleanup::Delete,
        ),
    ];
    for (desc, spec, want) in rows {
        let got = cleanup_for(&work(spec, json!([])), &ready).expect(desc);
        assert_eq!(got, Some(want), "{desc}");
    }
    // An unready cluster: retried, unless the cluster itself is going away.
    let unready = cluster("False", false);
    assert!(matches!(
        cleanup_for(&work(json!({}), json!([])), &unready),
        Err(SyncError::ClusterNotReady(name)) if name == "cluster"
    ));
    let leaving = cluster("False", true);
    assert_eq!(
        cleanup_for(&work(json!({}), json!([])), &leaving).ok(),
        Some(None)
    );
    assert_eq!(
        cleanup_for(
            &work(json!({"preserveResourcesOnDeletion": true}), json!([])),
            &unready
        )
        .ok(),
        Some(Some(Cleanup::Release))
    );
}

/// A member Pod as Karmada's tests build it: managed, naming the Work, at `version`.
fn pod(version: &str, spec: Option<Value>, status: Option<Value>) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "test", "namespace": "default", "resourceVersion": version,
            "labels": {"karmada.io/managed": "true"},
            "annotations": {"work.karmada.io/namespace": WORK_NS, "work.karmada.io/name": WORK_NAME}}});
    if let Some(spec) = spec {
        pod["spec"] = spec;
    }
    if let Some(status) = status {
        pod["status"] = status;
    }
    pod
}

fn object(value: Value) -> kube::api::DynamicObject {
    serde_json::from_value(value).expect("an object")
}

fn seen(object: &kube::api::DynamicObject) -> Seen {
    observed("cluster", object)
}

fn the_work() -> Option<WorkKey> {
    Some(WorkKey {
        namespace: WORK_NS.into(),
        name: WORK_NAME.into(),
    })
}

#[test]
fn only_managed_objects_naming_both_work_fields_lead_to_a_work() {
    let with = |labels: Value, annotations: Value| {
        let mut pod = pod("1", None, None);
        pod["metadata"]["labels"] = labels;
        pod["metadata"]["annotations"] = annotations;
        work_key_from_workload(&object(pod))
    };
    let managed = json!({"karmada.io/managed": "true"});
    let rows = [
        (
            "not managed",
            Value::Null,
            json!({"work.karmada.io/namespace": WORK_NS, "work.karmada.io/name": WORK_NAME}),
            None,
        ),
        (
            "managed, no annotations",
            managed.clone(),
            Value::Null,
            None,
        ),
        (
            "no name",
            managed.clone(),
            json!({"work.karmada.io/namespace": WORK_NS}),
            None,
        ),
        (
            "no namespace",
            managed.clone(),
            json!({"work.karmada.io/name": WORK_NAME}),
            None,
        ),
        (
            "empty name",
            managed.clone(),
            json!({"work.karmada.io/namespace": WORK_NS, "work.karmada.io/name": ""}),
            None,
        ),
        (
            "both",
            managed,
            json!({"work.karmada.io/namespace": WORK_NS, "work.karmada.io/name": WORK_NAME}),
            the_work(),
        ),
    ];
    for (desc, labels, annotations, want) in rows {
        assert_eq!(with(labels, annotations), want, "{desc}");
    }
}

/// `onAdd`: an object seen for the first time (a list, a watch, or one entering the managed
/// selector) re-applies its Work when its version is not the one Flotilla wrote.
#[test]
fn an_added_object_is_reapplied_only_when_its_version_is_not_ours() {
    let added = object(pod("v2", None, None));
    let now = seen(&added);
    let rows = [
        ("version changed", Some("v1"), the_work()),
        ("no version recorded yet", None, None),
        ("version is the recorded one", Some("v2"), None),
    ];
    for (desc, recorded, want) in rows {
        assert_eq!(
            requeue_after_change("cluster", &added, None, &now, recorded),
            want,
            "{desc}"
        );
    }
}

/// `onUpdate`, with Flotilla's last-seen state standing for Karmada's old object.
#[test]
fn a_changed_object_is_reapplied_for_real_edits_to_the_work_it_named_before() {
    let node = |n: &str| Some(json!({"nodeName": n}));
    let phase = |p: &str| Some(json!({"phase": p}));
    let relabelled = |mut pod: Value, labels: Value| {
        pod["metadata"]["labels"] = labels;
        pod
    };
    let reannotated = |mut pod: Value, annotations: Value| {
        pod["metadata"]["annotations"] = annotations;
        pod
    };
    type Row = (
        &'static str,
        Value,
        Value,
        Option<&'static str>,
        Option<WorkKey>,
    );
    let rows: Vec<Row> = vec![
        (
            "not managed before",
            relabelled(pod("v1", None, None), Value::Null),
            relabelled(pod("v2", node("n1"), None), Value::Null),
            Some("v1"),
            None,
        ),
        (
            "no Work annotations before",
            reannotated(pod("v1", None, None), Value::Null),
            reannotated(pod("v2", node("n1"), None), Value::Null),
            Some("v1"),
            None,
        ),
        (
            "no version recorded",
            pod("v1", None, None),
            pod("v2", node("n1"), None),
            None,
            None,
        ),
        (
            "our own write",
            pod("v1", None, None),
            pod("v1", node("n2"), None),
            Some("v1"),
            None,
        ),
        (
            "identical",
            pod("v2", node("n1"), None),
            pod("v2", node("n1"), None),
            Some("v1"),
            None,
        ),
        (
            "status only",
            pod("v2", node("n1"), phase("Pending")),
            pod("v3", node("n1"), phase("Running")),
            Some("v1"),
            None,
        ),
        (
            "spec edited",
            pod("v2", node("n1"), None),
            pod("v3", node("n2"), None),
            Some("v1"),
            the_work(),
        ),
        (
            "managed label removed",
            pod("v2", None, None),
            relabelled(pod("v3", None, None), Value::Null),
            Some("v1"),
            the_work(),
        ),
        (
            "Work annotations removed",
            pod("v2", None, None),
            reannotated(pod("v3", None, None), Value::Null),
            Some("v1"),
            the_work(),
        ),
        (
            "Work annotations pointed elsewhere",
            pod("v2", None, None),
            reannotated(
                pod("v3", None, None),
                json!({"work.karmada.io/namespace": "karmada-es-another-cluster",
                    "work.karmada.io/name": "another-work"}),
            ),
            Some("v1"),
            the_work(),
        ),
    ];
    for (desc, old, cur, recorded, want) in rows {
        let (old, cur) = (object(old), object(cur));
        let got = requeue_after_change("cluster", &cur, Some(&seen(&old)), &seen(&cur), recorded);
        assert_eq!(got, want, "{desc}");
    }
}

#[test]
fn a_deleted_object_reapplies_its_work() {
    let gone = object(pod("v2", None, None));
    assert_eq!(requeue_after_delete("cluster", &gone, None), the_work());
    assert_eq!(
        requeue_after_delete("cluster", &gone, Some(&seen(&gone))),
        the_work()
    );
    // Leaving the managed selector looks like a deletion of the unlabelled object.
    let mut unlabelled = pod("v3", None, None);
    unlabelled["metadata"]["labels"] = Value::Null;
    let unlabelled = object(unlabelled);
    assert_eq!(
        requeue_after_delete("cluster", &unlabelled, Some(&seen(&gone))),
        the_work()
    );
    // A Work of another cluster is not this cluster's to repair.
    assert_eq!(requeue_after_delete("elsewhere", &gone, None), None);
}
