//! `apiregistration.k8s.io/v1` APIServices, as kube's aggregator keeps them: a Local one per
//! served group version (following CRDs, recreated when deleted), service-backed ones whose
//! `Available` condition follows their Service's endpoints, kube-aggregator's name rule.

use std::time::Duration;

use axum::body::Body;
use http::{Request, StatusCode};
use serde_json::{Value, json};

use crate::support::*;

const API_SERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";
/// The loop runs every 10 s.
const PATIENCE: Duration = Duration::from_secs(25);

async fn api_service(cp: &flotilla_apiserver::Running, name: &str) -> Option<Value> {
    let reply = send(cp, get(&format!("{API_SERVICES}/{name}"))).await;
    (reply.status == StatusCode::OK).then_some(reply.body)
}

fn available(object: &Value) -> String {
    object["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
        .map(|c| {
            format!(
                "{} {}",
                c["status"].as_str().unwrap_or(""),
                c["reason"].as_str().unwrap_or("")
            )
        })
        .unwrap_or_default()
}

fn delete(uri: &str) -> Request<Body> {
    Request::delete(uri).body(Body::empty()).expect("request")
}

#[tokio::test]
async fn local_api_services_follow_what_is_served_and_service_backed_ones_their_endpoints() {
    let cp = control_plane().await;
    eventually(PATIENCE, || async {
        api_service(&cp, "v1.")
            .await
            .is_some_and(|a| available(&a) == "True Local")
    })
    .await;
    let apps = api_service(&cp, "v1.apps").await.expect("v1.apps");
    assert_eq!(apps["spec"]["groupPriorityMinimum"], 17800);
    assert_eq!(
        apps["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    assert!(
        api_service(&cp, "v1alpha1.policy.karmada.io")
            .await
            .is_some()
    );

    // A CRD's group version gets one, and loses it with the CRD.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]},
    });
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let reply = send(&cp, json("POST", crds, &crd)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    eventually(PATIENCE, || async {
        api_service(&cp, "v1.example.com").await.is_some()
    })
    .await;
    let reply = send(&cp, delete(&format!("{crds}/widgets.example.com"))).await;
    assert!(reply.status.is_success(), "{:?}", reply.body);
    eventually(PATIENCE, || async {
        api_service(&cp, "v1.example.com").await.is_none()
    })
    .await;

    // Deleted by hand: back.
    let reply = send(&cp, delete(&format!("{API_SERVICES}/v1.apps"))).await;
    assert!(reply.status.is_success(), "{:?}", reply.body);
    eventually(PATIENCE, || async {
        api_service(&cp, "v1.apps").await.is_some()
    })
    .await;

    // A service-backed one: not available until its Service has endpoints.
    let adapter = json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1beta1.custom.metrics.k8s.io"},
        "spec": {"group": "custom.metrics.k8s.io", "version": "v1beta1",
            "groupPriorityMinimum": 100, "versionPriority": 100,
            "insecureSkipTLSVerify": true,
            "service": {"namespace": "default", "name": "adapter", "port": 443}},
    });
    let reply = send(&cp, json("POST", API_SERVICES, &adapter)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    eventually(PATIENCE, || async {
        api_service(&cp, "v1beta1.custom.metrics.k8s.io")
            .await
            .is_some_and(|a| available(&a) == "False ServiceNotFound")
    })
    .await;
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "adapter"},
        "spec": {"ports": [{"name": "https", "port": 443}]}});
    let reply = send(
        &cp,
        json("POST", "/api/v1/namespaces/default/services", &service),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "adapter"},
        "subsets": [{"addresses": [{"ip": "10.0.0.5"}], "ports": [{"name": "https", "port": 6443}]}]});
    let reply = send(
        &cp,
        json("POST", "/api/v1/namespaces/default/endpoints", &endpoints),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{:?}", reply.body);
    eventually(PATIENCE, || async {
        api_service(&cp, "v1beta1.custom.metrics.k8s.io")
            .await
            .is_some_and(|a| available(&a) == "True Passed")
    })
    .await;

    // kube-aggregator's name rule.
    let mut misnamed = adapter.clone();
    misnamed["metadata"]["name"] = json!("custom-metrics");
    let reply = send(&cp, json("POST", API_SERVICES, &misnamed)).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        reply.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("metadata.name: Invalid value: \"custom-metrics\": must be `spec.version+\".\"+spec.group`")),
        "{:?}",
        reply.body
    );
}
