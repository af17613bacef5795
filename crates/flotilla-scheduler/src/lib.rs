//! Flotilla's scheduler, Karmada-exact: a plugin framework ([`framework`]), the in-tree filter and
//! score plugins ([`plugins`]), replica estimators ([`estimator`]) and the pure deterministic core
//! ([`schedule`]: filter → score → select → assign) with the "should we schedule" decision
//! ([`decide`]).
//!
//! Everything but [`run`] is pure: no I/O, no clocks. [`run`] is the live scheduler (watches,
//! queue, writes through a `kube::Client`); `flotilla schedule` runs the same core on files.

pub mod assign;
pub mod assume;
pub mod bench;
pub mod core;
pub mod decide;
pub mod estimator;
pub mod framework;
pub mod lifted;
pub mod plugins;
pub mod run;
pub mod select;
pub mod webster;

pub use crate::core::{
    FitError, ScheduleError, ScheduleOptions, ScheduleResult, Snapshot, TermFailure,
    TracedSchedule, schedule, schedule_traced,
};
pub use decide::{ScheduleTrigger, should_schedule};
pub use estimator::{AccurateEstimator, GeneralEstimator, ReplicaEstimator, UNAUTHENTIC_REPLICA};
pub use framework::{Framework, Registry};
