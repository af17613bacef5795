//! The scheduler's in-memory view of a cluster: nodes with allocatable and requested amounts in
//! dense vectors (resource names interned), and the pure decision `schedule(pod) -> node or
//! reasons`, run in kube-scheduler's filter order: NodeUnschedulable, TaintToleration,
//! NodeAffinity, NodeResourcesFit; then LeastAllocated + BalancedAllocation scoring with a seeded
//! tie-break. Like kube-scheduler it stops filtering once it has enough feasible nodes
//! (`percentageOfNodesToScore`, adaptive) and rotates where the next search starts.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::node::Node;
use crate::pod::Pod;

use crate::lifted::affinity::{self, NO_MATCH_MESSAGE};
use crate::lifted::fit_error::NodeFailure;
use crate::lifted::requests::{self, amount};
use crate::lifted::taints;
use crate::rng::{Rng, mix};

/// One node as the scheduler sees it.
#[derive(Debug, Clone)]
struct NodeInfo {
    /// The informer's node itself (shared, not copied): name, labels, taints, schedulability.
    node: Arc<Node>,
    allocatable: Vec<i64>,
    requested: Vec<i64>,
    pods: i64,
}

impl NodeInfo {
    fn name(&self) -> &str {
        self.node.metadata.name.as_deref().unwrap_or("")
    }

    fn labels(&self) -> &BTreeMap<String, String> {
        static NONE: BTreeMap<String, String> = BTreeMap::new();
        self.node.metadata.labels.as_ref().unwrap_or(&NONE)
    }

    fn taints(&self) -> &[Taint] {
        self.node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_deref())
            .unwrap_or_default()
    }

    fn unschedulable(&self) -> bool {
        self.node
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false)
    }
}

/// What one pod asks for, resolved against the index's resource names.
#[derive(Debug, Clone)]
pub struct PodRequest {
    amounts: Vec<(usize, i64)>,
}

/// The index of nodes and of the pods placed on them.
#[derive(Debug, Default)]
pub struct NodeIndex {
    resources: Vec<String>,
    resource_ids: HashMap<String, usize>,
    nodes: Vec<NodeInfo>,
    by_name: HashMap<String, usize>,
    /// pod uid → (node name, request)
    placed: HashMap<String, (String, PodRequest)>,
    next_start: usize,
    seed: u64,
    /// Per pod shape (tolerations, nodeSelector, required node affinity), for every node, the
    /// first failure of the filters that do not depend on placed pods (NodeUnschedulable,
    /// TaintToleration, NodeAffinity) or none: the pods of one template share a shape, so each
    /// node is checked once per template, not once per pod. Cleared when a node's labels,
    /// taints or schedulability change, or a node comes or goes.
    shapes: HashMap<String, Arc<[Option<NodeFailure>]>>,
}

/// The most shapes remembered (a cluster has few pod templates; this bounds odd workloads).
const MAX_SHAPES: usize = 256;

const CPU: &str = "cpu";
const MEMORY: &str = "memory";

impl NodeIndex {
    pub fn new(seed: u64) -> Self {
        NodeIndex {
            seed,
            ..Default::default()
        }
    }

