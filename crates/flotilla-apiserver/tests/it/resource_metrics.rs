//! The resource metrics API (`metrics.k8s.io/v1beta1`) served from an injected backend: lists,
//! gets, selectors, metrics-server's errors, authorization, Tables and discovery.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::error::ApiError;
use flotilla_apiserver::resource_metrics::{MetricsQuery, ResourceMetricsBackend};
use flotilla_apiserver::{Builder, Running};
use flotilla_store::{MemoryStore, Store};
use futures::future::BoxFuture;
use http::{Request, StatusCode};
use serde_json::{Value, json};

use crate::support::*;

const BASE: &str = "/apis/metrics.k8s.io/v1beta1";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const PATIENCE: Duration = Duration::from_secs(10);

/// Answers every query with the same objects (more than asked: the server filters) and
/// remembers the queries.
#[derive(Debug, Default)]
struct Fake {
    queries: Mutex<Vec<MetricsQuery>>,
}

fn pod_metrics(namespace: &str, name: &str, app: &str, cpu: &str) -> Value {
    json!({
        "apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-01-01T00:00:00Z",
                     "labels": {"app": app}},
        "timestamp": "2026-01-01T00:00:00Z", "window": "15s",
        "containers": [{"name": "main", "usage": {"cpu": cpu, "memory": "10240Ki"}}],
    })
}

impl ResourceMetricsBackend for Fake {
    fn pods(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        self.queries.lock().expect("not poisoned").push(query);
        // Deliberately out of order.
        let pods = vec![
            pod_metrics("b", "web-2", "web", "2000000n"),
            pod_metrics("a", "web-1", "web", "1500000n"),
            pod_metrics("a", "db-1", "db", "500000n"),
        ];
        Box::pin(async move { Ok(pods) })
    }

    fn nodes(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        self.queries.lock().expect("not poisoned").push(query);
        let node = |name: &str, pool: &str| {
            json!({
                "apiVersion": "metrics.k8s.io/v1beta1", "kind": "NodeMetrics",
                "metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"pool": pool}},
                "timestamp": "2026-01-01T00:00:00Z", "window": "15s",
                "usage": {"cpu": "1600000000n", "memory": "6710886Ki"},
            })
        };
        let nodes = vec![node("n2", "gpu"), node("n1", "cpu")];
        Box::pin(async move { Ok(nodes) })
    }
}

async fn with_metrics() -> (Running, Arc<Fake>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let fake = Arc::new(Fake::default());
    let running = Builder::new(store)
        .resource_metrics(fake.clone())
        .start()
        .await
        .expect("API server starts");
    (running, fake)
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            let ns = i["metadata"]["namespace"].as_str().unwrap_or_default();
            let name = i["metadata"]["name"].as_str().unwrap_or_default();
            if ns.is_empty() {
                name.to_owned()
            } else {
                format!("{ns}/{name}")
            }
        })
        .collect()
}

fn accepting(uri: &str, accept: &str) -> Request<axum::body::Body> {
    Request::get(uri)
        .header(http::header::ACCEPT, accept)
        .body(axum::body::Body::empty())
        .expect("request")
}

#[tokio::test]
async fn without_a_backend_the_group_is_neither_served_nor_discovered() {
    let cp = control_plane().await;
    assert_eq!(
        send(&cp, get(&format!("{BASE}/pods"))).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&cp, get("/apis/metrics.k8s.io")).await.status,
        StatusCode::NOT_FOUND
    );
    let groups = send(&cp, get("/apis")).await.body;
    assert!(!groups.to_string().contains("metrics.k8s.io"));
}

