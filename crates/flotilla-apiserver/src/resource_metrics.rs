//! The Kubernetes resource metrics API, `metrics.k8s.io/v1beta1` (what metrics-server serves
//! as an aggregated API): `PodMetrics` and `NodeMetrics`, get and list, read by `kubectl top`
//! and by autoscalers (FederatedHPA).
//!
//! The usage itself comes from an injected [`ResourceMetricsBackend`]
//! ([`crate::Builder::resource_metrics`]); without one these paths stay 404 and the group is
//! not discovered. This module does what the aggregation layer and metrics-server's REST storage
//! do around the numbers: authorization as kube-apiserver authorizes an aggregated resource
//! (`get`/`list` on `pods`/`nodes` in `metrics.k8s.io`), the label and field selectors (the
//! backend may answer more than asked: the answer is filtered again here), metrics-server's
//! not-found wording, lists, Tables (`kubectl get podmetrics`), and the group in discovery.
//! Watch is refused, as metrics-server refuses it.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use flotilla_api::lifted::quantity::Quantity;
use flotilla_api::selector::{field, label};
use futures::future::BoxFuture;
use http::{Method, StatusCode, header};
use serde_json::{Value, json};

use crate::auth::authn::UserInfo;
use crate::auth::authz::{RequestAttributes, forbidden_error};
use crate::error::{ApiError, Details};
use crate::request::Query;
use crate::server::{ApiServer, error_response, json_response};

/// The API group.
pub const GROUP: &str = "metrics.k8s.io";
/// The one version served.
pub const VERSION: &str = "v1beta1";
/// `apiVersion` of the objects.
pub const API_VERSION: &str = "metrics.k8s.io/v1beta1";

const GROUP_PREFIX: &str = "/apis/metrics.k8s.io";

/// What a metrics request asks for. The backend may use it to pre-filter; the server filters
/// the answer again (labels, names, namespace), so a backend may return more than asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricsQuery {
    /// None: all namespaces (always None for nodes).
    pub namespace: Option<String>,
    /// A get by name.
    pub name: Option<String>,
    /// The raw `labelSelector` (already checked to parse).
    pub label_selector: Option<String>,
}

/// Where the usage comes from.
pub trait ResourceMetricsBackend: Send + Sync + std::fmt::Debug {
    /// PodMetrics objects, complete JSON (`apiVersion: metrics.k8s.io/v1beta1`, `kind: PodMetrics`,
    /// metadata {name, namespace, creationTimestamp, labels = the pod's labels}, `timestamp`, `window`,
    /// `containers: [{name, usage: {cpu, memory}}]`).
    fn pods(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>>;
    /// NodeMetrics objects (`kind: NodeMetrics`, metadata {name, creationTimestamp, labels = the node's labels}, timestamp, window, usage {cpu, memory}).
    fn nodes(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>>;
}

/// A shared backend.
pub type SharedResourceMetrics = Arc<dyn ResourceMetricsBackend>;

/// The two resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsResource {
    Pods,
    Nodes,
}

impl MetricsResource {
    fn plural(self) -> &'static str {
        match self {
            MetricsResource::Pods => "pods",
            MetricsResource::Nodes => "nodes",
        }
    }

    fn kind(self) -> &'static str {
        match self {
            MetricsResource::Pods => "PodMetrics",
            MetricsResource::Nodes => "NodeMetrics",
        }
    }

    /// The resource metrics-server names in its errors.
    fn error_resource(self) -> &'static str {
        match self {
            MetricsResource::Pods => "podmetrics",
            MetricsResource::Nodes => "nodemetrics",
        }
    }
}

/// What a path under `/apis/metrics.k8s.io` addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricsTarget {
    /// `/apis/metrics.k8s.io`: the APIGroup.
    Group,
    /// `/apis/metrics.k8s.io/v1beta1`: the APIResourceList.
    Version,
    /// A collection or one object.
    Resource {
        resource: MetricsResource,
        namespace: Option<String>,
        name: Option<String>,
    },
    /// Anything else under the group: 404.
    Unknown,
}

