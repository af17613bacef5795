//! kube-apiserver's request metrics, with its names and labels (see
//! [`crate::lifted::request_metrics`] for how requests are labelled):
//!
//! * `apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}`
//! * `apiserver_request_duration_seconds{verb,dry_run,group,version,resource,subresource,scope,component}`
//!   (kube's buckets, 5 ms … 60 s)
//! * `apiserver_longrunning_requests{verb,group,version,resource,subresource,scope,component}`:
//!   watches and streaming subresources open now
//! * `apiserver_current_inflight_requests{request_kind}`: `readOnly` and `mutating` requests
//!   being served now
//!
//! Every request through the API server is counted, whoever sends it: kubectl, the members'
//! agents, and the control plane's own controllers (their in-process client goes through the same
//! router, as Karmada's controllers' requests go through kube-apiserver). Long-running requests
//! are counted when they end, with their whole duration, as kube does. A non-resource request
//! carries its path in `subresource` (discovery, `/openapi/…`, `/version`, `/healthz`, `/metrics`);
//! paths the server does not know are not recorded.
//!
//! Served on the API port at `/metrics` (authorized as the non-resource URL `/metrics`, verb
//! `get`, as kube-apiserver does) once the embedding process binds its registry
//! ([`SharedMetricsText`]).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::lifted::request_metrics::{self, RequestFacts};

/// The `component` label.
pub const COMPONENT: &str = "apiserver";

/// kube's `apiserver_request_duration_seconds` buckets.
const LATENCY_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The labels of a request's latency, in kube's order.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LatencyLabels {
    pub verb: &'static str,
    pub dry_run: &'static str,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub scope: &'static str,
    pub component: &'static str,
}

/// [`LatencyLabels`] and the response's `code`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    #[prometheus(flatten)]
    pub request: LatencyLabels,
    pub code: String,
}

/// [`LatencyLabels`] without `dry_run`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LongRunningLabels {
    pub verb: &'static str,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub scope: &'static str,
    pub component: &'static str,
}

/// `request_kind`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct InflightLabels {
    pub request_kind: &'static str,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The API server's request metrics.
#[derive(Debug, Clone)]
pub struct ApiMetrics {
    pub requests: Family<RequestLabels, Counter>,
    pub latency: Family<LatencyLabels, Histogram, fn() -> Histogram>,
    pub longrunning: Family<LongRunningLabels, Gauge>,
    pub inflight: Family<InflightLabels, Gauge>,
    read_only: Arc<AtomicI64>,
    mutating: Arc<AtomicI64>,
}

impl Default for ApiMetrics {
    fn default() -> Self {
        let inflight = Family::<InflightLabels, Gauge>::default();
        // Both kinds are reported from the start, as kube does.
        for request_kind in ["readOnly", "mutating"] {
            let _ = inflight.get_or_create(&InflightLabels { request_kind });
        }
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            longrunning: Family::default(),
            inflight,
            read_only: Arc::default(),
            mutating: Arc::default(),
        }
    }
}

impl ApiMetrics {
    /// Registers the families under kube-apiserver's names.
    pub fn register(&self, registry: &mut Registry) {
        let apiserver = registry.sub_registry_with_prefix("apiserver");
        apiserver.register(
            "request",
            "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            self.requests.clone(),
        );
        apiserver.register(
            "request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            self.latency.clone(),
        );
        apiserver.register(
            "longrunning_requests",
            "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component.",
            self.longrunning.clone(),
        );
        apiserver.register(
            "current_inflight_requests",
            "Number of requests of each kind (readOnly, mutating) being served.",
            self.inflight.clone(),
        );
    }

    /// Starts observing `request`; `None` for paths that are not recorded.
    pub fn begin(&self, request: &Request) -> Option<Observation> {
        let described = describe(request)?;
        let long_running = described.long_running;
        let kind = (!long_running).then(|| {
            let (counter, request_kind) = if described.read_only {
                (&self.read_only, "readOnly")
            } else {
                (&self.mutating, "mutating")
            };
            let now = counter.fetch_add(1, Ordering::Relaxed) + 1;
            self.inflight
                .get_or_create(&InflightLabels { request_kind })
                .set(now);
            (counter.clone(), request_kind)
        });
        if long_running {
            self.longrunning
                .get_or_create(&long_running_labels(&described.labels))
                .inc();
        }
        Some(Observation {
            metrics: self.clone(),
            labels: RequestLabels {
                request: described.labels,
                code: String::new(),
            },
            long_running,
            kind,
            start: Instant::now(),
        })
    }
}

