//! Simulated member clusters (in the spirit of kwok): each cluster is a Flotilla API server on a
//! memory store, served over HTTPS with its own CA and admin certificate, plus the behaviour of
//! a cluster behind it — nodes from node pools (CPU, memory, pods, GPUs, topology labels),
//! Lease heartbeats, a pod scheduler, kubelets and workload controllers that drive real status,
//! Services' EndpointSlices, the resource metrics API from a usage model, a network that pods'
//! `nc` crosses within and between the clusters — many clusters in one process, with faults on demand.
//!
//! Every control loop reaches its cluster only through the Kubernetes API (an in-process
//! `kube::Client` over the API server's tower service). Depends on flotilla-api,
//! flotilla-store and flotilla-apiserver; nothing but tests and the binary depends on it.

pub mod cluster;
pub mod config;
pub mod control;
pub mod disruption;
pub mod endpointslice;
pub mod error;
pub mod events;
pub mod hpa;
pub mod image;
pub mod informer;
pub mod intern;
pub mod kubeconfig;
pub mod kubelet;
pub mod lifecycle;
pub mod lifted;
pub mod metrics;
pub mod namespaces;
pub mod network;
pub mod node;
pub mod nodes;
pub mod pod;
pub mod profile;
pub mod queue;
pub mod quota;
pub mod resync;
pub mod rng;
pub mod runtime;
pub mod scheduler;
pub mod serve;
pub mod sim;
pub mod system;
pub mod workloads;
pub mod writes;

pub use cluster::SimCluster;
pub use config::{ConfigError, SimConfig, SimSpec};
pub use error::SimError;
pub use sim::Sim;
