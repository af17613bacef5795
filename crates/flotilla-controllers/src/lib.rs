//! The control plane's reconcilers, one module each, and the built-in resource interpreter.
//! Every controller talks to the control plane through a `kube::Client` and to members through
//! [`flotilla_member::MemberClients`]; [`manager`] starts the ones `--controllers` enables.

pub mod cluster;
pub mod cluster_status;
pub mod manager;

pub use manager::{CONTROLLERS, Context, ControllerSpec, run_controllers};