/// A request being served.
#[derive(Debug)]
pub struct Observation {
    metrics: ApiMetrics,
    /// The request's labels; `code` is filled in when it is recorded.
    labels: RequestLabels,
    long_running: bool,
    kind: Option<(Arc<AtomicI64>, &'static str)>,
    start: Instant,
}

impl Observation {
    /// Records the request when `response` is complete: now for an ordinary request, when its
    /// body ends (or the client goes) for a long-running one.
    pub fn finish(mut self, response: Response) -> Response {
        let code = response.status().as_u16();
        if !self.long_running {
            self.record(code);
            return response;
        }
        let (parts, body) = response.into_parts();
        let guarded = Body::new(Guarded {
            inner: body,
            done: Some(Done {
                observation: self,
                code,
            }),
        });
        Response::from_parts(parts, guarded)
    }

    fn record(&mut self, code: u16) {
        self.metrics
            .latency
            .get_or_create(&self.labels.request)
            .observe(self.start.elapsed().as_secs_f64());
        self.labels.code = code.to_string();
        self.metrics.requests.get_or_create(&self.labels).inc();
        if let Some((counter, request_kind)) = &self.kind {
            let now = counter.fetch_sub(1, Ordering::Relaxed) - 1;
            self.metrics
                .inflight
                .get_or_create(&InflightLabels { request_kind })
                .set(now);
        }
    }
}

/// Records a long-running request once its body is dropped.
struct Done {
    observation: Observation,
    code: u16,
}

impl Drop for Done {
    fn drop(&mut self) {
        self.observation.record(self.code);
        self.observation
            .metrics
            .longrunning
            .get_or_create(&long_running_labels(&self.observation.labels.request))
            .dec();
    }
}

/// A response body that records its request when it is dropped.
struct Guarded {
    inner: Body,
    done: Option<Done>,
}

impl http_body::Body for Guarded {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        if let std::task::Poll::Ready(None) = polled {
            // The stream ended: record now rather than when the connection lets go of it.
            self.done.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// What a request is, for its labels.
struct Described {
    labels: LatencyLabels,
    long_running: bool,
    read_only: bool,
}

/// The long-running gauge's labels: the request's without `dry_run`.
fn long_running_labels(l: &LatencyLabels) -> LongRunningLabels {
    LongRunningLabels {
        verb: l.verb,
        group: l.group.clone(),
        version: l.version.clone(),
        resource: l.resource.clone(),
        subresource: l.subresource.clone(),
        scope: l.scope,
        component: l.component,
    }
}

/// The non-resource paths that are recorded (with the path as `subresource`).
fn known_non_resource(path: &str) -> bool {
    matches!(
        path,
        "/api" | "/apis" | "/version" | "/healthz" | "/livez" | "/readyz" | "/metrics"
    ) || path.starts_with("/openapi/")
}

fn describe(request: &Request) -> Option<Described> {
    let path = request.uri().path();
    let method = request.method().as_str();
    let query = request.uri().query().unwrap_or("");
    let param = |key: &str| {
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == key).then_some(v)
        })
    };
    let read_only = matches!(method, "GET" | "HEAD");
    let Some(info) = resource_info(path) else {
        // Discovery of a group or version is a resource-less path too.
        let discovery =
            path.starts_with("/apis/") && path.matches('/').count() <= 3 || path == "/api/v1";
        if !(known_non_resource(path) || discovery) {
            return None;
        }
        return Some(Described {
            labels: LatencyLabels {
                verb: request_metrics::verb(
                    &RequestFacts {
                        method,
                        verb: "",
                        namespace: None,
                        name: None,
                        subresource: None,
                        watch: false,
                        apply: false,
                    },
                    "",
                ),
                dry_run: "",
                group: String::new(),
                version: String::new(),
                resource: String::new(),
                subresource: path.to_owned(),
                scope: "",
                component: COMPONENT,
            },
            long_running: false,
            read_only,
        });
    };
    let watch = param("watch").is_some_and(|v| !matches!(v, "" | "0" | "false" | "False"));
    let apply = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/apply-patch"));
    let verb = crate::server::resource::method_verb(method, info.name.is_some(), watch);
    let facts = RequestFacts {
        method,
        verb,
        namespace: info.namespace,
        name: info.name,
        subresource: info.subresource,
        watch,
        apply,
    };
    let scope = request_metrics::scope(&facts);
    Some(Described {
        labels: LatencyLabels {
            verb: request_metrics::verb(&facts, scope),
            dry_run: request_metrics::dry_run(param("dryRun")),
            group: info.group.to_owned(),
            version: info.version.to_owned(),
            resource: info.resource.to_owned(),
            subresource: info.subresource.unwrap_or("").to_owned(),
            scope,
            component: COMPONENT,
        },
        long_running: request_metrics::long_running(&facts),
        read_only,
    })
}

