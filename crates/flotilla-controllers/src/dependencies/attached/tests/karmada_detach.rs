//! Karmada's `dependencies_distributor_test.go` cases on withdrawing an independent binding
//! from its attached bindings (deleted, or no longer depending on them), finding the attached
//! bindings it no longer needs, and what is recorded on the independent binding (dependencies
//! annotation, finalizer), restated against Flotilla's pure functions.

use std::collections::BTreeSet;
use std::sync::Arc;

use flotilla_api::karmada::ResourceBinding;
use flotilla_api::karmada::names::binding_name;
use serde_json::json;

use super::karmada_attached::{ID, LABEL, binding, entries};
use crate::dependencies::{
    DEPENDENCIES_ANNOTATION, DISTRIBUTOR_FINALIZER, detach, recorded_metadata, stale_attached,
};
use crate::interpreter::DependentObjectReference;

/// The attached binding `test/test-binding` of Test_handleIndependentBindingDeletion and
/// Test_removeScheduleResultFromAttachedBindings: required twice by `test/test-binding` and
/// once by `default-1/default-binding-1`.
fn required_twice() -> ResourceBinding {
    let mut attached = binding(json!({
        "metadata": {"name": "test-binding", "namespace": "test", "resourceVersion": "1000",
            "labels": {"app": "nginx", LABEL: ID}},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment",
            "namespace": "fake-ns", "name": "demo-app", "resourceVersion": "22222"}}}));
    attached.spec.required_by = entries(&[
        ("test", "test-binding", "foo", 1),
        ("default-1", "default-binding-1", "member1", 2),
        ("test", "test-binding", "bar", 1),
    ]);
    attached
}

/// A requiring binding with Karmada's defaults (no conflictResolution, no preserve flag).
fn plain(namespace: &str, name: &str) -> Arc<ResourceBinding> {
    Arc::new(binding(json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}}})))
}

#[test]
fn a_withdrawn_binding_loses_its_label_and_entries_and_the_rest_set_the_policy() {
    // Test_handleIndependentBindingDeletion, Test_removeScheduleResultFromAttachedBindings.
    let attached = required_twice();
    let listed = stale_attached(
        [Arc::new(attached.clone())],
        "test",
        LABEL,
        &BTreeSet::new(),
    );
    assert_eq!(listed.len(), 1);
    let got = detach(&listed[0], "test", "test-binding", LABEL, |e| {
        (e.namespace == "default-1" && e.name == "default-binding-1")
            .then(|| plain("default-1", "default-binding-1"))
    })
    .expect("still required by default-binding-1");
    let mut want = attached;
    want.metadata.labels = Some([("app".to_owned(), "nginx".to_owned())].into());
    want.spec.required_by = entries(&[("default-1", "default-binding-1", "member1", 2)]);
    want.spec.conflict_resolution = "Abort".into();
    want.spec.preserve_resources_on_deletion = Some(false);
    assert_eq!(got, want);
}

#[test]
fn no_attached_bindings_nothing_to_withdraw() {
    // Test_removeScheduleResultFromAttachedBindings "empty attached bindings".
    assert!(stale_attached(Vec::new(), "test", LABEL, &BTreeSet::new()).is_empty());
}

#[test]
fn attached_bindings_labelled_for_the_binding_are_listed() {
    // Test_listAttachedBindings: the binding labelled for test/test-binding, in its namespace.
    let attached = Arc::new(required_twice());
    let unlabelled = Arc::new(binding(json!({
        "metadata": {"name": "other", "namespace": "test", "labels": {"app": "nginx"}},
        "spec": {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "name": "other"}}})));
    let mut elsewhere = required_twice();
    elsewhere.metadata.namespace = Some("default".into());
    let listed = stale_attached(
        [attached.clone(), unlabelled, Arc::new(elsewhere)],
        "test",
        LABEL,
        &BTreeSet::new(),
    );
    assert_eq!(listed, vec![attached]);
}

/// The attached binding `test/test-binding-1` of Karmada's orphan cases: for Pod
/// `default/pod`, labelled for test/test-binding, no `requiredBy` entries.
fn pod_attached() -> Arc<ResourceBinding> {
    Arc::new(binding(json!({
        "metadata": {"name": "test-binding-1", "namespace": "test", "resourceVersion": "1000",
            "labels": {LABEL: ID}},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
            "name": "pod", "resourceVersion": "22222"}}})))
}

