//! Simulated nodes: built from node pools (seeded names and zones), created through the API,
//! kept alive by Lease renewals in `kube-node-lease` (the cheap heartbeat; node status is written
//! only when it changes), and taken NotReady on demand with kube's taints and conditions.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::cluster::{Ctx, now};
use crate::config::ClusterSpec;
use crate::error::SimError;
use crate::rng::Rng;

/// Lease duration written on every node Lease (kubelet's default).
pub const LEASE_DURATION_SECONDS: i32 = 40;
/// Concurrent API writes when creating nodes or renewing Leases.
const WRITE_CONCURRENCY: usize = 32;
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";

/// One node of the cluster, as planned.
#[derive(Debug)]
pub struct PlannedNode {
    pub name: String,
    pub index: usize,
    pub zone: String,
    pub internal_ip: String,
    pub pod_cidr: String,
    /// The Node object and its status until they are created (then dropped: at 5,000 nodes per
    /// cluster they would be a large share of the process).
    manifest: Mutex<Option<(Value, Value)>>,
}

impl PlannedNode {
    /// The IP of the `slot`-th pod on this node (slot 0..=252).
    pub fn pod_ip(&self, slot: u8) -> String {
        format!(
            "10.{}.{}.{}",
            (self.index >> 8) & 0xff,
            self.index & 0xff,
            u16::from(slot) + 2
        )
    }
}

/// The nodes of one cluster and which of them are down.
#[derive(Debug)]
pub struct NodeTable {
    pub nodes: Vec<PlannedNode>,
    by_name: BTreeMap<String, usize>,
    down: Mutex<HashSet<String>>,
}

impl NodeTable {
    pub fn get(&self, name: &str) -> Option<&PlannedNode> {
        self.by_name.get(name).map(|i| &self.nodes[*i])
    }

    pub fn is_down(&self, name: &str) -> bool {
        self.down.lock().contains(name)
    }

    pub fn down_nodes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.down.lock().iter().cloned().collect();
        v.sort();
        v
    }
}

fn ready_conditions(ready: bool, at: &str) -> Value {
    let cond = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": status, "reason": reason, "message": message,
               "lastHeartbeatTime": at, "lastTransitionTime": at})
    };
    if ready {
        json!([
            cond(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available"
            ),
            cond(
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure"
            ),
            cond(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available"
            ),
            cond(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status"
            ),
        ])
    } else {
        let unknown = |kind: &str| {
            cond(
                kind,
                "Unknown",
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
            )
        };
        json!([
            unknown("MemoryPressure"),
            unknown("DiskPressure"),
            unknown("PIDPressure"),
            unknown("Ready")
        ])
    }
}

/// The name of a cluster's control-plane node with `system components` (kind's).
pub fn control_plane_name(cluster: &str) -> String {
    format!("{cluster}-control-plane")
}

/// The capacity of the control-plane node (a small VM: it runs the control plane only).
const CONTROL_PLANE_CAPACITY: [(&str, &str); 5] = [
    ("cpu", "4"),
    ("memory", "8Gi"),
    ("pods", "110"),
    ("ephemeral-storage", "100Gi"),
    ("hugepages-2Mi", "0"),
];

/// What differs between one planned node and another.
struct NodeShape {
    name: String,
    zone: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    taints: serde_json::Value,
    capacity: serde_json::Value,
}

/// Plans the nodes of a cluster: names `<cluster>-<pool>-<5 chars>` and zones round-robin from
/// a seeded offset, both reproducible from the seed; with `control_plane`, kind's tainted
/// `<cluster>-control-plane` node after them (in the first zone).
pub fn plan(spec: &ClusterSpec, seed: u64, control_plane: bool) -> NodeTable {
    let mut rng = Rng::derived(seed, &format!("nodes/{}", spec.name));
    let mut taken = BTreeSet::new();
    let mut nodes = Vec::new();
    let at = now();
    for pool in &spec.pools {
        let zone_offset = rng.below(spec.zones.len() as u64) as usize;
        for i in 0..pool.count {
            let name = loop {
                let candidate = format!("{}-{}-{}", spec.name, pool.name, rng.name_suffix(5));
                if taken.insert(candidate.clone()) {
                    break candidate;
                }
            };
            let zone = spec.zones[(zone_offset + i) % spec.zones.len()].clone();
            let mut labels = BTreeMap::from([
                (
                    "node.kubernetes.io/instance-type".to_owned(),
                    pool.profile.instance_type.to_owned(),
                ),
                ("flotilla.io/node-pool".to_owned(), pool.name.clone()),
            ]);
            let mut annotations = BTreeMap::new();
            if let Some(gpu) = &pool.profile.gpu {
                labels.extend(gpu.labels());
                annotations.insert("karmada.io/gpu-topology".to_owned(), gpu.topology());
            }
            labels.extend(pool.labels.clone());
            let shape = NodeShape {
                name,
                zone,
                labels,
                annotations,
                taints: json!(pool.taints),
                capacity: json!(pool.profile.capacity),
            };
            nodes.push(planned(spec, nodes.len(), shape, &at, &mut rng));
        }
    }
    if control_plane {
        let shape = NodeShape {
            name: control_plane_name(&spec.name),
            zone: spec.zones[0].clone(),
            labels: BTreeMap::from([
                (
                    "node-role.kubernetes.io/control-plane".to_owned(),
                    String::new(),
                ),
                (
                    "node.kubernetes.io/exclude-from-external-load-balancers".to_owned(),
                    String::new(),
                ),
            ]),
            annotations: BTreeMap::from([(
                "kubeadm.alpha.kubernetes.io/cri-socket".to_owned(),
                "unix:///run/containerd/containerd.sock".to_owned(),
            )]),
            taints: json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]),
            capacity: json!(BTreeMap::from(CONTROL_PLANE_CAPACITY)),
        };
        nodes.push(planned(spec, nodes.len(), shape, &at, &mut rng));
    }
    let by_name = nodes.iter().map(|n| (n.name.clone(), n.index)).collect();
    NodeTable {
        nodes,
        by_name,
        down: Mutex::new(HashSet::new()),
    }
}

