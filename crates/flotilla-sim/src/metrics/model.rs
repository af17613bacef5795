//! The usage model, pure: which pods are reported, which pods are clients of which Services,
//! how their requests are shared among the Services' backends, and what a container uses.
//! Time is a parameter (`now`), never read here.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, Service};

use crate::pod::Pod;

/// A container's idle CPU (a quantity, per container) instead of 1 % of its request.
pub const CPU_USAGE_ANNOTATION: &str = "flotilla.io/sim-cpu-usage";
/// A container's idle memory (a quantity, per container) instead of 25 % of its request.
pub const MEMORY_USAGE_ANNOTATION: &str = "flotilla.io/sim-memory-usage";
/// A client pod's requests per second (default [`DEFAULT_REQUEST_RATE`]).
pub const REQUEST_RATE_ANNOTATION: &str = "flotilla.io/sim-request-rate";
/// CPU a serving pod spends per request, in core-seconds as a quantity (default `1m`).
pub const CPU_PER_REQUEST_ANNOTATION: &str = "flotilla.io/sim-cpu-per-request";
/// Requests per second of a client without [`REQUEST_RATE_ANNOTATION`].
pub const DEFAULT_REQUEST_RATE: f64 = 100.0;
/// Core-seconds per request without [`CPU_PER_REQUEST_ANNOTATION`] (1 ms of CPU).
pub const DEFAULT_CPU_PER_REQUEST: f64 = 0.001;
/// Idle memory of a container with neither annotation nor memory request or limit.
pub const DEFAULT_MEMORY_BYTES: f64 = 8.0 * MIB;
/// Memory a serving container holds per request per second of its share (1 MiB per 10).
pub const MEMORY_PER_REQUEST_RATE: f64 = MIB / 10.0;
/// The share of a node's allocatable CPU and memory its system uses (kubelet, runtime).
pub const SYSTEM_OVERHEAD: f64 = 0.05;
/// The cluster DNS domain.
pub const CLUSTER_DOMAIN: &str = "cluster.local";

const MIB: f64 = 1024.0 * 1024.0;

/// A (namespace, name) key.
pub type Key = (String, String);

/// A pod that sends requests to the Services its URLs name, while it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Client {
    pub namespace: String,
    /// The hosts of the URLs in its containers' commands and arguments.
    pub hosts: Vec<String>,
    /// Requests per second.
    pub rate: f64,
    /// Since when it runs.
    pub start: jiff::Timestamp,
    /// When it stopped (finished, or deleted), if it did.
    pub end: Option<jiff::Timestamp>,
}

impl Client {
    /// The share of the window ending `now` during which it ran (0 to 1).
    pub fn share_of_window(&self, now: jiff::Timestamp, window: Duration) -> f64 {
        let Ok(window_span) = jiff::SignedDuration::try_from(window) else {
            return 0.0;
        };
        if window_span.is_zero() {
            return 0.0;
        }
        let from = self.start.max(now.checked_sub(window_span).unwrap_or(now));
        let to = self.end.unwrap_or(now).min(now);
        if to <= from {
            return 0.0;
        }
        to.duration_since(from).as_secs_f64() / window_span.as_secs_f64()
    }
}

/// What one container uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub cpu_nanocores: u64,
    pub memory_bytes: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.cpu_nanocores += other.cpu_nanocores;
        self.memory_bytes += other.memory_bytes;
    }

    /// `cpu` as metrics-server writes it (nanocores).
    pub fn cpu_text(&self) -> String {
        format!("{}n", self.cpu_nanocores)
    }

    /// `memory` in KiB, as metrics-server's usual answers read.
    pub fn memory_text(&self) -> String {
        format!("{}Ki", self.memory_bytes.div_ceil(1024))
    }
}

/// The hosts of the `http://` and `https://` URLs in `text`, in order.
pub fn url_hosts(text: &str) -> Vec<String> {
    let mut hosts = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("http") {
        rest = &rest[at + 4..];
        let after = rest
            .strip_prefix("s://")
            .or_else(|| rest.strip_prefix("://"));
        let Some(after) = after else {
            continue;
        };
        let host: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
            .collect();
        if !host.is_empty() {
            hosts.push(host);
        }
        rest = after;
    }
    hosts
}

