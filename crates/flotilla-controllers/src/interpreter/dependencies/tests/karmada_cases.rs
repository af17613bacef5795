//! The cases of Karmada's `dependencies_test.go` (pkg/resourceinterpreter/default/native): the
//! same objects, Karmada's expected dependencies. Karmada calls each kind's function directly,
//! so two of its objects carry another GVK (a `batch/v1beta1` CronJob, a `pod`); here they
//! carry the GVK Flotilla (and Karmada's dispatcher) picks the rule by. Each case names at most
//! one object per kind, so Karmada's set order and Flotilla's by-name order agree.

use serde_json::{Value, json};

use super::*;

const NAMESPACE: &str = "karmada-test";

fn reference(kind: &str, name: &str) -> DependentObjectReference {
    DependentObjectReference {
        api_version: "v1".to_owned(),
        kind: kind.to_owned(),
        namespace: NAMESPACE.to_owned(),
        name: name.to_owned(),
        label_selector: None,
    }
}

/// Karmada's three pod specs and the dependencies each one has.
fn pod_specs() -> [(Value, Vec<DependentObjectReference>); 3] {
    [
        (
            json!({"serviceAccountName": "test-serviceaccount", "volumes": [
                {"name": "initcontainer-volume-mount", "configMap": {"name": "test-configmap"}},
                {"name": "cloud-secret-volume", "secret": {"secretName": "cloud-secret"}},
                {"name": "container-volume-mount",
                    "persistentVolumeClaim": {"claimName": "test-pvc"}}]}),
            vec![
                reference("ConfigMap", "test-configmap"),
                reference("Secret", "cloud-secret"),
                reference("ServiceAccount", "test-serviceaccount"),
                reference("PersistentVolumeClaim", "test-pvc"),
            ],
        ),
        (
            json!({"serviceAccountName": "test-serviceaccount",
                "imagePullSecrets": [{"name": "test-secret"}],
                "initContainers": [{
                    "envFrom": [{"configMapRef": {"name": "initcontainer-envfrom-configmap"},
                        "secretRef": {"name": "test-secret"}}],
                    "env": [{"valueFrom": {"secretKeyRef": {"name": "test-secret"}}}]}]}),
            vec![
                reference("ConfigMap", "initcontainer-envfrom-configmap"),
                reference("Secret", "test-secret"),
                reference("ServiceAccount", "test-serviceaccount"),
            ],
        ),
        (
            json!({"containers": [{
                    "envFrom": [{"configMapRef": {"name": "test-configmap"}}],
                    "env": [{"valueFrom": {"configMapKeyRef": {"name": "test-configmap"}}}]}],
                "volumes": [{"name": "container-volume-mount",
                    "persistentVolumeClaim": {"claimName": "test-pvc"},
                    "azureFile": {"secretName": "test-secret"}}]}),
            vec![
                reference("ConfigMap", "test-configmap"),
                reference("Secret", "test-secret"),
                reference("PersistentVolumeClaim", "test-pvc"),
            ],
        ),
    ]
}

fn object(api_version: &str, kind: &str, spec: Value) -> Value {
    json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "fake", "namespace": NAMESPACE, "generation": 1}, "spec": spec})
}

/// `spec` of a `kind` whose pod template is `pod_spec` (`None`: no template).
fn workload_spec(kind: &str, pod_spec: Option<&Value>) -> Value {
    let mut spec = match kind {
        "Deployment" | "ReplicaSet" => json!({"replicas": 3}),
        "Job" => json!({"parallelism": 1}),
        "CronJob" => json!({"schedule": "*/1 * * * *"}),
        "DaemonSet" => json!({"selector": {"matchLabels": {"app": "fake"}}}),
        _ => json!({"serviceName": "fake-service",
            "selector": {"matchLabels": {"app": "fake"}}}),
    };
    if let Some(pod_spec) = pod_spec {
        let template = json!({"spec": pod_spec});
        if kind == "CronJob" {
            spec["jobTemplate"] = json!({"spec": {"template": template}});
        } else {
            spec["template"] = template;
        }
    }
    spec
}

#[test]
fn workloads_depend_on_what_their_pod_templates_reference() {
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "StatefulSet"),
    ] {
        let bare = object(api_version, kind, workload_spec(kind, None));
        assert!(dependencies(&bare).is_empty(), "{kind} without a template");
        for (i, (pod_spec, expected)) in pod_specs().iter().enumerate() {
            let workload = object(api_version, kind, workload_spec(kind, Some(pod_spec)));
            assert_eq!(
                &dependencies(&workload),
                expected,
                "{kind} with pod spec {i}"
            );
        }
    }
}

#[test]
fn pods_depend_on_what_they_reference() {
    let plain = object(
        "v1",
        "Pod",
        json!({"containers": [{"name": "example-container", "image": "busybox",
            "command": ["echo", "Hello, World!"]}]}),
    );
    assert!(dependencies(&plain).is_empty());
    for (i, (pod_spec, expected)) in pod_specs().into_iter().enumerate() {
        assert_eq!(
            dependencies(&object("v1", "Pod", pod_spec)),
            expected,
            "pod spec {i}"
        );
    }
}

#[test]
fn statefulset_claim_templates_are_not_dependencies() {
    let [(pod_spec, expected), ..] = pod_specs();
    let mut spec = workload_spec("StatefulSet", Some(&pod_spec));
    spec["volumeClaimTemplates"] = json!([{"metadata": {"name": "test-pvc"}}]);
    let statefulset = object("apps/v1", "StatefulSet", spec);
    assert_eq!(dependencies(&statefulset), expected[..3]);
}

#[test]
fn service_import_depends_on_its_derived_service_and_endpoint_slices() {
    let service_import = json!({"apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ServiceImport",
        "metadata": {"name": "fake-serviceImport", "namespace": NAMESPACE},
        "spec": {"type": "ClusterSetIP", "ports": [{"port": 80, "protocol": "TCP"}]}});
    let derived = "derived-fake-serviceImport";
    assert_eq!(
        dependencies(&service_import),
        vec![
            reference("Service", derived),
            DependentObjectReference {
                api_version: "discovery.k8s.io/v1".to_owned(),
                kind: "EndpointSlice".to_owned(),
                namespace: NAMESPACE.to_owned(),
                name: String::new(),
                label_selector: Some(LabelSelector {
                    match_labels: Some(
                        [("kubernetes.io/service-name".to_owned(), derived.to_owned())].into()
                    ),
                    match_expressions: None,
                }),
            },
        ]
    );
}

#[test]
fn ingress_depends_on_its_tls_secrets() {
    let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "test-ingress", "namespace": NAMESPACE},
        "spec": {"tls": [{"hosts": ["foo1.*.bar.com"], "secretName": "cloud-secret"},
            {"hosts": ["foo2.*.bar.com"], "secretName": "test-secret"}]}});
    assert_eq!(
        dependencies(&ingress),
        vec![
            reference("Secret", "cloud-secret"),
            reference("Secret", "test-secret")
        ]
    );
}
