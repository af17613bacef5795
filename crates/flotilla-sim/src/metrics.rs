//! The resource metrics API of a simulated cluster (`metrics.k8s.io/v1beta1`, what
//! metrics-server serves): the API server's [`ResourceMetricsBackend`], answering from a usage
//! model ([`model`]) over the cluster's informer caches.
//!
//! Nothing runs in the background: usage is computed when someone asks, from the pod, node and
//! Service caches the other loops already keep. The one thing recorded as it happens is the
//! clients ([`Tracker`]): when a pod whose commands name URLs starts and stops running, so that a
//! client that finished (a Job's pod after `jobDuration`) still counts for the part of the window
//! it ran. A pod event costs the tracker a phase check and, for a running pod not yet known, a
//! look at its commands.
//!
//! Must not depend on anything but the sim's caches and the API server's hook.

pub mod model;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use flotilla_apiserver::ApiError;
use flotilla_apiserver::resource_metrics::{
    API_VERSION, MetricsQuery, ResourceMetricsBackend, go_duration,
};
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Service;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::informer::{Cache, Change, Informer};
use crate::node::Node;
use crate::nodes::NodeTable;
use crate::pod::Pod;
use model::{Client, Usage};

/// The clients of one cluster: running ones by pod uid, and those that stopped within the
/// last window.
#[derive(Debug)]
pub struct Tracker {
    window: Duration,
    running: Mutex<HashMap<String, Client>>,
    stopped: Mutex<Vec<Client>>,
}

impl Tracker {
    pub fn new(window: Duration) -> Self {
        Tracker {
            window,
            running: Mutex::new(HashMap::new()),
            stopped: Mutex::new(Vec::new()),
        }
    }

    /// A pod changed (or was deleted) at `now`.
    pub fn observe(&self, pod: &Pod, deleted: bool, now: jiff::Timestamp) {
        let Some(uid) = pod.metadata.uid.as_deref() else {
            return;
        };
        let mut running = self.running.lock();
        if !deleted && model::is_running(pod) {
            if !running.contains_key(uid)
                && let Some(client) = model::client_of(pod, now)
            {
                running.insert(uid.to_owned(), client);
            }
            return;
        }
        if running.is_empty() {
            return;
        }
        if let Some(mut client) = running.remove(uid) {
            drop(running);
            client.end = Some(now);
            let mut stopped = self.stopped.lock();
            stopped.push(client);
            self.prune(&mut stopped, now);
        }
    }

    /// Every client that ran during the window ending `now`.
    pub fn clients(&self, now: jiff::Timestamp) -> Vec<Client> {
        let mut clients: Vec<Client> = self.running.lock().values().cloned().collect();
        let mut stopped = self.stopped.lock();
        self.prune(&mut stopped, now);
        clients.extend(stopped.iter().cloned());
        clients
    }

    fn prune(&self, stopped: &mut Vec<Client>, now: jiff::Timestamp) {
        let window = jiff::SignedDuration::try_from(self.window).unwrap_or_default();
        let since = now.checked_sub(window).unwrap_or(now);
        stopped.retain(|c| c.end.is_none_or(|end| end > since));
    }
}

/// Each regular container's usage, by name.
pub type ContainerUsage = Vec<(String, Usage)>;

/// What the backend reads, once the cluster's caches exist (after the API server started).
#[derive(Debug, Clone)]
pub struct Sources {
    pub pods: Cache<Pod>,
    pub nodes: Cache<Node>,
    pub services: Cache<Service>,
    pub table: Arc<NodeTable>,
}

/// One cluster's metrics backend (see the module docs).
#[derive(Debug)]
pub struct SimMetrics {
    window: Duration,
    tracker: Tracker,
    sources: OnceLock<Sources>,
}

impl SimMetrics {
    pub fn new(window: Duration) -> Arc<Self> {
        Arc::new(SimMetrics {
            window,
            tracker: Tracker::new(window),
            sources: OnceLock::new(),
        })
    }

    /// Subscribes the client tracker to the cluster's pod informer (before it starts).
    pub fn watch(self: &Arc<Self>, pods: &mut Informer<Pod>) {
        let this = self.clone();
        pods.on(move |change| match change {
            Change::Applied(pod) => this.tracker.observe(pod, false, jiff::Timestamp::now()),
            Change::Deleted(pod) => this.tracker.observe(pod, true, jiff::Timestamp::now()),
            Change::Synced => {}
        });
    }

    /// Hands over the caches; until then every answer is empty.
    pub fn attach(&self, sources: Sources) {
        let _ = self.sources.set(sources);
    }

