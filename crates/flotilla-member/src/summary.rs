//! The member's node and pod facts and the summaries Karmada's cluster status controller
//! publishes from them: `nodeSummary`, `resourceSummary` (allocatable, allocating, allocated)
//! and `allocatableModelings`. Pure: the watches in [`crate::watch`] feed it events, and totals
//! are kept incrementally so that a summary costs O(resources), not O(pods); only the
//! modelings walk the nodes (O(nodes), no pods).
//!
//! Memory: a tracked node costs its name and a pointer to its allocatable, shared with every
//! node that lists the same one (the nodes of a pool or instance type); a tracked pod costs its
//! key and pointers to its node's name and its requests, shared likewise. 5,000 nodes are a few
//! hundred kilobytes, not one map per node.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use flotilla_api::karmada::{AllocatableModeling, NodeSummary, ResourceModel, ResourceSummary};
use flotilla_api::{Quantity, QuantityFormat};

use crate::lifted::requests::amount;

/// Integer amounts by resource name (CPU in millicores, the rest in units).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Amounts(BTreeMap<String, i128>);

impl Amounts {
    pub fn get(&self, name: &str) -> i128 {
        self.0.get(name).copied().unwrap_or(0)
    }

    pub fn add(&mut self, name: &str, value: i128) {
        *self.0.entry(name.to_owned()).or_insert(0) += value;
    }

    /// Raises `name` to at least `value`.
    pub fn raise_to(&mut self, name: &str, value: i128) {
        let entry = self.0.entry(name.to_owned()).or_insert(0);
        *entry = (*entry).max(value);
    }

    fn add_all(&mut self, other: &Amounts, sign: i128) {
        for (name, value) in &other.0 {
            self.add(name, sign * value);
        }
    }

    /// Karmada's `Resource.ResourceList()`: positive amounts only; `None` when nothing is left.
    pub fn to_resource_list(&self) -> Option<flotilla_api::karmada::ResourceList> {
        let list: flotilla_api::karmada::ResourceList = self
            .0
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(name, v)| (name.clone(), quantity(name, *v)))
            .collect();
        (!list.is_empty()).then_some(list)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, i128)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

/// The quantity Karmada writes for an integer amount of `name`.
fn quantity(name: &str, value: i128) -> Quantity {
    let value = i64::try_from(value).unwrap_or(i64::MAX);
    match name {
        "cpu" => Quantity::from_milli(value, QuantityFormat::DecimalSI),
        "memory" | "ephemeral-storage" => Quantity::from_i64(value, QuantityFormat::BinarySI),
        n if n.starts_with("hugepages-") => Quantity::from_i64(value, QuantityFormat::BinarySI),
        _ => Quantity::from_i64(value, QuantityFormat::DecimalSI),
    }
}

/// What the summaries need of a node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeFacts {
    /// The `Ready` condition is `True`.
    pub ready: bool,
    /// `status.allocatable`, parsed (unparseable entries are left out).
    pub allocatable: BTreeMap<String, Quantity>,
}

/// What the summaries need of a pod.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodFacts {
    /// `spec.nodeName`, empty when not bound.
    pub node_name: String,
    /// Phase `Succeeded` or `Failed` (kube-scheduler no longer counts its requests).
    pub terminal: bool,
    /// Effective requests ([`crate::lifted::requests::pod_requests`]).
    pub requests: Amounts,
}

/// A node's parsed allocatable as the tracker keeps it, shared by every node listing the same
/// one. Equal only when every quantity is equal *and* written in the same format, so sharing
/// never changes how a summary is written.
#[derive(Debug, Default)]
struct Shape(BTreeMap<String, Quantity>);

impl PartialEq for Shape {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|((a, qa), (b, qb))| a == b && qa == qb && qa.format() == qb.format())
    }
}

impl Eq for Shape {}

impl Hash for Shape {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for (name, q) in &self.0 {
            name.hash(state);
            q.hash(state);
            q.format().hash(state);
        }
    }
}

