//! The accurate estimator: Karmada's scheduler-estimator `NodeResourceEstimator`, run in process
//! over a member's nodes and pods. Per node, free = allocatable − Σ requests of the pods bound to
//! it (and allowed pods = pods − #pods); nodes must satisfy the replica's node claim (node
//! selector, required node affinity incl. `Gt`/`Lt`, NoSchedule/NoExecute taints, cordoning);
//! the cluster's answer is Σ over matching nodes of `MaxDivided(free, request)`.
//!
//! The index keeps each node's free resources precomputed, so an estimate is one pass over the
//! nodes with no allocation per node.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::karmada::replicas::parse_list;
use flotilla_api::karmada::{Cluster, Component, ReplicaRequirements, ResourceList};
use k8s_openapi::api::core::v1::{Node, Pod, PodSpec, ResourceQuota, Taint, Toleration};

use super::quota::{self, QuotaEntry};
use super::topology::{
    GPU_RESOURCE, GPU_TOPOLOGY_NODE_ANNOTATION, GpuLayout, GpuTopologyLevel, gpus_per_replica,
};
use super::{CompiledRequest, ReplicaEstimator, Resources, UNAUTHENTIC_REPLICA};
use crate::assume::{AssumedByCluster, AssumedWorkload};
use crate::lifted::node_affinity::RequiredNodeAffinity;
use crate::lifted::taints::{find_untolerated_taint, is_do_not_schedule, tolerations_tolerate};

/// Why node or pod data could not be indexed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A node without a name.
    #[error("a Node has no metadata.name")]
    UnnamedNode,
    /// A quantity that does not parse.
    #[error("{object}: {source}")]
    Quantity {
        /// Which object.
        object: String,
        /// The parse error.
        #[source]
        source: flotilla_api::karmada::replicas::InterpretError,
    },
}

/// One node, ready for estimation.
#[derive(Debug, Clone)]
pub struct NodeEntry {
    /// Node name.
    pub name: String,
    /// Node labels.
    pub labels: BTreeMap<String, String>,
    /// NoSchedule / NoExecute taints.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
    /// Free resources (allowed pods = allocatable pods − pods on the node, ≥ 0).
    pub free: Resources,
    /// Allocatable `nvidia.com/gpu`.
    pub gpu_allocatable: i64,
    /// GPU groups from the `karmada.io/gpu-topology` annotation, when present and valid.
    pub gpu_layout: Option<GpuLayout>,
}

/// A member's nodes with their free resources, and its ResourceQuotas. Both are shared, so an
/// index with other quotas ([`NodeIndex::with_quotas`]) costs no copy of the nodes.
#[derive(Debug, Clone, Default)]
pub struct NodeIndex {
    nodes: Arc<[NodeEntry]>,
    quotas: Arc<[QuotaEntry]>,
}

fn pod_requests(spec: &PodSpec, object: &str) -> Result<ResourceList, IndexError> {
    let wrap = |source| IndexError::Quantity {
        object: object.to_owned(),
        source,
    };
    // The API server defaults a missing request to the limit; apply that for raw input.
    let container_requests =
        |resources: Option<&k8s_openapi::api::core::v1::ResourceRequirements>,
         field: &str|
         -> Result<ResourceList, IndexError> {
            let empty = BTreeMap::new();
            let mut list = parse_list(
                resources
                    .and_then(|r| r.requests.as_ref())
                    .unwrap_or(&empty),
                field,
            )
            .map_err(wrap)?;
            for (k, v) in parse_list(
                resources.and_then(|r| r.limits.as_ref()).unwrap_or(&empty),
                field,
            )
            .map_err(wrap)?
            {
                list.entry(k).or_insert(v);
            }
            Ok(list)
        };
    let mut total = ResourceList::new();
    for c in &spec.containers {
        for (k, v) in container_requests(c.resources.as_ref(), "containers")? {
            let sum = match total.get(&k) {
                Some(existing) => existing.checked_add(&v).unwrap_or(v),
                None => v,
            };
            total.insert(k, sum);
        }
    }
    for c in spec.init_containers.iter().flatten() {
        for (k, v) in container_requests(c.resources.as_ref(), "initContainers")? {
            if total.get(&k).is_none_or(|existing| *existing < v) {
                total.insert(k, v);
            }
        }
    }
    if let Some(overhead) = &spec.overhead {
        for (k, v) in parse_list(overhead, "overhead").map_err(wrap)? {
            let sum = match total.get(&k) {
                Some(existing) => existing.checked_add(&v).unwrap_or(v),
                None => v,
            };
            total.insert(k, sum);
        }
    }
    Ok(total)
}

