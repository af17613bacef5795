//! Behaviour ported from Kubernetes, each module naming its source.

pub mod hpa;
