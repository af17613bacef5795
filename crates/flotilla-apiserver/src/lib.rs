//! The Kubernetes REST API over any `flotilla_store::Store`, served as a tower service.
//!
//! A request goes: [`server`] (path parsing, authentication, authorization) → [`registry`]
//! (metadata rules, [`admission`], patch engines, optimistic concurrency) → the store; lists
//! and watches are served from the [`cache`], which one store watch keeps current. The
//! [`catalog`] knows every served resource (built-ins, Karmada's kinds, CRDs).
//!
//! Depends only on `flotilla-api` and `flotilla-store` among workspace crates.

pub mod admission;
pub mod api_services;
pub mod auth;
pub mod cache;
pub mod catalog;
pub mod certificates;
pub mod client;
pub mod cluster_health;
pub mod cluster_proxy;
pub mod conversion;
pub mod crd;
pub mod defaults;
pub mod discovery;
pub mod error;
pub mod events;
pub mod fieldvalidation;
pub mod filter;
pub mod gc;
pub mod health;
pub mod kubelet;
pub mod kubernetes_service;
pub mod lifecycle;
pub mod lifted;
pub mod managed;
pub mod metrics;
pub mod object;
pub mod openapi;
pub mod patch;
pub mod patch_apply;
pub mod protobuf;
pub mod registry;
pub mod request;
pub mod resource_metrics;
pub mod scale;
pub mod search;
pub mod serve;
pub mod server;
pub mod service_ips;
pub mod table;

use std::sync::Arc;
use std::time::Duration;

use flotilla_store::Store;

pub use catalog::Catalog;
pub use error::ApiError;
pub use registry::{Clock, Registry, SystemClock};
pub use server::{ApiServer, Identity};

/// Builds and starts an API server over a store.
#[derive(Debug)]
pub struct Builder {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    cache_window: usize,
    cache_window_age: Option<std::time::Duration>,
    cache_window_bytes: usize,
    watch_buffer: usize,
    signing_key: Option<Arc<auth::jwt::SigningKey>>,
    root_ca: Option<String>,
    csr_signing: Option<certificates::signer::SigningConfig>,
    cluster_proxy: Option<cluster_proxy::SharedClusterProxy>,
    search: Option<search::SharedSearch>,
    resource_metrics: Option<resource_metrics::SharedResourceMetrics>,
    kubelet: Option<kubelet::SharedKubelet>,
    untracked_writers: Vec<String>,
    event_ttl: Duration,
    compact_storage: bool,
    deletion_protection: bool,
    allow_no_execute_taint_policy: bool,
    federated_quota_enforcement: bool,
    multiple_pod_templates_scheduling: bool,
    service_ips: Option<Arc<service_ips::ServiceIps>>,
}

/// A started API server; dropping it stops the watch cache feeder.
#[derive(Debug)]
pub struct Running {
    pub server: ApiServer,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// An authenticator that accepts this server's service-account tokens; add client
    /// certificates' and a token file's users on top (see [`serve::serve_tls`]).
    pub fn authenticator(&self) -> auth::authn::Authenticator {
        let registry = self.server.registry();
        let authenticator = auth::authn::Authenticator::new().with_bootstrap_tokens(Arc::new(
            auth::bootstrap_tokens::BootstrapTokens::new(
                registry.store.clone(),
                registry.cache().clone(),
                registry.clock.clone(),
            ),
        ));
        match self.server.service_accounts() {
            Some(tokens) => authenticator.with_service_accounts(tokens.clone()),
            None => authenticator,
        }
    }

    /// Keeps the `default/kubernetes` Service, its Endpoints and EndpointSlice pointing at
    /// `advertise` (a loopback or unspecified address is replaced by this host's, see
    /// [`kubernetes_service::endpoint_address`]); `exclusive` when this server is its store's
    /// only writer. Nothing without a service range
    /// ([`Builder::service_cluster_ip_range`]), as kube-apiserver without a service IP.
    pub fn keep_kubernetes_service(&mut self, advertise: std::net::SocketAddr, exclusive: bool) {
        let registry = self.server.registry().clone();
        let Some(ips) = registry.service_ips.clone() else {
            return;
        };
        let config = kubernetes_service::Config {
            service_ip: ips.first(),
            port: advertise.port(),
            address: kubernetes_service::endpoint_address(advertise.ip()),
            exclusive,
        };
        self.tasks
            .push(tokio::spawn(kubernetes_service::run(registry, config)));
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The namespaces every control plane has.
pub const SYSTEM_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "karmada-system",
    "karmada-cluster",
];

impl Builder {
    pub fn new(store: Arc<dyn Store>) -> Self {
        Builder {
            store,
            clock: Arc::new(SystemClock),
            cache_window: 100_000,
            cache_window_age: None,
            cache_window_bytes: cache::DEFAULT_WINDOW_BYTES,
            watch_buffer: cache::DEFAULT_WATCH_BUFFER,
            signing_key: None,
            root_ca: None,
            csr_signing: None,
            cluster_proxy: None,
            search: None,
            resource_metrics: None,
            kubelet: None,
            untracked_writers: Vec::new(),
            compact_storage: false,
            deletion_protection: true,
            allow_no_execute_taint_policy: false,
            federated_quota_enforcement: false,
            multiple_pod_templates_scheduling: false,
            service_ips: None,
            event_ttl: events::ttl::DEFAULT_TTL,
        }
    }

