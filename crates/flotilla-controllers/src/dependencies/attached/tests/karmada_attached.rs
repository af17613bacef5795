//! Karmada's `dependencies_distributor_test.go` cases on building and updating attached
//! bindings, restated against Flotilla's pure functions: name, labels, owner reference,
//! finalizer, how `requiredBy` entries merge, and the policy inherited from the requiring
//! bindings.

use std::sync::Arc;

use flotilla_api::karmada::{BindingSnapshot, ResourceBinding, TargetCluster};
use serde_json::{Value, json};

use crate::dependencies::{
    InheritedPolicy, controlled_by_other, depended_by_label, inherit_policy, new_attached,
    refresh_attached, with_required_by,
};

/// The independent binding's permanent id in Karmada's cases.
pub(super) const ID: &str = "93162d3c-ee8e-4995-9034-05f4d5d2c2b9";
/// Karmada's `depended-by` label of `test/test-binding`.
pub(super) const LABEL: &str = "resourcebinding.karmada.io/depended-by-5dbb6dc9c8";

pub(super) fn binding(value: Value) -> ResourceBinding {
    serde_json::from_value(value).expect("binding")
}

/// `requiredBy` entries `(namespace, name, cluster, replicas)`.
pub(super) fn entries(list: &[(&str, &str, &str, i32)]) -> Vec<BindingSnapshot> {
    list.iter()
        .map(|(namespace, name, cluster, replicas)| BindingSnapshot {
            namespace: (*namespace).to_owned(),
            name: (*name).to_owned(),
            clusters: vec![TargetCluster::new(*cluster, *replicas)],
        })
        .collect()
}

/// Karmada's `mergeBindingSnapshot`, as Flotilla does it: one `with_required_by` per entry.
fn merged(existing: &[BindingSnapshot], new: &[BindingSnapshot]) -> Vec<BindingSnapshot> {
    let mut spec = flotilla_api::karmada::ResourceBindingSpec {
        required_by: existing.to_vec(),
        ..Default::default()
    };
    for entry in new {
        spec.required_by =
            with_required_by(&spec, &entry.namespace, &entry.name, Some(&entry.clusters));
    }
    spec.required_by
}

#[test]
fn the_depended_by_label_hashes_the_independent_binding_as_karmada_does() {
    assert_eq!(depended_by_label("test", "test-binding"), LABEL);
}

#[test]
fn attached_bindings_are_named_after_the_dependency_owned_by_it_and_required_by_the_binding() {
    // Test_buildAttachedBinding.
    let independent = binding(json!({
        "metadata": {"name": "test-binding", "namespace": "test",
            "labels": {"resourcebinding.karmada.io/permanent-id": ID}},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
            "clusters": [{"name": "member1", "replicas": 2}]}}));
    let object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "demo-app", "namespace": "fake-ns", "resourceVersion": "22222",
            "uid": "db56a4a6-0dff-465a-b046-2c1dea42a42b"}});
    let got = new_attached(&independent, &object, LABEL, ID);
    let mut want = binding(json!({
        "metadata": {"name": "demo-app-deployment",
            // Karmada: the independent binding's namespace ("test"); Flotilla: the
            // dependency's (the same unless a customization names another namespace).
            "namespace": "fake-ns",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": "demo-app", "uid": "db56a4a6-0dff-465a-b046-2c1dea42a42b",
                "blockOwnerDeletion": true, "controller": true}],
            "labels": {LABEL: ID},
            "finalizers": ["karmada.io/binding-controller"]},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment",
                "namespace": "fake-ns", "name": "demo-app",
                "uid": "db56a4a6-0dff-465a-b046-2c1dea42a42b", "resourceVersion": "22222"}}}));
    want.spec.required_by = entries(&[("test", "test-binding", "member1", 2)]);
    assert_eq!(got, want);
    // Test_syncScheduleResultToAttachedBindings: a Pod `pod` gets the binding `pod-pod`.
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pod", "namespace": "default"}});
    let got = new_attached(&independent, &pod, LABEL, ID);
    assert_eq!(got.metadata.name.as_deref(), Some("pod-pod"));
    assert_eq!(got.spec.resource.name, "pod");
}

