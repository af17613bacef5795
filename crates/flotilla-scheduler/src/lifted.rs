//! Behaviour ported from Kubernetes (and Go's standard library, whose unstable sort Karmada's
//! division depends on), written in our own code. Each module names its provenance.

pub mod go_sort;
pub mod node_affinity;
pub mod taints;
