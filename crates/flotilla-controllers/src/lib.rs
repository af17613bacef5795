//! The control plane's reconcilers, one module each, and the built-in resource interpreter.
//! Every controller talks to the control plane through a `kube::Client` and to members through
//! [`flotilla_member::MemberClients`]; [`manager`] starts the ones `--controllers` enables.

pub mod agent_csr_approving;
pub mod application_failover;
pub mod binding;
pub mod binding_status;
pub mod cluster;
pub mod cluster_status;
pub mod cluster_taint_policy;
mod compact;
pub mod cron_federated_hpa;
pub mod dependencies;
pub mod deployment_replicas_syncer;
pub mod descheduler;
pub mod detector;
pub mod eviction;
pub mod execution;
pub mod federated_hpa;
pub mod federated_resource_quota;
mod fingerprint;
pub mod graceful_eviction;
pub mod hpa_scale_target_marker;
pub mod interpreter;
pub mod lifted;
pub mod manager;
pub mod member_cache;
pub mod metrics;
pub mod multicluster_service;
pub mod namespace;
pub mod options;
pub mod overrides;
pub mod remedy;
pub mod resources;
pub mod search;
pub mod service_export;
pub mod taint_manager;
pub mod unified_auth;
pub mod work_status;
pub mod workload_rebalancer;

pub use manager::{CONTROLLERS, Context, ControllerSpec, run_controllers};
pub use metrics::Metrics;
pub use options::{ControllerOptions, FailoverOptions, FeatureGates, PurgeMode};
