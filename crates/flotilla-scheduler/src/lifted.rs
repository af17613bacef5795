//! Behaviour ported from Kubernetes, written in our own code. Each module names its provenance.

pub mod node_affinity;
pub mod taints;