/// Reference-counted values shared by everything equal; an entry leaves when its last user
/// [`Interner::release`]s it.
#[derive(Debug)]
struct Interner<T: ?Sized>(HashSet<Arc<T>>);

impl<T: ?Sized> Default for Interner<T> {
    fn default() -> Self {
        Self(HashSet::new())
    }
}

impl<T: ?Sized + Eq + Hash> Interner<T> {
    fn release(&mut self, value: Arc<T>) {
        // The set's reference and `value` are the last ones.
        if Arc::strong_count(&value) == 2 {
            self.0.remove(&*value);
        }
    }
}

impl<T: Eq + Hash> Interner<T> {
    fn intern(&mut self, value: T) -> Arc<T> {
        if let Some(shared) = self.0.get(&value) {
            return shared.clone();
        }
        let shared = Arc::new(value);
        self.0.insert(shared.clone());
        shared
    }
}

impl Interner<str> {
    fn intern_str(&mut self, value: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(value) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(value);
        self.0.insert(shared.clone());
        shared
    }
}

/// A node as the tracker keeps it.
#[derive(Debug)]
struct StoredNode {
    ready: bool,
    allocatable: Arc<Shape>,
}

/// A pod as the tracker keeps it.
#[derive(Debug)]
struct StoredPod {
    /// `None` when not bound.
    node_name: Option<Arc<str>>,
    terminal: bool,
    requests: Arc<Amounts>,
}

/// Requests and pod count of a set of pods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Usage {
    requests: Amounts,
    pods: i128,
}

impl Usage {
    fn apply(&mut self, requests: &Amounts, sign: i128) {
        self.requests.add_all(requests, sign);
        self.pods += sign;
    }

    fn to_resource_list(&self) -> Option<flotilla_api::karmada::ResourceList> {
        let mut all = self.requests.clone();
        all.add("pods", self.pods);
        all.to_resource_list()
    }
}

/// Nodes and pods of one member, with running totals.
#[derive(Debug, Default)]
pub struct Tracker {
    nodes: HashMap<Box<str>, StoredNode>,
    /// The distinct allocatables of `nodes`.
    shapes: Interner<Shape>,
    pods: HashMap<Box<str>, StoredPod>,
    /// The node names and distinct requests of `pods`.
    node_names: Interner<str>,
    requests: Interner<Amounts>,
    ready_nodes: usize,
    /// Σ allocatable, exact, with the number of nodes that list each resource.
    allocatable: BTreeMap<String, (Quantity, usize)>,
    allocating: Usage,
    allocated: Usage,
    /// Allocated usage per node name (pods may name nodes not seen yet).
    per_node: HashMap<Arc<str>, Usage>,
}

impl Tracker {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    fn account_node(&mut self, ready: bool, allocatable: &Shape, sign: i128) {
        if ready {
            if sign > 0 {
                self.ready_nodes += 1;
            } else {
                self.ready_nodes -= 1;
            }
        }
        for (name, q) in &allocatable.0 {
            let entry = self
                .allocatable
                .entry(name.clone())
                .or_insert((Quantity::zero_with(q.format()), 0));
            let next = if sign > 0 {
                entry.0.checked_add(q)
            } else {
                entry.0.checked_sub(q)
            };
            entry.0 = next.unwrap_or(entry.0);
            if sign > 0 {
                entry.1 += 1;
            } else {
                entry.1 -= 1;
            }
            if entry.1 == 0 {
                self.allocatable.remove(name);
            }
        }
    }

    fn account_pod(&mut self, pod: &StoredPod, sign: i128) {
        match &pod.node_name {
            None => self.allocating.apply(&pod.requests, sign),
            // kube-scheduler no longer counts the requests of finished pods.
            Some(_) if pod.terminal => {}
            Some(node) => {
                self.allocated.apply(&pod.requests, sign);
                let usage = self.per_node.entry(node.clone()).or_default();
                usage.apply(&pod.requests, sign);
                if usage.pods == 0 {
                    self.per_node.remove(&**node);
                }
            }
        }
    }

