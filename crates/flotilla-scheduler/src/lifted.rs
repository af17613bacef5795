//! Behaviour ported from Kubernetes (and Go's standard library, whose unstable sort Karmada's
//! division depends on), written in our own code. Each module names its provenance.

pub mod go_sort;
pub mod node_affinity;
/// Taints and tolerations, shared with the controllers' taint manager.
pub use flotilla_api::lifted::taints;
