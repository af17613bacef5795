//! The member's node and pod facts and the summaries Karmada's cluster status controller
//! publishes from them: `nodeSummary`, `resourceSummary` (allocatable, allocating, allocated)
//! and `allocatableModelings`. Pure: the watches in [`crate::watch`] feed it events, and totals
//! are kept incrementally so that a summary costs O(resources), not O(pods); only the
//! modelings walk the nodes (O(nodes), no pods).

use std::collections::{BTreeMap, HashMap};

use flotilla_api::karmada::{AllocatableModeling, NodeSummary, ResourceModel, ResourceSummary};
use flotilla_api::{Quantity, QuantityFormat};

use crate::lifted::requests::amount;

/// Integer amounts by resource name (CPU in millicores, the rest in units).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

/// Where a pod's requests count.
enum Share<'a> {
    Allocating,
    Allocated(&'a str),
    Nothing,
}

impl PodFacts {
    fn share(&self) -> Share<'_> {
        if self.node_name.is_empty() {
            Share::Allocating
        } else if self.terminal {
            Share::Nothing
        } else {
            Share::Allocated(&self.node_name)
        }
    }
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
    nodes: HashMap<String, NodeFacts>,
    pods: HashMap<String, PodFacts>,
    ready_nodes: usize,
    /// Σ allocatable, exact, with the number of nodes that list each resource.
    allocatable: BTreeMap<String, (Quantity, usize)>,
    allocating: Usage,
    allocated: Usage,
    /// Allocated usage per node name (pods may name nodes not seen yet).
    per_node: HashMap<String, Usage>,
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

    fn account_node(&mut self, facts: &NodeFacts, sign: i128) {
        if facts.ready {
            if sign > 0 {
                self.ready_nodes += 1;
            } else {
                self.ready_nodes -= 1;
            }
        }
        for (name, q) in &facts.allocatable {
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

    fn account_pod(&mut self, facts: &PodFacts, sign: i128) {
        match facts.share() {
            Share::Allocating => self.allocating.apply(&facts.requests, sign),
            Share::Allocated(node) => {
                self.allocated.apply(&facts.requests, sign);
                let usage = self.per_node.entry(node.to_owned()).or_default();
                usage.apply(&facts.requests, sign);
                if usage.pods == 0 {
                    self.per_node.remove(node);
                }
            }
            Share::Nothing => {}
        }
    }

    /// Adds or replaces a node.
    pub fn upsert_node(&mut self, name: &str, facts: NodeFacts) {
        if let Some(old) = self.nodes.remove(name) {
            self.account_node(&old, -1);
        }
        self.account_node(&facts, 1);
        self.nodes.insert(name.to_owned(), facts);
    }

    pub fn remove_node(&mut self, name: &str) {
        if let Some(old) = self.nodes.remove(name) {
            self.account_node(&old, -1);
        }
    }

    /// Replaces every node (after a relist).
    pub fn replace_nodes(&mut self, nodes: Vec<(String, NodeFacts)>) {
        self.nodes.clear();
        self.ready_nodes = 0;
        self.allocatable.clear();
        for (name, facts) in nodes {
            self.upsert_node(&name, facts);
        }
    }

    /// Adds or replaces a pod (`namespace/name`).
    pub fn upsert_pod(&mut self, key: &str, facts: PodFacts) {
        if let Some(old) = self.pods.remove(key) {
            self.account_pod(&old, -1);
        }
        self.account_pod(&facts, 1);
        self.pods.insert(key.to_owned(), facts);
    }

    pub fn remove_pod(&mut self, key: &str) {
        if let Some(old) = self.pods.remove(key) {
            self.account_pod(&old, -1);
        }
    }

    /// The nodes, for [`Tracker::replace_nodes`] of another tracker.
    pub fn into_nodes(self) -> Vec<(String, NodeFacts)> {
        self.nodes.into_iter().collect()
    }

    /// The pods, for [`Tracker::replace_pods`] of another tracker.
    pub fn into_pods(self) -> Vec<(String, PodFacts)> {
        self.pods.into_iter().collect()
    }

    /// Replaces every pod (after a relist).
    pub fn replace_pods(&mut self, pods: Vec<(String, PodFacts)>) {
        self.pods.clear();
        self.allocating = Usage::default();
        self.allocated = Usage::default();
        self.per_node.clear();
        for (key, facts) in pods {
            self.upsert_pod(&key, facts);
        }
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
    pub fn modelings(&self, models: &[ResourceModel]) -> Vec<AllocatableModeling> {
        if models.is_empty() {
            return Vec::new();
        }
        let grades = Grades::new(models);
        let mut counts = vec![0i64; models.len()];
        let empty = Usage::default();
        for (name, node) in &self.nodes {
            let used = self.per_node.get(name).unwrap_or(&empty);
            if let Some(index) = grades.grade_of(node, used) {
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
    fn grade_of(&self, node: &NodeFacts, used: &Usage) -> Option<usize> {
        let allocatable_pods = node
            .allocatable
            .get("pods")
            .map(|q| amount("pods", q))
            .unwrap_or(0);
        // Karmada checks the pod slots only of nodes that run pods.
        if used.pods > 0 && allocatable_pods - used.pods <= 0 {
            return None;
        }
        let mut index = usize::MAX;
        for (name, mins) in &self.columns {
            let free = match node.allocatable.get(name) {
                Some(q) => {
                    let free = amount(name, q) - used.requests.get(name);
                    quantity_signed(name, free)
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
