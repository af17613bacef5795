use serde_json::json;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::apply::{allow_update, unchanged};
use super::*;

// Karmada's execution-controller cases (`execution_controller_test.go`), restated.
mod karmada_execution;

#[test]
fn only_managed_objects_or_overwrite_may_be_updated() {
    let unmanaged = json!({"metadata": {"name": "web", "labels": {"app": "web"}}});
    let managed = json!({"metadata": {"name": "web", "labels": {"karmada.io/managed": "true"}}});
    let abort = json!({"metadata": {"name": "web",
        "annotations": {"work.karmada.io/conflict-resolution": "abort"}}});
    let overwrite = json!({"metadata": {"name": "web",
        "annotations": {"work.karmada.io/conflict-resolution": "overwrite"}}});
    assert!(!allow_update(&abort, &unmanaged));
    assert!(allow_update(&overwrite, &unmanaged));
    assert!(allow_update(&abort, &managed));
    assert!(!allow_update(&json!({"metadata": {}}), &unmanaged));
}

#[test]
fn not_managed_message_is_karmadas() {
    let error = ApplyError::NotManaged {
        kind: "Deployment".into(),
        namespace: "default".into(),
        name: "web".into(),
        cluster: "member1".into(),
    };
    assert_eq!(
        error.to_string(),
        "resource(kind=Deployment, default/web) already exists in the cluster member1 and the \
         work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource"
    );
}

#[test]
fn a_member_object_equal_to_the_retained_manifest_needs_no_write() {
    let observed = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "resourceVersion": "9", "uid": "u",
            "creationTimestamp": "2026-12-01T00:00:00Z", "labels": {"karmada.io/managed": "true"},
            "managedFields": [{"manager": "x"}]},
        "data": {"k": "v"}});
    let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "labels": {"karmada.io/managed": "true"}},
        "data": {"k": "v"}});
    let mut desired = manifest.clone();
    crate::interpreter::retain::retain(&mut desired, &observed).expect("retains");
    assert!(unchanged(&desired, &observed));
    let mut edited = observed.clone();
    edited["data"]["k"] = json!("edited in the member");
    let mut desired = manifest.clone();
    crate::interpreter::retain::retain(&mut desired, &edited).expect("retains");
    assert!(!unchanged(&desired, &edited));
}

#[test]
fn conditions_move_their_transition_time_only_on_status_changes() {
    let at = |s: i64| Time(jiff::Timestamp::from_second(s).expect("valid"));
    let mut conditions = Vec::new();
    let mut applied = condition(WORK_APPLIED, "True", "AppliedSuccessful", "ok");
    applied.last_transition_time = at(10);
    assert!(set_status_condition(&mut conditions, applied.clone()));
    applied.last_transition_time = at(20);
    assert!(!set_status_condition(&mut conditions, applied.clone()));
    assert_eq!(conditions[0].last_transition_time, at(10));
    let mut failed = condition(WORK_APPLIED, "False", "AppliedFailed", "boom");
    failed.last_transition_time = at(30);
    assert!(set_status_condition(&mut conditions, failed));
    assert_eq!(conditions.len(), 1);
    assert_eq!(conditions[0].last_transition_time, at(30));
    assert_eq!(conditions[0].reason, "AppliedFailed");
}

#[test]
fn aggregated_errors_read_like_go() {
    assert_eq!(aggregate(&["a".into()]), "a");
    assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
}

#[test]
fn aggregated_errors_mention_a_repeated_message_once() {
    let same = ["boom".to_owned(), "boom".to_owned()];
    assert_eq!(aggregate(&same), "boom");
    let mixed = ["a".to_owned(), "b".to_owned(), "a".to_owned()];
    assert_eq!(aggregate(&mixed), "[a, b]");
}

#[test]
fn template_sync_notes_name_the_object_as_karmada_does() {
    let namespaced = json!({"metadata": {"name": "web", "namespace": "default"}});
    let cluster_scoped = json!({"metadata": {"name": "viewer"}});
    assert_eq!(
        applied_note(&namespaced, "m1"),
        "Successfully applied resource(default/web) to cluster m1"
    );
    assert_eq!(
        applied_note(&cluster_scoped, "m1"),
        "Successfully applied resource(/viewer) to cluster m1"
    );
    assert_eq!(
        apply_failed_note(&namespaced, "m1", &"boom"),
        "Failed to create or update resource(default/web) in member cluster(m1): boom"
    );
    assert_eq!(
        apply_failed_note(&cluster_scoped, "m1", &"boom"),
        "Failed to create or update resource(viewer) in member cluster(m1): boom"
    );
}

#[test]
fn work_sync_note_is_karmadas() {
    let key = WorkKey {
        namespace: "karmada-es-m1".into(),
        name: "web-687f7fb96f".into(),
    };
    assert_eq!(
        synced_note(&key, "m1"),
        "Sync work(karmada-es-m1/web-687f7fb96f) to cluster(m1) successful."
    );
}
