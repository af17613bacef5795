//! Flotilla extension: GPU topology preference (`flotilla.io/gpu-topology: NUMANode|PCISwitch`
//! on a (Cluster)PropagationPolicy). A replica is *aligned* when all its GPUs sit on one NUMA
//! node (or behind one PCIe switch) of a node, read from the node's `karmada.io/gpu-topology`
//! annotation. The scheduler first places replicas counting only aligned capacity and falls back
//! to Karmada's plain counting when that does not fit (see docs/scheduling.md).
//!
//! The Kubernetes API does not say which GPU indices a running pod holds, so the estimate assumes
//! the GPUs in use fill the node's groups in index order (the first NUMA node or switch first),
//! which is what a topology-aware device plugin does on an otherwise empty node.

use std::collections::BTreeMap;
use std::str::FromStr;

use flotilla_api::karmada::{Cluster, ReplicaRequirements};

use super::{AccurateEstimator, ReplicaEstimator, UNAUTHENTIC_REPLICA};

/// The node annotation describing each GPU's NUMA node and PCIe switch.
pub const GPU_TOPOLOGY_NODE_ANNOTATION: &str = "karmada.io/gpu-topology";
/// The policy annotation asking for the preference.
pub const GPU_TOPOLOGY_POLICY_ANNOTATION: &str = "flotilla.io/gpu-topology";
/// The GPU resource the preference applies to.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// Which grouping a replica's GPUs should stay within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuTopologyLevel {
    /// All GPUs of a replica on one NUMA node.
    NumaNode,
    /// All GPUs of a replica behind one PCIe switch.
    PciSwitch,
}

impl FromStr for GpuTopologyLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "NUMANode" => Ok(Self::NumaNode),
            "PCISwitch" => Ok(Self::PciSwitch),
            other => Err(format!(
                "unknown value {other:?} (supported: NUMANode, PCISwitch)"
            )),
        }
    }
}

/// A node's GPU groups: the number of GPUs in each NUMA node and behind each switch, in the
/// order of their lowest GPU index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuLayout {
    pub numa_nodes: Vec<i64>,
    pub pci_switches: Vec<i64>,
}

#[derive(serde::Deserialize)]
struct Annotation {
    gpus: Vec<AnnotatedGpu>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnnotatedGpu {
    index: i64,
    numa_node: i64,
    pci_switch: i64,
}

impl GpuLayout {
    /// Parses the annotation; `None` when it is not the documented JSON (the node then counts
    /// as having no known topology).
    pub fn parse(annotation: &str) -> Option<Self> {
        let parsed: Annotation = serde_json::from_str(annotation).ok()?;
        let group = |key: fn(&AnnotatedGpu) -> i64| {
            // group id → (lowest index, size)
            let mut groups: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
            for gpu in &parsed.gpus {
                let entry = groups.entry(key(gpu)).or_insert((gpu.index, 0));
                entry.0 = entry.0.min(gpu.index);
                entry.1 += 1;
            }
            let mut sizes: Vec<(i64, i64)> = groups.into_values().collect();
            sizes.sort();
            sizes.into_iter().map(|(_, size)| size).collect::<Vec<_>>()
        };
        Some(Self {
            numa_nodes: group(|g| g.numa_node),
            pci_switches: group(|g| g.pci_switch),
        })
    }

    /// Replicas of `per_replica` GPUs that fit aligned when `used` GPUs are taken, filling
    /// groups in order.
    pub fn aligned_fits(&self, level: GpuTopologyLevel, used: i64, per_replica: i64) -> i64 {
        if per_replica <= 0 {
            return i64::MAX;
        }
        let groups = match level {
            GpuTopologyLevel::NumaNode => &self.numa_nodes,
            GpuTopologyLevel::PciSwitch => &self.pci_switches,
        };
        let mut used = used.max(0);
        let mut fits = 0;
        for size in groups {
            let taken = used.min(*size);
            used -= taken;
            fits += (size - taken) / per_replica;
        }
        fits
    }
}

/// GPUs one replica asks for (0 when none).
pub fn gpus_per_replica(requirements: Option<&ReplicaRequirements>) -> i64 {
    requirements
        .and_then(|r| r.resource_request.as_ref())
        .and_then(|list| list.get(GPU_RESOURCE))
        .and_then(|q| q.as_i64())
        .unwrap_or(0)
}

/// The accurate estimator counting only topology-aligned replicas.
#[derive(Debug, Clone, Copy)]
pub struct AlignedEstimator<'a> {
    pub accurate: &'a AccurateEstimator,
    pub level: GpuTopologyLevel,
}

impl ReplicaEstimator for AlignedEstimator<'_> {
    fn max_available_replicas(
        &self,
        clusters: &[&Cluster],
        requirements: Option<&ReplicaRequirements>,
    ) -> Vec<i32> {
        clusters
            .iter()
            .map(|c| {
                self.accurate
                    .member(c.name())
                    .map_or(UNAUTHENTIC_REPLICA, |m| {
                        m.aligned_available_replicas(requirements, self.level)
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hgx() -> GpuLayout {
        // The simulator's 8-GPU board: GPUs 0–3 on NUMA 0, 4–7 on NUMA 1, two per switch.
        let gpus: Vec<_> = (0..8)
            .map(|i| serde_json::json!({"index": i, "numaNode": i / 4, "pciSwitch": i / 2, "pciBusId": "x"}))
            .collect();
        GpuLayout::parse(&serde_json::json!({"interconnect": "NVSwitch", "gpus": gpus}).to_string())
            .expect("valid annotation")
    }

    #[test]
    fn parses_groups_in_index_order() {
        let layout = hgx();
        assert_eq!(layout.numa_nodes, vec![4, 4]);
        assert_eq!(layout.pci_switches, vec![2, 2, 2, 2]);
        assert_eq!(GpuLayout::parse("not json"), None);
    }

    #[test]
    fn aligned_fits_fill_groups_in_order() {
        let layout = hgx();
        // Empty node: two 4-GPU replicas on NUMA nodes, one 8-GPU replica nowhere.
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::NumaNode, 0, 4), 2);
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::NumaNode, 0, 8), 0);
        // 1 GPU used: NUMA 0 has 3 left, so only one 4-GPU replica stays aligned (plain
        // counting would say 7 / 4 = 1 as well), and 3-GPU replicas: 1 + 1.
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::NumaNode, 1, 4), 1);
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::NumaNode, 1, 3), 2);
        // 3 used: switches hold 0, 1, 2, 2 free → 2-GPU replicas: 2 (plain: 5 / 2 = 2),
        // 1-GPU replicas: 5.
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::PciSwitch, 3, 2), 2);
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::PciSwitch, 1, 2), 3);
        assert_eq!(layout.aligned_fits(GpuTopologyLevel::PciSwitch, 0, 3), 0);
    }

    #[test]
    fn levels_parse_by_their_documented_names() {
        assert_eq!("NUMANode".parse(), Ok(GpuTopologyLevel::NumaNode));
        assert_eq!("PCISwitch".parse(), Ok(GpuTopologyLevel::PciSwitch));
        assert!("numa".parse::<GpuTopologyLevel>().is_err());
    }
}
