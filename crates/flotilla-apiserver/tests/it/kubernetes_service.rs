//! `default/kubernetes`: the Service every cluster has, its Endpoints and EndpointSlice, kept
//! by the API server itself (created, corrected, recreated after a delete) and not offered to
//! other Services; an Endpoints naming a loopback address is refused as kube refuses it.

use std::sync::Arc;
use std::time::Duration;

use flotilla_apiserver::Builder;
use flotilla_store::{MemoryStore, Store};
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const SERVICE: &str = "/api/v1/namespaces/default/services/kubernetes";
const ENDPOINTS: &str = "/api/v1/namespaces/default/endpoints/kubernetes";
const SLICE: &str = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes";

async fn found(cp: &flotilla_apiserver::Running, uri: &str) -> Option<Value> {
    let reply = send(cp, get(uri)).await;
    (reply.status == StatusCode::OK).then_some(reply.body)
}

#[tokio::test]
async fn the_server_keeps_the_kubernetes_service_and_its_endpoints() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut cp = Builder::new(store.clone())
        .service_cluster_ip_range("10.96.0.0/12")
        .expect("a range")
        .start()
        .await
        .expect("API server starts");
    cp.keep_kubernetes_service("192.0.2.10:6443".parse().expect("an address"), true);
    eventually(Duration::from_secs(5), || async {
        found(&cp, SLICE).await.is_some()
    })
    .await;
    let service = found(&cp, SERVICE).await.expect("the Service");
    assert_eq!(service["spec"]["clusterIP"], "10.96.0.1");
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}])
    );
    let endpoints = found(&cp, ENDPOINTS).await.expect("the Endpoints");
    assert_eq!(
        endpoints["subsets"],
        json!([{"addresses": [{"ip": "192.0.2.10"}], "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}])
    );
    let slice = found(&cp, SLICE).await.expect("the EndpointSlice");
    assert_eq!(slice["endpoints"][0]["addresses"], json!(["192.0.2.10"]));
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );

    // Another Service gets the next address.
    let web = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/services",
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"ports": [{"port": 80}]}}),
        ),
    )
    .await;
    assert_eq!(web.status, StatusCode::CREATED, "{:?}", web.body);
    assert_eq!(web.body["spec"]["clusterIP"], "10.96.0.2");

    // Someone points the Endpoints elsewhere and deletes the slice: both come back (the loop
    // runs every 10 s).
    let mut edited = endpoints.clone();
    edited["subsets"][0]["addresses"] = json!([{"ip": "192.0.2.99"}]);
    let reply = send(&cp, json("PUT", ENDPOINTS, &edited)).await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    let reply = send(
        &cp,
        http::Request::delete(SLICE)
            .body(axum::body::Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    eventually(Duration::from_secs(15), || async {
        let endpoints = found(&cp, ENDPOINTS).await;
        let slice = found(&cp, SLICE).await;
        endpoints.is_some_and(|e| e["subsets"][0]["addresses"] == json!([{"ip": "192.0.2.10"}]))
            && slice.is_some_and(|s| s["endpoints"][0]["addresses"] == json!(["192.0.2.10"]))
    })
    .await;

    // A server started again on the same store hands out neither address again.
    drop(cp);
    let cp = Builder::new(store)
        .service_cluster_ip_range("10.96.0.0/12")
        .expect("a range")
        .start()
        .await
        .expect("API server starts again");
    let next = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/services",
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "next"},
                "spec": {"ports": [{"port": 80}]}}),
        ),
    )
    .await;
    assert_eq!(next.body["spec"]["clusterIP"], "10.96.0.3");
}

#[tokio::test]
async fn endpoints_with_a_loopback_address_are_refused() {
    let cp = control_plane().await;
    let reply = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/endpoints",
            &json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "db"},
                "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 5432}]}]}),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        reply.body["message"],
        "Endpoints \"db\" is invalid: subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
    );
}