    /// How long an Event lives after it was last written (kube-apiserver's `--event-ttl`,
    /// one hour by default); zero keeps Events forever. See [`events::ttl`].
    pub fn event_ttl(mut self, ttl: Duration) -> Self {
        self.event_ttl = ttl;
        self
    }

    /// Serves the resource metrics API (`metrics.k8s.io/v1beta1`, what metrics-server serves)
    /// from `metrics`, and discovers it; see [`resource_metrics`].
    pub fn resource_metrics(mut self, metrics: resource_metrics::SharedResourceMetrics) -> Self {
        self.resource_metrics = Some(metrics);
        self
    }

    /// Serves `pods/log` and `pods/exec` from `kubelet` (the cluster's containers); without one
    /// they answer as kube-apiserver does when no kubelet can be reached. See [`kubelet`].
    pub fn kubelet(mut self, kubelet: kubelet::SharedKubelet) -> Self {
        self.kubelet = Some(kubelet);
        self
    }

    /// Serves karmada-search's `search/cache` and `proxying` endpoints from `search`.
    pub fn search(mut self, search: search::SharedSearch) -> Self {
        self.search = Some(search);
        self
    }

    /// Serves `/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/…` through `proxy`.
    pub fn cluster_proxy(mut self, proxy: cluster_proxy::SharedClusterProxy) -> Self {
        self.cluster_proxy = Some(proxy);
        self
    }

    /// The key that signs service-account tokens (kept with the PKI so tokens survive
    /// restarts); without one a key is generated in memory at start.
    pub fn service_account_key(mut self, key: Arc<auth::jwt::SigningKey>) -> Self {
        self.signing_key = Some(key);
        self
    }

    /// Sign approved CertificateSigningRequests with this CA (see [`certificates::signer`]).
    pub fn csr_signing(mut self, pki: Arc<auth::pki::Pki>, duration: Duration) -> Self {
        self.csr_signing = Some(certificates::signer::SigningConfig { pki, duration });
        self
    }

    /// The CA certificate (PEM) the tokens controller puts in token Secrets as `ca.crt`.
    pub fn root_ca(mut self, pem: impl Into<String>) -> Self {
        self.root_ca = Some(pem.into());
        self
    }

    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How many recent changes the watch cache keeps for resuming watches.
    pub fn cache_window(mut self, changes: usize) -> Self {
        self.cache_window = changes;
        self
    }

    /// Changes older than `age` leave the watch cache's window even when it holds fewer than
    /// [`Builder::cache_window`]: a watch resuming from before them gets `410 Expired` and
    /// relists, and the superseded versions they held are freed once a burst of writes is over.
    pub fn cache_window_age(mut self, age: std::time::Duration) -> Self {
        self.cache_window_age = Some(age);
        self
    }

    /// The most object bytes the window of recent changes keeps (64 MiB by default): with a
    /// store that keeps its history on disk, the window's superseded versions are the only
    /// copies in memory, and a burst of writes would otherwise fill it with large objects.
    pub fn cache_window_bytes(mut self, bytes: usize) -> Self {
        self.cache_window_bytes = bytes;
        self
    }

    /// Writes by the user `name` (create, update, patch, of objects and their status; not
    /// server-side apply) are not recorded in `managedFields`: the fields it changes leave other
    /// managers' sets as on any update, but it owns none, and an object only it wrote has no
    /// managedFields at all. Not Kubernetes behaviour: for a simulated cluster's own control
    /// loops (kubelets, scheduler, controllers), whose entries would be about half of every
    /// stored pod and node (docs/sim.md). A later apply by someone else finds such an object
    /// without managed fields and, as kube-apiserver does, treats its fields as owned by
    /// `before-first-apply`.
    pub fn untracked_writer(mut self, name: impl Into<String>) -> Self {
        self.untracked_writers.push(name.into());
        self
    }

