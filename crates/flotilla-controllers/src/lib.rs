//! The control plane's reconcilers, one module each, and the built-in resource interpreter.
//! Every controller talks to the control plane through a `kube::Client` and to members through
//! [`flotilla_member::MemberClients`]; [`manager`] starts the ones `--controllers` enables.

pub mod binding;
pub mod binding_status;
pub mod dependencies;
pub mod detector;
pub mod interpreter;
pub mod manager;
pub mod namespace;
pub mod overrides;
pub mod resources;

pub use manager::{CONTROLLERS, Context, ControllerSpec, run_controllers};
