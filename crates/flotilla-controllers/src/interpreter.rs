//! The built-in resource interpreter (Karmada's native interpreter), per kind: replicas and
//! per-replica requirements, revising replicas for one cluster, aggregating member statuses
//! onto the template, the dependencies `propagateDeps` carries along, retaining member-owned
//! fields on update, health, and the status reflected into a Work. Pure functions on JSON
//! objects; controllers call them.

pub mod aggregate;
pub mod bundled;
pub mod customized;
pub mod dependencies;
pub mod health;
pub mod reflect;
pub mod replicas;
pub mod retain;
pub mod webhook;

pub use aggregate::aggregate_status;
pub use customized::{Customizations, CustomizedError};
pub use dependencies::{DependentObjectReference, dependencies};
pub use replicas::{interpret_replica, revise_replica};

/// `group/version` + kind of an object (`v1` for the core group).
pub(crate) fn gvk_of(object: &serde_json::Value) -> (&str, &str) {
    (
        object["apiVersion"].as_str().unwrap_or_default(),
        object["kind"].as_str().unwrap_or_default(),
    )
}