/// The target of `path`, if it is under the group.
pub fn target(path: &str) -> Option<MetricsTarget> {
    let rest = path.strip_prefix(GROUP_PREFIX)?;
    if rest.is_empty() || rest == "/" {
        return Some(MetricsTarget::Group);
    }
    let rest = rest.strip_prefix('/')?;
    let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    if parts.first() != Some(&VERSION) {
        return Some(MetricsTarget::Unknown);
    }
    let named = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let resource = |resource, namespace: Option<&str>, name: Option<&str>| {
        let namespace = match namespace {
            Some(ns) => Some(named(ns)?),
            None => None,
        };
        let name = match name {
            Some(n) => Some(named(n)?),
            None => None,
        };
        Some(MetricsTarget::Resource {
            resource,
            namespace,
            name,
        })
    };
    let found = match parts[1..] {
        [] => Some(MetricsTarget::Version),
        ["nodes"] => resource(MetricsResource::Nodes, None, None),
        ["nodes", name] => resource(MetricsResource::Nodes, None, Some(name)),
        ["pods"] => resource(MetricsResource::Pods, None, None),
        ["namespaces", ns, "pods"] => resource(MetricsResource::Pods, Some(ns), None),
        ["namespaces", ns, "pods", name] => resource(MetricsResource::Pods, Some(ns), Some(name)),
        _ => None,
    };
    Some(found.unwrap_or(MetricsTarget::Unknown))
}

/// Serves one request under the group for `user` (authenticated, impersonation resolved).
pub(crate) async fn serve(
    server: &ApiServer,
    backend: SharedResourceMetrics,
    user: &UserInfo,
    target: MetricsTarget,
    request: Request,
) -> Response {
    let get_only = || {
        (request.method() != Method::GET)
            .then(|| error_response(&ApiError::method_not_allowed("only GET is allowed")))
    };
    match target {
        MetricsTarget::Group => {
            get_only().unwrap_or_else(|| json_response(StatusCode::OK, &group()))
        }
        MetricsTarget::Version => {
            get_only().unwrap_or_else(|| json_response(StatusCode::OK, &resource_list()))
        }
        MetricsTarget::Unknown => error_response(&ApiError::no_route()),
        MetricsTarget::Resource {
            resource,
            namespace,
            name,
        } => {
            match serve_resource(server, backend, user, resource, namespace, name, request).await {
                Ok(response) => response,
                Err(error) => error_response(&error),
            }
        }
    }
}

