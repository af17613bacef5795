//! Member clusters end to end: `flotilla join` / `unjoin` (push mode) against a control plane
//! and simulated members, the unified health view and `kubectl get clusters`, `up --demo`, and
//! the pull-mode agent (and the Services it exports).

#[path = "join/support.rs"]
mod support;

#[path = "join/agent.rs"]
mod agent;
#[path = "join/bad_input.rs"]
mod bad_input;
#[path = "join/bootstrap.rs"]
mod bootstrap;
#[path = "join/demo.rs"]
mod demo;
#[path = "join/pull_export.rs"]
mod pull_export;
#[path = "join/push.rs"]
mod push;
#[path = "join/status.rs"]
mod status;
