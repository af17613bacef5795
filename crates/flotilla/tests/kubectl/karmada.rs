//! Karmada's admission seen from kubectl: policies come back with Karmada's defaults, applying
//! them again changes nothing, and an invalid policy is refused with Karmada's message naming
//! the field.

use crate::harness::{Flotilla, VERSIONS, example};

#[test]
fn invalid_propagation_policy_is_rejected_with_karmadas_messages() {
    let flotilla = Flotilla::start();
    for version in VERSIONS {
        let error = flotilla.fails(
            version,
            &[
                "apply",
                "-f",
                &example("vllm/invalid-propagationpolicy.yaml"),
            ],
        );
        assert!(
            error.contains("The PropagationPolicy \"vllm-by-region\" is invalid"),
            "kubectl.{version}: {error}"
        );
        for expected in [
            "spec.placement.spreadConstraints: Invalid value:",
            "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
            "spec.resourceSelectors[0].namespace: Invalid value: \"inference\": namespace of resource selector must be the same as the namespace of the policy",
        ] {
            assert!(
                error.contains(expected),
                "kubectl.{version}: {expected} missing in {error}"
            );
        }
    }
    let listed = flotilla.ok("1.33", &["get", "pp", "-A"]);
    assert!(!listed.contains("vllm-by-region"), "{listed}");
}

#[test]
fn propagation_policies_read_back_with_karmadas_defaults() {
    let flotilla = Flotilla::start();
    let version = "1.33";
    let out = flotilla.ok(
        version,
        &["apply", "-f", &example("vllm/propagationpolicy.yaml")],
    );
    assert!(out.contains("created"), "{out}");
    let fields = flotilla.ok(
        version,
        &[
            "get",
            "pp",
            "vllm-propagation",
            "-o",
            "jsonpath={.spec.conflictResolution} {.spec.preemption} {.spec.priority} {.spec.schedulerName} {.spec.resourceSelectors[0].namespace} {.metadata.finalizers[0]}",
        ],
    );
    assert_eq!(
        fields,
        "Abort Never 0 default-scheduler default karmada.io/propagation-policy-controller"
    );
    let table = flotilla.ok(version, &["get", "pp", "vllm-propagation"]);
    assert!(
        table.contains("Abort"),
        "CONFLICT-RESOLUTION column: {table}"
    );
    // Applying it again changes nothing stored. kubectl still says `configured`, as against
    // Karmada: the webhook fills `resourceSelectors[].namespace`, so the merge patch kubectl
    // computes replaces that list with the same defaulted content.
    let revision = |flotilla: &Flotilla| {
        flotilla.ok(
            version,
            &[
                "get",
                "pp",
                "vllm-propagation",
                "-o",
                "jsonpath={.metadata.resourceVersion} {.metadata.generation}",
            ],
        )
    };
    let before = revision(&flotilla);
    for version in VERSIONS {
        flotilla.ok(
            version,
            &["apply", "-f", &example("vllm/propagationpolicy.yaml")],
        );
    }
    assert_eq!(revision(&flotilla), before);
}

#[test]
fn a_protected_object_cannot_be_deleted_and_priority_classes_list() {
    let flotilla = Flotilla::start();
    let version = "1.33";
    flotilla.ok(version, &["create", "namespace", "minio"]);
    flotilla.ok(
        version,
        &[
            "label",
            "namespace",
            "minio",
            "resourcetemplate.karmada.io/deletion-protected=Always",
        ],
    );
    let error = flotilla.fails(version, &["delete", "namespace", "minio"]);
    assert!(
        error.contains("Error from server (Forbidden): admission webhook \"resourcedeletionprotection.karmada.io\" denied the request: This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected"),
        "{error}"
    );
    flotilla.ok(
        version,
        &[
            "label",
            "namespace",
            "minio",
            "resourcetemplate.karmada.io/deletion-protected-",
        ],
    );
    flotilla.ok(version, &["delete", "namespace", "minio", "--wait=false"]);

    // PriorityClasses, for `schedulePriority`: kube's columns and its system classes.
    let listed = flotilla.ok(version, &["get", "priorityclasses"]);
    let header = listed.lines().next().unwrap_or("");
    for column in ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"] {
        assert!(header.contains(column), "{listed}");
    }
    assert!(listed.contains("system-cluster-critical"), "{listed}");
    assert!(listed.contains("2000001000"), "{listed}");
}
