//! The built-in resource interpreter (Karmada's native interpreter), per kind: replicas and
//! per-replica requirements, revising replicas for one cluster, aggregating member statuses
//! onto the template, and the dependencies `propagateDeps` carries along. Pure functions on
//! JSON objects; controllers call them.

pub mod aggregate;
pub mod dependencies;
pub mod replicas;

pub use aggregate::aggregate_status;
pub use dependencies::{DependentObjectReference, dependencies};
pub use replicas::{interpret_replica, revise_replica};