    /// Stores objects compressed against other objects of their resource (zstd with one of
    /// them as the dictionary; `object::compact`): a simulated pod's ~1.9 KB of JSON takes
    /// ~130 bytes, for ~3 µs per write and ~1 µs per read or watch event served. Clients see
    /// the same JSON. The dictionaries live in the process, so only a store that does not
    /// outlive it can hold this form: [`Builder::start`] refuses a durable store. The
    /// simulator's clusters set it (docs/sim.md).
    /// A member cluster's API server: deletes of objects labelled
    /// `resourcetemplate.karmada.io/deletion-protected: Always` are not refused. Karmada's
    /// resource-deletion-protection webhook serves its control plane only; the objects it
    /// propagates carry the label into members, where they must stay deletable.
    pub fn without_deletion_protection(mut self) -> Self {
        self.deletion_protection = false;
        self
    }

    /// karmada-webhook's `--allow-no-execute-taint-policy`: ClusterTaintPolicies may carry
    /// NoExecute taints (refused by default: such a taint evicts workloads that do not
    /// tolerate it).
    pub fn allow_no_execute_taint_policy(mut self, allow: bool) -> Self {
        self.allow_no_execute_taint_policy = allow;
        self
    }

    /// Karmada's gate `FederatedQuotaEnforcement` (karmada-webhook's `--feature-gates`): a
    /// ResourceBinding create or update whose usage change exceeds a FederatedResourceQuota of
    /// its namespace is refused (403, reason `QuotaExceeded`).
    pub fn federated_quota_enforcement(mut self, on: bool) -> Self {
        self.federated_quota_enforcement = on;
        self
    }

    /// Karmada's gate `MultiplePodTemplatesScheduling` (karmada-webhook's `--feature-gates`): a
    /// ResourceBinding whose `spec.components` have empty or repeated names is refused.
    pub fn multiple_pod_templates_scheduling(mut self, on: bool) -> Self {
        self.multiple_pod_templates_scheduling = on;
        self
    }

    /// Services created without a cluster IP get one of `cidr` (IPv4, e.g. `10.96.0.0/12`), as
    /// kube-apiserver's `--service-cluster-ip-range` ([`service_ips`]); `None` if it does not
    /// parse. Off by default; `flotilla up` and the simulator's clusters set it.
    pub fn service_cluster_ip_range(mut self, cidr: &str) -> Option<Self> {
        self.service_ips = Some(Arc::new(service_ips::ServiceIps::parse(cidr)?));
        Some(self)
    }

    pub fn compact_storage(mut self) -> Self {
        self.compact_storage = true;
        self
    }

    /// How many changes (of any resource) a watcher may be behind the newest before it has to
    /// catch up from the window of recent changes (and, if it fell out of the window too,
    /// gets a `410 Expired` and must relist). Small values are for tests.
    pub fn watch_buffer(mut self, changes: usize) -> Self {
        self.watch_buffer = changes;
        self
    }

