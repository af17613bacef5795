//! Karmada's `TestRemoveIrrelevantField` (`pkg/resourceinterpreter/default/native/prune`),
//! restated against [`prune_manifest`]: the fields a manifest loses before it goes into a Work
//! (Karmada's callers always add `RemoveJobTTLSeconds`, as Flotilla always does), plus the
//! conditions the pruner checks that the table leaves out.

use serde_json::{Map, Value, json};

use super::*;

fn pruned(manifest: Value) -> Value {
    let Value::Object(mut object) = manifest else {
        panic!("a manifest is an object");
    };
    prune_manifest(&mut object);
    Value::Object(object)
}

fn has(object: &Value, path: &[&str]) -> bool {
    path.iter().try_fold(object, |v, k| v.get(*k)).is_some()
}

#[test]
fn member_owned_metadata_and_status_are_removed_from_any_object() {
    let object = pruned(json!({"metadata": {
        "creationTimestamp": "2023-03-13T05:00:41Z",
        "deletionTimestamp": "2023-03-13T06:00:41Z",
        "deletionGracePeriodSeconds": 10,
        "generation": 2,
        "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "name", "operation": "Apply"}],
        "resourceVersion": "22222",
        "selfLink": "http://example.com",
        "uid": "db56a4a6-0dff-465a-b046-2c1dea42a42b",
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "foo", "uid": "fb11a9a6-1daa-265b-c046-1c1dea42a42c"}],
        "finalizers": ["foregroundDeletion"]},
        "status": {}}));
    assert_eq!(object, json!({"metadata": {}}));
}

#[test]
fn a_services_cluster_ips_are_removed_unless_it_is_headless() {
    let service = pruned(json!({"kind": "Service",
        "spec": {"clusterIP": "10.10.10.10", "clusterIPs": ["10.10.10.10"]}}));
    assert_eq!(service, json!({"kind": "Service", "spec": {}}));
    // `None` asks for a headless Service: it is the user's, not the member's.
    let headless =
        json!({"kind": "Service", "spec": {"clusterIP": "None", "clusterIPs": ["None"]}});
    assert_eq!(pruned(headless.clone()), headless);
    // Without `clusterIP` nothing is looked at.
    let ips_only = json!({"kind": "Service", "spec": {"clusterIPs": ["10.0.0.1"]}});
    assert_eq!(pruned(ips_only.clone()), ips_only);
}

#[test]
fn a_jobs_generated_selector_labels_and_ttl_are_removed() {
    let job = pruned(json!({"kind": "Job", "spec": {
        "selector": {"matchLabels": {"foo": "bar", "controller-uid": "ab11a9a6-1daa-265b-c046-1c1dea42a42c"}},
        "template": {"metadata": {"labels": {
            "controller-uid": "ab11a9a6-1daa-265b-c046-1c1dea42a42c",
            "job-name": "test-job",
            "foo": "bar"}}},
        "ttlSecondsAfterFinished": 10}}));
    assert_eq!(
        job,
        json!({"kind": "Job", "spec": {
            "selector": {"matchLabels": {"foo": "bar"}},
            "template": {"metadata": {"labels": {"foo": "bar"}}}}})
    );
    // The Kubernetes 1.27 names of the same labels go too.
    let job = pruned(json!({"kind": "Job", "spec": {
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
        "template": {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "u",
            "batch.kubernetes.io/job-name": "pi", "app": "pi"}}}}}));
    assert_eq!(job["spec"]["selector"]["matchLabels"], json!({}));
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"],
        json!({"app": "pi"})
    );
}

#[test]
fn a_manual_selector_keeps_the_jobs_labels_but_not_its_ttl() {
    let job = pruned(json!({"kind": "Job", "spec": {"manualSelector": true,
        "selector": {"matchLabels": {"controller-uid": "u"}},
        "template": {"metadata": {"labels": {"controller-uid": "u", "job-name": "j"}}},
        "ttlSecondsAfterFinished": 10}}));
    assert_eq!(
        job,
        json!({"kind": "Job", "spec": {"manualSelector": true,
            "selector": {"matchLabels": {"controller-uid": "u"}},
            "template": {"metadata": {"labels": {"controller-uid": "u", "job-name": "j"}}}}})
    );
    // `manualSelector: false` is the default: the generated labels go.
    let job = pruned(json!({"kind": "Job", "spec": {"manualSelector": false,
        "selector": {"matchLabels": {"controller-uid": "u"}}}}));
    assert_eq!(job["spec"]["selector"]["matchLabels"], json!({}));
}