/// The `index`-th node of the cluster: its object and status, addresses from its index.
fn planned(
    spec: &ClusterSpec,
    index: usize,
    shape: NodeShape,
    at: &str,
    rng: &mut Rng,
) -> PlannedNode {
    let NodeShape {
        name,
        zone,
        labels: extra_labels,
        annotations: extra_annotations,
        taints,
        capacity,
        ..
    } = shape;
    let n = index + 1;
    let internal_ip = format!("172.{}.{}.{}", 16 + (n >> 16), (n >> 8) & 0xff, n & 0xff);
    let pod_cidr = format!("10.{}.{}.0/24", (index >> 8) & 0xff, index & 0xff);
    let mut labels = BTreeMap::from([
        ("beta.kubernetes.io/arch".to_owned(), "amd64".to_owned()),
        ("beta.kubernetes.io/os".to_owned(), "linux".to_owned()),
        ("kubernetes.io/arch".to_owned(), "amd64".to_owned()),
        ("kubernetes.io/os".to_owned(), "linux".to_owned()),
        ("kubernetes.io/hostname".to_owned(), name.clone()),
        (
            "topology.kubernetes.io/region".to_owned(),
            spec.region.clone(),
        ),
        ("topology.kubernetes.io/zone".to_owned(), zone.clone()),
    ]);
    labels.extend(extra_labels);
    let mut annotations =
        BTreeMap::from([("node.alpha.kubernetes.io/ttl".to_owned(), "0".to_owned())]);
    annotations.extend(extra_annotations);
    let provider_id = match &spec.provider {
        Some(p) => format!("{p}:///{zone}/{name}"),
        None => format!("sim:///{}/{name}", spec.name),
    };
    let object = json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr], "providerID": provider_id,
                 "taints": taints},
    });
    let status = json!({
        "capacity": capacity,
        "allocatable": capacity,
        "conditions": ready_conditions(true, at),
        "addresses": [{"type": "InternalIP", "address": internal_ip},
                      {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64", "bootID": uuid_from(rng),
            "containerRuntimeVersion": "containerd://1.7.22",
            "kernelVersion": "6.8.0-sim", "kubeProxyVersion": "v1.32.0",
            "kubeletVersion": "v1.32.0", "machineID": uuid_from(rng).replace('-', ""),
            "operatingSystem": "linux", "osImage": "Ubuntu 22.04.4 LTS",
            "systemUUID": uuid_from(rng),
        },
    });
    PlannedNode {
        name,
        index,
        zone,
        internal_ip,
        pod_cidr,
        manifest: Mutex::new(Some((object, status))),
    }
}

fn uuid_from(rng: &mut Rng) -> String {
    let bytes = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
    uuid::Uuid::from_u128(bytes).to_string()
}

/// Creates every node (object, then status) and its Lease.
pub async fn create_all(ctx: &Ctx, table: &NodeTable) -> Result<(), SimError> {
    let nodes: Api<Node> = Api::all(ctx.client.clone());
    let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), "kube-node-lease");
    let results: Vec<Result<(), SimError>> = futures::stream::iter(table.nodes.iter())
        .map(|planned| {
            let nodes = nodes.clone();
            let leases = leases.clone();
            async move {
                let Some((object, status)) = planned.manifest.lock().take() else {
                    return Ok(());
                };
                let node: Node = serde_json::from_value(object)
                    .map_err(|e| SimError::internal(format!("node object: {e}")))?;
                let api = |source| SimError::Api {
                    step: "create node",
                    source,
                };
                nodes
                    .create(&PostParams::default(), &node)
                    .await
                    .map_err(api)?;
                nodes
                    .patch_status(
                        &planned.name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": status})),
                    )
                    .await
                    .map_err(api)?;
                let lease: Lease = serde_json::from_value(json!({
                    "metadata": {"name": planned.name, "namespace": "kube-node-lease",
                                 "ownerReferences": []},
                    "spec": {"holderIdentity": planned.name,
                             "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                             "renewTime": now_micro()},
                }))
                .map_err(|e| SimError::internal(format!("lease object: {e}")))?;
                leases
                    .create(&PostParams::default(), &lease)
                    .await
                    .map_err(|source| SimError::Api {
                        step: "create lease",
                        source,
                    })?;
                Ok(())
            }
        })
        .buffer_unordered(WRITE_CONCURRENCY)
        .collect()
        .await;
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(())
}

