//! flotilla-sim integration tests: one binary. Behaviour tests run on tokio's paused clock with
//! the in-process client; fault and kubectl tests go over real HTTPS.

mod support;

mod config_refs;
mod determinism;
mod disruption;
mod endpoint_slices;
mod faults;
mod hpa;
mod image_pull;
mod jobs;
mod kubectl;
mod logs_exec;
mod managed_fields;
mod metrics;
mod namespaces;
mod scheduling;
mod service_accounts;
mod system_components;
mod workloads;
