//! The node as the sim's control loops hold it in their informer cache: name, labels, taints,
//! schedulability and allocatable resources — what the scheduler and the DaemonSet controller
//! read. A typed `k8s_openapi` Node with its conditions, addresses, node info and annotations
//! costs several KiB; at 5,000 nodes per cluster that was a large share of a cluster.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeSpec;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Deserializer};

/// A cached node (see the module docs). Deserializes from a Node's JSON.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Node {
    /// Without annotations and managedFields (nothing here reads them).
    #[serde(default, deserialize_with = "metadata_without_annotations")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: Option<NodeSpec>,
    #[serde(default)]
    pub status: Option<NodeStatus>,
}

fn metadata_without_annotations<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<ObjectMeta, D::Error> {
    let mut metadata = ObjectMeta::deserialize(deserializer)?;
    metadata.annotations = None;
    metadata.managed_fields = None;
    Ok(metadata)
}

/// The status fields the loops read (named and typed as in `k8s_openapi`'s `NodeStatus`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NodeStatus {
    #[serde(default)]
    pub allocatable: Option<BTreeMap<String, Quantity>>,
    #[serde(default)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
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
