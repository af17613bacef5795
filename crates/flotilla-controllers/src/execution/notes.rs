//! The messages of the execution controller's conditions and Events, worded as Karmada's.

use serde_json::Value;

use super::WorkKey;

/// `errors.NewAggregate(errs).Error()`: one message as is, several (repeated ones once) in
/// brackets.
pub(super) fn aggregate(errors: &[String]) -> String {
    let mut unique: Vec<&str> = Vec::new();
    for error in errors {
        if !unique.contains(&error.as_str()) {
            unique.push(error);
        }
    }
    match unique.as_slice() {
        [one] => (*one).to_owned(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Karmada's `SyncWorkloadSucceed` note on a Work.
pub(super) fn synced_note(work: &WorkKey, cluster: &str) -> String {
    format!("Sync work({work}) to cluster({cluster}) successful.")
}

/// Karmada's `SyncWorkloadSucceed` note on a template (`<namespace>/<name>`, the slash kept
/// for a cluster-scoped object).
pub(super) fn applied_note(manifest: &Value, cluster: &str) -> String {
    let meta = &manifest["metadata"];
    format!(
        "Successfully applied resource({}/{}) to cluster {cluster}",
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default()
    )
}

/// Karmada's `SyncWorkloadFailed` note on a template: the object as klog's `KObj` prints it
/// (`<namespace>/<name>`, or `<name>` alone when cluster-scoped).
pub(super) fn apply_failed_note(
    manifest: &Value,
    cluster: &str,
    error: &dyn std::fmt::Display,
) -> String {
    let meta = &manifest["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    let object = match meta["namespace"].as_str().filter(|ns| !ns.is_empty()) {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    };
    format!("Failed to create or update resource({object}) in member cluster({cluster}): {error}")
}
