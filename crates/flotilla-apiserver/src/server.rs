//! The HTTP face of the API server: one axum fallback handler that parses Kubernetes paths
//! itself (CRDs appear at run time), authentication and authorization, and the dispatch to
//! discovery, OpenAPI, health and resource handlers.

pub mod body;
mod list_body;
pub(crate) mod resource;
mod watch;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};

use crate::auth::authn::UserInfo;
use crate::auth::authz::{Authorizer, RequestAttributes, forbidden_error};
use crate::auth::endpoints::Endpoint;
use crate::auth::rbac::Rbac;
use crate::auth::service_accounts::ServiceAccountTokens;
use crate::error::ApiError;
use crate::registry::Registry;
use crate::request::{Query, Target, parse_path};
use crate::{discovery, openapi};

/// The largest request body accepted (Kubernetes' limit is 3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The version reported on `/version`.
pub const KUBERNETES_VERSION: (&str, &str) = ("1", "32");

/// Shared state of the HTTP layer.
#[derive(Debug, Clone)]
pub struct ApiServer {
    pub(crate) registry: Registry,
    pub(crate) authorizer: Authorizer,
    pub(crate) service_accounts: Option<Arc<ServiceAccountTokens>>,
    pub(crate) cluster_proxy: Option<crate::cluster_proxy::SharedClusterProxy>,
    /// karmada-search's cache (see [`crate::search`]).
    pub(crate) search: Option<crate::search::SharedSearch>,
    /// The resource metrics API's backend (see [`crate::resource_metrics`]).
    pub(crate) resource_metrics: Option<crate::resource_metrics::SharedResourceMetrics>,
    /// The containers behind `pods/log` and `pods/exec` (see [`crate::kubelet`]).
    pub(crate) kubelet: Option<crate::kubelet::SharedKubelet>,
    /// Users whose writes are not recorded in managedFields (see
    /// [`crate::Builder::untracked_writer`]).
    pub(crate) untracked_writers: Vec<String>,
    /// kube-apiserver's request metrics (see [`crate::metrics`]).
    pub(crate) metrics: crate::metrics::ApiMetrics,
    /// What `/metrics` on the API port serves, once bound.
    pub(crate) metrics_text: crate::metrics::SharedMetricsText,
    /// Set when the process starts shutting down: `/readyz` fails from then on.
    pub(crate) shutting_down: Arc<std::sync::atomic::AtomicBool>,
    /// kube-apiserver's `--shutdown-delay-duration`: how long [`crate::serve::serve_tls`] keeps
    /// serving (with `/readyz` failing) after the shutdown signal, for load balancers to notice.
    pub(crate) shutdown_delay: std::time::Duration,
}

/// The identity of the caller, set per connection (client certificate) or per request (token)
/// by the serving layer; requests without one are anonymous.
#[derive(Debug, Clone)]
pub struct Identity(pub Option<UserInfo>);

impl ApiServer {
    pub fn new(registry: Registry) -> Self {
        let rbac = Arc::new(Rbac::new(registry.cache().clone()));
        ApiServer {
            registry,
            authorizer: Authorizer::with_rbac(rbac),
            service_accounts: None,
            cluster_proxy: None,
            search: None,
            resource_metrics: None,
            kubelet: None,
            untracked_writers: Vec::new(),
            metrics: crate::metrics::ApiMetrics::default(),
            metrics_text: crate::metrics::SharedMetricsText::default(),
            shutting_down: Arc::default(),
            shutdown_delay: std::time::Duration::ZERO,
        }
    }

    /// The same server, serving `delay` longer after the shutdown signal with `/readyz`
    /// failing (kube-apiserver's `--shutdown-delay-duration`).
    pub fn with_shutdown_delay(mut self, delay: std::time::Duration) -> Self {
        self.shutdown_delay = delay;
        self
    }

    /// Marks the server as shutting down: `/readyz` fails (`[-]shutdown failed`).
    pub fn begin_shutdown(&self) {
        self.shutting_down
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Whether [`ApiServer::begin_shutdown`] was called.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// The request metrics, for the embedding process to register.
    pub fn metrics(&self) -> &crate::metrics::ApiMetrics {
        &self.metrics
    }

    /// Registers every metric the server keeps: its request metrics and karmada-webhook's.
    pub fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        self.metrics.register(registry);
        self.registry.webhooks.register(registry);
        registry.register_collector(Box::new(crate::metrics::StorageObjects::new(
            self.registry.cache.clone(),
        )));
    }

