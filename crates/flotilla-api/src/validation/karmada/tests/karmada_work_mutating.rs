//! Karmada's Work mutating webhook cases (`pkg/webhook/work/mutating_test.go`), restated
//! against Work admission defaults: the Work gets a permanent id, and each manifest is pruned,
//! records its managed annotation and label keys and carries the Work's id.
//! `Handle_DecodeError_DeniesAdmission` (a decoder failing) is Go plumbing and not restated.

use serde_json::{Value, json};

use super::*;

const ID: &str = "11111111-2222-3333-4444-555555555555";

/// The Deployment of Karmada's full-coverage case as Go's JSON encoder writes it (empty
/// `labels` omitted, zero-valued structs such as `strategy`, `resources` and `status` kept).
fn go_encoded_deployment() -> Value {
    json!({"kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {
            "name": "test-deployment",
            "namespace": "test-namespace",
            "selfLink": "/apis/apps/v1/namespaces/test-namespace/deployments/test-deployment",
            "uid": "abcd-1234-efgh-5678",
            "resourceVersion": "123456",
            "generation": 2,
            "creationTimestamp": "2024-01-01T12:00:00Z",
            "deletionGracePeriodSeconds": 30,
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": "owner-deployment", "uid": "owner-uid-1234"}],
            "finalizers": ["foregroundDeletion"],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Apply",
                "apiVersion": "apps/v1"}]},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "test"}},
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "test"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:stable-alpine-perl",
                    "ports": [{"containerPort": 80}], "resources": {}}]}},
            "strategy": {}},
        "status": {}})
}

#[test]
fn a_created_work_gets_an_id_and_its_manifest_is_pruned_and_stamped() {
    let work = defaulted(
        Kind::Work,
        json!({"metadata": {"name": "test-work", "namespace": "test-namespace", "labels": {}},
            "spec": {"workload": {"manifests": [go_encoded_deployment()]}}}),
    );
    assert_eq!(work["metadata"]["labels"], json!({WORK_PERMANENT_ID: ID}));
    let mut want = go_encoded_deployment();
    want.as_object_mut().expect("object").remove("status");
    want["metadata"] = json!({
        "name": "test-deployment",
        "namespace": "test-namespace",
        "annotations": {
            MANAGED_ANNOTATIONS: "resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",
            MANAGED_LABELS: "work.karmada.io/permanent-id"},
        "labels": {WORK_PERMANENT_ID: ID}});
    assert_eq!(work["spec"]["workload"]["manifests"], json!([want]));
}

#[test]
fn a_work_keeps_its_id_and_an_empty_one_is_replaced() {
    for (given, kept) in [("work-id-1", "work-id-1"), ("", ID)] {
        for create in [true, false] {
            let mut work = json!({"metadata": {"name": "w", "labels": {WORK_PERMANENT_ID: given}},
                "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "c", "labels": {WORK_PERMANENT_ID: "stale"}}}]}}});
            default_object(Kind::Work, &mut work, &ctx(create));
            assert_eq!(
                work["metadata"]["labels"][WORK_PERMANENT_ID], kept,
                "{given:?}"
            );
            // The manifest carries the Work's id, whatever it had.
            let manifest = &work["spec"]["workload"]["manifests"][0];
            assert_eq!(manifest["metadata"]["labels"][WORK_PERMANENT_ID], kept);
        }
    }
}

#[test]
fn managed_key_lists_are_sorted_and_include_the_bookkeeping_keys() {
    let work = defaulted(
        Kind::Work,
        json!({"metadata": {"name": "w"}, "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
                "labels": {"z": "1", "a": "2"},
                "annotations": {"y": "1", "b": "2",
                    MANAGED_ANNOTATIONS: "old", MANAGED_LABELS: "old"}}}]}}}),
    );
    let annotations = &work["spec"]["workload"]["manifests"][0]["metadata"]["annotations"];
    assert_eq!(
        annotations[MANAGED_ANNOTATIONS],
        "b,resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels,y"
    );
    assert_eq!(
        annotations[MANAGED_LABELS],
        "a,work.karmada.io/permanent-id,z"
    );
}

#[test]
fn every_manifest_of_a_work_is_pruned() {
    let work = defaulted(
        Kind::Work,
        json!({"metadata": {"name": "w"}, "spec": {"workload": {"manifests": [
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "uid": "u1"},
                "spec": {"clusterIP": "10.0.0.1"}},
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "uid": "u2"},
                "spec": {"ttlSecondsAfterFinished": 100}}]}}}),
    );
    let manifests = &work["spec"]["workload"]["manifests"];
    assert_eq!(manifests[0]["spec"], json!({}));
    assert_eq!(manifests[1]["spec"], json!({}));
    for manifest in manifests.as_array().expect("manifests") {
        assert!(manifest["metadata"].get("uid").is_none());
        assert_eq!(manifest["metadata"]["labels"][WORK_PERMANENT_ID], ID);
    }
}