#[tokio::test]
async fn lists_are_sorted_filtered_by_namespace_labels_and_fields() {
    let (cp, fake) = with_metrics().await;
    let all = send(&cp, get(&format!("{BASE}/pods"))).await;
    assert_eq!(all.status, StatusCode::OK);
    assert_eq!(all.body["kind"], "PodMetricsList");
    assert_eq!(all.body["apiVersion"], "metrics.k8s.io/v1beta1");
    assert_eq!(names(&all.body), ["a/db-1", "a/web-1", "b/web-2"]);

    let in_a = send(&cp, get(&format!("{BASE}/namespaces/a/pods"))).await;
    assert_eq!(names(&in_a.body), ["a/db-1", "a/web-1"]);

    let web = send(
        &cp,
        get(&format!("{BASE}/namespaces/a/pods?labelSelector=app%3Dweb")),
    )
    .await;
    assert_eq!(names(&web.body), ["a/web-1"]);
    assert_eq!(
        web.body["items"][0]["containers"][0]["usage"]["cpu"],
        "1500000n"
    );
    // The backend was told what was asked.
    assert_eq!(
        fake.queries.lock().expect("not poisoned").last(),
        Some(&MetricsQuery {
            namespace: Some("a".into()),
            name: None,
            label_selector: Some("app=web".into()),
        })
    );

    let not_db = send(
        &cp,
        get(&format!("{BASE}/pods?fieldSelector=metadata.name!%3Ddb-1")),
    )
    .await;
    assert_eq!(names(&not_db.body), ["a/web-1", "b/web-2"]);
    let in_b = send(
        &cp,
        get(&format!(
            "{BASE}/pods?fieldSelector=metadata.namespace%3D%3Db"
        )),
    )
    .await;
    assert_eq!(names(&in_b.body), ["b/web-2"]);

    let nodes = send(&cp, get(&format!("{BASE}/nodes?labelSelector=pool%3Dgpu"))).await;
    assert_eq!(nodes.body["kind"], "NodeMetricsList");
    assert_eq!(names(&nodes.body), ["n2"]);
    let nodes = send(&cp, get(&format!("{BASE}/nodes"))).await;
    assert_eq!(names(&nodes.body), ["n1", "n2"]);
}

#[tokio::test]
async fn bad_selectors_are_refused_as_kube_refuses_them() {
    let (cp, _) = with_metrics().await;
    let bad = send(
        &cp,
        get(&format!("{BASE}/pods?labelSelector=app%3D%3D%3Dx")),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad.body["reason"], "BadRequest");
    assert!(
        bad.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("labelSelector"),
        "{}",
        bad.body
    );
    let field = send(
        &cp,
        get(&format!("{BASE}/pods?fieldSelector=status.phase%3DRunning")),
    )
    .await;
    assert_eq!(field.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        field.body["message"],
        "field label not supported: status.phase"
    );
}

#[tokio::test]
async fn gets_answer_the_object_or_metrics_servers_not_found() {
    let (cp, _) = with_metrics().await;
    let one = send(&cp, get(&format!("{BASE}/namespaces/a/pods/web-1"))).await;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(one.body["kind"], "PodMetrics");
    assert_eq!(one.body["metadata"]["name"], "web-1");

    // web-2 is in b, not a.
    let missing = send(&cp, get(&format!("{BASE}/namespaces/a/pods/web-2"))).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.body["reason"], "NotFound");
    assert_eq!(
        missing.body["message"],
        r#"podmetrics.metrics.k8s.io "a/web-2" not found"#
    );
    assert_eq!(
        missing.body["details"],
        json!({"name": "a/web-2", "group": "metrics.k8s.io", "kind": "pods"})
    );

    let node = send(&cp, get(&format!("{BASE}/nodes/n1"))).await;
    assert_eq!(node.body["usage"]["cpu"], "1600000000n");
    let missing = send(&cp, get(&format!("{BASE}/nodes/n9"))).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(
        missing.body["message"],
        r#"nodemetrics.metrics.k8s.io "n9" not found"#
    );
    assert_eq!(missing.body["details"]["kind"], "nodes");
}

#[tokio::test]
async fn writes_and_watches_are_not_allowed() {
    let (cp, _) = with_metrics().await;
    for request in [
        json("POST", &format!("{BASE}/namespaces/a/pods"), &json!({})),
        Request::delete(format!("{BASE}/namespaces/a/pods/web-1"))
            .body(axum::body::Body::empty())
            .expect("request"),
        json("PUT", &format!("{BASE}/nodes/n1"), &json!({})),
        get(&format!("{BASE}/pods?watch=1")),
        get(&format!("{BASE}/nodes?watch=true")),
    ] {
        let uri = request.uri().to_string();
        let reply = send(&cp, request).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{uri}");
        assert_eq!(reply.body["kind"], "Status", "{uri}");
        assert_eq!(reply.body["reason"], "MethodNotAllowed", "{uri}");
    }
}