/// The URL hosts of a pod's containers' `command` and `args` (init containers aside), sorted
/// and without repeats.
pub fn pod_url_hosts(pod: &Pod) -> Vec<String> {
    let mut hosts = BTreeSet::new();
    for container in containers(pod) {
        for text in container
            .command
            .iter()
            .flatten()
            .chain(container.args.iter().flatten())
        {
            if text.contains("://") {
                hosts.extend(url_hosts(text));
            }
        }
    }
    hosts.into_iter().collect()
}

/// The Service (namespace, name) `host` names from a pod of `namespace`, as cluster DNS resolves
/// it with the pod's search path: `svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.cluster.local`.
/// Whether such a Service exists is the caller's question.
pub fn resolve(host: &str, namespace: &str) -> Option<Key> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let parts: Vec<&str> = host.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let (service, namespace) = match parts.as_slice() {
        [service] => (*service, namespace),
        [service, ns] | [service, ns, "svc"] => (*service, *ns),
        [service, ns, "svc", rest @ ..] if rest.join(".") == CLUSTER_DOMAIN => (*service, *ns),
        _ => return None,
    };
    Some((namespace.to_owned(), service.to_owned()))
}

/// The pod's regular containers.
pub fn containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map_or(&[][..], |s| s.containers.as_slice())
}

/// Running: phase Running and every regular container started (what metrics-server reports).
pub fn is_running(pod: &Pod) -> bool {
    let Some(status) = &pod.status else {
        return false;
    };
    if status.phase.as_deref() != Some("Running") {
        return false;
    }
    let statuses = status.container_statuses.as_deref().unwrap_or_default();
    containers(pod).iter().all(|c| {
        statuses.iter().any(|s| {
            s.name == c.name
                && s.state
                    .as_ref()
                    .is_some_and(|state| state.running.is_some())
        })
    })
}

/// Condition `Ready` is True.
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// When its containers started (the earliest), or it became Ready.
pub fn running_since(pod: &Pod) -> Option<jiff::Timestamp> {
    let status = pod.status.as_ref()?;
    let started = status
        .container_statuses
        .iter()
        .flatten()
        .filter_map(|s| s.state.as_ref()?.running.as_ref()?.started_at.as_ref())
        .map(|t| t.0)
        .min();
    started.or_else(|| {
        status
            .conditions
            .as_deref()?
            .iter()
            .find(|c| c.type_ == "Ready" && c.status == "True")?
            .last_transition_time
            .as_ref()
            .map(|t| t.0)
    })
}