    fn resource_id(&mut self, name: &str) -> usize {
        if let Some(id) = self.resource_ids.get(name) {
            return *id;
        }
        let id = self.resources.len();
        self.resources.push(name.to_owned());
        self.resource_ids.insert(name.to_owned(), id);
        for node in &mut self.nodes {
            node.allocatable.push(0);
            node.requested.push(0);
        }
        id
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Adds or refreshes a node (labels, taints, allocatable); what is placed on it stays.
    pub fn upsert_node(&mut self, node: &Arc<Node>) {
        let Some(name) = node.metadata.name.clone() else {
            return;
        };
        let allocatable_list = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .cloned()
            .unwrap_or_default();
        let mut allocatable = vec![0; self.resources.len()];
        for (resource, q) in &allocatable_list {
            let id = self.resource_id(resource);
            allocatable.resize(self.resources.len(), 0);
            allocatable[id] = amount(resource, &q.0).unwrap_or(0);
        }
        allocatable.resize(self.resources.len(), 0);
        let info = NodeInfo {
            node: node.clone(),
            allocatable,
            requested: vec![0; self.resources.len()],
            pods: 0,
        };
        match self.by_name.get(&name) {
            Some(&i) => {
                let old = &mut self.nodes[i];
                if old.labels() != info.labels()
                    || old.taints() != info.taints()
                    || old.unschedulable() != info.unschedulable()
                {
                    self.shapes.clear();
                }
                old.node = info.node;
                old.allocatable = info.allocatable;
                old.requested.resize(self.resources.len(), 0);
            }
            None => {
                self.by_name.insert(name, self.nodes.len());
                self.nodes.push(info);
                self.shapes.clear();
            }
        }
    }

    pub fn remove_node(&mut self, name: &str) {
        let Some(i) = self.by_name.remove(name) else {
            return;
        };
        self.nodes.swap_remove(i);
        self.shapes.clear();
        if let Some(moved) = self.nodes.get(i) {
            self.by_name.insert(moved.name().to_owned(), i);
        }
        self.placed.retain(|_, (node, _)| node != name);
    }

    /// The pod's request in this index's terms.
    pub fn request_of(&mut self, pod: &Pod) -> PodRequest {
        let amounts = requests::pod_requests(pod)
            .into_iter()
            .map(|(name, v)| (self.resource_id(&name), v))
            .collect();
        PodRequest { amounts }
    }

    /// Accounts a pod on a node (idempotent per uid).
    pub fn place(&mut self, uid: &str, node: &str, request: PodRequest) {
        if self.placed.contains_key(uid) {
            return;
        }
        if let Some(&i) = self.by_name.get(node) {
            let n = &mut self.nodes[i];
            n.pods += 1;
            for (id, v) in &request.amounts {
                n.requested[*id] += v;
            }
        }
        self.placed
            .insert(uid.to_owned(), (node.to_owned(), request));
    }

    /// Releases what a pod held; true if it held anything.
    pub fn release(&mut self, uid: &str) -> bool {
        let Some((node, request)) = self.placed.remove(uid) else {
            return false;
        };
        if let Some(&i) = self.by_name.get(&node) {
            let n = &mut self.nodes[i];
            n.pods -= 1;
            for (id, v) in &request.amounts {
                n.requested[*id] -= v;
            }
        }
        true
    }

    pub fn is_placed(&self, uid: &str) -> bool {
        self.placed.contains_key(uid)
    }

    /// How many feasible nodes to look for before scoring (kube-scheduler's adaptive
    /// `percentageOfNodesToScore`: 50% minus 1% per 125 nodes, at least 5%, at least 100 nodes).
    fn feasible_to_find(total: usize) -> usize {
        if total < 100 {
            return total;
        }
        let pct = (50 - (total / 125) as i64).max(5) as usize;
        (total * pct / 100).max(100)
    }

    /// The filters that do not depend on what is placed: NodeUnschedulable, TaintToleration,
    /// NodeAffinity, in kube-scheduler's order.
    fn static_filter(
        node: &NodeInfo,
        pod: &Pod,
        tolerations: &[Toleration],
    ) -> Option<NodeFailure> {
        let unresolvable = |reason: String| NodeFailure {
            reasons: vec![reason],
            resolvable_by_preemption: false,
        };
        if node.unschedulable()
            && !tolerations.iter().any(|t| {
                taints::tolerates(
                    t,
                    &Taint {
                        key: "node.kubernetes.io/unschedulable".into(),
                        value: None,
                        effect: "NoSchedule".into(),
                        time_added: None,
                    },
                )
            })
        {
            return Some(unresolvable("node(s) were unschedulable".into()));
        }
        if let Some(taint) = taints::first_untolerated(node.taints(), tolerations) {
            return Some(unresolvable(taints::untolerated_message(taint)));
        }
        if !affinity::pod_matches_node(pod, node.name(), node.labels()) {
            return Some(unresolvable(NO_MATCH_MESSAGE.into()));
        }
        None
    }

    /// [`Self::static_filter`] of every node for the pod's shape, computed once per shape.
    fn static_results(
        &mut self,
        pod: &Pod,
        tolerations: &[Toleration],
    ) -> Arc<[Option<NodeFailure>]> {
        let spec = pod.spec.as_ref();
        let required = spec
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            });
        let shape = serde_json::to_string(&(
            tolerations,
            spec.and_then(|s| s.node_selector.as_ref()),
            required,
        ))
        .unwrap_or_default();
        if let Some(results) = self.shapes.get(&shape) {
            return results.clone();
        }
        let results: Arc<[Option<NodeFailure>]> = self
            .nodes
            .iter()
            .map(|node| Self::static_filter(node, pod, tolerations))
            .collect();
        if self.shapes.len() >= MAX_SHAPES {
            self.shapes.clear();
        }
        self.shapes.insert(shape, results.clone());
        results
    }

    /// NodeResourcesFit (pod count, then each requested resource).
    fn fit(
        &self,
        node: &NodeInfo,
        pods_id: Option<usize>,
        req: &PodRequest,
    ) -> Result<(), NodeFailure> {
        let mut reasons = Vec::new();
        let max_pods = pods_id.map(|id| node.allocatable[id]).unwrap_or(0);
        if node.pods + 1 > max_pods {
            reasons.push("Too many pods".to_owned());
        }
        for (id, v) in &req.amounts {
            if Some(*id) == pods_id {
                continue;
            }
            if node.allocatable[*id] - node.requested[*id] < *v {
                reasons.push(format!("Insufficient {}", self.resources[*id]));
            }
        }
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(NodeFailure {
                reasons,
                resolvable_by_preemption: true,
            })
        }
    }

    /// The ids and requested amounts of cpu and memory, resolved once per decision.
    fn score_inputs(&self, req: &PodRequest) -> [(Option<usize>, i64); 2] {
        [CPU, MEMORY].map(|name| {
            let id = self.resource_ids.get(name).copied();
            let want = id
                .and_then(|id| req.amounts.iter().find(|(i, _)| *i == id))
                .map(|(_, v)| *v)
                .unwrap_or(0);
            (id, want)
        })
    }

    /// LeastAllocated (cpu, memory) plus BalancedAllocation (1 - standard deviation of the two
    /// fractions), each 0–100.
    fn score(node: &NodeInfo, inputs: &[(Option<usize>, i64); 2]) -> i64 {
        let fraction = |(id, want): (Option<usize>, i64)| -> f64 {
            let Some(id) = id else {
                return 1.0;
            };
            let alloc = node.allocatable[id];
            if alloc <= 0 {
                return 1.0;
            }
            ((node.requested[id] + want) as f64 / alloc as f64).min(1.0)
        };
        let cpu = fraction(inputs[0]);
        let mem = fraction(inputs[1]);
        let least = ((1.0 - cpu) * 100.0 + (1.0 - mem) * 100.0) / 2.0;
        let balanced = (1.0 - (cpu - mem).abs() / 2.0) * 100.0;
        (least + balanced) as i64
    }

    /// Picks a node for `pod`, or says why none fits (one failure per node).
    pub fn schedule(&mut self, pod: &Pod, req: &PodRequest) -> Result<String, Vec<NodeFailure>> {
        let total = self.nodes.len();
        if total == 0 {
            return Err(Vec::new());
        }
        let tolerations = pod
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.clone())
            .unwrap_or_default();
        let want = Self::feasible_to_find(total);
        let statics = self.static_results(pod, &tolerations);
        let pods_id = self.resource_ids.get("pods").copied();
        let mut feasible = Vec::new();
        let mut processed = 0;
        for step in 0..total {
            let i = (self.next_start + step) % total;
            processed += 1;
            if statics[i].is_none() && self.fit(&self.nodes[i], pods_id, req).is_ok() {
                feasible.push(i);
                if feasible.len() >= want {
                    break;
                }
            }
        }
        if feasible.is_empty() {
            // Every node failed: say why, node by node, in the order they were looked at.
            let failures = (0..total)
                .map(|step| (self.next_start + step) % total)
                .filter_map(|i| match &statics[i] {
                    Some(failure) => Some(failure.clone()),
                    None => self.fit(&self.nodes[i], pods_id, req).err(),
                })
                .collect();
            self.next_start = (self.next_start + processed) % total;
            return Err(failures);
        }
        self.next_start = (self.next_start + processed) % total;
        // Highest score; ties broken by a draw seeded from the run's seed and the pod's name,
        // so one seed gives one placement.
        let key = format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or(""),
            pod.metadata.name.as_deref().unwrap_or("")
        );
        let mut rng = Rng::new(mix(self.seed, &key));
        let inputs = self.score_inputs(req);
        let mut best: Option<(i64, usize)> = None;
        let mut ties = 0u64;
        for i in feasible {
            let s = Self::score(&self.nodes[i], &inputs);
            match best {
                Some((b, _)) if s < b => {}
                Some((b, _)) if s == b => {
                    ties += 1;
                    if rng.below(ties + 1) == 0 {
                        best = Some((s, i));
                    }
                }
                _ => {
                    best = Some((s, i));
                    ties = 0;
                }
            }
        }
        let (_, i) = best.expect("at least one feasible node");
        Ok(self.nodes[i].name().to_owned())
    }
}
