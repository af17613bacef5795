//! OpenAPI v2 over HTTP: the protobuf kubectl 1.27/1.28 ask for, the JSON form, the legacy
//! path, caching by ETag, and a catalog change showing up in the document.

use axum::body::Body;
use flotilla_apiserver::Running;
use flotilla_apiserver::catalog::{Printer, ResourceInfo};
use flotilla_apiserver::openapi::v2::{PROTOBUF_ACCEPT, PROTOBUF_CONTENT_TYPE, proto};
use http::{Request, StatusCode, header};
use prost::Message as _;
use tower::ServiceExt as _;

use crate::support::{admin, control_plane, get, send};

/// Sends a request as the admin and returns status, headers and the raw body.
async fn raw(cp: &Running, mut request: Request<Body>) -> (StatusCode, http::HeaderMap, Vec<u8>) {
    request
        .extensions_mut()
        .insert(flotilla_apiserver::Identity(Some(admin())));
    let response = cp
        .server
        .clone()
        .router()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.expect("body");
    (parts.status, parts.headers, bytes.to_vec())
}

fn get_protobuf(uri: &str) -> Request<Body> {
    Request::get(uri)
        .header(header::ACCEPT, PROTOBUF_ACCEPT)
        .body(Body::empty())
        .expect("request")
}

fn definition_names(doc: &proto::Document) -> Vec<String> {
    doc.definitions
        .iter()
        .flat_map(|d| &d.additional_properties)
        .map(|d| d.name.clone())
        .collect()
}

#[tokio::test]
async fn openapi_v2_serves_gnostic_protobuf_to_kubectl() {
    let cp = control_plane().await;
    let (status, headers, body) = raw(&cp, get_protobuf("/openapi/v2?timeout=32s")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], PROTOBUF_CONTENT_TYPE);
    let doc = proto::Document::decode(body.as_slice()).expect("a gnostic Document");
    assert_eq!(doc.swagger, "2.0");
    let names = definition_names(&doc);
    assert!(
        names.iter().any(|n| n == "io.k8s.api.apps.v1.Deployment"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n == "io.k8s.api.core.v1.ConfigMap"),
        "{names:?}"
    );
    let paths = doc.paths.expect("paths").path;
    let patch = paths
        .iter()
        .find(|p| p.name == "/api/v1/namespaces/{namespace}/configmaps/{name}")
        .and_then(|p| p.value.as_ref())
        .and_then(|item| item.patch.as_ref())
        .expect("the configmap patch operation");
    assert!(
        patch
            .vendor_extension
            .iter()
            .any(|e| e.name == "x-kubernetes-group-version-kind"
                && e.value
                    .as_ref()
                    .is_some_and(|v| v.yaml.contains("ConfigMap"))),
        "{:?}",
        patch.vendor_extension
    );
}

#[tokio::test]
async fn openapi_v2_legacy_path_is_protobuf_and_json_is_the_default() {
    let cp = control_plane().await;
    let (status, headers, body) = raw(&cp, get("/swagger-2.0.0.pb-v1")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], PROTOBUF_CONTENT_TYPE);
    proto::Document::decode(body.as_slice()).expect("a gnostic Document");

    let reply = send(&cp, get("/openapi/v2")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.content_type, "application/json");
    assert_eq!(reply.body["swagger"], "2.0");
    let deployment = &reply.body["definitions"]["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"][0]["kind"],
        "Deployment"
    );
    assert_eq!(
        deployment["properties"]["spec"]["properties"]["replicas"]["type"],
        "integer"
    );
    let patch =
        &reply.body["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(
        patch["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query"),
        "{patch}"
    );
}

#[tokio::test]
async fn openapi_v2_answers_a_matching_etag_with_not_modified() {
    let cp = control_plane().await;
    let (_, headers, _) = raw(&cp, get_protobuf("/openapi/v2")).await;
    let etag = headers[header::ETAG].clone();
    let mut again = get_protobuf("/openapi/v2");
    again.headers_mut().insert(header::IF_NONE_MATCH, etag);
    let (status, _, body) = raw(&cp, again).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert!(body.is_empty());
}

#[tokio::test]
async fn openapi_v2_follows_catalog_changes() {
    let cp = control_plane().await;
    let (_, before_headers, before) = raw(&cp, get_protobuf("/openapi/v2")).await;
    let before = proto::Document::decode(before.as_slice()).expect("document");
    assert!(
        !definition_names(&before)
            .iter()
            .any(|n| n == "io.example.v1.Widget")
    );
    cp.server.registry().catalog().insert(ResourceInfo {
        group: "example.io".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        list_kind: "WidgetList".into(),
        plural: "widgets".into(),
        singular: "widget".into(),
        namespaced: true,
        short_names: vec![],
        categories: vec![],
        status: false,
        scale: None,
        columns: vec![],
        printer: Printer::Columns,
        generation: true,
        crd: Some("widgets.example.io".into()),
        schema: None,
        storage_group: None,
    });
    let (_, after_headers, after) = raw(&cp, get_protobuf("/openapi/v2")).await;
    let after = proto::Document::decode(after.as_slice()).expect("document");
    assert!(
        definition_names(&after)
            .iter()
            .any(|n| n == "io.example.v1.Widget")
    );
    assert!(
        after
            .paths
            .expect("paths")
            .path
            .iter()
            .any(|p| p.name == "/apis/example.io/v1/namespaces/{namespace}/widgets/{name}")
    );
    assert_ne!(before_headers[header::ETAG], after_headers[header::ETAG]);
}
