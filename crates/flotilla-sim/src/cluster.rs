//! One simulated cluster: a Flotilla API server on a memory store, served over HTTPS on its own
//! port with its own CA and admin certificate, and the control loops behind it (scheduler,
//! kubelets, workload and EndpointSlice controllers, node heartbeats; the metrics API's usage
//! model), all talking to the API
//! server through an in-process `kube::Client` — the same API any client sees.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::auth::authz::MASTERS_GROUP;
use flotilla_apiserver::auth::pki::Pki;
use flotilla_apiserver::auth::tls;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::informer::Cache;
use crate::node::Node;
use crate::pod::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;
use tokio::sync::watch;

use crate::config::{ClusterSpec, Settings};
use crate::endpointslice::EndpointSlices;
use crate::error::SimError;
use crate::informer::Informer;
use crate::kubelet::Kubelet;
use crate::nodes::{self, NodeTable};
use crate::scheduler::Scheduler;
use crate::serve::{self, NetFault};
use crate::workloads::{self, Workloads};

/// Recent changes each cluster's watch cache keeps for resuming watches (at most: changes older
/// than [`HISTORY_WINDOW`] leave it too, so that the superseded versions of a burst do not
/// stay until 20,000 later changes push them out).
pub const CACHE_WINDOW: usize = 20_000;

/// History each cluster's memory store keeps: superseded versions older than this (and more
/// than [`HISTORY_REVISIONS`] revisions back) are compacted away, as kube-apiserver compacts
/// etcd. Only the watch cache's own store watch and paged lists read history.
pub const HISTORY_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);
/// See [`HISTORY_WINDOW`].
pub const HISTORY_REVISIONS: i64 = 1_000;

/// The user the cluster's own control loops write as (through the in-process client). Unless
/// [`Settings::track_own_writes`], the API server records none of its writes in `managedFields`
/// ([`flotilla_apiserver::Builder::untracked_writer`]).
pub const CONTROL_LOOP_USER: &str = "system:kube-controller-manager";

/// The addresses Services get (kube-apiserver's default `--service-cluster-ip-range`; pod IPs
/// are `10.<node>.<node>.<slot>`, below it for the first 24,576 nodes).
pub const SERVICE_CLUSTER_IP_RANGE: &str = "10.96.0.0/12";