async fn serve_resource(
    server: &ApiServer,
    backend: SharedResourceMetrics,
    user: &UserInfo,
    resource: MetricsResource,
    namespace: Option<String>,
    name: Option<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let query = Query::parse(request.uri().query());
    let watch = query.flag("watch")?;
    let verb =
        crate::server::resource::method_verb(request.method().as_str(), name.is_some(), watch);
    let path = request.uri().path().to_owned();
    let attributes = RequestAttributes {
        user,
        verb,
        group: GROUP,
        resource: resource.plural(),
        subresource: "",
        namespace: namespace.as_deref(),
        name: name.as_deref(),
        path: &path,
    };
    let decision = server.authorizer.authorize(&attributes);
    if !decision.allowed {
        return Err(forbidden_error(&attributes, &decision));
    }
    if !matches!(verb, "get" | "list") {
        return Err(ApiError::method_not_allowed(format!(
            "{verb} is not supported on resources of kind \"{}.{GROUP}\": only get and list are",
            resource.plural()
        )));
    }
    let labels_text = query
        .get("labelSelector")
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned);
    let labels = match &labels_text {
        Some(text) => Some(label::parse(text).map_err(|e| {
            ApiError::bad_request(format!(
                "invalid labelSelector {text:?}: unable to parse requirement: {e}"
            ))
        })?),
        None => None,
    };
    let fields = match query.get("fieldSelector").filter(|s| !s.trim().is_empty()) {
        Some(text) => {
            let selector = field::parse(text).map_err(|e| {
                ApiError::bad_request(format!("invalid field selector {text:?}: {e}"))
            })?;
            if let Some(other) = selector
                .requirements
                .iter()
                .find(|r| !matches!(r.field.as_str(), "metadata.name" | "metadata.namespace"))
            {
                return Err(ApiError::bad_request(
                    field::FieldSelectorError::Unsupported(other.field.clone()).to_string(),
                ));
            }
            Some(selector)
        }
        None => None,
    };
    let backend_query = MetricsQuery {
        namespace: namespace.clone(),
        name: name.clone(),
        label_selector: if name.is_some() { None } else { labels_text },
    };
    let answer = match resource {
        MetricsResource::Pods => backend.pods(backend_query).await?,
        MetricsResource::Nodes => backend.nodes(backend_query).await?,
    };
    let meta = |item: &Value, key: &str| -> String {
        item["metadata"][key]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let mut items: Vec<Value> = answer
        .into_iter()
        .filter(|item| {
            let (ns, n) = (meta(item, "namespace"), meta(item, "name"));
            if namespace.as_ref().is_some_and(|want| *want != ns)
                || name.as_ref().is_some_and(|want| *want != n)
            {
                return false;
            }
            if name.is_some() {
                // A get is by name alone, as kube-apiserver ignores selectors on one.
                return true;
            }
            if let Some(selector) = &labels {
                let object_labels = &item["metadata"]["labels"];
                if !selector.matches_with(|key| object_labels[key].as_str()) {
                    return false;
                }
            }
            fields.as_ref().is_none_or(|selector| {
                selector.matches_with(|f| match f {
                    "metadata.name" => Some(n.clone()),
                    "metadata.namespace" => Some(ns.clone()),
                    _ => None,
                })
            })
        })
        .collect();
    items.sort_by_cached_key(|item| (meta(item, "namespace"), meta(item, "name")));
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let table = crate::table::wants_table(accept);
    if let Some(name) = &name {
        let Some(object) = items.into_iter().next() else {
            return Err(not_found(resource, namespace.as_deref(), name));
        };
        if table {
            return Ok(json_response(
                StatusCode::OK,
                &render_table(
                    resource,
                    std::slice::from_ref(&object),
                    query.get("includeObject"),
                ),
            ));
        }
        return Ok(json_response(StatusCode::OK, &object));
    }
    if table {
        return Ok(json_response(
            StatusCode::OK,
            &render_table(resource, &items, query.get("includeObject")),
        ));
    }
    Ok(json_response(
        StatusCode::OK,
        &json!({
            "kind": format!("{}List", resource.kind()),
            "apiVersion": API_VERSION,
            "metadata": {},
            "items": items,
        }),
    ))
}

/// metrics-server's NotFound: `podmetrics.metrics.k8s.io "ns/name" not found`.
fn not_found(resource: MetricsResource, namespace: Option<&str>, name: &str) -> ApiError {
    let name = match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_owned(),
    };
    ApiError::new(
        404,
        "NotFound",
        format!("{}.{GROUP} \"{name}\" not found", resource.error_resource()),
    )
    .with_details(Details {
        name,
        group: GROUP.to_owned(),
        kind: resource.plural().to_owned(),
        causes: Vec::new(),
    })
}

