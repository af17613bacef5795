//! The pod as the sim's control loops hold it in their informer cache: the fields they read,
//! not the whole `k8s_openapi` Pod.
//!
//! A typed `k8s_openapi` Pod costs about 12 KiB in memory (a `Container` alone is a 2 KiB
//! struct, a `ContainerStatus` more), four times its JSON; 20,000 of them were most of a
//! simulated cluster. Here a pod keeps its own metadata with labels, annotations and
//! ownerReferences shared by its siblings ([`Meta`]), a spec shared by every pod with the same
//! spec (pods of one template differ only in `nodeName`, which is kept apart), and the status
//! fields the loops look at. The pods the sim creates and what the API serves are untouched.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Weak};

use k8s_openapi::api::core::v1::{PodCondition, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Resource;
use kube::runtime::reflector::{Lookup, ObjectRef};
use parking_lot::Mutex;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::intern::{Table, hash_of};

/// A cached pod (see the module docs). Deserializes from a Pod's JSON (through [`WirePod`]).
#[derive(Debug, Clone, Default)]
pub struct Pod {
    pub metadata: Meta,
    pub spec: Option<Spec>,
    pub status: Option<PodStatus>,
}

/// A pod as a watch decodes it, before its metadata is slimmed into a [`Pod`]: the informer's
/// wire type (the watcher needs `ObjectMeta`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WirePod {
    /// Without managedFields (nothing here reads them; see [`flotilla_api::meta`]).
    #[serde(
        default,
        deserialize_with = "flotilla_api::meta::without_managed_fields"
    )]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<Spec>,
    #[serde(default)]
    pub status: Option<PodStatus>,
}

impl From<WirePod> for Pod {
    fn from(wire: WirePod) -> Self {
        Pod {
            metadata: Meta::from(wire.metadata),
            spec: wire.spec,
            status: wire.status,
        }
    }
}

impl<'de> Deserialize<'de> for Pod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        WirePod::deserialize(deserializer).map(Pod::from)
    }
}

impl Pod {
    /// A pod with `spec` and nothing else (what a template would create), for placement checks.
    pub fn from_spec(spec: Option<PodSpec>) -> Pod {
        Pod {
            metadata: Meta::default(),
            spec: spec.map(|mut spec| {
                let node_name = spec.node_name.take();
                Spec {
                    node_name,
                    shared: Arc::new(spec),
                }
            }),
            status: None,
        }
    }

    /// `spec.nodeName`, empty when unbound.
    pub fn node_name(&self) -> &str {
        self.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .unwrap_or("")
    }
}

impl Lookup for Pod {
    type DynamicType = ();

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Pod")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("pods")
    }
    fn name(&self) -> Option<Cow<'_, str>> {
        self.metadata.name.as_deref().map(Cow::Borrowed)
    }
    fn namespace(&self) -> Option<Cow<'_, str>> {
        self.metadata.namespace.as_deref().map(Cow::Borrowed)
    }
    fn resource_version(&self) -> Option<Cow<'_, str>> {
        self.metadata.resource_version.as_deref().map(Cow::Borrowed)
    }
    fn uid(&self) -> Option<Cow<'_, str>> {
        self.metadata.uid.as_deref().map(Cow::Borrowed)
    }

    /// The cache's key: name and namespace only (the reflector keeps one per pod; its
    /// resourceVersion and uid would be two more strings that nothing reads).
    fn to_object_ref(&self, dyntype: ()) -> ObjectRef<Self> {
        let key = ObjectRef::new_with(self.metadata.name.as_deref().unwrap_or(""), dyntype);
        match self.metadata.namespace.as_deref() {
            Some(namespace) => key.within(namespace),
            None => key,
        }
    }
}

impl Resource for WirePod {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Pod")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("pods")
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A pod's spec: `nodeName` of its own, everything else shared (read through `Deref`; the
/// shared spec's `node_name` is always `None`, so read `spec.node_name` on this struct).
#[derive(Debug, Clone)]
pub struct Spec {
    pub node_name: Option<String>,
    shared: Arc<PodSpec>,
}

impl Deref for Spec {
    type Target = PodSpec;

    fn deref(&self) -> &PodSpec {
        &self.shared
    }
}

impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        intern(raw.get()).map_err(serde::de::Error::custom)
    }
}

/// Specs by their JSON without `nodeName` (entries in key order), shared while some pod
/// holds them. One table for the process: clusters running the same workloads share too.
static SPECS: LazyLock<Mutex<Interner>> = LazyLock::new(|| {
    Mutex::new(Interner {
        specs: HashMap::new(),
        sweep_at: 1024,
    })
});

struct Interner {
    specs: HashMap<Box<str>, Weak<PodSpec>>,
    /// Dead entries are dropped when the table reaches this size.
    sweep_at: usize,
}