    /// Where the embedding process binds what `/metrics` on the API port serves.
    pub fn metrics_text(&self) -> &crate::metrics::SharedMetricsText {
        &self.metrics_text
    }

    /// Serves TokenRequest with these tokens.
    pub fn with_service_accounts(mut self, tokens: Arc<ServiceAccountTokens>) -> Self {
        self.service_accounts = Some(tokens);
        self
    }

    /// The service-account token issuer and checker, if the server has one.
    pub fn service_accounts(&self) -> Option<&Arc<ServiceAccountTokens>> {
        self.service_accounts.as_ref()
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The whole API as an axum router (a tower service).
    pub fn router(self) -> Router {
        Router::new().fallback(dispatch).with_state(Arc::new(self))
    }
}

async fn dispatch(State(server): State<Arc<ApiServer>>, request: Request) -> Response {
    let observation = server.metrics.begin(&request);
    let response = dispatch_request(server, request).await;
    match observation {
        Some(observation) => observation.finish(response),
        None => response,
    }
}

/// The verb of a resource request (for the search proxy's plugins).
pub(crate) fn resource_verb(
    method: &Method,
    target: &crate::request::ResourcePath,
    query: &Query,
) -> &'static str {
    resource::verb(method, target, query)
}

/// Serves one request (boxed: the search proxy serves requests through it again).
pub(crate) fn dispatch_request(
    server: Arc<ApiServer>,
    request: Request,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>> {
    Box::pin(dispatch_inner(server, request))
}

async fn dispatch_inner(server: Arc<ApiServer>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let identity = request
        .extensions()
        .get::<Identity>()
        .and_then(|i| i.0.clone());
    let span = tracing::debug_span!("request", %method, %path, user = identity.as_ref().map(|u| u.name.as_str()).unwrap_or("anonymous"));
    let _enter = span.enter();
    if let Some(response) = crate::health::serve(&server, &path, request.uri().query()).await {
        return response;
    }
    if path == "/version" {
        return json_response(StatusCode::OK, &version());
    }
    let Some(user) = identity else {
        return error_response(&ApiError::unauthorized());
    };
    if let Some((cluster, member_path)) = crate::cluster_proxy::target(&path) {
        let (cluster, member_path) = (cluster.to_owned(), member_path.to_owned());
        return crate::cluster_proxy::serve(&server, &user, &cluster, &member_path, request).await;
    }
    let user = match crate::auth::impersonation::impersonate(
        &server.authorizer,
        user,
        request.headers(),
        &path,
    ) {
        Ok(user) => user,
        Err(error) => return error_response(&error),
    };
    if path == "/metrics" {
        return serve_metrics(&server, &user, &method, &path);
    }
    if let Some(target) = crate::search::target(&path) {
        return crate::search::serve(server, user, target, request).await;
    }
    if let Some(metrics) = server.resource_metrics.clone()
        && let Some(target) = crate::resource_metrics::target(&path)
    {
        return crate::resource_metrics::serve(&server, metrics, &user, target, request).await;
    }
    let query = Query::parse(request.uri().query());
    if let Some(reply) = openapi::v2::respond(server.registry.catalog(), &path, request.headers()) {
        return reply;
    }
    if let Some(rest) = path.strip_prefix("/openapi/v3") {
        return match openapi::serve(&server.registry, rest) {
            Ok(doc) => json_response(StatusCode::OK, &doc),
            Err(e) => error_response(&e),
        };
    }
    let Some(target) = parse_path(&path) else {
        return error_response(&ApiError::no_route());
    };
    let accept = request
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    match target {
        Target::Root { legacy } => {
            if method != Method::GET {
                return error_response(&ApiError::method_not_allowed("only GET is allowed"));
            }
            let catalog = server.registry.catalog();
            // The metrics API is served beside the catalog, as an aggregated API would be.
            let metrics = !legacy && server.resource_metrics.is_some();
            if let Some(version) = discovery::wants_aggregated(&accept) {
                let key = format!(
                    "aggregated/{version}/{legacy}{}",
                    if metrics { "/metrics" } else { "" }
                );
                let doc = catalog.document(&key, |catalog| {
                    let mut doc = discovery::aggregated(catalog, legacy, version);
                    if metrics {
                        crate::resource_metrics::add_to_aggregated(&mut doc);
                    }
                    serde_json::to_vec(&doc)
                        .expect("JSON values serialize")
                        .into()
                });
                let mut response = json_bytes(StatusCode::OK, doc);
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_str(&discovery::aggregated_content_type(version))
                        .expect("a valid header value"),
                );
                response
            } else if legacy {
                json_response(StatusCode::OK, &discovery::api_versions())
            } else {
                let mut doc = discovery::group_list(catalog);
                if metrics {
                    crate::resource_metrics::add_to_group_list(&mut doc);
                }
                json_response(StatusCode::OK, &doc)
            }
        }
        Target::Group { group } => match discovery::group(server.registry.catalog(), &group) {
            Some(doc) => json_response(StatusCode::OK, &doc),
            None => error_response(&ApiError::no_route()),
        },
        Target::GroupVersion { group, version } => {
            match discovery::resource_list(server.registry.catalog(), &group, &version) {
                Some(doc) => json_response(StatusCode::OK, &doc),
                None => error_response(&ApiError::no_route()),
            }
        }
        Target::Resource(target) => {
            if crate::cluster_health::is_health_view(&method, &target) {
                return crate::cluster_health::serve(&server, &user, &path).await;
            }
            // Authorization comes before routing, as in kube-apiserver: a caller learns nothing
            // about resources it may not use.
            let verb = resource::verb(&method, &target, &query);
            let attributes = RequestAttributes {
                user: &user,
                verb,
                group: &target.group,
                resource: &target.resource,
                subresource: target.subresource.as_deref().unwrap_or(""),
                namespace: target.namespace.as_deref(),
                name: target.name.as_deref(),
                path: &path,
            };
            let decision = server.authorizer.authorize(&attributes);
            if !decision.allowed {
                return error_response(&forbidden_error(&attributes, &decision));
            }
            if let Some(endpoint) = Endpoint::of(&target) {
                return crate::auth::endpoints::serve(
                    &server, endpoint, &user, &target, &method, request,
                )
                .await;
            }
            let Some(info) =
                server
                    .registry
                    .catalog()
                    .get(&target.group, &target.version, &target.resource)
            else {
                return error_response(&ApiError::new(
                    404,
                    "NotFound",
                    format!(
                        "the server could not find the requested resource (resource {:?} in group-version \"{}\")",
                        target.resource,
                        if target.group.is_empty() {
                            target.version.clone()
                        } else {
                            format!("{}/{}", target.group, target.version)
                        }
                    ),
                ));
            };
            resource::handle(&server, &user, info, target, method, query, accept, request).await
        }
    }
}

