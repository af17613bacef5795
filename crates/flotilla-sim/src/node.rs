//! The node as the sim's control loops hold it in their informer cache: name, labels, taints,
//! schedulability and allocatable resources — what the scheduler and the DaemonSet controller
//! read. A typed `k8s_openapi` Node with its conditions, addresses, node info and annotations
//! costs several KiB; at 5,000 nodes per cluster that was a large share of a cluster. Capacity
//! is kept only where a node reports no allocatable (it stands in for it, as in the scheduler).

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Deserializer};

/// A cached node (see the module docs). Deserializes from a Node's JSON.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Node {
    /// Without annotations and managedFields (nothing here reads them).
    #[serde(
        default,
        deserialize_with = "flotilla_api::meta::without_managed_fields_and_annotations"
    )]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<NodeSpec>,
    #[serde(default)]
    pub status: Option<NodeStatus>,
}

/// The spec fields the loops read (named and typed as in `k8s_openapi`'s `NodeSpec`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeSpec {
    #[serde(default)]
    pub taints: Option<Vec<Taint>>,
    #[serde(default)]
    pub unschedulable: Option<bool>,
}

/// The status field the loops read: what can be allocated (`status.allocatable`, or
/// `status.capacity` when a node reports no allocatable).
#[derive(Debug, Clone, Default)]
pub struct NodeStatus {
    pub allocatable: Option<BTreeMap<String, Quantity>>,
}

impl<'de> Deserialize<'de> for NodeStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            allocatable: Option<BTreeMap<String, Quantity>>,
            #[serde(default)]
            capacity: Option<BTreeMap<String, Quantity>>,
        }
        let wire = Wire::deserialize(deserializer)?;
        Ok(NodeStatus {
            allocatable: wire.allocatable.or(wire.capacity),
        })
    }
}

impl Resource for Node {
    type DynamicType = ();
    type Scope = k8s_openapi::ClusterResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("Node")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("v1")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("nodes")
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::Node;
    use serde_json::json;

    #[test]
    fn allocatable_falls_back_to_capacity_and_spec_keeps_taints() {
        let both: Node = serde_json::from_value(json!({"metadata": {"name": "a"},
            "spec": {"podCIDR": "10.0.0.0/24", "unschedulable": true,
                     "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "32"}, "allocatable": {"cpu": "31"}}}))
        .expect("a node");
        let allocatable = both
            .status
            .and_then(|s| s.allocatable)
            .expect("allocatable");
        assert_eq!(allocatable["cpu"].0, "31");
        let spec = both.spec.expect("spec");
        assert_eq!(spec.unschedulable, Some(true));
        assert_eq!(spec.taints.expect("taints")[0].key, "k");
        let capacity_only: Node = serde_json::from_value(json!({"metadata": {"name": "b"},
            "status": {"capacity": {"cpu": "8"}}}))
        .expect("a node");
        let allocatable = capacity_only
            .status
            .and_then(|s| s.allocatable)
            .expect("capacity stands in");
        assert_eq!(allocatable["cpu"].0, "8");
    }
}