#[test]
fn attached_bindings_of_objects_no_longer_depended_on_are_orphans() {
    // Test_findOrphanAttachedBindings (both cases): the binding now depends on Pod
    // `pod-test` (in `default` or in `test`), not on `pod`; what it keeps are the attached
    // bindings of what it depends on, `<name>-<kind>`.
    let keep: BTreeSet<String> = [binding_name("Pod", "pod-test")].into();
    let orphans = stale_attached([pod_attached()], "test", LABEL, &keep);
    assert_eq!(orphans, vec![pod_attached()]);
    // Still depended on: not an orphan.
    let keep: BTreeSet<String> = ["test-binding-1".to_owned()].into();
    assert!(stale_attached([pod_attached()], "test", LABEL, &keep).is_empty());
}

#[test]
fn an_orphan_nobody_requires_is_deleted_rather_than_kept_empty() {
    // Test_removeOrphanAttachedBindings: Karmada keeps test-binding-1 with the label removed
    // and no entries; Flotilla deletes an attached binding nobody requires and no policy
    // claims (docs/propagation.md, Known differences).
    assert_eq!(
        detach(&pod_attached(), "test", "test-binding", LABEL, |_| None),
        None
    );
    // Claimed by a policy: kept, only the label goes.
    let mut claimed = (*pod_attached()).clone();
    claimed.spec.placement = Some(Default::default());
    let got = detach(&claimed, "test", "test-binding", LABEL, |_| None).expect("claimed");
    assert_eq!(got.metadata.labels, Some(Default::default()));
    assert_eq!(got.spec.conflict_resolution, "");
    assert_eq!(got.spec.preserve_resources_on_deletion, None);
}

fn pod_dependency() -> Vec<DependentObjectReference> {
    serde_json::from_value(json!([{"apiVersion": "v1", "kind": "Pod",
        "namespace": "default", "name": "pod"}]))
    .expect("dependencies")
}

/// The independent binding `test/test-binding` (propagating dependencies, the
/// distributor's finalizer set), with `annotations`.
fn independent(annotations: serde_json::Value) -> ResourceBinding {
    binding(json!({
        "metadata": {"name": "test-binding", "namespace": "test", "resourceVersion": "1000",
            "finalizers": [DISTRIBUTOR_FINALIZER], "annotations": annotations},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
            "name": "pod", "resourceVersion": "22222"}, "propagateDeps": true}}))
}

#[test]
fn dependencies_are_recorded_as_karmadas_json_and_only_when_they_change() {
    // Test_recordDependencies "record updated dependencies".
    let recorded = r#"[{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"pod"}]"#;
    let got = recorded_metadata(&independent(json!({})), &pod_dependency(), false).unwrap();
    assert_eq!(
        got,
        Some((
            vec![DISTRIBUTOR_FINALIZER.to_owned()],
            Some(recorded.to_owned())
        ))
    );
    // "no need to record non-updated dependencies".
    let same = independent(json!({DEPENDENCIES_ANNOTATION: recorded}));
    assert_eq!(
        recorded_metadata(&same, &pod_dependency(), false).unwrap(),
        None
    );
}

#[test]
fn the_distributor_finalizer_follows_propagate_deps() {
    let recorded = r#"[{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"pod"}]"#;
    // Test_addFinalizer: added once.
    let mut binding = independent(json!({DEPENDENCIES_ANNOTATION: recorded}));
    binding.metadata.finalizers = None;
    let (finalizers, annotation) = recorded_metadata(&binding, &pod_dependency(), false)
        .unwrap()
        .expect("finalizer added");
    assert_eq!(finalizers, vec![DISTRIBUTOR_FINALIZER.to_owned()]);
    assert_eq!(annotation.as_deref(), Some(recorded));
    // Test_removeFinalizer: removed once propagateDeps is off (or the binding is deleted).
    let mut binding = independent(json!({DEPENDENCIES_ANNOTATION: recorded}));
    binding.spec.propagate_deps = false;
    let (finalizers, _) = recorded_metadata(&binding, &[], false)
        .unwrap()
        .expect("finalizer removed");
    assert!(finalizers.is_empty());
    let binding = independent(json!({}));
    let (finalizers, annotation) = recorded_metadata(&binding, &pod_dependency(), true)
        .unwrap()
        .expect("finalizer removed");
    assert!(finalizers.is_empty());
    assert_eq!(annotation, None);
}
