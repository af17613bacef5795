//! Behaviour ported from Kubernetes, each module naming its source.

pub mod go_yaml;

/// The HPA arithmetic lives in `flotilla-api` (the simulated members' HPA controller runs it
/// too).
pub use flotilla_api::lifted::hpa;
