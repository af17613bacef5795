//! Kubernetes behaviour ported to Rust, each module naming the upstream file and function whose
//! behaviour it follows (Kubernetes v1.32 sources, written anew here, not copied).

pub(crate) mod bootstrap_policy;
pub mod bootstrap_token;
pub(crate) mod escalation;
pub(crate) mod forbidden;
pub mod jws;
pub mod rbac;
pub(crate) mod token_file;
