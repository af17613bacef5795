//! ResourceRegistry validation with karmada-search's messages.

use serde_json::{Value, json};

use super::*;

fn registry_errors(spec: Value) -> Vec<String> {
    let registry = json!({"metadata": {"name": "registry-a"}, "spec": spec});
    messages(&validate(Kind::ResourceRegistry, &registry, None))
}

#[test]
fn resource_registries_are_found_by_group_and_kind() {
    assert_eq!(
        Kind::of("search.karmada.io", "ResourceRegistry"),
        Some(Kind::ResourceRegistry)
    );
}

#[test]
fn valid_resource_registry_is_accepted_and_left_as_it_is() {
    let spec = json!({
        "targetCluster": {"clusterNames": ["member1"], "fieldSelector": {"matchExpressions": [
            {"key": "region", "operator": "In", "values": ["eu"]}]}},
        "resourceSelectors": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default"},
            {"apiVersion": "v1", "kind": "Pod"},
        ],
        "backendStore": {"openSearch": {
            "addresses": ["https://localhost:9200", "http://10.0.0.1", "HTTP://[fe80::1]:9200/"],
            "secretRef": {"name": "os-auth"}}},
    });
    assert!(registry_errors(spec.clone()).is_empty());
    let registry = json!({"metadata": {"name": "r"}, "spec": spec});
    assert_eq!(
        defaulted(Kind::ResourceRegistry, registry.clone()),
        registry,
        "nothing is defaulted"
    );
}

#[test]
fn no_schema_is_enforced() {
    // karmada-search decodes the Go type: nothing is required (Karmada's own test accepts an
    // empty selector list), an empty apiVersion is no group version to check.
    for spec in [
        json!({}),
        json!({"resourceSelectors": []}),
        json!({"resourceSelectors": [{}]}),
        json!({"resourceSelectors": [{"apiVersion": "", "kind": ""}]}),
        json!({"resourceSelectors": [{"apiVersion": "/", "kind": "X"}]}),
        json!({"backendStore": {}}),
        json!({"backendStore": {"openSearch": {}}}),
    ] {
        assert_eq!(
            registry_errors(spec.clone()),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    assert!(
        messages(&validate(
            Kind::ResourceRegistry,
            &json!({"metadata": {"name": "r"}}),
            None
        ))
        .is_empty()
    );
}

#[test]
fn target_cluster_is_checked_as_a_policy_cluster_affinity() {
    let errors = registry_errors(
        json!({"targetCluster": {"fieldSelector": {"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r1"]}]}}}),
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .starts_with("spec.targetCluster.fieldSelector: Invalid value: {\"matchExpressions\""),
        "{errors:?}"
    );
    assert!(errors[0].ends_with(": unsupported key \"rack\", must be provider, region, or zone"));
    let errors = registry_errors(
        json!({"targetCluster": {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "Exists"}]}}}),
    );
    assert!(
        errors[0].ends_with(": unsupported operator \"Exists\", must be In or NotIn"),
        "{errors:?}"
    );
}

#[test]
fn selector_api_versions_must_be_group_versions() {
    assert_eq!(
        registry_errors(json!({"resourceSelectors": [
            {"apiVersion": "apps/v1", "kind": "Deployment"},
            {"apiVersion": "apps/v1/extra", "kind": "Deployment"},
            {"apiVersion": "a/b/c"},
        ]})),
        [
            "spec.resourceSelectors[1].apiVersion: Invalid value: \"apps/v1/extra\": unexpected GroupVersion string: apps/v1/extra",
            "spec.resourceSelectors[2].apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c",
        ]
    );
}

#[test]
fn selector_namespaces_must_be_namespace_names() {
    let errors = registry_errors(json!({"resourceSelectors": [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "Bad_Namespace"},
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "kube.system"},
    ]}));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "spec.resourceSelectors[0].namespace: Invalid value: \"Bad_Namespace\": a lowercase RFC 1123 label must consist of"
        ),
        "{errors:?}"
    );
    assert_eq!(
        errors[1],
        "spec.resourceSelectors[1].namespace: Invalid value: \"kube.system\": must not contain dots"
    );
    let long = "n".repeat(64);
    let errors = registry_errors(json!({"resourceSelectors": [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": long}]}));
    assert_eq!(
        errors,
        [format!(
            "spec.resourceSelectors[0].namespace: Invalid value: \"{long}\": must be no more than 63 characters"
        )],
        "one error per problem"
    );
}

#[test]
fn open_search_addresses_must_be_http_urls_with_a_host() {
    const MESSAGE: &str = "must be a valid http or https URL with non-empty scheme and host";
    let errors = registry_errors(json!({"backendStore": {"openSearch": {"addresses": [
        "https://localhost:9200", "localhost:9200", "ftp://os:21", "http://", "//os:9200",
        "10.0.0.1:9200", "http://os:92OO",
    ]}}}));
    let at = |i: usize, value: &str, message: &str| {
        format!(
            "spec.backendStore.openSearch.addresses[{i}]: Invalid value: \"{value}\": {message}"
        )
    };
    assert_eq!(
        errors,
        [
            at(1, "localhost:9200", MESSAGE),
            at(2, "ftp://os:21", MESSAGE),
            at(3, "http://", MESSAGE),
            at(4, "//os:9200", MESSAGE),
            at(
                5,
                "10.0.0.1:9200",
                "parse \"10.0.0.1:9200\": first path segment in URL cannot contain colon"
            ),
            at(
                6,
                "http://os:92OO",
                "parse \"http://os:92OO\": invalid port \":92OO\" after host"
            ),
        ]
    );
}

#[test]
fn every_bad_field_is_reported_together() {
    // Karmada's own "malformed selector and backend" case.
    let errors = registry_errors(json!({
        "resourceSelectors": [{"apiVersion": "apps/v1/extra", "kind": "", "namespace": "Bad_Namespace"}],
        "backendStore": {"openSearch": {"addresses": ["localhost:9200"], "secretRef": {}}},
    }));
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| e.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(
        fields,
        [
            "spec.resourceSelectors[0].apiVersion",
            "spec.resourceSelectors[0].namespace",
            "spec.backendStore.openSearch.addresses[0]",
        ]
    );
}
