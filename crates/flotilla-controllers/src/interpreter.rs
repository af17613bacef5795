//! The built-in (native) resource interpreter: Karmada's per-kind knowledge of workloads.
//! Pure functions over JSON objects, no I/O.

pub mod health;
pub mod reflect;
pub mod retain;

/// `group/version` + kind of an object (`v1` for the core group).
pub(crate) fn gvk_of(object: &serde_json::Value) -> (&str, &str) {
    (
        object["apiVersion"].as_str().unwrap_or_default(),
        object["kind"].as_str().unwrap_or_default(),
    )
}