/// `/metrics` on the API port: the process's metrics for callers allowed `get` on the
/// non-resource URL `/metrics` (as kube-apiserver; `system:monitoring` and admins are).
fn serve_metrics(server: &ApiServer, user: &UserInfo, method: &Method, path: &str) -> Response {
    let attributes = RequestAttributes {
        user,
        verb: "get",
        group: "",
        resource: "",
        subresource: "",
        namespace: None,
        name: None,
        path,
    };
    let decision = server.authorizer.authorize(&attributes);
    if !decision.allowed {
        return error_response(&forbidden_error(&attributes, &decision));
    }
    if method != Method::GET {
        return error_response(&ApiError::method_not_allowed("only GET is allowed"));
    }
    let Some(text) = server.metrics_text.get() else {
        return error_response(&ApiError::no_route());
    };
    match text() {
        Ok(text) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(_) => error_response(&ApiError::internal("encoding the metrics failed")),
    }
}

fn version() -> serde_json::Value {
    let (major, minor) = KUBERNETES_VERSION;
    serde_json::json!({
        "major": major,
        "minor": minor,
        "gitVersion": format!("v{major}.{minor}.0-flotilla.{}", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

pub(crate) fn json_response(status: StatusCode, value: &serde_json::Value) -> Response {
    let body = serde_json::to_vec(value).expect("JSON values serialize");
    json_bytes(status, body.into())
}

pub(crate) fn json_bytes(status: StatusCode, body: bytes::Bytes) -> Response {
    json_body(status, Body::from(body))
}

pub(crate) fn json_body(status: StatusCode, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The one place errors become responses.
pub(crate) fn error_response(error: &ApiError) -> Response {
    if error.code >= 500 {
        tracing::warn!(code = error.code, reason = error.reason, message = %error.message, "request failed");
    }
    let status = StatusCode::from_u16(error.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, &error.to_status())
}
