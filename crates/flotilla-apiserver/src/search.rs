//! karmada-search's two endpoints, served in process (Karmada runs them as an aggregated API
//! server):
//!
//! - `/apis/search.karmada.io/v1alpha1/search/cache/{native path}` (GET): the objects the
//!   multi-cluster cache holds for a Kubernetes path (`api/v1/nodes`,
//!   `apis/apps/v1/namespaces/ns/deployments`…), all members merged, each annotated with the
//!   member it came from (`resource.karmada.io/cached-from-cluster`). A resource no
//!   ResourceRegistry caches answers an empty list.
//! - `/apis/search.karmada.io/v1alpha1/proxying/{name}/proxy/{native path}`: a Kubernetes API
//!   over every member, usable as a kubeconfig server URL. Karmada's three plugins, in order:
//!   the **cache** answers get, list and watch of cached resources (multi-cluster resource
//!   versions and continue tokens); the **cluster** plugin forwards any other request on a
//!   cached resource to the one member holding the object (through the cluster proxy, as the
//!   caller; an update loses the cache annotation and gets back its member version); the
//!   **karmada** plugin serves everything else from this API server, as the caller.
//!
//! Authorization is that of the aggregated resources: `search` (verb `get`, name `cache`) and
//! `proxying` (verb from the method, name from the path, subresource `proxy`) in
//! `search.karmada.io`. The cache itself is injected ([`crate::Builder::search`]): this crate
//! knows nothing of members.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use base64::Engine as _;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};

use crate::auth::authn::UserInfo;
use crate::auth::authz::{RequestAttributes, forbidden_error};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::request::{Query, ResourcePath, Target, parse_path};
use crate::server::{ApiServer, Identity, MAX_BODY_BYTES, error_response, json_response};

/// The annotation naming the member a cached object came from.
pub const CACHE_SOURCE_ANNOTATION: &str = "resource.karmada.io/cached-from-cluster";

/// A resource as a native path names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResource {
    pub group: String,
    pub version: String,
    pub resource: String,
}

/// List and watch options passed to the cache.
#[derive(Debug, Clone, Default)]
pub struct SearchListOptions {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: Option<i64>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone, Default)]
pub struct SearchList {
    pub items: Vec<Value>,
    pub resource_version: String,
    pub continue_token: String,
}

/// One watch event.
#[derive(Debug, Clone)]
pub struct SearchEvent {
    pub type_: &'static str,
    pub object: Value,
}