    /// The PodMetrics of the running pods `query` names, at `now`.
    pub fn pod_metrics(&self, query: &MetricsQuery, now: jiff::Timestamp) -> Vec<Value> {
        let Some(sources) = self.sources.get() else {
            return Vec::new();
        };
        let labels = query
            .label_selector
            .as_deref()
            .and_then(|s| flotilla_api::selector::label::parse(s).ok());
        let stamp = timestamp(now);
        let window = go_duration(self.window);
        self.usage(sources, now, |pod| {
            query
                .namespace
                .as_deref()
                .is_none_or(|ns| pod.metadata.namespace.as_deref() == Some(ns))
                && query
                    .name
                    .as_deref()
                    .is_none_or(|n| pod.metadata.name.as_deref() == Some(n))
                && labels.as_ref().is_none_or(|selector| {
                    let labels = pod.metadata.labels();
                    selector.matches_with(|k| labels.and_then(|l| l.get(k)).map(String::as_str))
                })
        })
        .into_iter()
        .map(|(pod, containers)| {
            let mut metadata = json!({
                "name": pod.metadata.name,
                "namespace": pod.metadata.namespace,
                "creationTimestamp": stamp,
            });
            if let Some(labels) = pod.metadata.labels() {
                metadata["labels"] = json!(labels);
            }
            let containers: Vec<Value> = containers
                .iter()
                .map(|(name, usage)| {
                    json!({"name": name, "usage": {"cpu": usage.cpu_text(), "memory": usage.memory_text()}})
                })
                .collect();
            json!({
                "kind": "PodMetrics",
                "apiVersion": API_VERSION,
                "metadata": metadata,
                "timestamp": stamp,
                "window": window,
                "containers": containers,
            })
        })
        .collect()
    }

    /// The NodeMetrics of the live nodes `query` names, at `now`.
    pub fn node_metrics(&self, query: &MetricsQuery, now: jiff::Timestamp) -> Vec<Value> {
        let Some(sources) = self.sources.get() else {
            return Vec::new();
        };
        let mut by_node: HashMap<String, Usage> = HashMap::new();
        for (pod, containers) in self.usage(sources, now, |_| true) {
            let total = by_node.entry(pod.node_name().to_owned()).or_default();
            for (_, usage) in containers {
                total.add(usage);
            }
        }
        let stamp = timestamp(now);
        let window = go_duration(self.window);
        sources
            .nodes
            .state()
            .into_iter()
            .filter(|node| {
                let name = node.metadata.name.as_deref().unwrap_or("");
                !sources.table.is_down(name)
                    && query.name.as_deref().is_none_or(|want| want == name)
            })
            .map(|node| {
                let name = node.metadata.name.clone().unwrap_or_default();
                let (cpu, memory) = allocatable(&node);
                let usage = model::node_usage(
                    by_node.get(&name).copied().unwrap_or_default(),
                    cpu.unwrap_or(0.0),
                    memory.unwrap_or(0.0),
                );
                let mut metadata = json!({"name": name, "creationTimestamp": stamp});
                if let Some(labels) = &node.metadata.labels {
                    metadata["labels"] = json!(labels);
                }
                json!({
                    "kind": "NodeMetrics",
                    "apiVersion": API_VERSION,
                    "metadata": metadata,
                    "timestamp": stamp,
                    "window": window,
                    "usage": {"cpu": usage.cpu_text(), "memory": usage.memory_text()},
                })
            })
            .collect()
    }

    /// Each container's usage of the running pods `wanted` keeps, at `now` (what the cluster's
    /// HPA controller reads; empty until the caches are attached).
    pub fn pods_usage(
        &self,
        now: jiff::Timestamp,
        wanted: impl Fn(&Pod) -> bool,
    ) -> Vec<(Arc<Pod>, ContainerUsage)> {
        match self.sources.get() {
            Some(sources) => self.usage(sources, now, wanted),
            None => Vec::new(),
        }
    }

    /// The usage of every reported pod `wanted` keeps: running, on a live node.
    fn usage(
        &self,
        sources: &Sources,
        now: jiff::Timestamp,
        wanted: impl Fn(&Pod) -> bool,
    ) -> Vec<(Arc<Pod>, ContainerUsage)> {
        let pods = sources.pods.state();
        let clients = self.tracker.clients(now);
        let traffic = if clients.is_empty() {
            HashMap::new()
        } else {
            model::traffic(
                &pods,
                |ns, name| sources.services.get(ns, name),
                &clients,
                now,
                self.window,
            )
        };
        let mut node_cpu: HashMap<String, Option<f64>> = HashMap::new();
        pods.iter()
            .filter(|pod| {
                model::is_running(pod) && !sources.table.is_down(pod.node_name()) && wanted(pod)
            })
            .map(|pod| {
                let node = pod.node_name();
                let cpu = *node_cpu
                    .entry(node.to_owned())
                    .or_insert_with(|| sources.nodes.get("", node).and_then(|n| allocatable(&n).0));
                let key = (
                    pod.metadata.namespace.clone().unwrap_or_default(),
                    pod.metadata.name.clone().unwrap_or_default(),
                );
                let rate = traffic.get(&key).copied().unwrap_or(0.0);
                (pod.clone(), model::pod_usage(pod, rate, cpu))
            })
            .collect()
    }
}

/// A node's allocatable CPU (cores) and memory (bytes).
fn allocatable(node: &Node) -> (Option<f64>, Option<f64>) {
    let list = node.status.as_ref().and_then(|s| s.allocatable.as_ref());
    let get = |name: &str| {
        list.and_then(|l| l.get(name))
            .and_then(|q| model::quantity(&q.0))
    };
    (get("cpu"), get("memory"))
}

/// RFC 3339 in seconds.
fn timestamp(now: jiff::Timestamp) -> String {
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

impl ResourceMetricsBackend for SimMetrics {
    fn pods(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        let answer = self.pod_metrics(&query, jiff::Timestamp::now());
        Box::pin(async move { Ok(answer) })
    }

    fn nodes(&self, query: MetricsQuery) -> BoxFuture<'static, Result<Vec<Value>, ApiError>> {
        let answer = self.node_metrics(&query, jiff::Timestamp::now());
        Box::pin(async move { Ok(answer) })
    }
}

#[cfg(test)]
mod tests;