/// metrics-server's Table (`addPodMetricsToTable`, `addNodeMetricsToTable`): the name, one
/// column per resource (a pod's containers summed), the window.
fn render_table(resource: MetricsResource, items: &[Value], include_object: Option<&str>) -> Value {
    let quantity_column = |name: &str| json!({"name": name, "type": "string", "format": "quantity", "description": "", "priority": 0});
    let columns = json!([
        {"name": "Name", "type": "string", "format": "name", "description": "Name of the resource", "priority": 0},
        quantity_column("cpu"),
        quantity_column("memory"),
        {"name": "Window", "type": "string", "format": "duration", "description": "", "priority": 0},
    ]);
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            let usages: Vec<&Value> = match resource {
                MetricsResource::Pods => item["containers"]
                    .as_array()
                    .map(|c| c.iter().map(|c| &c["usage"]).collect())
                    .unwrap_or_default(),
                MetricsResource::Nodes => vec![&item["usage"]],
            };
            let total = |key: &str| {
                usages
                    .iter()
                    .filter_map(|u| u[key].as_str().and_then(|q| Quantity::parse(q).ok()))
                    .try_fold(None::<Quantity>, |sum, q| match sum {
                        None => Some(Some(q)),
                        Some(s) => s.checked_add(&q).map(Some),
                    })
                    .flatten()
                    .map(|q| q.to_string())
                    .unwrap_or_else(|| "0".to_owned())
            };
            let object = match include_object {
                Some("None") => Value::Null,
                Some("Object") => item.clone(),
                _ => json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": item["metadata"],
                }),
            };
            json!({
                "cells": [item["metadata"]["name"], total("cpu"), total("memory"), item["window"]],
                "object": object,
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": columns,
        "rows": rows,
    })
}

/// `APIGroup` for `/apis/metrics.k8s.io`.
pub fn group() -> Value {
    let mut doc = group_entry();
    doc["kind"] = "APIGroup".into();
    doc["apiVersion"] = "v1".into();
    doc
}

fn group_entry() -> Value {
    let version = json!({"groupVersion": API_VERSION, "version": VERSION});
    json!({"name": GROUP, "versions": [version], "preferredVersion": version})
}

/// `APIResourceList` for `/apis/metrics.k8s.io/v1beta1`.
pub fn resource_list() -> Value {
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": API_VERSION,
        "resources": [
            {"name": "nodes", "singularName": "", "namespaced": false, "kind": "NodeMetrics", "verbs": ["get", "list"]},
            {"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": ["get", "list"]},
        ],
    })
}

/// Adds the group to `/apis`'s `APIGroupList`.
pub fn add_to_group_list(doc: &mut Value) {
    if let Some(groups) = doc["groups"].as_array_mut()
        && !groups.iter().any(|g| g["name"] == GROUP)
    {
        groups.push(group_entry());
    }
}

/// Adds the group to `/apis`'s aggregated discovery (`APIGroupDiscoveryList`).
pub fn add_to_aggregated(doc: &mut Value) {
    let resource = |plural: &str, kind: &str, scope: &str| {
        json!({
            "resource": plural,
            "responseKind": {"group": GROUP, "version": VERSION, "kind": kind},
            "scope": scope,
            "singularResource": "",
            "verbs": ["get", "list"],
        })
    };
    if let Some(items) = doc["items"].as_array_mut()
        && !items.iter().any(|g| g["metadata"]["name"] == GROUP)
    {
        items.push(json!({
            "metadata": {"name": GROUP, "creationTimestamp": null},
            "versions": [{
                "version": VERSION,
                "resources": [
                    resource("nodes", "NodeMetrics", "Cluster"),
                    resource("pods", "PodMetrics", "Namespaced"),
                ],
                "freshness": "Current",
            }],
        }));
    }
}

/// A Go duration as `time.Duration.String()` writes it (`15s`, `1m0s`, `1.5s`, `500ms`): how
/// metrics-server writes `window`.
pub fn go_duration(duration: std::time::Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000_000_000 {
        let (unit, scale) = if nanos < 1_000 {
            ("ns", 1)
        } else if nanos < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{}{unit}", fraction(nanos, scale));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = (nanos / 60_000_000_000) % 60;
    let seconds = fraction(nanos % 60_000_000_000, 1_000_000_000);
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&format!("{seconds}s"));
    out
}

/// `value / scale` with the fraction's trailing zeros dropped.
fn fraction(value: u128, scale: u128) -> String {
    let whole = value / scale;
    let rest = value % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests;
