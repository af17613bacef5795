//! Replica estimators: how many more replicas of a binding each cluster can take. The general
//! estimator reads `Cluster.status.resourceSummary` (and the resource-model grades when
//! present); the accurate estimator ([`accurate`]) counts per node from the member's nodes and
//! pods. The scheduler keeps the minimum per cluster, ignoring [`UNAUTHENTIC_REPLICA`].

pub mod accurate;
pub mod quota;
pub mod topology;

use flotilla_api::karmada::replicas::is_scalar_resource_name;
use std::collections::BTreeMap;

use flotilla_api::karmada::{
    Cluster, Component, ReplicaRequirements, ResourceList, ResourceSummary,
};

use crate::assume::{AssumedByCluster, AssumedWorkload};

pub use accurate::{AccurateEstimator, NodeIndex};

/// An estimator's "I don't know" answer (failure, timeout, no data): ignored by the minimum.
pub const UNAUTHENTIC_REPLICA: i32 = -1;
/// Pods a resource-model node holds.
const MAX_PODS_PER_MODEL_NODE: i64 = 110;

/// Estimates the replicas each cluster can still take.
pub trait ReplicaEstimator: std::fmt::Debug {
    /// One answer per cluster, in order (`UNAUTHENTIC_REPLICA` when unknown).
    fn max_available_replicas(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
    ) -> Vec<i32>;

    /// The same with assumed in-flight workloads deducted (gate
    /// `SchedulingOvercommitProtection`); estimators that cannot deduct them answer as without.
    fn max_available_replicas_assuming(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
        _assumed: &AssumedByCluster,
    ) -> Vec<i32> {
        self.max_available_replicas(clusters, requirements)
    }

    /// Whole sets of a multi-template workload's `components` each cluster can take
    /// (`UNAUTHENTIC_REPLICA` when unknown, the default).
    fn max_available_sets(
        &self,
        clusters: &[&Cluster],
        _namespace: &str,
        _components: &[Component],
        _assumed: &AssumedByCluster,
    ) -> Vec<i32> {
        vec![UNAUTHENTIC_REPLICA; clusters.len()]
    }
}

/// The general estimator (always on in Karmada).
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneralEstimator;

impl ReplicaEstimator for GeneralEstimator {
    fn max_available_replicas(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
    ) -> Vec<i32> {
        clusters
            .iter()
            .map(|c| general_max_available(c, requirements))
            .collect()
    }

    fn max_available_replicas_assuming(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
        assumed: &AssumedByCluster,
    ) -> Vec<i32> {
        let request = GeneralRequest::new(requirements);
        clusters
            .iter()
            .map(|c| {
                let figures = SummaryFigures::new(c);
                let figures = match assumed.get(c.name()) {
                    Some(workloads) => figures.deducted(workloads),
                    None => figures,
                };
                figures.estimate(c, requirements, &request)
            })
            .collect()
    }
}

fn to_i32(value: i64) -> i32 {
    // Go converts with int32(x), which wraps; values here are far below the limit in practice,
    // so saturate instead of reproducing garbage.
    i32::try_from(value).unwrap_or(if value < 0 { i32::MIN } else { i32::MAX })
}

fn pods(list: Option<&ResourceList>) -> i64 {
    list.and_then(|l| l.get("pods"))
        .and_then(flotilla_api::Quantity::as_i64)
        .unwrap_or(0)
}

/// One cluster's general estimate.
pub fn general_max_available(cluster: &Cluster, requirements: Option<&ReplicaRequirements>) -> i32 {
    SummaryFigures::new(cluster).estimate(cluster, requirements, &GeneralRequest::new(requirements))
}

