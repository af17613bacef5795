//! The unified health view (a Flotilla extension): `GET
//! /apis/cluster.karmada.io/v1alpha1/clusters/status` answers, in one request, every member's
//! name, sync mode, Ready condition (status, reason, message, age), Kubernetes version, node
//! counts and `nvidia.com/gpu` allocatable / allocated / allocating, from the watch cache.
//! Authorized as `list clusters`. The shape is documented in `docs/clusters.md`.
//!
//! (A Cluster literally named `status` is shadowed on this one path; `kubectl get cluster
//! status -o yaml` still reads it through a list with a field selector.)

use axum::response::Response;
use http::StatusCode;
use serde_json::{Value, json};

use crate::auth::authn::UserInfo;
use crate::auth::authz::{RequestAttributes, forbidden_error};
use crate::error::ApiError;
use crate::lifted::duration::human_duration;
use crate::request::ResourcePath;
use crate::server::{ApiServer, error_response, json_response};

/// The resource every GPU column counts.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Whether `target` is the health view (`GET …/clusters/status`).
pub fn is_health_view(method: &http::Method, target: &ResourcePath) -> bool {
    method == http::Method::GET
        && target.group == "cluster.karmada.io"
        && target.version == "v1alpha1"
        && target.resource == "clusters"
        && target.namespace.is_none()
        && target.name.as_deref() == Some("status")
        && target.subresource.is_none()
}

/// Answers the view for `user`, who needs `list` on `clusters`.
pub(crate) async fn serve(server: &ApiServer, user: &UserInfo, path: &str) -> Response {
    let attributes = RequestAttributes {
        user,
        verb: "list",
        group: "cluster.karmada.io",
        resource: "clusters",
        subresource: "",
        namespace: None,
        name: None,
        path,
    };
    let decision = server.authorizer.authorize(&attributes);
    if !decision.allowed {
        return error_response(&forbidden_error(&attributes, &decision));
    }
    let Some(info) = server
        .registry
        .catalog()
        .get("cluster.karmada.io", "v1alpha1", "clusters")
    else {
        return error_response(&ApiError::no_route());
    };
    // Read what every acknowledged write left, as a consistent list would.
    if let Err(error) = server.registry.cache_is_current().await {
        return error_response(&error);
    }
    let (objects, revision) = server
        .registry
        .cache()
        .list(info.storage_prefix().as_bytes(), None);
    let clusters: Vec<Value> = objects.iter().map(|o| o.value()).collect();
    let now = server.registry.clock.now();
    json_response(StatusCode::OK, &render(&clusters, revision, now))
}

/// The view over `clusters` (Cluster objects as served), sorted by name.
pub fn render(clusters: &[Value], revision: i64, now: jiff::Timestamp) -> Value {
    let mut items: Vec<Value> = clusters.iter().map(|c| entry(c, now)).collect();
    items.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    json!({
        "apiVersion": "flotilla.io/v1alpha1",
        "kind": "ClusterHealthList",
        "metadata": {"resourceVersion": revision.to_string()},
        "items": items,
    })
}

fn entry(cluster: &Value, now: jiff::Timestamp) -> Value {
    let status = &cluster["status"];
    let ready = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready");
    let ready = match ready {
        Some(condition) => {
            let since = condition["lastTransitionTime"]
                .as_str()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok());
            json!({
                "status": condition["status"].as_str().unwrap_or("Unknown"),
                "reason": condition["reason"].as_str().unwrap_or(""),
                "message": condition["message"].as_str().unwrap_or(""),
                "lastTransitionTime": condition["lastTransitionTime"],
                "age": since.map(|t| human_duration(now.duration_since(t))),
                "ageSeconds": since.map(|t| now.duration_since(t).as_secs()),
            })
        }
        None => json!({"status": "Unknown", "reason": "", "message": "no Ready condition yet"}),
    };
    let summary = &status["resourceSummary"];
    json!({
        "name": cluster["metadata"]["name"],
        "syncMode": cluster["spec"]["syncMode"],
        "ready": ready,
        "kubernetesVersion": status["kubernetesVersion"].as_str().unwrap_or(""),
        "nodes": {
            "total": status["nodeSummary"]["totalNum"].as_i64().unwrap_or(0),
            "ready": status["nodeSummary"]["readyNum"].as_i64().unwrap_or(0),
        },
        "gpus": {
            "resource": GPU_RESOURCE,
            "allocatable": gpus(&summary["allocatable"]),
            "allocated": gpus(&summary["allocated"]),
            "allocating": gpus(&summary["allocating"]),
        },
        "region": cluster["spec"]["region"].as_str().unwrap_or(""),
        "zones": cluster["spec"]["zones"].as_array().cloned().unwrap_or_default(),
        "provider": cluster["spec"]["provider"].as_str().unwrap_or(""),
        "apiEndpoint": cluster["spec"]["apiEndpoint"].as_str().unwrap_or(""),
        "taints": cluster["spec"]["taints"].as_array().cloned().unwrap_or_default(),
    })
}

/// The whole number of GPUs in a resource list (0 when absent or unparsable).
pub fn gpus(list: &Value) -> i64 {
    list[GPU_RESOURCE]
        .as_str()
        .and_then(|q| flotilla_api::Quantity::parse(q).ok())
        .and_then(|q| q.as_i64())
        .or_else(|| list[GPU_RESOURCE].as_i64())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_reports_readiness_versions_nodes_and_gpus_sorted_by_name() {
        let now: jiff::Timestamp = "2026-01-01T00:10:00Z".parse().expect("timestamp");
        let clusters = [
            json!({"metadata": {"name": "us-west-2"}, "spec": {"syncMode": "Pull"}}),
            json!({
                "metadata": {"name": "cn-shanghai"},
                "spec": {"syncMode": "Push", "region": "cn-shanghai", "provider": "aliyun",
                    "zones": ["a"], "apiEndpoint": "https://10.0.0.1:6443"},
                "status": {
                    "kubernetesVersion": "v1.32.0",
                    "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
                        "message": "cluster is healthy and ready to accept workloads",
                        "lastTransitionTime": "2026-01-01T00:05:00Z"}],
                    "nodeSummary": {"totalNum": 30, "readyNum": 29},
                    "resourceSummary": {
                        "allocatable": {"nvidia.com/gpu": "240", "cpu": "2k"},
                        "allocated": {"nvidia.com/gpu": "16"},
                    },
                },
            }),
        ];
        let view = render(&clusters, 42, now);
        assert_eq!(view["kind"], "ClusterHealthList");
        assert_eq!(view["metadata"]["resourceVersion"], "42");
        let first = &view["items"][0];
        assert_eq!(first["name"], "cn-shanghai");
        assert_eq!(first["ready"]["status"], "True");
        assert_eq!(first["ready"]["reason"], "ClusterReady");
        assert_eq!(first["ready"]["age"], "5m");
        assert_eq!(first["ready"]["ageSeconds"], 300);
        assert_eq!(first["kubernetesVersion"], "v1.32.0");
        assert_eq!(first["nodes"], json!({"total": 30, "ready": 29}));
        assert_eq!(first["gpus"]["allocatable"], 240);
        assert_eq!(first["gpus"]["allocated"], 16);
        assert_eq!(first["gpus"]["allocating"], 0);
        let second = &view["items"][1];
        assert_eq!(second["name"], "us-west-2");
        assert_eq!(second["syncMode"], "Pull");
        assert_eq!(second["ready"]["status"], "Unknown");
    }
}