impl NodeIndex {
    /// Indexes `nodes` and the `pods` bound to them (pods without `spec.nodeName`, on unknown
    /// nodes, or Succeeded/Failed are ignored).
    pub fn new(nodes: &[Node], pods: &[Pod]) -> Result<Self, IndexError> {
        let mut entries = Vec::with_capacity(nodes.len());
        let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
        let mut requested: Vec<Resources> = Vec::with_capacity(nodes.len());
        let mut pod_counts: Vec<i64> = vec![0; nodes.len()];
        for node in nodes {
            let name = node.metadata.name.clone().ok_or(IndexError::UnnamedNode)?;
            let spec = node.spec.clone().unwrap_or_default();
            let empty = BTreeMap::new();
            let allocatable = parse_list(
                node.status
                    .as_ref()
                    .and_then(|s| s.allocatable.as_ref())
                    .unwrap_or(&empty),
                "status.allocatable",
            )
            .map_err(|source| IndexError::Quantity {
                object: format!("Node {name}"),
                source,
            })?;
            let free = Resources::from_list(&allocatable);
            entries.push(NodeEntry {
                gpu_allocatable: free.scalar(GPU_RESOURCE),
                gpu_layout: node
                    .metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(GPU_TOPOLOGY_NODE_ANNOTATION))
                    .and_then(|text| GpuLayout::parse(text)),
                labels: node.metadata.labels.clone().unwrap_or_default(),
                taints: spec
                    .taints
                    .unwrap_or_default()
                    .into_iter()
                    .filter(is_do_not_schedule)
                    .collect(),
                unschedulable: spec.unschedulable.unwrap_or(false),
                free,
                name,
            });
            requested.push(Resources::default());
        }
        for (i, e) in entries.iter().enumerate() {
            by_name.insert(&e.name, i);
        }
        for pod in pods {
            let Some(spec) = &pod.spec else { continue };
            let Some(node) = spec.node_name.as_deref().and_then(|n| by_name.get(n)) else {
                continue;
            };
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            if matches!(phase, Some("Succeeded" | "Failed")) {
                continue;
            }
            let object = format!(
                "Pod {}/{}",
                pod.metadata.namespace.as_deref().unwrap_or_default(),
                pod.metadata.name.as_deref().unwrap_or_default()
            );
            requested[*node].add(&pod_requests(spec, &object)?, 1);
            pod_counts[*node] += 1;
        }
        for ((entry, used), count) in entries.iter_mut().zip(&requested).zip(&pod_counts) {
            let free = &mut entry.free;
            free.milli_cpu -= used.milli_cpu;
            free.memory -= used.memory;
            free.ephemeral_storage -= used.ephemeral_storage;
            for (name, v) in &used.scalar {
                if let Ok(i) = free.scalar.binary_search_by(|(n, _)| n.cmp(name)) {
                    free.scalar[i].1 -= v;
                }
            }
            free.pods = (free.pods - count).max(0);
        }
        Ok(Self {
            nodes: entries.into(),
            quotas: Arc::from([]),
        })
    }

    /// The same index counting the member's ResourceQuotas too ([`super::quota`]).
    pub fn with_quotas(mut self, quotas: &[ResourceQuota]) -> Self {
        self.quotas = quotas
            .iter()
            .filter_map(QuotaEntry::new)
            .collect::<Vec<_>>()
            .into();
        self
    }

    /// The indexed nodes.
    pub fn nodes(&self) -> &[NodeEntry] {
        &self.nodes
    }

    /// Karmada's `NodeResourceEstimator.Estimate` over this member, capped by its
    /// `ResourceQuotaEstimator` (the quotas of the requirements' namespace, when named).
    pub fn max_available_replicas(&self, requirements: Option<&ReplicaRequirements>) -> i32 {
        let mut total: i32 = 0;
        self.for_each_fit(requirements, |_, fits| {
            // Go: atomic.AddInt32(&res, int32(MaxDivided(...))).
            total = total.wrapping_add(fits as i32);
        });
        total.min(quota::max_replicas(&self.quotas, requirements))
    }

    /// Nodes that satisfy the node claim and fit at least one replica (the weight of the
    /// `flotilla.io/replica-division: NodeCount` extension).
    pub fn fitting_nodes(&self, requirements: Option<&ReplicaRequirements>) -> i64 {
        let mut count = 0;
        self.for_each_fit(requirements, |_, fits| {
            if fits >= 1 {
                count += 1;
            }
        });
        count
    }

    /// Replicas that fit with every replica's GPUs within one group of `level` (see
    /// [`super::topology`]); nodes without a topology annotation hold no aligned replica of a
    /// GPU request. Without a GPU request, the same as [`Self::max_available_replicas`].
    pub fn aligned_available_replicas(
        &self,
        requirements: Option<&ReplicaRequirements>,
        level: GpuTopologyLevel,
    ) -> i32 {
        let per_replica = gpus_per_replica(requirements);
        let mut total: i32 = 0;
        self.for_each_fit(requirements, |node, fits| {
            let aligned = match (&node.gpu_layout, per_replica) {
                (_, 0) => fits,
                (None, _) => 0,
                (Some(layout), _) => {
                    let used = node.gpu_allocatable - node.free.scalar(GPU_RESOURCE);
                    fits.min(layout.aligned_fits(level, used, per_replica))
                }
            };
            total = total.wrapping_add(aligned as i32);
        });
        total.min(quota::max_replicas(&self.quotas, requirements))
    }

    /// Calls `f` with each node satisfying the claim and `MaxDivided(free, request)` for it.
    fn for_each_fit(
        &self,
        requirements: Option<&ReplicaRequirements>,
        mut f: impl FnMut(&NodeEntry, i64),
    ) {
        let claim = Claim::new(requirements);
        for node in self.nodes.iter() {
            if claim.admits(node) {
                f(node, claim.request.max_divided(&node.free));
            }
        }
    }

    /// Each node's free resources once one set of every assumed workload is placed first-fit
    /// (Karmada's `SchedulingSimulator` run over the assumptions before estimating).
    fn free_after(&self, assumed: &[AssumedWorkload]) -> Vec<Resources> {
        let mut free: Vec<Resources> = self.nodes.iter().map(|n| n.free.clone()).collect();
        for workload in assumed {
            let components = parse_components(&workload.components);
            let _ = self.place_set(&mut free, &components);
        }
        free
    }

    /// Places one whole set of `components` first-fit (node order); false when one does not fit
    /// (what was placed stays placed, as in Karmada's simulator).
    fn place_set(&self, free: &mut [Resources], components: &[(Claim, i32)]) -> bool {
        components
            .iter()
            .all(|(claim, replicas)| self.place(free, claim, *replicas))
    }

    /// Karmada's `scheduleComponent`: `replicas` of one component, as many per node as fit.
    fn place(&self, free: &mut [Resources], claim: &Claim, replicas: i32) -> bool {
        let mut remaining = i64::from(replicas.max(0));
        if remaining == 0 {
            return true;
        }
        for (node, free) in self.nodes.iter().zip(free.iter_mut()) {
            if !claim.admits(node) {
                continue;
            }
            let fits = claim.request.max_divided(free);
            if fits <= 0 {
                continue;
            }
            let placed = fits.min(remaining);
            claim.request.subtract(free, placed);
            remaining -= placed;
            if remaining == 0 {
                return true;
            }
        }
        false
    }

    /// [`Self::max_available_replicas`] with assumed in-flight workloads deducted first: from
    /// the nodes (placed first-fit) and from the quotas of their namespace.
    pub fn max_available_replicas_assuming(
        &self,
        requirements: Option<&ReplicaRequirements>,
        assumed: &[AssumedWorkload],
    ) -> i32 {
        if assumed.is_empty() {
            return self.max_available_replicas(requirements);
        }
        let free = self.free_after(assumed);
        let claim = Claim::new(requirements);
        let mut total: i32 = 0;
        for (node, free) in self.nodes.iter().zip(&free) {
            if claim.admits(node) {
                total = total.wrapping_add(claim.request.max_divided(free) as i32);
            }
        }
        total.min(quota::max_replicas_assuming(
            &self.quotas,
            requirements,
            assumed,
        ))
    }

    /// Karmada's `EstimateComponents` of the NodeResource and ResourceQuota plugins: how many
    /// whole sets of `components` still fit (nodes: first-fit after the assumptions; quotas of
    /// `namespace`: their free resources ÷ a set's requests).
    pub fn max_available_sets(
        &self,
        namespace: &str,
        components: &[Component],
        assumed: &[AssumedWorkload],
    ) -> i32 {
        if components.is_empty() {
            return i32::MAX;
        }
        let mut free = self.free_after(assumed);
        let parsed = parse_components(components);
        let mut sets: i32 = 0;
        while sets < MAX_SIMULATED_SETS && self.place_set(&mut free, &parsed) {
            sets += 1;
        }
        sets.min(quota::max_sets(
            &self.quotas,
            namespace,
            components,
            assumed,
        ))
    }
}