/// A cluster's resource summary in the general estimator's units, computed once per snapshot.
#[derive(Debug, Clone, Default)]
pub struct SummaryFigures {
    present: bool,
    allowed_pods: i64,
    /// Per allocatable resource: `allocatable − allocated − allocating` as (`Value()`,
    /// `MilliValue()`).
    available: BTreeMap<String, (i64, i64)>,
    /// The resource-model virtual nodes, when the summary has `allocatableModelings` and the
    /// cluster's models build them.
    models: Option<ModelNodes>,
}

/// A per-replica request in the general estimator's units, computed once per binding: per
/// resource (`Value()`, `MilliValue()`).
#[derive(Debug, Clone, Default)]
pub struct GeneralRequest {
    resources: Vec<(String, i64, i64)>,
}

impl GeneralRequest {
    /// Compiles `requirements`' resource request.
    pub fn new(requirements: Option<&ReplicaRequirements>) -> Self {
        let resources = requirements
            .and_then(|r| r.resource_request.as_ref())
            .into_iter()
            .flatten()
            .map(|(name, q)| {
                (
                    name.clone(),
                    q.as_i64().unwrap_or(i64::MAX),
                    q.as_milli().unwrap_or(i64::MAX),
                )
            })
            .collect();
        Self { resources }
    }
}

impl SummaryFigures {
    /// Computes the figures of `cluster`'s `status.resourceSummary`.
    pub fn new(cluster: &Cluster) -> Self {
        let Some(summary) = cluster
            .status
            .as_ref()
            .and_then(|s| s.resource_summary.as_ref())
        else {
            return Self::default();
        };
        let allowed_pods = pods(summary.allocatable.as_ref())
            - pods(summary.allocated.as_ref())
            - pods(summary.allocating.as_ref());
        let mut available = BTreeMap::new();
        for (name, allocatable) in summary.allocatable.iter().flatten() {
            let mut rest = *allocatable;
            for list in [&summary.allocated, &summary.allocating] {
                if let Some(used) = list.as_ref().and_then(|l| l.get(name))
                    && let Some(r) = rest.checked_sub(used)
                {
                    rest = r;
                }
            }
            available.insert(
                name.clone(),
                (
                    rest.as_i64().unwrap_or(i64::MAX),
                    rest.as_milli().unwrap_or(i64::MAX),
                ),
            );
        }
        let models = if summary.allocatable_modelings.is_empty() {
            None
        } else {
            ModelNodes::new(cluster, summary)
        };
        Self {
            present: true,
            allowed_pods,
            available,
            models,
        }
    }

    /// The figures with assumed in-flight workloads counted as allocating (Karmada's
    /// `deductAssumedWorkloadsFromSummary`): their pods and their requests are taken off, and
    /// one set of each is placed first-fit on the resource-model virtual nodes (Karmada's
    /// pre-simulation before the model path).
    pub fn deducted(&self, assumed: &[AssumedWorkload]) -> Self {
        let mut figures = self.clone();
        if !figures.present {
            return figures;
        }
        if let Some(models) = &mut figures.models {
            for workload in assumed {
                models.place_set(&compile_components(&workload.components));
            }
        }
        for workload in assumed {
            let (pods, resources) = crate::assume::demands(&workload.components);
            figures.allowed_pods = figures.allowed_pods.saturating_sub(pods);
            for (name, amount) in resources {
                let Some((value, milli)) = figures.available.get_mut(&name) else {
                    continue;
                };
                if name == "cpu" {
                    // As Quantity arithmetic: exact in millis, `Value()` rounded up.
                    *milli = milli.saturating_sub(amount);
                    *value = -(milli.saturating_neg().div_euclid(1000));
                } else {
                    *value = value.saturating_sub(amount);
                    *milli = milli.saturating_sub(amount.saturating_mul(1000));
                }
            }
        }
        figures
    }

