//! Node profiles: the machine shapes node pools are made of, and the GPU topology annotation.
//!
//! `karmada.io/gpu-topology` (documented in docs/sim.md) is JSON:
//! `{"interconnect":"NVSwitch","gpus":[{"index":0,"numaNode":0,"pciSwitch":0,"pciBusId":"0000:07:00.0"},…]}`:
//! for each GPU its NUMA node and the PCIe switch it hangs off (GPUs on one switch talk without
//! crossing the CPU root complex). The 8-GPU profiles model an HGX board: GPUs 0–3 on NUMA node 0,
//! 4–7 on NUMA node 1, two GPUs per PCIe switch, all GPUs joined by NVSwitch.

use std::collections::BTreeMap;

use serde_json::json;

/// A GPU model as NVIDIA's GPU feature discovery labels it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuModel {
    /// `nvidia.com/gpu.product`
    pub product: &'static str,
    /// `nvidia.com/gpu.memory`, MiB.
    pub memory_mib: u32,
    /// `nvidia.com/gpu.family`
    pub family: &'static str,
    pub count: u32,
}

/// The shape of one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    /// `node.kubernetes.io/instance-type`
    pub instance_type: &'static str,
    /// Capacity (= allocatable) as quantities.
    pub capacity: BTreeMap<String, String>,
    pub gpu: Option<GpuModel>,
}

/// The names of the built-in profiles.
pub const PROFILES: &[&str] = &["cpu", "gpu-a100", "gpu-h100"];

fn capacity(cpu: &str, memory: &str, gpus: Option<u32>) -> BTreeMap<String, String> {
    let mut c = BTreeMap::from([
        ("cpu".to_owned(), cpu.to_owned()),
        ("memory".to_owned(), memory.to_owned()),
        ("pods".to_owned(), "110".to_owned()),
        ("ephemeral-storage".to_owned(), "500Gi".to_owned()),
        ("hugepages-1Gi".to_owned(), "0".to_owned()),
        ("hugepages-2Mi".to_owned(), "0".to_owned()),
    ]);
    if let Some(n) = gpus {
        c.insert("nvidia.com/gpu".to_owned(), n.to_string());
    }
    c
}

/// A built-in profile by name.
pub fn profile(name: &str) -> Option<Profile> {
    Some(match name {
        "cpu" => Profile {
            name: "cpu",
            instance_type: "sim.cpu-32x128",
            capacity: capacity("32", "128Gi", None),
            gpu: None,
        },
        "gpu-a100" => Profile {
            name: "gpu-a100",
            instance_type: "sim.a100-80gb-8",
            capacity: capacity("96", "1Ti", Some(8)),
            gpu: Some(GpuModel {
                product: "NVIDIA-A100-SXM4-80GB",
                memory_mib: 81920,
                family: "ampere",
                count: 8,
            }),
        },
        "gpu-h100" => Profile {
            name: "gpu-h100",
            instance_type: "sim.h100-80gb-8",
            capacity: capacity("96", "1Ti", Some(8)),
            gpu: Some(GpuModel {
                product: "NVIDIA-H100-80GB-HBM3",
                memory_mib: 81920,
                family: "hopper",
                count: 8,
            }),
        },
        _ => return None,
    })
}

impl GpuModel {
    /// The labels GPU feature discovery puts on a node with these GPUs.
    pub fn labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("nvidia.com/gpu.present".to_owned(), "true".to_owned()),
            ("nvidia.com/gpu.product".to_owned(), self.product.to_owned()),
            (
                "nvidia.com/gpu.memory".to_owned(),
                self.memory_mib.to_string(),
            ),
            ("nvidia.com/gpu.count".to_owned(), self.count.to_string()),
            ("nvidia.com/gpu.family".to_owned(), self.family.to_owned()),
        ])
    }

    /// The `karmada.io/gpu-topology` annotation value.
    pub fn topology(&self) -> String {
        let per_numa = self.count.div_ceil(2).max(1);
        let gpus: Vec<_> = (0..self.count)
            .map(|i| {
                json!({
                    "index": i,
                    "numaNode": i / per_numa,
                    "pciSwitch": i / 2,
                    "pciBusId": format!("0000:{:02x}:00.0", 0x07 + i * 0x10),
                })
            })
            .collect();
        json!({"interconnect": "NVSwitch", "gpus": gpus}).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a100_shape_and_topology() {
        let p = profile("gpu-a100").expect("built in");
        assert_eq!(p.capacity["nvidia.com/gpu"], "8");
        assert_eq!(p.capacity["cpu"], "96");
        let gpu = p.gpu.expect("GPUs");
        assert_eq!(gpu.labels()["nvidia.com/gpu.memory"], "81920");
        let topo: serde_json::Value = serde_json::from_str(&gpu.topology()).expect("JSON");
        assert_eq!(topo["gpus"].as_array().map(Vec::len), Some(8));
        assert_eq!(topo["gpus"][5]["numaNode"], 1);
        assert_eq!(topo["gpus"][5]["pciSwitch"], 2);
        assert!(profile("tpu").is_none());
    }
}