/// The multi-cluster cache, as the server uses it.
pub trait SearchBackend: Send + Sync + fmt::Debug {
    /// Whether a ResourceRegistry names the resource (then the proxy serves it from members).
    fn registered(&self, resource: &SearchResource) -> bool;
    /// The `search/cache` view.
    fn search(
        &self,
        resource: &SearchResource,
        namespace: Option<&str>,
        name: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<Value>, ApiError>;
    /// The member holding the object.
    fn owner(
        &self,
        resource: &SearchResource,
        namespace: &str,
        name: &str,
    ) -> Result<String, ApiError>;
    /// The proxy's get.
    fn get(
        &self,
        resource: &SearchResource,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError>;
    /// The proxy's list.
    fn list(
        &self,
        resource: &SearchResource,
        namespace: Option<&str>,
        options: &SearchListOptions,
    ) -> Result<SearchList, ApiError>;
    /// The proxy's watch.
    fn watch(
        &self,
        resource: &SearchResource,
        namespace: Option<&str>,
        options: &SearchListOptions,
    ) -> Result<BoxStream<'static, SearchEvent>, ApiError>;
}

/// A shared hook.
pub type SharedSearch = Arc<dyn SearchBackend>;

const PREFIX: &str = "/apis/search.karmada.io/v1alpha1/";

/// Which endpoint a path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchTarget {
    /// `search/{category}/{native}`.
    Search { category: String, native: String },
    /// `proxying/{name}/proxy{native}`.
    Proxy { name: String, native: String },
}

/// The endpoint `path` addresses, if any.
pub fn target(path: &str) -> Option<SearchTarget> {
    let rest = path.strip_prefix(PREFIX)?;
    if let Some(rest) = rest.strip_prefix("search/") {
        let (category, native) = rest.split_once('/')?;
        if category.is_empty() {
            return None;
        }
        return Some(SearchTarget::Search {
            category: category.to_owned(),
            native: format!("/{native}"),
        });
    }
    let rest = rest.strip_prefix("proxying/")?;
    let (name, rest) = rest.split_once('/')?;
    let native = rest.strip_prefix("proxy")?;
    if name.is_empty() || !(native.is_empty() || native.starts_with('/')) {
        return None;
    }
    Some(SearchTarget::Proxy {
        name: name.to_owned(),
        native: if native.is_empty() {
            "/".to_owned()
        } else {
            native.to_owned()
        },
    })
}

/// Serves one search or proxying request for `user` (authenticated, impersonation resolved).
pub(crate) async fn serve(
    server: Arc<ApiServer>,
    user: UserInfo,
    target: SearchTarget,
    request: Request,
) -> Response {
    let path = request.uri().path().to_owned();
    let verb = crate::cluster_proxy::verb(request.method());
    let (resource, name, subresource, native) = match &target {
        SearchTarget::Search { category, native } => (
            "search",
            category.as_str(),
            native
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or(""),
            native.clone(),
        ),
        SearchTarget::Proxy { name, native } => {
            ("proxying", name.as_str(), "proxy", native.clone())
        }
    };
    let attributes = RequestAttributes {
        user: &user,
        verb: &verb,
        group: "search.karmada.io",
        resource,
        subresource,
        namespace: None,
        name: Some(name),
        path: &path,
    };
    let decision = server.authorizer.authorize(&attributes);
    if !decision.allowed {
        return error_response(&forbidden_error(&attributes, &decision));
    }
    match target {
        SearchTarget::Search { category, .. } => search_cache(&server, &category, &native, request),
        SearchTarget::Proxy { .. } => proxy(server, user, native, request).await,
    }
}

fn backend(server: &ApiServer) -> Result<&SharedSearch, ApiError> {
    server.search.as_ref().ok_or_else(|| {
        ApiError::new(
            503,
            "ServiceUnavailable",
            "karmada-search is not enabled on this server",
        )
    })
}

fn resource_of(path: &ResourcePath) -> SearchResource {
    SearchResource {
        group: path.group.clone(),
        version: path.version.clone(),
        resource: path.resource.clone(),
    }
}

fn served_kind(server: &ApiServer, path: &ResourcePath) -> Result<Arc<ResourceInfo>, ApiError> {
    server
        .registry
        .catalog()
        .get(&path.group, &path.version, &path.resource)
        .ok_or_else(ApiError::no_route)
}

/// `search/cache/…`: a list of the cached objects (GET only).
fn search_cache(server: &ApiServer, category: &str, native: &str, request: Request) -> Response {
    let result = (|| {
        if request.method() != Method::GET {
            return Err(ApiError::method_not_allowed(format!(
                "{} is not supported on search.karmada.io search: only GET is",
                request.method()
            )));
        }
        if category != "cache" {
            return Err(ApiError::new(
                404,
                "NotFound",
                format!(
                    "search category {category:?} is not served: Flotilla's karmada-search has the in-memory \"cache\" backend only"
                ),
            ));
        }
        let Some(Target::Resource(path)) = parse_path(native) else {
            return Err(ApiError::bad_request(format!(
                "k8s native Request URL({}) is not a resource request",
                native.trim_start_matches('/')
            )));
        };
        let info = served_kind(server, &path)?;
        let query = Query::parse(request.uri().query());
        let items = backend(server)?.search(
            &resource_of(&path),
            path.namespace.as_deref(),
            path.name.as_deref(),
            query.get("labelSelector"),
        )?;
        Ok(json!({
            "kind": format!("{}List", info.kind),
            "apiVersion": info.api_version(),
            "metadata": {},
            "items": items,
        }))
    })();
    match result {
        Ok(list) => {
            let mut response = json_response(StatusCode::OK, &list);
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            response
        }
        Err(error) => error_response(&error),
    }
}

/// `proxying/{name}/proxy/…`: the plugin that takes the request.
async fn proxy(
    server: Arc<ApiServer>,
    user: UserInfo,
    native: String,
    request: Request,
) -> Response {
    let query = Query::parse(request.uri().query());
    if let Some(Target::Resource(path)) = parse_path(&native)
        && let Some(search) = server.search.clone()
    {
        let resource = resource_of(&path);
        if search.registered(&resource) {
            let verb = crate::server::resource_verb(request.method(), &path, &query);
            if path.subresource.is_none() && matches!(verb, "get" | "list" | "watch") {
                return match from_cache(&server, search.as_ref(), &path, verb, &query, &request) {
                    Ok(response) => response,
                    Err(error) => error_response(&error),
                };
            }
            return match to_member(&server, search.as_ref(), &user, &path, verb, request).await {
                Ok(response) => response,
                Err(error) => error_response(&error),
            };
        }
    }
    to_karmada(server, user, &native, request).await
}

fn list_options(query: &Query) -> Result<SearchListOptions, ApiError> {
    let limit = match query.get("limit").filter(|l| !l.is_empty()) {
        None => None,
        Some(text) => Some(text.parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!("invalid value {text:?} for query parameter limit"))
        })?),
    };
    let text = |key: &str| query.get(key).filter(|v| !v.is_empty()).map(str::to_owned);
    Ok(SearchListOptions {
        label_selector: text("labelSelector"),
        field_selector: text("fieldSelector"),
        limit,
        continue_token: text("continue"),
        resource_version: text("resourceVersion"),
    })
}

