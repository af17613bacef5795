//! `kubectl get` of the kinds kube-apiserver prints with its own columns (DaemonSets,
//! PodDisruptionBudgets, HorizontalPodAutoscalers, Ingresses, claims and volumes, RBAC
//! bindings, Leases, quotas…): the Table's columns and each row's cells, as kube's printers
//! give them, with the wide columns (priority 1) the server always sends.

use flotilla_apiserver::Running;
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

fn table(uri: &str) -> http::Request<axum::body::Body> {
    let mut request = get(uri);
    request.headers_mut().insert(
        http::header::ACCEPT,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            .parse()
            .expect("header"),
    );
    request
}

/// Creates `object` at `collection`, then returns the Table's column names and the cells of
/// its one row, without the Age column's value.
async fn printed(cp: &Running, collection: &str, object: Value) -> (Vec<String>, Vec<Value>) {
    let created = send(cp, json("POST", collection, &object)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let reply = send(cp, table(collection)).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let columns: Vec<String> = reply.body["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect();
    let age = columns.iter().position(|c| c == "Age");
    let mut cells = reply.body["rows"][0]["cells"]
        .as_array()
        .expect("cells")
        .clone();
    if let Some(age) = age {
        cells[age] = json!("<age>");
    }
    (columns, cells)
}

#[tokio::test]
async fn kubes_printers_give_each_kind_its_columns() {
    let cp = control_plane().await;

    let (columns, cells) = printed(
        &cp,
        "/apis/apps/v1/namespaces/default/daemonsets",
        json!({"metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"nodeSelector": {"zone": "a", "gpu": "true"},
                        "containers": [{"name": "agent", "image": "agent:1"}]}}}}),
    )
    .await;
    assert_eq!(
        columns,
        [
            "Name",
            "Desired",
            "Current",
            "Ready",
            "Up-to-date",
            "Available",
            "Node Selector",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    assert_eq!(
        cells,
        json!([
            "agent",
            0,
            0,
            0,
            0,
            0,
            "gpu=true,zone=a",
            "<age>",
            "agent",
            "agent:1",
            "app=agent"
        ])
        .as_array()
        .expect("cells")
        .clone()
    );

    let (columns, cells) = printed(
        &cp,
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        json!({"metadata": {"name": "web"},
            "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}}),
    )
    .await;
    assert_eq!(
        columns,
        [
            "Name",
            "Min Available",
            "Max Unavailable",
            "Allowed Disruptions",
            "Age"
        ]
    );
    assert_eq!(
        cells,
        vec![
            json!("web"),
            json!("N/A"),
            json!("50%"),
            json!(0),
            json!("<age>")
        ]
    );

    let (columns, cells) = printed(
        &cp,
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
        json!({"metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80}}}]}}),
    )
    .await;
    assert_eq!(
        columns,
        [
            "Name",
            "Reference",
            "Targets",
            "MinPods",
            "MaxPods",
            "Replicas",
            "Age"
        ]
    );
    assert_eq!(
        cells,
        vec![
            json!("web"),
            json!("Deployment/web"),
            json!("cpu: <unknown>/80%"),
            json!("2"),
            json!(10),
            json!(0),
            json!("<age>")
        ]
    );

    let (columns, cells) = printed(
        &cp,
        "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
        json!({"metadata": {"name": "web"},
            "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"]}],
                "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}]}}),
    )
    .await;
    assert_eq!(
        columns,
        ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    );
    assert_eq!(
        cells,
        vec![
            json!("web"),
            json!("nginx"),
            json!("a.example.com,b.example.com"),
            json!(""),
            json!("80, 443"),
            json!("<age>")
        ]
    );

    let (columns, cells) = printed(
        &cp,
        "/api/v1/namespaces/default/persistentvolumeclaims",
        json!({"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                "resources": {"requests": {"storage": "10Gi"}}}}),
    )
    .await;
    assert_eq!(
        columns,
        [
            "Name",
            "Status",
            "Volume",
            "Capacity",
            "Access Modes",
            "StorageClass",
            "VolumeAttributesClass",
            "Age",
            "VolumeMode"
        ]
    );
    assert_eq!(cells[0], "data");
    assert_eq!(cells[5], "fast");
    assert_eq!(cells[6], "<unset>");

    let (columns, cells) = printed(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({"metadata": {"name": "readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "ci", "namespace": "tools"},
                {"kind": "Group", "name": "sre", "apiGroup": "rbac.authorization.k8s.io"}]}),
    )
    .await;
    assert_eq!(
        columns,
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    );
    assert_eq!(
        cells,
        vec![
            json!("readers"),
            json!("ClusterRole/view"),
            json!("<age>"),
            json!("alice"),
            json!("sre"),
            json!("tools/ci")
        ]
    );

    let (columns, cells) = printed(
        &cp,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        json!({"metadata": {"name": "lock"}, "spec": {"holderIdentity": "controller-1"}}),
    )
    .await;
    assert_eq!(columns, ["Name", "Holder", "Age"]);
    assert_eq!(
        cells,
        vec![json!("lock"), json!("controller-1"), json!("<age>")]
    );

    // Karmada's CRD columns.
    let (columns, cells) = printed(
        &cp,
        "/apis/policy.karmada.io/v1alpha1/namespaces/default/federatedresourcequotas",
        json!({"metadata": {"name": "team"},
            "spec": {"overall": {"cpu": "4"}}}),
    )
    .await;
    assert_eq!(columns, ["Name", "OVERALL", "OVERALL_USED", "Age"]);
    assert_eq!(cells[0], "team");

    let (columns, cells) = printed(
        &cp,
        "/api/v1/namespaces/default/endpoints",
        json!({"metadata": {"name": "web"},
            "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"port": 8080}]}]}),
    )
    .await;
    assert_eq!(columns, ["Name", "Endpoints", "Age"]);
    assert_eq!(cells[1], "10.0.0.7:8080");

    let (columns, cells) = printed(
        &cp,
        "/api/v1/namespaces/default/podtemplates",
        json!({"metadata": {"name": "base"},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}),
    )
    .await;
    assert_eq!(columns, ["Name", "Containers", "Images", "Pod Labels"]);
    assert_eq!(
        cells,
        vec![
            json!("base"),
            json!("web"),
            json!("nginx:1.27"),
            json!("app=web")
        ]
    );
}