    /// Starts the watch cache and returns once it holds the store's current state.
    pub async fn start(self) -> Result<Running, ApiError> {
        if self.compact_storage && !self.store.volatile() {
            return Err(ApiError::internal(
                "compact storage needs a store that ends with the process (the memory store): \
                 its dictionaries are not persisted",
            ));
        }
        let cache = cache::WatchCache::with_limits(
            self.cache_window,
            self.watch_buffer,
            self.cache_window_bytes,
            self.cache_window_age,
            vec![bytes::Bytes::from_static(events::STORAGE_PREFIX.as_bytes())],
        );
        let feeder = tokio::spawn(cache.clone().run(self.store.clone()));
        let status = self
            .store
            .status()
            .await
            .map_err(|e| ApiError::new(503, "ServiceUnavailable", e.to_string()))?;
        if !cache
            .wait_for(status.revision, Duration::from_secs(60))
            .await
        {
            feeder.abort();
            return Err(ApiError::new(
                503,
                "ServiceUnavailable",
                "the watch cache did not load the store within 60 s",
            ));
        }
        let mut registry = Registry::new(self.store, Catalog::with_builtins(), cache, self.clock);
        registry.compact = self.compact_storage;
        registry.deletion_protection = self.deletion_protection;
        if let Some(ips) = &self.service_ips {
            let (services, _) = registry.cache().list(b"/registry/core/services/", None);
            let values: Vec<serde_json::Value> = services.iter().map(|s| s.value()).collect();
            ips.reserve_stored(&values);
        }
        registry.service_ips = self.service_ips;
        registry.webhook.allow_no_execute_taint_policy = self.allow_no_execute_taint_policy;
        registry.webhook.federated_quota_enforcement = self.federated_quota_enforcement;
        registry.webhook.multiple_pod_templates_scheduling = self.multiple_pod_templates_scheduling;
        let namespaces = registry
            .catalog()
            .get("", "v1", "namespaces")
            .expect("namespaces are built in");
        for name in SYSTEM_NAMESPACES {
            let body = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            match registry
                .create(&namespaces, None, body, &registry::WriteOptions::default())
                .await
            {
                Ok(_) => {}
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => {
                    feeder.abort();
                    return Err(e);
                }
            }
        }
        // kube-apiserver's system PriorityClasses.
        let priority_classes = registry
            .catalog()
            .get("scheduling.k8s.io", "v1", "priorityclasses")
            .expect("priority classes are built in");
        for body in lifted::priority_class::system_classes() {
            match registry
                .create(
                    &priority_classes,
                    None,
                    body,
                    &registry::WriteOptions::default(),
                )
                .await
            {
                Ok(_) => {}
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => {
                    feeder.abort();
                    return Err(e);
                }
            }
        }
        if let Err(e) = auth::bootstrap::ensure_defaults(&registry).await {
            feeder.abort();
            return Err(e);
        }
        // The authorizer reads the default bindings from the cache: have them there before
        // the first request.
        let _ = registry.cache_is_current().await;
        let signing_key = match self.signing_key {
            Some(key) => key,
            None => Arc::new(
                auth::jwt::SigningKey::generate().map_err(|e| ApiError::internal(e.to_string()))?,
            ),
        };
        let tokens = Arc::new(auth::service_accounts::ServiceAccountTokens::new(
            signing_key,
            registry.store.clone(),
            registry.cache().clone(),
            registry.clock.clone(),
        ));
        let aggregation = tokio::spawn(auth::bootstrap::aggregation::run(registry.clone()));
        let tokens_controller = tokio::spawn(auth::tokens_controller::run(
            registry.clone(),
            tokens.clone(),
            self.root_ca,
        ));
        let lifecycle = tokio::spawn(lifecycle::run_namespace_finalizer(registry.clone()));
        // CRDs: serve the stored ones before the first request, then follow changes.
        crd::load(&registry);
        let crds = tokio::spawn(crd::run(registry.clone()));
        // Garbage collection of dependents (ownerReferences).
        let gc = tokio::spawn(gc::run(registry.clone()));
        // The aggregator's APIServices: the group versions served here (the reviews' groups
        // beside the catalog's), and metrics.k8s.io when a resource-metrics backend answers it.
        let mut in_process = vec![
            ("authentication.k8s.io".to_owned(), "v1".to_owned()),
            ("authorization.k8s.io".to_owned(), "v1".to_owned()),
        ];
        if self.resource_metrics.is_some() {
            in_process.push((
                resource_metrics::GROUP.to_owned(),
                resource_metrics::VERSION.to_owned(),
            ));
        }
        let api_services = tokio::spawn(api_services::run(registry.clone(), in_process));
        let token_cleaner = tokio::spawn(auth::token_cleaner::run(registry.clone()));
        let bootstrap_signer = tokio::spawn(auth::bootstrap_signer::run(registry.clone()));
        let mut tasks = vec![
            api_services,
            lifecycle,
            crds,
            gc,
            aggregation,
            tokens_controller,
            token_cleaner,
            bootstrap_signer,
        ];
        if let Some(config) = self.csr_signing {
            tasks.push(tokio::spawn(certificates::signer::run(
                registry.clone(),
                config,
            )));
        }
        if !self.event_ttl.is_zero() {
            tasks.push(tokio::spawn(events::ttl::run(
                registry.clone(),
                self.event_ttl,
            )));
        }
        let mut server = ApiServer::new(registry).with_service_accounts(tokens);
        server.cluster_proxy = self.cluster_proxy;
        server.search = self.search;
        server.resource_metrics = self.resource_metrics;
        server.kubelet = self.kubelet;
        server.untracked_writers = self.untracked_writers;
        let rbac = server
            .authorizer
            .rbac()
            .expect("the server authorizes with RBAC")
            .clone();
        let rbac = tokio::spawn(rbac.follow());
        tasks.extend([rbac, feeder]);
        Ok(Running { server, tasks })
    }
}