/// The most sets the simulation counts (Karmada counts up to MaxInt32, one set at a time).
const MAX_SIMULATED_SETS: i32 = 1_000_000;

/// A replica's node claim and request, compiled.
struct Claim {
    affinity: RequiredNodeAffinity,
    tolerations: Vec<Toleration>,
    tolerates_cordon: bool,
    request: CompiledRequest,
}

impl Claim {
    fn new(requirements: Option<&ReplicaRequirements>) -> Self {
        let claim = requirements.and_then(|r| r.node_claim.as_ref());
        let affinity = RequiredNodeAffinity::new(
            claim.and_then(|c| c.node_selector.as_ref()),
            claim.and_then(|c| c.hard_node_affinity.as_ref()),
        );
        let tolerations: Vec<Toleration> = claim.map_or(Vec::new(), |c| c.tolerations.clone());
        let tolerates_cordon = tolerations_tolerate(
            &tolerations,
            &Taint {
                key: "node.kubernetes.io/unschedulable".into(),
                effect: "NoSchedule".into(),
                ..Taint::default()
            },
        );
        Self {
            affinity,
            tolerations,
            tolerates_cordon,
            request: CompiledRequest::new(requirements.and_then(|r| r.resource_request.as_ref())),
        }
    }

    /// Whether the node passes the claim (cordon, taints, affinity).
    fn admits(&self, node: &NodeEntry) -> bool {
        if node.unschedulable && !self.tolerates_cordon {
            return false;
        }
        if !node.taints.is_empty()
            && find_untolerated_taint(&node.taints, &self.tolerations, |_| true).is_some()
        {
            return false;
        }
        self.affinity.matches(&node.name, &node.labels)
    }
}

