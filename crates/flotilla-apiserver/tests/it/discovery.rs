//! Discovery, version, health and OpenAPI documents.

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

#[tokio::test]
async fn aggregated_discovery_lists_core_builtins_and_karmada_groups() {
    let cp = control_plane().await;
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let mut request = get("/apis");
    request
        .headers_mut()
        .insert(http::header::ACCEPT, accept.parse().expect("header"));
    let reply = send(&cp, request).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.content_type,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let groups: Vec<&str> = reply.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|g| g["metadata"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(groups[0], "apps");
    for group in ["policy.karmada.io", "work.karmada.io", "cluster.karmada.io"] {
        assert!(groups.contains(&group), "{group} missing from {groups:?}");
    }
    let policy = reply.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|g| g["metadata"]["name"] == "policy.karmada.io")
        .expect("policy group");
    let pp = policy["versions"][0]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["resource"] == "propagationpolicies")
        .expect("propagationpolicies");
    assert_eq!(pp["shortNames"][0], "pp");
    assert_eq!(pp["categories"][0], "karmada-io");
    assert_eq!(pp["scope"], "Namespaced");

    let mut core = get("/api");
    core.headers_mut()
        .insert(http::header::ACCEPT, accept.parse().expect("header"));
    let reply = send(&cp, core).await;
    let core = &reply.body["items"][0];
    assert_eq!(core["metadata"]["name"], "");
    let pods = core["versions"][0]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["resource"] == "pods")
        .expect("pods");
    assert_eq!(pods["subresources"][0]["subresource"], "status");
}

#[tokio::test]
async fn legacy_discovery_and_version() {
    let cp = control_plane().await;
    let reply = send(&cp, get("/api")).await;
    assert_eq!(reply.body["kind"], "APIVersions");
    let reply = send(&cp, get("/apis")).await;
    assert_eq!(reply.body["kind"], "APIGroupList");
    let reply = send(&cp, get("/apis/apps/v1")).await;
    assert_eq!(reply.body["kind"], "APIResourceList");
    let names: Vec<&str> = reply.body["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r["name"].as_str().expect("name"))
        .collect();
    assert!(names.contains(&"deployments/scale"), "{names:?}");
    let reply = send(&cp, get("/version")).await;
    assert_eq!(reply.body["major"], "1");
    assert_eq!(reply.body["minor"], "32");
    assert_eq!(send(&cp, get("/readyz")).await.status, StatusCode::OK);
    assert_eq!(
        send(&cp, get("/apis/nope.example.com/v1")).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn openapi_v3_documents_carry_the_field_validation_parameter() {
    let cp = control_plane().await;
    let index = send(&cp, get("/openapi/v3")).await;
    let url = index.body["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("apps/v1 in the index");
    let doc = send(&cp, get(url)).await;
    assert_eq!(doc.status, StatusCode::OK);
    let patch =
        &doc.body["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "Deployment"
    );
    assert!(
        patch["parameters"]
            .as_array()
            .expect("parameters")
            .iter()
            .any(|p| p["name"] == "fieldValidation"),
        "{patch}"
    );
    let schemas = doc.body["components"]["schemas"]
        .as_object()
        .expect("schemas");
    let deployment = schemas
        .values()
        .find(|s| s["x-kubernetes-group-version-kind"][0]["kind"] == "Deployment")
        .expect("Deployment schema");
    assert!(deployment["properties"]["spec"].is_object(), "{deployment}");
}

/// The index's `?hash=` of a group-version is its document's content hash: kubectl keeps a
/// document as long as its URL is unchanged, so another build's schemas must give another URL.
#[tokio::test]
async fn openapi_v3_hashes_follow_the_documents_content() {
    let cp = control_plane().await;
    let index = send(&cp, get("/openapi/v3")).await;
    for key in ["apis/apps/v1", "apis/policy.karmada.io/v1alpha1"] {
        let url = index.body["paths"][key]["serverRelativeURL"]
            .as_str()
            .expect("in the index");
        let doc = send(&cp, get(url)).await;
        assert_eq!(doc.status, StatusCode::OK);
        let bytes = serde_json::to_vec(&doc.body).expect("JSON");
        let hash = format!("{:016X}", flotilla_apiserver::openapi::content_hash(&bytes));
        assert!(url.ends_with(&format!("?hash={hash}")), "{url} vs {hash}");
    }
}

#[tokio::test]
async fn anonymous_requests_get_401() {
    let cp = control_plane().await;
    let reply = send_as(&cp, None, get("/api/v1/namespaces")).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply.body["kind"], "Status");
    assert_eq!(reply.body["reason"], "Unauthorized");
}

/// The identity reviews are served by handlers, not stored, yet discovery lists them as
/// kube-apiserver does: version v1, verb `create` only, and `serviceaccounts/token`.
#[tokio::test]
async fn review_resources_appear_in_both_discovery_formats() {
    let cp = control_plane().await;
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let mut request = get("/apis");
    request
        .headers_mut()
        .insert(http::header::ACCEPT, accept.parse().expect("header"));
    let reply = send(&cp, request).await;
    let items = reply.body["items"].as_array().expect("items");
    let group = |name: &str| {
        items
            .iter()
            .find(|g| g["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"))
    };
    let authorization = &group("authorization.k8s.io")["versions"][0];
    assert_eq!(authorization["version"], "v1");
    let resources: Vec<(&str, &str, &Value)> = authorization["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| {
            (
                r["resource"].as_str().expect("resource"),
                r["scope"].as_str().expect("scope"),
                &r["verbs"],
            )
        })
        .collect();
    let create = json!(["create"]);
    assert_eq!(
        resources,
        vec![
            ("localsubjectaccessreviews", "Namespaced", &create),
            ("selfsubjectaccessreviews", "Cluster", &create),
            ("selfsubjectrulesreviews", "Cluster", &create),
            ("subjectaccessreviews", "Cluster", &create),
        ]
    );
    let authentication = &group("authentication.k8s.io")["versions"][0]["resources"];
    assert_eq!(authentication[0]["resource"], "selfsubjectreviews");
    assert_eq!(authentication[1]["resource"], "tokenreviews");
    assert_eq!(authentication[1]["responseKind"]["kind"], "TokenReview");

    let legacy = send(&cp, get("/apis")).await;
    let names: Vec<&str> = legacy.body["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["name"].as_str().expect("name"))
        .collect();
    assert!(names.contains(&"authorization.k8s.io"), "{names:?}");
    let reply = send(&cp, get("/apis/authentication.k8s.io")).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.body["preferredVersion"]["groupVersion"],
        "authentication.k8s.io/v1"
    );
    let reply = send(&cp, get("/apis/authorization.k8s.io/v1")).await;
    assert_eq!(reply.status, StatusCode::OK);
    let sar = reply.body["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == "localsubjectaccessreviews")
        .expect("localsubjectaccessreviews");
    assert_eq!(
        *sar,
        json!({"name": "localsubjectaccessreviews", "singularName": "localsubjectaccessreview",
            "namespaced": true, "kind": "LocalSubjectAccessReview", "verbs": ["create"]})
    );
    let reply = send(&cp, get("/api/v1")).await;
    let token = reply.body["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == "serviceaccounts/token")
        .expect("serviceaccounts/token");
    assert_eq!(token["kind"], "TokenRequest");
    assert_eq!(token["group"], "authentication.k8s.io");
    assert_eq!(token["verbs"], json!(["create"]));
    let reply = send(&cp, get("/apis/authorization.k8s.io/v2")).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}
