//! Behaviour ported from Kubernetes, written in our own code. Each module names the upstream file
//! and version whose behaviour it follows.

pub mod affinity;
pub mod cronjob;
pub mod deployment;
pub mod disruption;
pub mod expansion;
pub mod fit_error;
pub mod hash;
pub mod requests;
pub mod taints;
