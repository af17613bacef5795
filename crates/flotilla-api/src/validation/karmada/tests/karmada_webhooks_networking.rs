//! Karmada's MultiClusterService webhook cases
//! (`pkg/webhook/multiclusterservice/{validating,mutating}_test.go`).

use serde_json::{Value, json};

use super::*;
use crate::karmada::MCS_PERMANENT_ID_LABEL;

fn mcs(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": "test-namespace"}, "spec": spec})
}

fn members() -> Value {
    json!([{"name": "member1"}, {"name": "member2"}])
}

fn spec_with(ports: Value, types: Value) -> Value {
    json!({"ports": ports, "types": types, "providerClusters": members(), "consumerClusters": members()})
}

fn foo_bar() -> Value {
    json!([{"name": "foo", "port": 16312}, {"name": "bar", "port": 16313}])
}

fn errors(object: &Value, old: Option<&Value>) -> Vec<String> {
    messages(&validate(Kind::MultiClusterService, object, old))
}

#[test]
fn mcs_port_names_must_be_dns_labels_on_create_and_update() {
    let ports = json!([{"name": "foo.withdot", "port": 16312}, {"name": "bar", "port": 16313}]);
    let object = mcs("test-mcs", spec_with(ports, json!(["LoadBalancer"])));
    let expected = ["spec.ports[0].name: Invalid value: \"foo.withdot\": must not contain dots"];
    assert_eq!(errors(&object, None), expected);
    let old = mcs("test-mcs", json!({"types": ["LoadBalancer"]}));
    assert_eq!(errors(&object, Some(&old)), expected);
}

#[test]
fn valid_mcs_are_admitted() {
    let object = mcs("test-mcs", spec_with(foo_bar(), json!(["LoadBalancer"])));
    assert!(errors(&object, None).is_empty());
    let old = mcs("test-mcs", json!({"types": ["LoadBalancer"]}));
    assert!(errors(&object, Some(&old)).is_empty());
}

#[test]
fn mcs_spec_cases() {
    // TestValidateMultiClusterServiceSpec
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            spec_with(foo_bar(), json!(["LoadBalancer", "CrossCluster"])),
            vec![
                "spec.types: Invalid value: [\"LoadBalancer\",\"CrossCluster\"]: MultiClusterService types should not contain more than one type",
            ],
        ),
        (
            spec_with(
                json!([{"name": "foo", "port": 16312}, {"name": "foo", "port": 16313}]),
                json!(["LoadBalancer", "LoadBalancer"]),
            ),
            vec!["spec.ports[1].name: Duplicate value: \"foo\""],
        ),
        (
            spec_with(
                json!([{"name": "foo", "port": 163121}]),
                json!(["LoadBalancer"]),
            ),
            vec![
                "spec.ports[0].port: Invalid value: 163121: must be between 1 and 65535, inclusive",
            ],
        ),
        (
            spec_with(json!([{"name": "foo", "port": 16312}]), json!([""])),
            vec!["spec.types[0]: Invalid value: \"\": ExposureType Error"],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(errors(&mcs("m", spec.clone()), None), expected, "{spec}");
    }
    let long = "a".repeat(49);
    let spec = json!({"ports": [{"name": "foo", "port": 16312}], "types": ["CrossCluster"],
        "providerClusters": [{"name": long}], "consumerClusters": []});
    assert_eq!(
        errors(&mcs("m", spec), None),
        [format!(
            "spec.range.providerClusters[0]: Invalid value: \"{long}\": must be no more than 48 characters"
        )]
    );
}

#[test]
fn mcs_updates_keep_types_and_need_a_valid_load_balancer_status() {
    // TestValidatingSpec_validateMCSUpdate
    let load_balancer = json!({"types": ["LoadBalancer"]});
    let mut old = mcs("test-mcs", load_balancer.clone());
    old["metadata"]["labels"] = json!({"key": "oldValue"});
    let mut relabelled = mcs("test-mcs", load_balancer.clone());
    relabelled["metadata"]["labels"] = json!({"key": "newValue"});
    assert!(errors(&relabelled, Some(&old)).is_empty());
    let cross = mcs("test-mcs", json!({"types": ["CrossCluster"]}));
    assert_eq!(
        errors(&cross, Some(&old)),
        ["spec.types: Invalid value: [\"LoadBalancer\"]: MultiClusterService types are immutable"]
    );
    let mut bad_ip = mcs("test-mcs", load_balancer.clone());
    bad_ip["status"] = json!({"loadBalancer": {"ingress": [{"ip": "invalid IP"}]}});
    assert_eq!(
        errors(&bad_ip, Some(&old)),
        [
            "status.loadBalancer.ingress[0].ip: Invalid value: \"invalid IP\": must be a valid IP address"
        ]
    );
    // On create the status is not looked at (the API server drops it anyway).
    assert!(errors(&bad_ip, None).is_empty());
    let mut ip_host = mcs("test-mcs", load_balancer);
    ip_host["status"] =
        json!({"loadBalancer": {"ingress": [{"ip": "010.0.0.1", "hostname": "10.0.0.5"}]}});
    assert_eq!(
        errors(&ip_host, Some(&old)),
        [
            "status.loadBalancer.ingress[0].hostname: Invalid value: \"10.0.0.5\": must be a DNS name, not an IP address"
        ]
    );
}

#[test]
fn mcs_names_must_be_dns_1035_labels() {
    // ValidateObjectMeta with NameIsDNS1035Label; subdomain failures are the API server's.
    let spec = || json!({"types": ["CrossCluster"]});
    assert_eq!(
        errors(&mcs("1abc", spec()), None),
        [
            "metadata.name: Invalid value: \"1abc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert!(errors(&mcs("Upper", spec()), None).is_empty());
}

#[test]
fn mcs_creates_get_a_permanent_id_only_when_missing() {
    let object = mcs("test-mcs", spec_with(foo_bar(), json!(["LoadBalancer"])));
    let output = defaulted(Kind::MultiClusterService, object.clone());
    let mut expected = object;
    expected["metadata"]["labels"] =
        json!({MCS_PERMANENT_ID_LABEL: "11111111-2222-3333-4444-555555555555"});
    assert_eq!(output, expected);
    let again = defaulted(Kind::MultiClusterService, {
        let mut o = output.clone();
        o["metadata"]["labels"][MCS_PERMANENT_ID_LABEL] = "kept".into();
        o
    });
    assert_eq!(again["metadata"]["labels"][MCS_PERMANENT_ID_LABEL], "kept");
}