    /// Adds or replaces a node.
    pub fn upsert_node(&mut self, name: &str, facts: NodeFacts) {
        self.remove_node(name);
        let allocatable = self.shapes.intern(Shape(facts.allocatable));
        self.account_node(facts.ready, &allocatable, 1);
        self.nodes.insert(
            name.into(),
            StoredNode {
                ready: facts.ready,
                allocatable,
            },
        );
    }

    pub fn remove_node(&mut self, name: &str) {
        if let Some(old) = self.nodes.remove(name) {
            self.account_node(old.ready, &old.allocatable, -1);
            self.shapes.release(old.allocatable);
        }
    }

    /// Replaces every node (after a relist).
    pub fn replace_nodes(&mut self, nodes: Vec<(String, NodeFacts)>) {
        let mut listed = Tracker::new();
        for (name, facts) in nodes {
            listed.upsert_node(&name, facts);
        }
        self.take_nodes(listed);
    }

    /// Replaces every node with those of `listed` (a relist gathered in another tracker).
    pub fn take_nodes(&mut self, listed: Tracker) {
        self.nodes = listed.nodes;
        self.shapes = listed.shapes;
        self.ready_nodes = listed.ready_nodes;
        self.allocatable = listed.allocatable;
    }

    /// Adds or replaces a pod (`namespace/name`).
    pub fn upsert_pod(&mut self, key: &str, facts: PodFacts) {
        self.remove_pod(key);
        let pod = StoredPod {
            node_name: (!facts.node_name.is_empty())
                .then(|| self.node_names.intern_str(&facts.node_name)),
            terminal: facts.terminal,
            requests: self.requests.intern(facts.requests),
        };
        self.account_pod(&pod, 1);
        self.pods.insert(key.into(), pod);
    }

    pub fn remove_pod(&mut self, key: &str) {
        if let Some(old) = self.pods.remove(key) {
            self.account_pod(&old, -1);
            if let Some(node) = old.node_name {
                self.node_names.release(node);
            }
            self.requests.release(old.requests);
        }
    }

    /// Replaces every pod (after a relist).
    pub fn replace_pods(&mut self, pods: Vec<(String, PodFacts)>) {
        let mut listed = Tracker::new();
        for (key, facts) in pods {
            listed.upsert_pod(&key, facts);
        }
        self.take_pods(listed);
    }

    /// Replaces every pod with those of `listed` (a relist gathered in another tracker).
    pub fn take_pods(&mut self, listed: Tracker) {
        self.pods = listed.pods;
        self.node_names = listed.node_names;
        self.requests = listed.requests;
        self.allocating = listed.allocating;
        self.allocated = listed.allocated;
        self.per_node = listed.per_node;
    }

    /// `status.nodeSummary`.
    pub fn node_summary(&self) -> NodeSummary {
        NodeSummary {
            total_num: i32::try_from(self.nodes.len()).unwrap_or(i32::MAX),
            ready_num: i32::try_from(self.ready_nodes).unwrap_or(i32::MAX),
        }
    }

    /// `status.resourceSummary`, with `allocatableModelings` for `models` (none when empty).
    pub fn resource_summary(&self, models: &[ResourceModel]) -> ResourceSummary {
        let allocatable: flotilla_api::karmada::ResourceList = self
            .allocatable
            .iter()
            .map(|(name, (q, _))| (name.clone(), *q))
            .collect();
        ResourceSummary {
            allocatable: (!allocatable.is_empty()).then_some(allocatable),
            allocating: self.allocating.to_resource_list(),
            allocated: self.allocated.to_resource_list(),
            allocatable_modelings: self.modelings(models),
        }
    }