    /// The general estimate for one replica of `request` (`requirements` is the same request,
    /// needed only for the resource-model path, whose virtual nodes these figures carry; the
    /// cluster is the one they were computed from).
    pub fn estimate(
        &self,
        _cluster: &Cluster,
        requirements: Option<&ReplicaRequirements>,
        request: &GeneralRequest,
    ) -> i32 {
        if !self.present || self.allowed_pods <= 0 {
            return 0;
        }
        let Some(requirements) = requirements else {
            return to_i32(self.allowed_pods);
        };
        if let Some(models) = &self.models {
            let request = CompiledRequest::new(requirements.resource_request.as_ref());
            return to_i32(models.replicas(&request).min(self.allowed_pods));
        }
        to_i32(self.by_summary(request).min(self.allowed_pods))
    }

    /// The summary path: per requested resource, `floor(available / request)`; CPU in millis,
    /// everything else in whole units; a resource the cluster lacks ⇒ 0.
    fn by_summary(&self, request: &GeneralRequest) -> i64 {
        let mut maximum = i64::MAX;
        for (name, value, milli) in &request.resources {
            if *value <= 0 {
                continue;
            }
            let Some((available, available_milli)) = self.available.get(name) else {
                return 0;
            };
            if *available <= 0 {
                return 0;
            }
            let replicas = if name == "cpu" {
                available_milli / milli
            } else {
                available / value
            };
            maximum = maximum.min(replicas);
        }
        maximum
    }
}

/// Karmada's multi-template estimate by cluster summary (`maxAvailableComponentSets`): how many
/// whole sets of `components` (each component's replicas × its per-replica request) the
/// cluster still takes — bounded by the pods left ÷ the pods of a set and, per requested
/// resource, by what is left ÷ what a set requests (CPU in millis, the rest in whole units; a
/// resource the cluster lacks ⇒ 0); with resource models, also by the sets that pack first-fit
/// onto the virtual model nodes.
pub fn general_max_sets(figures: &SummaryFigures, components: &[Component]) -> i32 {
    if !figures.present || figures.allowed_pods <= 0 {
        return 0;
    }
    let (pods_per_set, per_set) = crate::assume::demands(components);
    if pods_per_set == 0 {
        return to_i32(figures.allowed_pods);
    }
    let mut sets = figures.allowed_pods / pods_per_set;
    for (name, need) in &per_set {
        if *need <= 0 {
            continue;
        }
        let Some((available, available_milli)) = figures.available.get(name) else {
            return 0;
        };
        let available = if name == "cpu" {
            *available_milli
        } else {
            *available
        };
        if available <= 0 {
            return 0;
        }
        sets = sets.min(available / need);
    }
    if let Some(models) = &figures.models {
        sets = sets.min(models.sets(components, sets));
    }
    to_i32(sets)
}

/// A node's free resources in Karmada's `util.Resource` units.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPU in millis.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// Pods.
    pub pods: i64,
    /// Scalar (extended, hugepages, …) resources, sorted by name.
    pub scalar: Vec<(String, i64)>,
}

impl Resources {
    /// Karmada's `NewResource` over a resource list (unknown names dropped).
    pub fn from_list(list: &ResourceList) -> Self {
        let mut r = Self::default();
        r.add(list, 1);
        r
    }

    /// Adds `factor` × `list`.
    pub fn add(&mut self, list: &ResourceList, factor: i64) {
        for (name, q) in list {
            let value = |v: Option<i64>| v.unwrap_or(i64::MAX).saturating_mul(factor);
            match name.as_str() {
                "cpu" => self.milli_cpu = self.milli_cpu.saturating_add(value(q.as_milli())),
                "memory" => self.memory = self.memory.saturating_add(value(q.as_i64())),
                "pods" => self.pods = self.pods.saturating_add(value(q.as_i64())),
                "ephemeral-storage" => {
                    self.ephemeral_storage =
                        self.ephemeral_storage.saturating_add(value(q.as_i64()));
                }
                other if is_scalar_resource_name(other) => {
                    let v = value(q.as_i64());
                    match self.scalar.binary_search_by(|(n, _)| n.as_str().cmp(other)) {
                        Ok(i) => self.scalar[i].1 = self.scalar[i].1.saturating_add(v),
                        Err(i) => self.scalar.insert(i, (other.to_owned(), v)),
                    }
                }
                _ => {}
            }
        }
    }