/// The cache plugin.
fn from_cache(
    server: &ApiServer,
    search: &dyn SearchBackend,
    path: &ResourcePath,
    verb: &str,
    query: &Query,
    request: &Request,
) -> Result<Response, ApiError> {
    let info = served_kind(server, path)?;
    let resource = resource_of(path);
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let table = crate::table::wants_table(accept);
    let now = jiff::Timestamp::now();
    match verb {
        "get" => {
            let name = path.name.as_deref().unwrap_or_default();
            let object = search.get(&resource, path.namespace.as_deref().unwrap_or(""), name)?;
            if table {
                let mut rendered = crate::table::render(
                    &info,
                    std::slice::from_ref(&object),
                    0,
                    None,
                    now,
                    query.get("includeObject"),
                );
                rendered["metadata"]["resourceVersion"] =
                    object["metadata"]["resourceVersion"].clone();
                return Ok(json_response(StatusCode::OK, &rendered));
            }
            Ok(json_response(StatusCode::OK, &object))
        }
        "list" => {
            let options = list_options(query)?;
            let page = search.list(&resource, path.namespace.as_deref(), &options)?;
            let mut metadata = json!({"resourceVersion": page.resource_version});
            if !page.continue_token.is_empty() {
                metadata["continue"] = Value::String(page.continue_token.clone());
            }
            if table {
                let mut rendered = crate::table::render(
                    &info,
                    &page.items,
                    0,
                    None,
                    now,
                    query.get("includeObject"),
                );
                rendered["metadata"] = metadata;
                return Ok(json_response(StatusCode::OK, &rendered));
            }
            Ok(json_response(
                StatusCode::OK,
                &json!({
                    "kind": info.list_kind,
                    "apiVersion": info.api_version(),
                    "metadata": metadata,
                    "items": page.items,
                }),
            ))
        }
        _ => {
            let options = list_options(query)?;
            let timeout = query
                .get("timeoutSeconds")
                .and_then(|t| t.parse::<u64>().ok())
                .filter(|t| *t > 0)
                .unwrap_or(1800);
            let events = match search.watch(&resource, path.namespace.as_deref(), &options) {
                Ok(events) => events,
                // kube-apiserver reports an expired version inside the watch, as an ERROR event.
                Err(error) if error.code == 410 => {
                    let status = error.to_status();
                    futures::stream::once(async move {
                        SearchEvent {
                            type_: "ERROR",
                            object: status,
                        }
                    })
                    .boxed()
                }
                Err(error) => return Err(error),
            };
            let deadline = tokio::time::sleep(Duration::from_secs(timeout));
            // kubectl's `get -w` asks for Tables: each event then carries a one-row Table.
            let include_object = query.get("includeObject").map(str::to_owned);
            let frames = events.take_until(deadline).map(move |event| {
                let object = if table && event.type_ != "ERROR" {
                    let version = event.object["metadata"]["resourceVersion"].clone();
                    let mut rendered = crate::table::render(
                        &info,
                        std::slice::from_ref(&event.object),
                        0,
                        None,
                        jiff::Timestamp::now(),
                        include_object.as_deref(),
                    );
                    rendered["metadata"] = json!({"resourceVersion": version});
                    rendered
                } else {
                    event.object
                };
                let mut line = serde_json::to_vec(&json!({
                    "type": event.type_,
                    "object": object,
                }))
                .expect("JSON values serialize");
                line.push(b'\n');
                Ok::<_, Infallible>(bytes::Bytes::from(line))
            });
            let mut response = Response::new(Body::from_stream(frames));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache, private"),
            );
            Ok(response)
        }
    }
}