/// kube's `RequestInfo` for a resource path (`/api/v1/…`, `/apis/<group>/<version>/…`): the
/// first three parts after the namespace are resource, name and subresource; more are ignored.
struct ResourceInfo<'a> {
    group: &'a str,
    version: &'a str,
    namespace: Option<&'a str>,
    resource: &'a str,
    name: Option<&'a str>,
    subresource: Option<&'a str>,
}

fn resource_info(path: &str) -> Option<ResourceInfo<'_>> {
    let mut parts = path.trim_start_matches('/').split('/');
    let (group, version) = match parts.next()? {
        "api" => ("", parts.next()?),
        "apis" => (parts.next()?, parts.next()?),
        _ => return None,
    };
    let rest: Vec<&str> = parts.filter(|p| !p.is_empty()).collect();
    if rest.is_empty() || version.is_empty() {
        return None;
    }
    let (namespace, rest) = match rest.as_slice() {
        // `namespaces/<ns>` alone is the Namespace itself.
        ["namespaces", ns] => {
            return Some(ResourceInfo {
                group,
                version,
                namespace: Some(ns),
                resource: "namespaces",
                name: Some(ns),
                subresource: None,
            });
        }
        ["namespaces", ns, "status" | "finalize"] => {
            return Some(ResourceInfo {
                group,
                version,
                namespace: Some(ns),
                resource: "namespaces",
                name: Some(ns),
                subresource: Some(rest[2]),
            });
        }
        ["namespaces", ns, rest @ ..] => (Some(*ns), rest),
        rest => (None, rest),
    };
    Some(ResourceInfo {
        group,
        version,
        namespace,
        resource: rest.first()?,
        name: rest.get(1).copied(),
        subresource: rest.get(2).copied(),
    })
}

/// The exposition text of the embedding process's registry, served at `/metrics` on the API port.
pub type MetricsText = Arc<dyn Fn() -> Result<String, std::fmt::Error> + Send + Sync>;

/// Bound once by the embedding process (`up`), after the API server is built.
#[derive(Clone, Default)]
pub struct SharedMetricsText(Arc<OnceLock<MetricsText>>);

impl std::fmt::Debug for SharedMetricsText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedMetricsText")
            .field("bound", &self.0.get().is_some())
            .finish()
    }
}

impl SharedMetricsText {
    /// Serves `text` from now on (the first binding wins).
    pub fn bind(&self, text: MetricsText) {
        let _ = self.0.set(text);
    }

    pub(crate) fn get(&self) -> Option<&MetricsText> {
        self.0.get()
    }
}

pub mod webhook;

#[cfg(test)]
mod tests;

/// `apiserver_storage_objects{resource}`: the objects of each resource, counted from the watch
/// cache when scraped (kube counts from etcd once a minute). `resource` is `<plural>.<group>`, or
/// the plural alone for the core group. Resources whose current objects the cache does not
/// keep (Events) are not reported.
#[derive(Debug)]
pub struct StorageObjects {
    cache: Arc<crate::cache::WatchCache>,
}

impl StorageObjects {
    pub fn new(cache: Arc<crate::cache::WatchCache>) -> Self {
        Self { cache }
    }
}

/// The `resource` label of a storage key `/registry/<group>/<plural>/…` (`core` for the core
/// group).
fn storage_resource(key: &[u8]) -> Option<String> {
    let key = std::str::from_utf8(key).ok()?;
    let mut parts = key.strip_prefix("/registry/")?.split('/');
    let group = parts.next()?;
    let plural = parts.next()?;
    Some(if group == "core" {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    })
}

/// The `resource` label.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResourceLabel {
    resource: String,
}

impl prometheus_client::collector::Collector for StorageObjects {
    fn encode(
        &self,
        mut encoder: prometheus_client::encoding::DescriptorEncoder<'_>,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeMetric as _;
        let counts = self.cache.count_by_prefix(storage_resource);
        let family = Family::<ResourceLabel, Gauge>::default();
        for (resource, count) in counts {
            family
                .get_or_create(&ResourceLabel { resource })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        let metric = encoder.encode_descriptor(
            "apiserver_storage_objects",
            "Number of stored objects at the time of last check split by kind.",
            None,
            family.metric_type(),
        )?;
        family.encode(metric)
    }
}