fn intern(json: &str) -> Result<Spec, serde_json::Error> {
    // Spec keys never need escaping, so they borrow; values stay raw JSON.
    let entries: BTreeMap<&str, &RawValue> = serde_json::from_str(json)?;
    let node_name = match entries.get("nodeName") {
        Some(raw) => serde_json::from_str::<Option<String>>(raw.get())?,
        None => None,
    };
    let mut key = String::with_capacity(json.len());
    for (name, value) in &entries {
        if *name != "nodeName" {
            key.push_str(name);
            key.push('=');
            key.push_str(value.get());
            key.push('\n');
        }
    }
    let mut table = SPECS.lock();
    if let Some(shared) = table.specs.get(key.as_str()).and_then(Weak::upgrade) {
        return Ok(Spec { node_name, shared });
    }
    let mut spec: PodSpec = serde_json::from_str(json)?;
    spec.node_name = None;
    let shared = Arc::new(spec);
    if table.specs.len() >= table.sweep_at {
        table.specs.retain(|_, spec| spec.strong_count() > 0);
        table.sweep_at = (table.specs.len() * 2).max(1024);
    }
    table
        .specs
        .insert(key.into_boxed_str(), Arc::downgrade(&shared));
    Ok(Spec { node_name, shared })
}

/// The status fields the loops read (named as in `k8s_openapi`'s `PodStatus`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    #[serde(default)]
    pub phase: Option<String>,
    /// Only the conditions the loops read (see [`CONDITIONS_READ`]), shared by every pod with
    /// the same ones: pods that changed state in the same second have equal conditions.
    #[serde(default, deserialize_with = "conditions_read")]
    pub conditions: Option<Arc<[PodCondition]>>,
    #[serde(default)]
    pub start_time: Option<Time>,
    #[serde(default)]
    pub container_statuses: Option<Vec<ContainerStatus>>,
    /// `status.podIP`, parsed (no allocation per pod; an address that does not parse is left
    /// out): the EndpointSlice controller's endpoint addresses.
    #[serde(default, rename = "podIP", deserialize_with = "ip_address")]
    pub pod_ip: Option<IpAddr>,
}

fn ip_address<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<IpAddr>, D::Error> {
    let text = Option::<Cow<'de, str>>::deserialize(deserializer)?;
    Ok(text.and_then(|t| t.parse().ok()))
}

/// The pod conditions a cached pod keeps: `Ready` (workload status, availability) and
/// `PodScheduled` (the scheduler's Pending reason). A running pod reports five; each costs a
/// few hundred bytes per cached pod.
pub const CONDITIONS_READ: [&str; 2] = ["Ready", "PodScheduled"];

/// Condition lists in use (see [`crate::intern`]).
static CONDITIONS: LazyLock<Mutex<Table<[PodCondition]>>> = LazyLock::new(Mutex::default);

fn conditions_read<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Arc<[PodCondition]>>, D::Error> {
    let Some(mut all) = Option::<Vec<PodCondition>>::deserialize(deserializer)? else {
        return Ok(None);
    };
    all.retain(|c| CONDITIONS_READ.contains(&c.type_.as_str()));
    // Hashed by their JSON (`PodCondition` has no `Hash`).
    let hash = hash_of(&serde_json::to_string(&all).map_err(serde::de::Error::custom)?);
    let mut table = CONDITIONS.lock();
    if let Some(found) = table.find(hash, &all) {
        return Ok(Some(found));
    }
    let shared: Arc<[PodCondition]> = all.into();
    table.insert(hash, &shared);
    Ok(Some(shared))
}

/// The container status fields the kubelet reads. Not the image, image ID or container ID: the
/// kubelet derives them from the spec and the pod's uid whenever it writes them (~200 bytes
/// per pod not kept).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    pub name: String,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub state: Option<ContainerState>,
}

/// The parts of a container's state the kubelet and the Job controller read (named as in
/// `k8s_openapi`'s `ContainerState`; of a terminated state only when it ended).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContainerState {
    #[serde(default)]
    pub running: Option<ContainerStateRunning>,
    #[serde(default)]
    pub waiting: Option<ContainerStateWaiting>,
    #[serde(default)]
    pub terminated: Option<ContainerStateTerminated>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateTerminated {
    #[serde(default)]
    pub finished_at: Option<Time>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateRunning {
    #[serde(default)]
    pub started_at: Option<Time>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContainerStateWaiting {
    #[serde(default)]
    pub reason: Option<String>,
    /// Kept for the kubelet's `CreateContainerConfigError`, whose message it compares.
    #[serde(default)]
    pub message: Option<String>,
}

mod metadata;

pub use metadata::Meta;

#[cfg(test)]
mod tests;