/// The cluster plugin: the request goes to the member holding the object.
async fn to_member(
    server: &ApiServer,
    search: &dyn SearchBackend,
    user: &UserInfo,
    path: &ResourcePath,
    verb: &str,
    request: Request,
) -> Result<Response, ApiError> {
    let resource = resource_of(path);
    let Some(name) = path.name.as_deref() else {
        if verb == "create" {
            let group_resource = if path.group.is_empty() {
                path.resource.clone()
            } else {
                format!("{}.{}", path.resource, path.group)
            };
            return Err(ApiError::new(
                405,
                "MethodNotAllowed",
                format!("{verb} is not supported on resources of kind {group_resource:?}"),
            ));
        }
        return Err(ApiError::method_not_allowed(format!(
            "{verb} of a collection of {} is not supported through the search proxy: name one object",
            path.resource
        )));
    };
    let cluster = search.owner(&resource, path.namespace.as_deref().unwrap_or(""), name)?;
    let proxy = server.cluster_proxy.clone().ok_or_else(|| {
        ApiError::new(
            503,
            "ServiceUnavailable",
            "the cluster proxy is not enabled on this server",
        )
    })?;
    let (parts, body) = request.into_parts();
    let mut body = http_body_util::Limited::new(body, MAX_BODY_BYTES)
        .collect()
        .await
        .map_err(|_| {
            ApiError::new(
                413,
                "RequestEntityTooLarge",
                "the request body is too large for the search proxy",
            )
        })?
        .to_bytes();
    let mut content_type = parts.headers.get(header::CONTENT_TYPE).cloned();
    if verb == "update" && !body.is_empty() {
        let media = crate::server::body::content_type(&parts.headers);
        let mut object = crate::server::body::decode_object(&media, &body)?;
        if restore_member_object(&mut object, &cluster) {
            body = serde_json::to_vec(&object)
                .expect("JSON values serialize")
                .into();
            content_type = Some(HeaderValue::from_static("application/json"));
        }
    }
    let native = member_path(path);
    let uri = match parts.uri.query() {
        Some(q) => format!("{native}?{q}"),
        None => native,
    };
    let mut builder = http::Request::builder().method(parts.method).uri(uri);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE {
            builder = builder.header(name, value);
        }
    }
    if let Some(content_type) = content_type {
        builder = builder.header(header::CONTENT_TYPE, content_type);
    }
    let forwarded = builder
        .body(body)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    proxy.forward(cluster, user.clone(), forwarded).await
}

/// The member path of a native resource path.
fn member_path(path: &ResourcePath) -> String {
    let mut out = if path.group.is_empty() {
        format!("/api/{}", path.version)
    } else {
        format!("/apis/{}/{}", path.group, path.version)
    };
    if let Some(ns) = &path.namespace {
        out.push_str(&format!("/namespaces/{ns}"));
    }
    out.push('/');
    out.push_str(&path.resource);
    if let Some(name) = &path.name {
        out.push('/');
        out.push_str(name);
    }
    if let Some(sub) = &path.subresource {
        out.push('/');
        out.push_str(sub);
    }
    out
}

