//! The Kubernetes REST API over any `flotilla_store::Store`, served as a tower service.
//!
//! Depends only on `flotilla-api` and `flotilla-store` among workspace crates.

pub mod auth;
pub mod patch;
pub mod protobuf;