#[test]
fn a_service_accounts_generated_token_secret_is_removed() {
    let account = pruned(
        json!({"kind": "ServiceAccount", "metadata": {"name": "foo"},
        "secrets": [{"name": "foo-token-6pgxf"}, {"name": "foo-dockercfg-zdr2j"}]}),
    );
    assert_eq!(account["secrets"], json!([{"name": "foo-dockercfg-zdr2j"}]));
    // Another account's token is not this one's.
    let account = pruned(
        json!({"kind": "ServiceAccount", "metadata": {"name": "foo"},
        "secrets": [{"name": "bar-token-6pgxf"}]}),
    );
    assert_eq!(account["secrets"], json!([{"name": "bar-token-6pgxf"}]));
}

#[test]
fn a_service_account_token_secret_loses_its_data_and_account_uid() {
    // Karmada's table puts the uid key straight under `metadata`; it is kept there, and the
    // token is gone because `data` is nulled.
    let secret = pruned(json!({"kind": "Secret",
        "metadata": {"kubernetes.io/service-account.uid": "123"},
        "type": "kubernetes.io/service-account-token",
        "data": {"token": "abc"}}));
    assert!(!has(
        &secret,
        &[
            "metadata",
            "annotations",
            "kubernetes.io/service-account.uid"
        ]
    ));
    assert!(!has(&secret, &["data", "token"]));
    assert_eq!(secret["data"], Value::Null);
    // As an annotation, where the token controller writes it, it is removed.
    let secret = pruned(
        json!({"kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"annotations": {"kubernetes.io/service-account.uid": "123",
            "kubernetes.io/service-account.name": "foo"}},
        "data": {"token": "abc", "ca.crt": "def"}}),
    );
    assert_eq!(
        secret,
        json!({"kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"annotations": {"kubernetes.io/service-account.name": "foo"}},
            "data": null})
    );
}

#[test]
fn other_secrets_keep_their_data() {
    let basic = json!({"kind": "Secret", "metadata": {"foo": "bar"},
        "type": "kubernetes.io/basic-auth",
        "data": {"username": "foo", "password": "bar"}});
    assert_eq!(pruned(basic.clone()), basic);
}

#[test]
fn a_claims_selected_node_is_removed_when_it_names_one() {
    let claim = pruned(json!({"kind": "PersistentVolumeClaim",
        "metadata": {"annotations": {"volume.kubernetes.io/selected-node": "node1"}}}));
    assert_eq!(
        claim,
        json!({"kind": "PersistentVolumeClaim", "metadata": {"annotations": {}}})
    );
    // Karmada only removes a non-empty value.
    let empty = json!({"kind": "PersistentVolumeClaim",
        "metadata": {"annotations": {"volume.kubernetes.io/selected-node": ""}}});
    assert_eq!(pruned(empty.clone()), empty);
}

#[test]
fn a_deployments_revision_annotations_are_removed() {
    for (key, value) in [
        ("deployment.kubernetes.io/revision", json!(1)),
        ("deployment.kubernetes.io/revision-history", json!("1,2")),
    ] {
        let mut annotations = Map::new();
        annotations.insert(key.into(), value);
        annotations.insert("keep".into(), "yes".into());
        let deployment = pruned(json!({"kind": "Deployment",
            "metadata": {"annotations": annotations}}));
        assert_eq!(
            deployment["metadata"]["annotations"],
            json!({"keep": "yes"}),
            "{key}"
        );
    }
}

#[test]
fn kind_specific_fields_of_other_kinds_are_kept() {
    // A Pod's `nodeName` and a ConfigMap's data are not the member's.
    let pod = json!({"kind": "Pod", "metadata": {"name": "p",
        "annotations": {"deployment.kubernetes.io/revision": "1"}},
        "spec": {"nodeName": "node1", "containers": []}});
    assert_eq!(pruned(pod.clone()), pod);
    let job_shaped = json!({"kind": "CronJob", "spec": {"ttlSecondsAfterFinished": 10}});
    assert_eq!(pruned(job_shaped.clone()), job_shaped);
}