/// Components with their requirements read as a binding's (a component's requirements have the
/// same JSON shape); unreadable requirements count as none.
fn parse_components(components: &[Component]) -> Vec<(Claim, i32)> {
    components
        .iter()
        .map(|c| {
            let requirements: Option<ReplicaRequirements> = c
                .replica_requirements
                .as_ref()
                .and_then(|r| serde_json::from_value(r.clone()).ok());
            (Claim::new(requirements.as_ref()), c.replicas)
        })
        .collect()
}

/// The accurate estimator over the members whose nodes it knows; other members get
/// [`UNAUTHENTIC_REPLICA`] (Karmada: no estimator connection).
#[derive(Debug, Clone, Default)]
pub struct AccurateEstimator {
    members: BTreeMap<String, Arc<NodeIndex>>,
    /// Where each member's estimate is counted (Karmada's estimator server metrics).
    metrics: Option<flotilla_runtime::EstimatorMetrics>,
}

impl AccurateEstimator {
    /// An estimator over `members` (cluster name → its nodes).
    pub fn new(members: BTreeMap<String, NodeIndex>) -> Self {
        Self {
            members: members.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
            metrics: None,
        }
    }

    /// The same estimator, counting each member's estimate in `metrics`.
    pub fn with_metrics(mut self, metrics: flotilla_runtime::EstimatorMetrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Runs one member's estimate of `kind`, counted.
    fn counted<T>(&self, kind: &'static str, estimate: impl FnOnce() -> T) -> T {
        let start = std::time::Instant::now();
        let answer = estimate();
        if let Some(metrics) = &self.metrics {
            metrics.record(kind, true, start);
        }
        answer
    }

    /// Adds or replaces one member's nodes.
    pub fn insert(&mut self, cluster: impl Into<String>, index: NodeIndex) {
        self.members.insert(cluster.into(), Arc::new(index));
    }

    /// Adds or replaces one member's nodes, shared with whoever keeps them current.
    pub fn insert_shared(&mut self, cluster: impl Into<String>, index: Arc<NodeIndex>) {
        self.members.insert(cluster.into(), index);
    }

    /// The members it knows.
    pub fn members(&self) -> impl Iterator<Item = &str> {
        self.members.keys().map(String::as_str)
    }

    /// The nodes of `cluster`, if known.
    pub fn member(&self, cluster: &str) -> Option<&NodeIndex> {
        self.members.get(cluster).map(|m| &**m)
    }

    /// The nodes of `cluster` that fit at least one replica (`None` without node data).
    pub fn fitting_nodes(
        &self,
        cluster: &str,
        requirements: Option<&ReplicaRequirements>,
    ) -> Option<i64> {
        self.members
            .get(cluster)
            .map(|m| m.fitting_nodes(requirements))
    }
}

use flotilla_runtime::estimator_metrics::{MAX_AVAILABLE_COMPONENT_SETS, MAX_AVAILABLE_REPLICAS};

impl ReplicaEstimator for AccurateEstimator {
    fn max_available_replicas(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
    ) -> Vec<i32> {
        clusters
            .iter()
            .map(|c| {
                self.members.get(c.name()).map_or(UNAUTHENTIC_REPLICA, |m| {
                    self.counted(MAX_AVAILABLE_REPLICAS, || {
                        m.max_available_replicas(requirements)
                    })
                })
            })
            .collect()
    }

    fn max_available_replicas_assuming(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
        assumed: &AssumedByCluster,
    ) -> Vec<i32> {
        clusters
            .iter()
            .map(|c| {
                self.members.get(c.name()).map_or(UNAUTHENTIC_REPLICA, |m| {
                    let workloads = assumed.get(c.name()).map_or(&[][..], Vec::as_slice);
                    self.counted(MAX_AVAILABLE_REPLICAS, || {
                        m.max_available_replicas_assuming(requirements, workloads)
                    })
                })
            })
            .collect()
    }

    fn max_available_sets(
        &self,
        clusters: &[&Cluster],
        namespace: &str,
        components: &[Component],
        assumed: &AssumedByCluster,
    ) -> Vec<i32> {
        clusters
            .iter()
            .map(|c| {
                self.members.get(c.name()).map_or(UNAUTHENTIC_REPLICA, |m| {
                    let workloads = assumed.get(c.name()).map_or(&[][..], Vec::as_slice);
                    self.counted(MAX_AVAILABLE_COMPONENT_SETS, || {
                        m.max_available_sets(namespace, components, workloads)
                    })
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