    /// Karmada's `getAllocatableModelings`: each node's free resources (allocatable minus the
    /// requests of its non-terminal pods) counted in the highest grade whose minimum it reaches
    /// for every modelled resource. A node with no pod slot left is not counted (Karmada stops
    /// at the first such node, a bug; the nodes after it are counted here).
    ///
    /// Models whose grades list different numbers of resources (the API rejects them) give no
    /// modelings, as Karmada's `InitSummary` fails on them.
    pub fn modelings(&self, models: &[ResourceModel]) -> Vec<AllocatableModeling> {
        let Some(first) = models.first() else {
            return Vec::new();
        };
        if models
            .iter()
            .any(|m| !m.ranges.is_empty() && m.ranges.len() != first.ranges.len())
        {
            return Vec::new();
        }
        let grades = Grades::new(models);
        let mut counts = vec![0i64; models.len()];
        // A node without pods falls in the grade of its allocatable alone: computed once per
        // distinct allocatable.
        let mut idle: HashMap<*const Shape, Option<usize>> = HashMap::new();
        let empty = Usage::default();
        for (name, node) in &self.nodes {
            let grade = match self.per_node.get(&**name) {
                Some(used) => grades.grade_of(&node.allocatable.0, used),
                None => *idle
                    .entry(Arc::as_ptr(&node.allocatable))
                    .or_insert_with(|| grades.grade_of(&node.allocatable.0, &empty)),
            };
            if let Some(index) = grade {
                counts[index] += 1;
            }
        }
        models
            .iter()
            .zip(counts)
            .map(|(model, count)| AllocatableModeling {
                grade: model.grade,
                count,
            })
            .collect()
    }
}

/// The grade minimums per modelled resource (Karmada's `InitSummary`).
struct Grades {
    /// (resource name, minimum per grade in model order).
    columns: Vec<(String, Vec<Quantity>)>,
}

impl Grades {
    fn new(models: &[ResourceModel]) -> Self {
        let names: Vec<String> = models
            .first()
            .map(|m| m.ranges.iter().map(|r| r.name.clone()).collect())
            .unwrap_or_default();
        let columns = names
            .into_iter()
            .map(|name| {
                let mins = models
                    .iter()
                    .map(|m| {
                        m.ranges
                            .iter()
                            .find(|r| r.name == name)
                            .map(|r| r.min)
                            .unwrap_or_default()
                    })
                    .collect();
                (name, mins)
            })
            .collect();
        Grades { columns }
    }

    /// The model index a node falls in, or `None` when it is full or over-committed.
    fn grade_of(&self, allocatable: &BTreeMap<String, Quantity>, used: &Usage) -> Option<usize> {
        let allocatable_pods = allocatable
            .get("pods")
            .map(|q| amount("pods", q))
            .unwrap_or(0);
        // Karmada checks the pod slots only of nodes that run pods.
        if used.pods > 0 && allocatable_pods - used.pods <= 0 {
            return None;
        }
        let mut index = usize::MAX;
        for (name, mins) in &self.columns {
            let free = match allocatable.get(name) {
                Some(q) => {
                    // A grade over `pods` counts the pod slots left, as Karmada subtracts the
                    // node's pods with their requests.
                    let used = if name == "pods" {
                        used.pods
                    } else {
                        used.requests.get(name)
                    };
                    quantity_signed(name, amount(name, q) - used)
                }
                None => Quantity::default(),
            };
            // The last grade whose minimum is at most the free amount.
            let found = mins.iter().rposition(|min| *min <= free)?;
            index = index.min(found);
        }
        (index != usize::MAX).then_some(index)
    }
}

fn quantity_signed(name: &str, value: i128) -> Quantity {
    let clamped = i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX });
    if name == "cpu" {
        Quantity::from_milli(clamped, QuantityFormat::DecimalSI)
    } else {
        Quantity::from_i64(clamped, QuantityFormat::DecimalSI)
    }
}

#[cfg(test)]
mod tests;
