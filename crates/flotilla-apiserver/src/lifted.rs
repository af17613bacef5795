//! Behaviour ported from Kubernetes, written in our own code. Each module names its source.

pub mod duration;
pub mod endpoint_slice;
pub mod guaranteed_update;
pub mod healthz;
pub mod immutable;
pub mod kubelet;
pub mod print_job;
pub mod print_node;
pub mod print_pod;
pub mod priority_class;
pub mod request_metrics;
pub mod smd;