/// RFC 3339 with microseconds (Lease times are MicroTime).
pub fn now_micro() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Microsecond)
        .map(|t| format!("{t:.6}"))
        .unwrap_or_else(|_| now())
}

/// Renews the Leases of live nodes, spreading one round over `interval`.
pub async fn heartbeat(ctx: Arc<Ctx>, table: Arc<NodeTable>) {
    let interval = ctx.settings.lease_renew_interval;
    let chunk = 64usize;
    let rounds = table.nodes.len().div_ceil(chunk).max(1);
    let pause = interval / u32::try_from(rounds).unwrap_or(u32::MAX);
    loop {
        let started = tokio::time::Instant::now();
        for group in table.nodes.chunks(chunk) {
            let renew_time = now_micro();
            let names: Vec<String> = group
                .iter()
                .filter(|n| !table.is_down(&n.name))
                .map(|n| n.name.clone())
                .collect();
            futures::stream::iter(names)
                .map(|name| {
                    let patch = json!({"spec": {"renewTime": renew_time}});
                    let ctx = &ctx;
                    async move {
                        if let Err(error) = crate::writes::merge_patch::<Lease>(
                            ctx,
                            Some("kube-node-lease"),
                            &name,
                            None,
                            &patch,
                        )
                        .await
                        {
                            tracing::debug!(node = %name, %error, "lease renewal failed");
                        }
                    }
                })
                .buffer_unordered(WRITE_CONCURRENCY)
                .collect::<Vec<()>>()
                .await;
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
        }
        tokio::time::sleep_until(started + interval.max(Duration::from_millis(10))).await;
    }
}

/// Takes `count` live nodes NotReady (seeded choice): Lease renewals stop, conditions turn
/// Unknown, and the node lifecycle controller's `unreachable` taints are added. Returns names.
pub async fn set_not_ready(
    ctx: &Ctx,
    table: &NodeTable,
    count: usize,
    seed: u64,
) -> Result<Vec<String>, SimError> {
    let mut live: Vec<&PlannedNode> = table
        .nodes
        .iter()
        .filter(|n| !table.is_down(&n.name))
        .collect();
    let mut rng = Rng::derived(
        seed,
        &format!("notready/{}/{}", ctx.name, table.down_nodes().len()),
    );
    let mut chosen = Vec::new();
    while chosen.len() < count && !live.is_empty() {
        let i = rng.below(live.len() as u64) as usize;
        chosen.push(live.swap_remove(i).name.clone());
    }
    chosen.sort();
    let at = now();
    let api: Api<Node> = Api::all(ctx.client.clone());
    for name in &chosen {
        table.down.lock().insert(name.clone());
        let node = api.get(name).await.map_err(|source| SimError::Api {
            step: "get node",
            source,
        })?;
        let mut taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
        taints.retain(|t| t.key != UNREACHABLE_TAINT);
        let mut taints = serde_json::to_value(&taints).unwrap_or_else(|_| json!([]));
        if let Some(list) = taints.as_array_mut() {
            list.push(json!({"key": UNREACHABLE_TAINT, "effect": "NoSchedule", "timeAdded": at}));
            list.push(json!({"key": UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": at}));
        }
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"taints": taints}})),
        )
        .await
        .map_err(|source| SimError::Api {
            step: "taint node",
            source,
        })?;
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": ready_conditions(false, &at)}})),
        )
        .await
        .map_err(|source| SimError::Api {
            step: "mark node NotReady",
            source,
        })?;
    }
    Ok(chosen)
}

/// Brings every down node back: Ready conditions, no `unreachable` taints, Leases renewed.
pub async fn set_all_ready(ctx: &Ctx, table: &NodeTable) -> Result<(), SimError> {
    let down = table.down_nodes();
    let at = now();
    let api: Api<Node> = Api::all(ctx.client.clone());
    for name in down {
        let node = api.get(&name).await.map_err(|source| SimError::Api {
            step: "get node",
            source,
        })?;
        let mut taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
        taints.retain(|t| t.key != UNREACHABLE_TAINT);
        let taints = if taints.is_empty() {
            Value::Null
        } else {
            serde_json::to_value(&taints).unwrap_or(Value::Null)
        };
        api.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"taints": taints}})),
        )
        .await
        .map_err(|source| SimError::Api {
            step: "untaint node",
            source,
        })?;
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": ready_conditions(true, &at)}})),
        )
        .await
        .map_err(|source| SimError::Api {
            step: "mark node Ready",
            source,
        })?;
        table.down.lock().remove(&name);
    }
    Ok(())
}