    /// The scalar resource `name` (0 if absent).
    pub fn scalar(&self, name: &str) -> i64 {
        self.scalar
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .map_or(0, |i| self.scalar[i].1)
    }
}

/// A per-replica request compiled for repeated division.
#[derive(Debug, Clone, Default)]
pub struct CompiledRequest {
    milli_cpu: i64,
    memory: i64,
    ephemeral_storage: i64,
    scalar: Vec<(String, i64)>,
}

impl CompiledRequest {
    /// Compiles a request (Karmada: CPU `MilliValue`, others `Value`; non-positive ignored).
    pub fn new(list: Option<&ResourceList>) -> Self {
        let mut out = Self::default();
        for (name, q) in list.into_iter().flatten() {
            match name.as_str() {
                "cpu" => out.milli_cpu = q.as_milli().unwrap_or(i64::MAX),
                "memory" => out.memory = q.as_i64().unwrap_or(i64::MAX),
                "ephemeral-storage" => out.ephemeral_storage = q.as_i64().unwrap_or(i64::MAX),
                other if is_scalar_resource_name(other) => {
                    out.scalar
                        .push((other.to_owned(), q.as_i64().unwrap_or(i64::MAX)));
                }
                _ => {}
            }
        }
        out
    }

    /// Takes `count` replicas of this request (one pod each) off `free`.
    pub fn subtract(&self, free: &mut Resources, count: i64) {
        free.milli_cpu -= self.milli_cpu.saturating_mul(count);
        free.memory -= self.memory.saturating_mul(count);
        free.ephemeral_storage -= self.ephemeral_storage.saturating_mul(count);
        free.pods -= count;
        for (name, request) in &self.scalar {
            if let Ok(i) = free.scalar.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
                free.scalar[i].1 -= request.saturating_mul(count);
            }
        }
    }

    /// Karmada's `Resource.MaxDivided`: how many of this request fit in `free`, capped by its
    /// pods (Go integer division, truncating toward zero).
    pub fn max_divided(&self, free: &Resources) -> i64 {
        let mut result = i64::MAX;
        if self.milli_cpu > 0 {
            result = result.min(free.milli_cpu / self.milli_cpu);
        }
        if self.memory > 0 {
            result = result.min(free.memory / self.memory);
        }
        if self.ephemeral_storage > 0 {
            result = result.min(free.ephemeral_storage / self.ephemeral_storage);
        }
        for (name, request) in &self.scalar {
            if *request > 0 {
                result = result.min(free.scalar(name) / request);
            }
        }
        result.min(free.pods)
    }
}

/// Karmada's resource-model virtual nodes (`buildModelNodes`): per grade of the cluster's
/// models, as many nodes as `allocatableModelings` counts, each with the grade's minimums and
/// 110 pods, in grade order. Identical nodes are kept as runs (node, count), so a count of
/// thousands costs one entry until placements make the nodes differ.
#[derive(Debug, Clone, Default)]
struct ModelNodes {
    runs: Vec<(Resources, i64)>,
}