/// What every control loop of a cluster shares.
pub struct Ctx {
    pub name: String,
    pub client: kube::Client,
    pub settings: Settings,
    /// The Events this cluster's components wrote, for counting repeats.
    pub events: crate::events::Repeats,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Now, RFC 3339 in seconds (how Kubernetes writes most timestamps).
pub fn now() -> String {
    let t = jiff::Timestamp::now();
    jiff::Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// Aborts a task when dropped.
#[derive(Debug)]
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The informer caches of one cluster.
#[derive(Debug, Clone)]
pub struct Stores {
    pub nodes: Cache<Node>,
    pub pods: Cache<Pod>,
    pub deployments: Cache<Deployment>,
    pub replicasets: Cache<ReplicaSet>,
    pub statefulsets: Cache<StatefulSet>,
    pub daemonsets: Cache<DaemonSet>,
    pub jobs: Cache<Job>,
    pub cronjobs: Cache<CronJob>,
}

/// A running simulated cluster. Dropping it stops everything.
#[derive(Debug)]
pub struct SimCluster {
    pub name: String,
    pub url: String,
    pub address: SocketAddr,
    pub pki: Pki,
    pub ctx: Arc<Ctx>,
    pub nodes: Arc<NodeTable>,
    pub scheduler: Arc<Scheduler>,
    pub kubelet: Arc<Kubelet>,
    pub stores: Stores,
    /// The UID of `kube-system` (what `join` uses as the cluster ID).
    pub cluster_id: String,
    faults: watch::Sender<NetFault>,
    tasks: Vec<AbortOnDrop>,
    _running: flotilla_apiserver::Running,
}

impl SimCluster {
    /// Starts the cluster: API server, HTTPS on `ip` (a free port), credentials under `dir`,
    /// control loops, then its nodes.
    pub async fn start(
        spec: &ClusterSpec,
        settings: &Settings,
        ip: IpAddr,
        dir: &Path,
        network: &Arc<crate::network::Network>,
    ) -> Result<SimCluster, SimError> {
        tls::install_crypto_provider();
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(ip, 0))
            .await
            .map_err(|source| SimError::Listen {
                address: ip.to_string(),
                source,
            })?;
        let address = listener.local_addr().map_err(|source| SimError::Listen {
            address: ip.to_string(),
            source,
        })?;
        let mut hosts = vec!["localhost".to_owned()];
        if !ip.is_unspecified() {
            hosts.push(ip.to_string());
        }
        let auth = |source| SimError::Auth {
            cluster: spec.name.clone(),
            source,
        };
        let pki = Pki::load_or_create(&dir.join(&spec.name).join("pki"), &hosts).map_err(auth)?;
        let tls_config =
            tls::server_config(&pki, std::slice::from_ref(pki.ca_cert_der())).map_err(auth)?;
        let store = Arc::new(flotilla_store::MemoryStore::new());
        let compactor = flotilla_store::Compactor::new(flotilla_store::Retention {
            window: HISTORY_WINDOW,
            revisions: HISTORY_REVISIONS,
        });
        let compaction = AbortOnDrop(tokio::spawn({
            let store: Arc<dyn flotilla_store::Store> = store.clone();
            async move {
                if let Err(error) = compactor
                    .run(store, std::time::Duration::from_secs(1))
                    .await
                {
                    tracing::warn!(%error, "store compaction stopped");
                }
            }
        }));
        // A smaller resume window than a control plane's: a hundred clusters each keeping 100,000
        // superseded versions would dominate the process, and our watchers are in-process.
        let mut builder = flotilla_apiserver::Builder::new(store)
            .without_deletion_protection()
            .cache_window(CACHE_WINDOW)
            .cache_window_age(HISTORY_WINDOW)
            .root_ca(pki.ca_cert_pem());
        if !settings.track_own_writes {
            builder = builder.untracked_writer(CONTROL_LOOP_USER);
        }
        builder = builder
            .service_cluster_ip_range(SERVICE_CLUSTER_IP_RANGE)
            .expect("the service range parses");
        if settings.compact_storage {
            builder = builder.compact_storage();
        }
        let metrics = crate::metrics::SimMetrics::new(settings.metrics_window);
        builder = builder.resource_metrics(metrics.clone());
        let runtime = crate::runtime::SimRuntime::new();
        builder = builder.kubelet(runtime.clone());
        let mut running = builder.start().await.map_err(|e| SimError::ApiServer {
            cluster: spec.name.clone(),
            message: e.message.clone(),
        })?;
        // Like a member's kube-apiserver, it serves its request metrics on `/metrics` to those
        // allowed (`kubectl --context <member> get --raw /metrics`).
        {
            let mut registry = prometheus_client::registry::Registry::default();
            running.server.register_metrics(&mut registry);
            let registry = Arc::new(registry);
            running.server.metrics_text().bind(Arc::new(move || {
                let mut text = String::new();
                prometheus_client::encoding::text::encode(&mut text, &registry)?;
                Ok(text)
            }));
        }
        let user = UserInfo {
            name: CONTROL_LOOP_USER.into(),
            groups: vec![MASTERS_GROUP.to_owned(), "system:authenticated".into()],
            ..Default::default()
        };
        let client = flotilla_apiserver::client::in_process(&running.server, user);
        let host = if ip.is_unspecified() {
            "127.0.0.1".to_owned()
        } else if ip.is_ipv6() {
            format!("[{ip}]")
        } else {
            ip.to_string()
        };
        let url = format!("https://{host}:{}", address.port());
        // `default/kubernetes`, as every cluster has it.
        let advertised = if ip.is_unspecified() {
            IpAddr::from([127, 0, 0, 1])
        } else {
            ip
        };
        running.keep_kubernetes_service(SocketAddr::new(advertised, address.port()), true);
        let (faults, faults_rx) = watch::channel(NetFault::default());
        let mut tasks = vec![AbortOnDrop(tokio::spawn(serve::serve(
            Some(listener),
            address,
            running.server.clone(),
            tls_config,
            running.authenticator(),
            faults_rx,
        )))];
        tasks.push(compaction);
        let ctx = Arc::new(Ctx {
            name: spec.name.clone(),
            client: client.clone(),
            settings: settings.clone(),
            events: crate::events::Repeats::default(),
        });
        let cluster_id = describe_cluster(&ctx, spec).await?;

        let table = Arc::new(nodes::plan(spec, settings.seed, settings.system_components));
        let scheduler = Scheduler::new(settings.seed);
        let kubelet = Kubelet::new(table.clone());
        let mut node_informer = Informer::<Node>::new(Api::all(client.clone()));
        let mut pod_informer = Informer::<Pod>::new(Api::all(client.clone()));
        scheduler.watch(&mut node_informer, &mut pod_informer);
        kubelet.watch(&mut pod_informer);
        let mut config_map_informer = Informer::<ConfigMap>::new(Api::all(client.clone()));
        let mut secret_informer = Informer::<Secret>::new(Api::all(client.clone()));
        kubelet.watch_sources(&mut config_map_informer, &mut secret_informer);
        let namespace_defaults =
            crate::namespaces::NamespaceDefaults::watch(&mut config_map_informer);
        let mut informers = workloads::Informers::new(&client);
        let workloads = Workloads::new();
        workloads.watch(&mut informers, &mut node_informer, &mut pod_informer);
        // Slice names differ between clusters (as kube's random ones do): MultiClusterService
        // copies a provider's slices into consumers by name.
        let endpoint_slices = EndpointSlices::new(crate::rng::mix(
            settings.seed,
            &format!("cluster/{}", spec.name),
        ));
        endpoint_slices.watch(&mut pod_informer);
        metrics.watch(&mut pod_informer);
        let (node_store, t) = node_informer.start();
        tasks.push(AbortOnDrop(t));
        let (pod_store, t) = pod_informer.start();
        tasks.push(AbortOnDrop(t));
        let (stores, started) = informers.start(node_store, pod_store);
        tasks.extend(started);
        for store in [stores.pods.clone()] {
            store.wait_until_ready().await;
        }
        stores.nodes.wait_until_ready().await;
        let (config_maps, t) = config_map_informer.start();
        tasks.push(AbortOnDrop(t));
        let (secrets, t) = secret_informer.start();
        tasks.push(AbortOnDrop(t));
        config_maps.wait_until_ready().await;
        secrets.wait_until_ready().await;
        tasks.extend(namespace_defaults.start(
            ctx.clone(),
            pki.ca_cert_pem().to_owned(),
            config_maps.clone(),
        ));
        kubelet.attach_sources(crate::kubelet::config::Sources {
            config_maps,
            secrets,
        });
        tasks.push(AbortOnDrop(tokio::spawn(
            scheduler.clone().run(ctx.clone(), stores.pods.clone()),
        )));
        tasks.push(AbortOnDrop(tokio::spawn(
            kubelet.clone().run(ctx.clone(), stores.pods.clone()),
        )));
        tasks.extend(workloads.run(ctx.clone(), stores.clone()));
        tasks.extend(endpoint_slices.start(ctx.clone(), stores.pods.clone(), stores.nodes.clone()));
        runtime.attach(stores.pods.clone());
        // Slices other controllers write (Karmada's imports and dispatched copies): the network
        // reads them beside the cluster's own.
        let (foreign_slices, t) = Informer::<EndpointSlice>::new(Api::all(client.clone()))
            .with_labels(&format!(
                "{}!={}",
                crate::endpointslice::MANAGED_BY_LABEL,
                crate::endpointslice::CONTROLLER_NAME
            ))
            .start();
        tasks.push(AbortOnDrop(t));
        network.attach(
            &spec.name,
            crate::network::Attached {
                pods: stores.pods.clone(),
                services: endpoint_slices
                    .services()
                    .expect("the EndpointSlice controller started its Service informer"),
                slices: vec![
                    endpoint_slices
                        .slices()
                        .expect("the EndpointSlice controller started its slice informer"),
                    foreign_slices,
                ],
            },
        );
        runtime.join_network(network.clone(), &spec.name);
        metrics.attach(crate::metrics::Sources {
            pods: stores.pods.clone(),
            nodes: stores.nodes.clone(),
            services: endpoint_slices
                .services()
                .expect("the EndpointSlice controller started its Service informer"),
            table: table.clone(),
        });
        tasks.push(AbortOnDrop(tokio::spawn(crate::quota::run(
            ctx.clone(),
            stores.pods.clone(),
        ))));
        tasks.push(AbortOnDrop(tokio::spawn(crate::disruption::run(
            ctx.clone(),
            stores.clone(),
        ))));
        let autoscaler = Arc::new(crate::hpa::Autoscaler::new(
            ctx.clone(),
            stores.clone(),
            metrics.clone(),
            settings.metrics_window,
        ));
        tasks.push(AbortOnDrop(tokio::spawn(autoscaler.run())));

        nodes::create_all(&ctx, &table).await?;
        if settings.system_components {
            crate::system::create(&ctx, &table).await?;
        }
        tasks.push(AbortOnDrop(tokio::spawn(nodes::heartbeat(
            ctx.clone(),
            table.clone(),
        ))));
        Ok(SimCluster {
            name: spec.name.clone(),
            url,
            address,
            pki,
            ctx,
            nodes: table,
            scheduler,
            kubelet,
            stores,
            cluster_id,
            faults,
            tasks,
            _running: running,
        })
    }

    /// The in-process client (admin rights).
    pub fn client(&self) -> kube::Client {
        self.ctx.client.clone()
    }

    pub fn net_fault(&self) -> NetFault {
        *self.faults.borrow()
    }

    pub fn set_net_fault(&self, fault: NetFault) {
        self.faults.send_replace(fault);
    }

    /// Takes `count` nodes NotReady and schedules the eviction of their pods.
    pub async fn nodes_not_ready(&self, count: usize) -> Result<Vec<String>, SimError> {
        let names =
            nodes::set_not_ready(&self.ctx, &self.nodes, count, self.ctx.settings.seed).await?;
        crate::lifecycle::evict_after_toleration(
            self.ctx.clone(),
            self.nodes.clone(),
            self.stores.pods.clone(),
            names.clone(),
        );
        Ok(names)
    }

    /// Brings every NotReady node back.
    pub async fn nodes_ready(&self) -> Result<(), SimError> {
        nodes::set_all_ready(&self.ctx, &self.nodes).await?;
        self.kubelet.resume(&self.stores.pods);
        Ok(())
    }

    /// Number of running tasks (for diagnostics).
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }
}

/// Reads `kube-system`'s UID and records the cluster's description in
/// `kube-system/flotilla-sim` (region, zones, provider, labels).
async fn describe_cluster(ctx: &Ctx, spec: &ClusterSpec) -> Result<String, SimError> {
    let namespaces: Api<Namespace> = Api::all(ctx.client.clone());
    let kube_system = namespaces
        .get("kube-system")
        .await
        .map_err(|source| SimError::Api {
            step: "read kube-system",
            source,
        })?;
    let configmaps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "kube-system");
    let info: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "flotilla-sim", "labels": spec.labels},
        "data": {
            "cluster": spec.name,
            "region": spec.region,
            "zones": spec.zones.join(","),
            "provider": spec.provider.clone().unwrap_or_default(),
            "labels": serde_json::to_string(&spec.labels).unwrap_or_default(),
        },
    }))
    .map_err(|e| SimError::internal(format!("cluster info: {e}")))?;
    configmaps
        .create(&PostParams::default(), &info)
        .await
        .map_err(|source| SimError::Api {
            step: "record the cluster description",
            source,
        })?;
    Ok(kube_system.metadata.uid.unwrap_or_default())
}
