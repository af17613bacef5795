use flotilla_api::karmada::Work;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

use super::api::{ServiceImport, service_export_crd, service_import_crd};
use super::endpoint_slice::{derive_slice, imported_slice_name};
use super::service_import::{derived_service, service_ports};
use super::*;

#[test]
fn names_are_karmadas() {
    assert_eq!(derived_service_name("hello"), "derived-hello");
    assert_eq!(
        imported_slice_name("hello-abcde", "member1"),
        "imported-member1-hello-abcde"
    );
}

#[test]
fn the_crds_decode_and_are_structural() {
    for (crd, kind, short) in [
        (service_export_crd(), "ServiceExport", "svcex"),
        (service_import_crd(), "ServiceImport", "svcim"),
    ] {
        let decoded: CustomResourceDefinition = serde_json::from_value(crd.clone()).expect("a CRD");
        assert_eq!(decoded.spec.group, "multicluster.x-k8s.io");
        assert_eq!(decoded.spec.names.kind, kind);
        assert_eq!(decoded.spec.names.short_names, Some(vec![short.to_owned()]));
        assert_eq!(decoded.spec.scope, "Namespaced");
        let version = &decoded.spec.versions[0];
        assert_eq!(
            (version.name.as_str(), version.served, version.storage),
            ("v1alpha1", true, true)
        );
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(schema["type"], "object");
    }
    let import = service_import_crd();
    let spec = &import["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], json!(["ports", "type"]));
    assert_eq!(
        spec["properties"]["type"]["enum"],
        json!(["ClusterSetIP", "Headless"])
    );
}

fn report() -> Work {
    serde_json::from_value(json!({
        "apiVersion": "work.karmada.io/v1alpha1",
        "kind": "Work",
        "metadata": {
            "name": "hello-abcde-5d8c9", "namespace": "karmada-es-member1",
            "labels": {
                "endpointslice.karmada.io/name": "hello",
                "endpointslice.karmada.io/namespace": "demo",
                "endpointslice.karmada.io/managed-by": "ServiceExport",
                "work.karmada.io/permanent-id": "id-1",
            },
        },
        "spec": {"workload": {"manifests": []}},
    }))
    .expect("a Work")
}

#[test]
fn a_reported_slice_is_derived_with_karmadas_labels_only() {
    let original: EndpointSlice = serde_json::from_value(json!({
        "metadata": {
            "name": "hello-abcde", "namespace": "demo",
            "labels": {"kubernetes.io/service-name": "hello", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
            "uid": "u-1", "resourceVersion": "7",
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}],
        "ports": [{"name": "tcp", "port": 42, "protocol": "TCP"}],
    }))
    .expect("a slice");
    let derived = derive_slice(&original, "member1", &report());
    assert_eq!(
        derived.metadata.name.as_deref(),
        Some("imported-member1-hello-abcde")
    );
    assert_eq!(derived.metadata.namespace.as_deref(), Some("demo"));
    assert_eq!(derived.metadata.uid, None);
    assert_eq!(derived.metadata.resource_version, None);
    let labels = derived.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels,
        [
            (
                "kubernetes.io/service-name".to_owned(),
                "derived-hello".to_owned()
            ),
            (
                "endpointslice.kubernetes.io/managed-by".to_owned(),
                "endpointslice-controller.karmada.io".to_owned()
            ),
            ("work.karmada.io/permanent-id".to_owned(), "id-1".to_owned()),
        ]
        .into()
    );
    let annotations = derived.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(annotations["work.karmada.io/name"], "hello-abcde-5d8c9");
    assert_eq!(
        annotations["work.karmada.io/namespace"],
        "karmada-es-member1"
    );
    assert_eq!(derived.endpoints, original.endpoints);
    assert_eq!(derived.ports, original.ports);
    // The copy is Karmada's: never reported back.
    assert!(crate::multicluster_service::collect::managed_by_karmada(
        &derived
    ));
}

#[test]
fn the_derived_service_is_a_cluster_ip_with_the_imports_ports() {
    let import: ServiceImport = serde_json::from_value(json!({
        "metadata": {"name": "hello", "namespace": "demo"},
        "spec": {"type": "ClusterSetIP", "ips": ["10.9.0.1"], "ports": [
            {"name": "tcp", "port": 42, "protocol": "TCP"},
            {"name": "udp", "port": 42, "protocol": "UDP", "appProtocol": "dns"},
        ]},
    }))
    .expect("an import");
    let service = derived_service(&import);
    assert_eq!(service.metadata.name.as_deref(), Some("derived-hello"));
    assert_eq!(service.metadata.namespace.as_deref(), Some("demo"));
    let spec = service.spec.expect("a spec");
    assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(spec.selector, None);
    let ports = spec.ports.expect("ports");
    assert_eq!(ports, service_ports(&import));
    assert_eq!(ports[1].app_protocol.as_deref(), Some("dns"));
    assert_eq!(ports[1].protocol.as_deref(), Some("UDP"));
}

#[test]
fn a_service_imports_dependencies_are_its_derived_service_and_slices() {
    let import = json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
        "metadata": {"name": "hello", "namespace": "demo"},
        "spec": {"type": "ClusterSetIP", "ports": [{"port": 42}]},
    });
    let found = crate::interpreter::dependencies(&import);
    assert_eq!(
        serde_json::to_value(&found).expect("JSON"),
        json!([
            {"apiVersion": "v1", "kind": "Service", "namespace": "demo", "name": "derived-hello"},
            {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "namespace": "demo",
             "labelSelector": {"matchLabels": {"kubernetes.io/service-name": "derived-hello"}}},
        ])
    );
}

#[test]
fn reports_are_recognised_by_their_managers() {
    let mut work = report();
    assert!(reported_by_export(&work));
    work.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(
            "endpointslice.karmada.io/managed-by".into(),
            "MultiClusterService".into(),
        );
    assert!(!reported_by_export(&work));
    work.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(
            "endpointslice.karmada.io/managed-by".into(),
            "MultiClusterService.ServiceExport".into(),
        );
    assert!(reported_by_export(&work));
}

#[test]
fn a_derived_service_with_the_servers_defaults_is_up_to_date() {
    let import: ServiceImport = serde_json::from_value(json!({
        "metadata": {"name": "hello", "namespace": "demo"},
        "spec": {"type": "ClusterSetIP", "ports": [{"name": "tcp", "port": 42}]},
    }))
    .expect("an import");
    let desired = derived_service(&import);
    let mut stored = desired.clone();
    let spec = stored.spec.as_mut().expect("a spec");
    spec.cluster_ip = Some("10.96.0.7".into());
    spec.session_affinity = Some("None".into());
    if let Some(ports) = spec.ports.as_mut() {
        ports[0].protocol = Some("TCP".into());
        ports[0].target_port =
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(42));
    }
    assert!(service_import::up_to_date(&stored, &desired));
    let mut changed = import.clone();
    changed.spec.ports[0].port = 43;
    assert!(!service_import::up_to_date(
        &stored,
        &derived_service(&changed)
    ));
}