#[test]
fn merging_required_by_updates_known_bindings_clusters_and_appends_new_ones() {
    // Test_mergeBindingSnapshot.
    let existing = entries(&[
        ("default-1", "default-binding-1", "member1", 2),
        ("default-2", "default-binding-2", "member2", 3),
        ("default-3", "default-binding-3", "member3", 4),
    ]);
    let new = entries(&[
        ("test-1", "test-binding-1", "foo", 1),
        ("default-2", "default-binding-2", "member2", 4),
        ("test-2", "test-binding-2", "bar", 1),
    ]);
    assert_eq!(
        merged(&existing, &new),
        entries(&[
            ("default-1", "default-binding-1", "member1", 2),
            ("default-2", "default-binding-2", "member2", 4),
            ("default-3", "default-binding-3", "member3", 4),
            ("test-1", "test-binding-1", "foo", 1),
            ("test-2", "test-binding-2", "bar", 1),
        ])
    );
    // Nothing yet: the new entries as they are.
    assert_eq!(merged(&[], &existing), existing);
}

#[test]
fn withdrawing_a_binding_removes_every_entry_of_it_and_nothing_else() {
    // Test_deleteBindingFromSnapshot.
    let mut spec = flotilla_api::karmada::ResourceBindingSpec {
        required_by: entries(&[
            ("default-1", "default-binding-1", "member1", 2),
            ("test", "test-binding", "foo", 1),
            ("default-2", "default-binding-2", "member2", 3),
            ("test", "test-binding", "bar", 1),
            ("default-3", "default-binding-3", "member3", 4),
        ]),
        ..Default::default()
    };
    let others = entries(&[
        ("default-1", "default-binding-1", "member1", 2),
        ("default-2", "default-binding-2", "member2", 3),
        ("default-3", "default-binding-3", "member3", 4),
    ]);
    assert_eq!(
        with_required_by(&spec, "test", "test-binding", None),
        others
    );
    spec.required_by = others.clone();
    assert_eq!(
        with_required_by(&spec, "test", "test-binding", None),
        others
    );
}

/// The attached binding `test/test-binding` of Test_createOrUpdateAttachedBinding as stored.
fn stored(owner_uid: &str, required_by: &[(&str, &str, &str, i32)]) -> ResourceBinding {
    let mut stored = binding(json!({
        "metadata": {"name": "test-binding", "namespace": "test", "resourceVersion": "1000",
            "labels": {"foo": "bar"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "name": "demo-app", "uid": owner_uid, "controller": true}]},
        "spec": {"resource": {"apiVersion": "", "kind": "", "name": ""}}}));
    stored.spec.required_by = entries(required_by);
    stored
}

/// A requiring binding `namespace/name` with `conflictResolution`.
fn requiring(namespace: &str, name: &str, conflict_resolution: &str) -> Arc<ResourceBinding> {
    Arc::new(binding(json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
            "conflictResolution": conflict_resolution}})))
}

/// Updates `existing` for each of Karmada's attached-binding entries (one independent
/// binding at a time, as Flotilla's distributor does), then inherits the policy from the
/// bindings named in the result (`specs`).
fn update(
    existing: &ResourceBinding,
    new: &[(&str, &str, &str, i32)],
    specs: &[Arc<ResourceBinding>],
) -> ResourceBinding {
    let object = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "demo-app", "namespace": "fake-ns", "resourceVersion": "22222"}});
    let mut updated = existing.clone();
    for entry in entries(new) {
        let independent = binding(json!({
            "metadata": {"name": entry.name, "namespace": entry.namespace},
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
                "clusters": entry.clusters}}));
        updated = refresh_attached(&updated, &independent, &object, "app", "nginx");
    }
    let requiring: Vec<&Arc<ResourceBinding>> = updated
        .spec
        .required_by
        .iter()
        .filter_map(|e| {
            specs.iter().find(|b| {
                b.metadata.namespace.as_deref() == Some(&e.namespace)
                    && b.metadata.name.as_deref() == Some(&e.name)
            })
        })
        .collect();
    inherit_policy(&mut updated.spec, requiring.iter().map(|b| &b.spec));
    updated
}

const NEW: [(&str, &str, &str, i32); 3] = [
    ("test-1", "test-binding-1", "foo", 1),
    ("default-2", "default-binding-2", "member2", 4),
    ("test-2", "test-binding-2", "bar", 1),
];
const EXISTING: [(&str, &str, &str, i32); 3] = [
    ("default-1", "default-binding-1", "member1", 2),
    ("default-2", "default-binding-2", "member2", 3),
    ("default-3", "default-binding-3", "member3", 4),
];
const MERGED: [(&str, &str, &str, i32); 5] = [
    ("default-1", "default-binding-1", "member1", 2),
    ("default-2", "default-binding-2", "member2", 4),
    ("default-3", "default-binding-3", "member3", 4),
    ("test-1", "test-binding-1", "foo", 1),
    ("test-2", "test-binding-2", "bar", 1),
];