impl ModelNodes {
    /// `None` when the models cannot be built (no models, a negative count): Karmada then falls
    /// back to the summary path.
    fn new(cluster: &Cluster, summary: &ResourceSummary) -> Option<Self> {
        let models = &cluster.spec.resource_models;
        if models.is_empty() {
            return None;
        }
        let mut capacity_by_grade = BTreeMap::new();
        for model in models {
            let minimums: ResourceList = model
                .ranges
                .iter()
                .map(|r| (r.name.clone(), r.min))
                .collect();
            let mut node = Resources::from_list(&minimums);
            node.pods = MAX_PODS_PER_MODEL_NODE;
            capacity_by_grade.insert(model.grade, node);
        }
        let mut count_by_grade: BTreeMap<u32, i64> = BTreeMap::new();
        for modeling in &summary.allocatable_modelings {
            if modeling.count < 0 {
                return None;
            }
            let count = count_by_grade.entry(modeling.grade).or_default();
            *count = count.saturating_add(modeling.count);
        }
        let runs = capacity_by_grade
            .into_iter()
            .filter_map(|(grade, node)| {
                let count = count_by_grade.get(&grade).copied().unwrap_or(0);
                (count > 0).then_some((node, count))
            })
            .collect();
        Some(Self { runs })
    }

    /// Single replicas of `request` placed first-fit until none fits (Karmada's simulation
    /// of a one-replica component, capped at MaxInt32): identical items fill every node to
    /// its own limit, so the answer is the sum of the per-node limits.
    fn replicas(&self, request: &CompiledRequest) -> i64 {
        let total = self.runs.iter().fold(0i64, |total, (node, count)| {
            total.saturating_add(request.max_divided(node).max(0).saturating_mul(*count))
        });
        total.min(i64::from(i32::MAX))
    }

    /// Whole sets of `components` placed first-fit one after another, at most `upper_bound`
    /// (Karmada's `getMaximumSetsBasedOnResourceModels`).
    fn sets(&self, components: &[Component], upper_bound: i64) -> i64 {
        let components = compile_components(components);
        let mut nodes = self.clone();
        let mut sets = 0;
        while sets < upper_bound && nodes.place_set(&components) {
            sets += 1;
        }
        sets
    }

    /// Places one set (each component's replicas, in order); false when a component does not
    /// fit, what was placed staying placed (Karmada's `scheduleComponentSet`).
    fn place_set(&mut self, components: &[(CompiledRequest, i64)]) -> bool {
        components
            .iter()
            .all(|(request, replicas)| self.place(request, *replicas))
    }

    /// Karmada's `scheduleComponent` on virtual nodes (they have no `Node`, so node claims
    /// match every one): node by node, as many replicas as fit. On a run of identical nodes
    /// the first ones take `fits` each and one more takes the rest, so the run splits in at
    /// most three.
    fn place(&mut self, request: &CompiledRequest, replicas: i64) -> bool {
        let mut remaining = replicas.max(0);
        let mut i = 0;
        while remaining > 0 && i < self.runs.len() {
            let (node, count) = self.runs[i].clone();
            let fits = request.max_divided(&node);
            if fits <= 0 {
                i += 1;
                continue;
            }
            let full = (remaining / fits).min(count);
            remaining -= full * fits;
            let mut split = Vec::with_capacity(3);
            if full > 0 {
                let mut taken = node.clone();
                request.subtract(&mut taken, fits);
                split.push((taken, full));
            }
            let mut untouched = count - full;
            if untouched > 0 && remaining > 0 {
                let mut taken = node.clone();
                request.subtract(&mut taken, remaining);
                split.push((taken, 1));
                remaining = 0;
                untouched -= 1;
            }
            if untouched > 0 {
                split.push((node, untouched));
            }
            let len = split.len();
            self.runs.splice(i..=i, split);
            i += len;
        }
        remaining == 0
    }
}

/// Components' per-replica requests and replicas (requirements that do not read as a
/// binding's count as none).
fn compile_components(components: &[Component]) -> Vec<(CompiledRequest, i64)> {
    components
        .iter()
        .map(|c| {
            let requirements: Option<ReplicaRequirements> = c
                .replica_requirements
                .as_ref()
                .and_then(|r| serde_json::from_value(r.clone()).ok());
            let request = CompiledRequest::new(
                requirements
                    .as_ref()
                    .and_then(|r| r.resource_request.as_ref()),
            );
            (request, i64::from(c.replicas))
        })
        .collect()
}

#[cfg(test)]
mod tests;
