//! The pull-mode agent (Karmada's `karmada-agent`): runs in or beside a member cluster,
//! registers it with the control plane as a `Cluster` with `syncMode: Pull` and the member's
//! `kube-system` UID as `spec.id`, renews a Lease named after the cluster in `karmada-cluster`
//! on the control plane, and runs the member-facing controllers (`clusterStatus`, `execution`,
//! `workStatus`, `serviceExport`, `endpointsliceCollect`) for that one cluster.
//!
//! A lost control plane is never silent: every failed request is logged with its cause and
//! counted in `karmada_agent_connection_errors_total`, and retried with backoff. The kubeconfig
//! files (and the certificate, key, CA and token files they name) are re-read when they change,
//! so rotated credentials are used without a restart.
//!
//! Talks to both clusters only through their Kubernetes APIs; depends on api, runtime, member
//! and controllers.

pub mod backoff;
pub mod kubeconfig;
pub mod lease;
pub mod metrics;
pub mod register;

mod agent;

pub use agent::{AgentConfig, AgentError, run};
pub use kubeconfig::KubeconfigSource;
pub use metrics::Metrics;
pub use register::Topology;
