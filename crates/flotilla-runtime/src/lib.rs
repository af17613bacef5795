//! Controller machinery with no domain types: which controllers run (`--controllers=*,-name`),
//! coalescing work queues with per-key backoff, the controllers' run-loop scaffolding
//! ([`controller`]), one watch and cache per kind shared by all controllers ([`informer`]),
//! leader election on `coordination.k8s.io` Leases, and the shutdown signal every task watches.
//!
//! Depends on no other workspace crate: controllers, the scheduler and the agent build on it and
//! talk to the control plane only through a `kube::Client`.

pub mod controller;
pub mod errors;
pub mod estimator_metrics;
pub mod events;
pub mod informer;
pub mod leader;
pub mod queue;
pub mod selection;
pub mod shutdown;
pub mod write;

pub use controller::Tasks;
pub use estimator_metrics::EstimatorMetrics;
pub use informer::{Informers, Shared, Subscription};
pub use leader::{LeaderElector, LeaseConfig, LeaseError};
pub use queue::{Backoff, Priority, WorkQueue};
pub use selection::{ControllerSelection, SelectionError};
pub use shutdown::Shutdown;