/// The client a running pod is, if its commands name URLs.
pub fn client_of(pod: &Pod, now: jiff::Timestamp) -> Option<Client> {
    let hosts = pod_url_hosts(pod);
    if hosts.is_empty() {
        return None;
    }
    let rate = annotation(pod, REQUEST_RATE_ANNOTATION)
        .and_then(|r| r.trim().parse::<f64>().ok())
        .filter(|r| r.is_finite() && *r >= 0.0)
        .unwrap_or(DEFAULT_REQUEST_RATE);
    Some(Client {
        namespace: pod.metadata.namespace.clone().unwrap_or_default(),
        hosts,
        rate,
        start: running_since(pod).unwrap_or(now),
        end: None,
    })
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// A quantity as a number (cores for CPU, bytes for memory).
pub fn quantity(text: &str) -> Option<f64> {
    flotilla_api::Quantity::parse(text).ok().map(|q| q.as_f64())
}

/// Whether every label of a Service's selector is among `labels`.
fn selects(selector: &BTreeMap<String, String>, labels: Option<&BTreeMap<String, String>>) -> bool {
    labels.is_some_and(|labels| selector.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// Requests per second each pod serves, by (namespace, name): every client's rate, weighted by
/// the share of the window it ran, to each Service it names that exists, shared evenly among the
/// Service's Running and Ready backends.
pub fn traffic(
    pods: &[Arc<Pod>],
    service: impl Fn(&str, &str) -> Option<Arc<Service>>,
    clients: &[Client],
    now: jiff::Timestamp,
    window: Duration,
) -> HashMap<Key, f64> {
    let mut load: BTreeMap<Key, (Arc<Service>, f64)> = BTreeMap::new();
    for client in clients {
        let share = client.share_of_window(now, window);
        if share <= 0.0 || client.rate <= 0.0 {
            continue;
        }
        let named: BTreeSet<Key> = client
            .hosts
            .iter()
            .filter_map(|h| resolve(h, &client.namespace))
            .collect();
        for key in named {
            if let Some(found) = service(&key.0, &key.1) {
                load.entry(key).or_insert((found, 0.0)).1 += client.rate * share;
            }
        }
    }
    let mut served = HashMap::new();
    for ((namespace, _), (service, rate)) in load {
        let Some(selector) = service
            .spec
            .as_ref()
            .and_then(|s| s.selector.as_ref())
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let backends: Vec<&Arc<Pod>> = pods
            .iter()
            .filter(|p| {
                p.metadata.namespace.as_deref() == Some(namespace.as_str())
                    && selects(selector, p.metadata.labels())
                    && is_running(p)
                    && is_ready(p)
            })
            .collect();
        if backends.is_empty() {
            continue;
        }
        let each = rate / backends.len() as f64;
        for pod in backends {
            let key = (
                namespace.clone(),
                pod.metadata.name.clone().unwrap_or_default(),
            );
            *served.entry(key).or_insert(0.0) += each;
        }
    }
    served
}

/// What each regular container of a running pod uses, serving `rate` requests per second (its
/// first container serves them), on a node with `node_cpu` allocatable cores.
pub fn pod_usage(pod: &Pod, rate: f64, node_cpu: Option<f64>) -> Vec<(String, Usage)> {
    let idle_cpu = annotation(pod, CPU_USAGE_ANNOTATION).and_then(quantity);
    let idle_memory = annotation(pod, MEMORY_USAGE_ANNOTATION).and_then(quantity);
    let per_request = annotation(pod, CPU_PER_REQUEST_ANNOTATION)
        .and_then(quantity)
        .unwrap_or(DEFAULT_CPU_PER_REQUEST);
    containers(pod)
        .iter()
        .enumerate()
        .map(|(i, container)| {
            let resource = |list: Option<
                &BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
            >,
                            name: &str| {
                list.and_then(|l| l.get(name)).and_then(|q| quantity(&q.0))
            };
            let resources = container.resources.as_ref();
            let limits = resources.and_then(|r| r.limits.as_ref());
            let requests = resources.and_then(|r| r.requests.as_ref());
            let cpu_limit = resource(limits, "cpu");
            let cpu_request = resource(requests, "cpu").or(cpu_limit);
            let memory_limit = resource(limits, "memory");
            let memory_request = resource(requests, "memory").or(memory_limit);
            let served = if i == 0 { rate } else { 0.0 };
            let mut cpu =
                idle_cpu.unwrap_or(0.01 * cpu_request.unwrap_or(0.0)) + served * per_request;
            if let Some(cap) = cpu_limit.or(node_cpu) {
                cpu = cpu.min(cap);
            }
            let mut memory = idle_memory
                .or(memory_request.map(|m| 0.25 * m))
                .unwrap_or(DEFAULT_MEMORY_BYTES)
                + served * MEMORY_PER_REQUEST_RATE;
            if let Some(cap) = memory_limit {
                memory = memory.min(cap);
            }
            let usage = Usage {
                cpu_nanocores: (cpu.max(0.0) * 1e9).round() as u64,
                memory_bytes: memory.max(0.0).round() as u64,
            };
            (container.name.clone(), usage)
        })
        .collect()
}

/// A node's usage: its pods' plus the system's share of its allocatable CPU (cores) and memory
/// (bytes).
pub fn node_usage(pods: Usage, allocatable_cpu: f64, allocatable_memory: f64) -> Usage {
    let mut usage = pods;
    usage.add(Usage {
        cpu_nanocores: (SYSTEM_OVERHEAD * allocatable_cpu * 1e9).round() as u64,
        memory_bytes: (SYSTEM_OVERHEAD * allocatable_memory).round() as u64,
    });
    usage
}
