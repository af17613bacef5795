//! Karmada's `TestGenerateReplicaRequirements` (`pkg/util/helper/binding_test.go`) restated
//! against `replica_requirements`: the same pod templates and Karmada's expected requirements
//! (the `ResourceQuotaEstimate` gate off, so no priority class).

use serde_json::json;

use super::*;

fn pod_spec(value: serde_json::Value) -> PodSpec {
    serde_json::from_value(value).expect("pod spec")
}

#[test]
fn an_empty_pod_template_has_no_requirements() {
    let got = replica_requirements(&PodSpec::default()).expect("requirements");
    assert_eq!(got, None);
}

#[test]
fn node_selector_tolerations_and_required_affinity_make_the_node_claim() {
    let got = replica_requirements(&pod_spec(json!({
        "containers": [],
        "nodeSelector": {"foo": "foo1"},
        "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "foo", "operator": "Exists"}]}]}}}
    })))
    .expect("requirements")
    .expect("some requirements");
    let want: NodeClaim = serde_json::from_value(json!({
        "hardNodeAffinity": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "foo", "operator": "Exists"}]}]},
        "nodeSelector": {"foo": "foo1"},
        "tolerations": [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]
    }))
    .expect("node claim");
    assert_eq!(got.node_claim, Some(want));
    // No container asks for anything: no resource request at all (not an empty list).
    assert_eq!(got.resource_request, None);
    assert!(got.priority_class_name.is_empty());
}

#[test]
fn a_limit_without_a_request_becomes_the_request() {
    let got = replica_requirements(&pod_spec(json!({
        "containers": [{"name": "c", "resources": {"limits": {"cpu": "200m"}}}]
    })))
    .expect("requirements")
    .expect("some requirements");
    assert_eq!(got.node_claim, None);
    let request = got.resource_request.expect("a resource request");
    assert_eq!(request.len(), 1);
    assert_eq!(
        request["cpu"],
        Quantity::from_milli(200, QuantityFormat::DecimalSI)
    );
    assert_eq!(request["cpu"].format(), QuantityFormat::DecimalSI);
    assert_eq!(request["cpu"].to_string(), "200m");
}