#[test]
fn updating_an_attached_binding_merges_labels_and_entries_and_inherits_abort_by_default() {
    // Test_createOrUpdateAttachedBinding "update attached binding".
    let specs: Vec<_> = MERGED
        .iter()
        .map(|(ns, name, _, _)| requiring(ns, name, ""))
        .collect();
    let existing = stored("foo-bar", &EXISTING);
    assert!(!controlled_by_other(&existing, "foo-bar"));
    let got = update(&existing, &NEW, &specs);
    let labels = got.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels,
        [("app".into(), "nginx".into()), ("foo".into(), "bar".into())].into()
    );
    assert_eq!(got.spec.required_by, entries(&MERGED));
    assert_eq!(got.spec.resource.name, "demo-app");
    assert_eq!(got.spec.resource.resource_version, "22222");
    assert_eq!(got.spec.conflict_resolution, "Abort");
    assert_eq!(got.spec.preserve_resources_on_deletion, Some(false));
}

#[test]
fn creating_an_attached_binding_inherits_abort_and_not_preserved() {
    // Test_createOrUpdateAttachedBinding "create attached binding": nothing stored yet.
    let specs: Vec<_> = NEW
        .iter()
        .map(|(ns, name, _, _)| requiring(ns, name, ""))
        .collect();
    let empty = binding(
        json!({"metadata": {"name": "test-binding", "namespace": "test"},
        "spec": {"resource": {"apiVersion": "", "kind": "", "name": ""}}}),
    );
    let got = update(&empty, &NEW, &specs);
    // Flotilla keeps the entries sorted by namespace and name (Karmada: in arrival order).
    let mut want = entries(&NEW);
    want.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    assert_eq!(got.spec.required_by, want);
    assert_eq!(got.spec.conflict_resolution, "Abort");
    assert_eq!(got.spec.preserve_resources_on_deletion, Some(false));
}

#[test]
fn one_overwriting_requirer_makes_the_attached_binding_overwrite() {
    // Test_createOrUpdateAttachedBinding "update attached binding with ConflictResolution":
    // default-binding-2 overwrites; the attached binding's own value does not count.
    let specs: Vec<_> = MERGED
        .iter()
        .map(|(ns, name, _, _)| {
            requiring(
                ns,
                name,
                if *name == "default-binding-2" {
                    "Overwrite"
                } else {
                    ""
                },
            )
        })
        .collect();
    let mut existing = stored("foo-bar", &EXISTING);
    existing.spec.conflict_resolution = "Abort".into();
    let got = update(&existing, &NEW, &specs);
    assert_eq!(got.spec.required_by, entries(&MERGED));
    assert_eq!(got.spec.conflict_resolution, "Overwrite");
    assert_eq!(got.spec.preserve_resources_on_deletion, Some(false));
}

#[test]
fn an_attached_binding_of_another_owner_is_not_updated() {
    // Test_createOrUpdateAttachedBinding "update attached binding which is being deleted":
    // stored with owner UID bar-foo, the dependency is now foo-bar.
    let existing = stored(
        "bar-foo",
        &[("default-1", "default-binding-1", "member1", 2)],
    );
    assert!(controlled_by_other(&existing, "foo-bar"));
}

#[test]
fn requirers_disagreeing_on_policy_raise_both_conflicts() {
    // Test_createOrUpdateAttachedBinding_emitsConflictEvent,
    // Test_detectAndResolveConflictResolution and Test_detectAndResolvePreserveOnDeletion.
    let spec = |conflict_resolution: &str, preserve: Option<bool>| {
        flotilla_api::karmada::ResourceBindingSpec {
            conflict_resolution: conflict_resolution.to_owned(),
            preserve_resources_on_deletion: preserve,
            ..Default::default()
        }
    };
    let (rb1, rb2) = (spec("Overwrite", Some(true)), spec("", Some(false)));
    let policy = InheritedPolicy::resolve([&rb1, &rb2]);
    assert_eq!(policy.conflict_resolution, "Overwrite");
    assert!(policy.conflict_resolution_conflicted);
    assert!(policy.preserve_resources_on_deletion);
    assert!(policy.preserve_conflicted);
    let note = policy.conflict_note().expect("conflict");
    assert!(note.contains("ConflictResolution conflicted (Overwrite vs Abort)"));
    assert!(note.contains("PreserveResourcesOnDeletion conflicted (true vs false)"));
    // Overwrite against unset; true against false.
    let policy = InheritedPolicy::resolve([&spec("Overwrite", None), &spec("", None)]);
    assert!(policy.conflict_resolution_conflicted);
    assert_eq!(policy.conflict_resolution, "Overwrite");
    let policy = InheritedPolicy::resolve([&spec("", Some(true)), &spec("", Some(false))]);
    assert!(policy.preserve_conflicted);
    assert!(policy.preserve_resources_on_deletion);
}