/// What the cluster plugin does to an update's object before the member sees it: the cache
/// annotation goes, and a multi-cluster `resourceVersion` becomes the member's own. `true`
/// when something changed.
pub fn restore_member_object(object: &mut Value, cluster: &str) -> bool {
    let mut changed = false;
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return false;
    };
    if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut)
        && annotations.remove(CACHE_SOURCE_ANNOTATION).is_some()
    {
        changed = true;
    }
    if let Some(version) = meta.get("resourceVersion").and_then(Value::as_str)
        && let Some(member) = member_version(version, cluster)
    {
        meta.insert("resourceVersion".into(), Value::String(member));
        changed = true;
    }
    changed
}

/// The member's version in a multi-cluster version (base64url of a JSON map by cluster).
fn member_version(text: &str, cluster: &str) -> Option<String> {
    if text.is_empty() || text == "0" {
        return None;
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .ok()?;
    let versions: std::collections::BTreeMap<String, String> =
        serde_json::from_slice(&bytes).ok()?;
    Some(versions.get(cluster).cloned().unwrap_or_default())
}

/// The karmada plugin: this API server answers, as the caller.
fn to_karmada(
    server: Arc<ApiServer>,
    user: UserInfo,
    native: &str,
    request: Request,
) -> Pin<Box<dyn Future<Output = Response> + Send>> {
    let (mut parts, body) = request.into_parts();
    let uri = match parts.uri.query() {
        Some(q) => format!("{native}?{q}"),
        None => native.to_owned(),
    };
    Box::pin(async move {
        parts.uri = match uri.parse() {
            Ok(uri) => uri,
            Err(_) => return error_response(&ApiError::bad_request("invalid proxied path")),
        };
        let impersonation: Vec<header::HeaderName> = parts
            .headers
            .keys()
            .filter(|name| name.as_str().starts_with("impersonate-"))
            .cloned()
            .collect();
        for name in impersonation {
            parts.headers.remove(name);
        }
        parts.extensions.insert(Identity(Some(user)));
        crate::server::dispatch_request(server, Request::from_parts(parts, body)).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_the_endpoint_and_the_native_path() {
        assert_eq!(
            target("/apis/search.karmada.io/v1alpha1/search/cache/api/v1/nodes"),
            Some(SearchTarget::Search {
                category: "cache".into(),
                native: "/api/v1/nodes".into(),
            })
        );
        assert_eq!(
            target(
                "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/apis/apps/v1/namespaces/a/deployments"
            ),
            Some(SearchTarget::Proxy {
                name: "karmada".into(),
                native: "/apis/apps/v1/namespaces/a/deployments".into(),
            })
        );
        assert_eq!(
            target("/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"),
            Some(SearchTarget::Proxy {
                name: "karmada".into(),
                native: "/".into(),
            })
        );
        // The stored kind and anything else are not these endpoints.
        assert_eq!(
            target("/apis/search.karmada.io/v1alpha1/resourceregistries"),
            None
        );
        assert_eq!(
            target("/apis/search.karmada.io/v1alpha1/proxying/karmada/proxyx"),
            None
        );
        assert_eq!(
            target("/apis/search.karmada.io/v1alpha1/search/cache"),
            None
        );
        assert_eq!(target("/api/v1/nodes"), None);
    }

    #[test]
    fn an_update_gets_its_member_version_back_without_the_cache_annotation() {
        use base64::Engine as _;
        let version = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"member1":"42","member2":"7"}"#);
        let mut object = json!({"metadata": {
            "name": "n",
            "resourceVersion": version,
            "annotations": {CACHE_SOURCE_ANNOTATION: "member2", "keep": "me"},
        }});
        assert!(restore_member_object(&mut object, "member2"));
        assert_eq!(object["metadata"]["resourceVersion"], "7");
        assert_eq!(object["metadata"]["annotations"], json!({"keep": "me"}));
        // A plain member version and no annotation: nothing to change.
        let mut plain = json!({"metadata": {"name": "n", "resourceVersion": "7"}});
        assert!(!restore_member_object(&mut plain, "member2"));
        assert_eq!(plain["metadata"]["resourceVersion"], "7");
    }
}