#[tokio::test]
async fn callers_need_get_or_list_on_the_metrics_resources() {
    let (cp, fake) = with_metrics().await;
    let alice = UserInfo {
        name: "alice".into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    };
    let denied = send_as(
        &cp,
        Some(alice.clone()),
        get(&format!("{BASE}/namespaces/a/pods")),
    )
    .await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    assert_eq!(
        denied.body["message"],
        r#"pods.metrics.k8s.io is forbidden: User "alice" cannot list resource "pods" in API group "metrics.k8s.io" in the namespace "a""#
    );
    // A refused request never reaches the backend.
    assert!(fake.queries.lock().expect("not poisoned").is_empty());

    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "metrics", "namespace": "a"},
        "rules": [{"apiGroups": ["metrics.k8s.io"], "resources": ["pods"], "verbs": ["get"]}],
    });
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "metrics", "namespace": "a"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "metrics"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    });
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}});
    for (uri, body) in [
        ("/api/v1/namespaces", namespace),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/a/roles",
            role,
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings",
            binding,
        ),
    ] {
        assert_eq!(
            send(&cp, json("POST", uri, &body)).await.status,
            StatusCode::CREATED
        );
    }
    eventually(PATIENCE, || async {
        send_as(
            &cp,
            Some(alice.clone()),
            get(&format!("{BASE}/namespaces/a/pods/web-1")),
        )
        .await
        .status
            == StatusCode::OK
    })
    .await;
    // `get` is not `list`, and namespace a is not b.
    let list = send_as(
        &cp,
        Some(alice.clone()),
        get(&format!("{BASE}/namespaces/a/pods")),
    )
    .await;
    assert_eq!(list.status, StatusCode::FORBIDDEN);
    let other = send_as(
        &cp,
        Some(alice),
        get(&format!("{BASE}/namespaces/b/pods/web-2")),
    )
    .await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn tables_have_metrics_servers_columns() {
    let (cp, _) = with_metrics().await;
    let table = send(&cp, accepting(&format!("{BASE}/namespaces/a/pods"), TABLE)).await;
    assert_eq!(table.status, StatusCode::OK);
    assert_eq!(table.body["kind"], "Table");
    let columns: Vec<&str> = table.body["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(columns, ["Name", "cpu", "memory", "Window"]);
    assert_eq!(
        table.body["rows"][0]["cells"],
        json!(["db-1", "500u", "10Mi", "15s"])
    );
    assert_eq!(
        table.body["rows"][1]["cells"],
        json!(["web-1", "1500u", "10Mi", "15s"])
    );
    let node = send(&cp, accepting(&format!("{BASE}/nodes/n1"), TABLE)).await;
    assert_eq!(
        node.body["rows"][0]["cells"],
        json!(["n1", "1600m", "6710886Ki", "15s"])
    );
}

/// Every discovery document names the group.
async fn assert_discovered(cp: &Running) {
    let groups = send(cp, get("/apis")).await.body;
    let group = groups["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find(|g| g["name"] == "metrics.k8s.io")
        .cloned()
        .expect("metrics.k8s.io in /apis");
    assert_eq!(
        group["preferredVersion"]["groupVersion"],
        "metrics.k8s.io/v1beta1"
    );

    let aggregated = send(cp, accepting("/apis", AGGREGATED)).await;
    assert!(aggregated.content_type.contains("APIGroupDiscoveryList"));
    let entry = aggregated.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|g| g["metadata"]["name"] == "metrics.k8s.io")
        .cloned()
        .expect("metrics.k8s.io in aggregated discovery");
    let resources = &entry["versions"][0]["resources"];
    assert_eq!(entry["versions"][0]["version"], "v1beta1");
    assert_eq!(resources[0]["resource"], "nodes");
    assert_eq!(resources[0]["scope"], "Cluster");
    assert_eq!(resources[1]["resource"], "pods");
    assert_eq!(resources[1]["responseKind"]["kind"], "PodMetrics");
    assert_eq!(resources[1]["verbs"], json!(["get", "list"]));
    // The legacy /api document is the core group only.
    let core = send(cp, accepting("/api", AGGREGATED)).await.body;
    assert!(!core.to_string().contains("metrics.k8s.io"));
}

#[tokio::test]
async fn the_group_is_discovered_in_every_document_and_stays_after_catalog_changes() {
    let (cp, _) = with_metrics().await;
    assert_discovered(&cp).await;

    let group = send(&cp, get("/apis/metrics.k8s.io")).await.body;
    assert_eq!(group["kind"], "APIGroup");
    assert_eq!(group["versions"][0]["version"], "v1beta1");
    let resources = send(&cp, get(BASE)).await.body;
    assert_eq!(resources["kind"], "APIResourceList");
    assert_eq!(resources["groupVersion"], "metrics.k8s.io/v1beta1");
    assert_eq!(
        resources["resources"],
        json!([
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": ["get", "list"]},
            {"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": ["get", "list"]},
        ])
    );
    assert_eq!(
        send(&cp, get("/apis/metrics.k8s.io/v1")).await.status,
        StatusCode::NOT_FOUND
    );

    // A CRD changes the catalog: the rebuilt documents still carry the group.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let created = send(
        &cp,
        json(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    eventually(PATIENCE, || async {
        send(&cp, accepting("/apis", AGGREGATED))
            .await
            .body
            .to_string()
            .contains("example.com")
    })
    .await;
    assert_discovered(&cp).await;
}
