//! Karmada's `detector/claim_test.go` cases: the labels and annotations a claim writes on a
//! template ([`PolicyClaim::claim_patch`]), removes ([`unclaim_patch`]), and whether a
//! deleted policy's claim is still on a template ([`PolicyClaim::held_by`]).

use super::*;

const ID: &str = "f2507cgb-f3f3-4a4b-b289-5691a4fef979";

fn patched(mut object: Value, patch: &Value) -> Value {
    json_patch::merge(&mut object, patch);
    object
}

fn namespaced(namespace: &str, name: &str) -> PolicyClaim {
    PolicyClaim::Namespaced {
        namespace: namespace.into(),
        name: name.into(),
        id: ID.into(),
    }
}

fn cluster(name: &str) -> PolicyClaim {
    PolicyClaim::Cluster {
        name: name.into(),
        id: ID.into(),
    }
}

#[test]
fn a_propagation_policy_claim_writes_its_id_label_and_namespace_and_name_annotations() {
    let object = json!({"metadata": {"labels": {}}});
    assert_eq!(
        patched(object, &namespaced("test", "pp-example").claim_patch()),
        json!({"metadata": {
            "labels": {"propagationpolicy.karmada.io/permanent-id": ID},
            "annotations": {"propagationpolicy.karmada.io/namespace": "test",
                "propagationpolicy.karmada.io/name": "pp-example"}}})
    );
}

#[test]
fn a_cluster_propagation_policy_claim_writes_its_id_label_and_name_annotation() {
    let object = json!({"metadata": {"labels": {}}});
    assert_eq!(
        patched(object, &cluster("cpp-example").claim_patch()),
        json!({"metadata": {
            "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": ID},
            "annotations": {"clusterpropagationpolicy.karmada.io/name": "cpp-example"}}})
    );
}

#[test]
fn unclaiming_leaves_empty_label_and_annotation_maps() {
    let pp_claimed = json!({"metadata": {
        "labels": {"propagationpolicy.karmada.io/permanent-id": ID},
        "annotations": {"propagationpolicy.karmada.io/namespace": "default",
            "propagationpolicy.karmada.io/name": "pp-example"}}});
    assert_eq!(
        patched(
            pp_claimed,
            &unclaim_patch(&namespaced("default", "pp-example"))
        ),
        json!({"metadata": {"labels": {}, "annotations": {}}})
    );
    let cpp_claimed = json!({"metadata": {
        "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": ID},
        "annotations": {"clusterpropagationpolicy.karmada.io/name": "cpp-example"}}});
    assert_eq!(
        patched(cpp_claimed, &unclaim_patch(&cluster("cpp-example"))),
        json!({"metadata": {"labels": {}, "annotations": {}}})
    );
}

#[test]
fn only_a_template_carrying_the_deleted_policys_id_is_unclaimed() {
    // The cluster policy's id is on the template: its deletion cleans the claim up.
    let cpp_claimed = json!({"metadata": {
        "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": ID},
        "annotations": {"clusterpropagationpolicy.karmada.io/name": "cpp-example"}}});
    assert!(cluster("cpp-example").held_by(&cpp_claimed));
    // Another PropagationPolicy id is on it (the policy was recreated meanwhile): kept.
    let reclaimed = json!({"metadata": {
        "labels": {"propagationpolicy.karmada.io/permanent-id":
            "b0907cgb-f3f3-4a4b-b289-5691a4fef979"},
        "annotations": {"propagationpolicy.karmada.io/namespace": "default",
            "propagationpolicy.karmada.io/name": "pp-example"}}});
    assert!(!namespaced("default", "pp-example").held_by(&reclaimed));
}
