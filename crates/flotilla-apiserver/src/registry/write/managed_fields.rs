//! The writer's entry in `metadata.managedFields` on a create or update (an apply records its
//! own): tracked writers through [`crate::managed`], untracked ones
//! ([`crate::Builder::untracked_writer`]) without an entry of their own.

use serde_json::Value;

use super::{Part, WriteOptions};
use crate::catalog::ResourceInfo;
use crate::object;
use crate::registry::{Registry, format_time};

impl Registry {
    /// Records the writing manager in `metadata.managedFields` (an apply records its own).
    pub(super) fn managed_fields_on_write(
        &self,
        info: &ResourceInfo,
        object: &mut Value,
        old: Option<&Value>,
        part: Part,
        options: &WriteOptions,
    ) {
        let Some(manager) = options.field_manager.as_deref() else {
            return;
        };
        if options.apply {
            return;
        }
        let time = format_time(self.clock.now());
        // The status part is the status subresource's; a main-resource write may come through
        // another subresource (`scale`), which its entry names.
        let subresource = match part {
            Part::Status => Some("status"),
            Part::Main => options.subresource.as_deref(),
        };
        if options.untracked {
            untracked_update(info, old, object, manager, &time, subresource);
        } else if let (Part::Status, Some(old)) = (part, old) {
            // `write_update` carried everything but `status` over from `old`.
            crate::managed::record_status_update(info, old, object, manager, &time);
        } else {
            crate::managed::record_update_in(info, old, object, manager, &time, subresource);
        }
    }
}

/// A write by an untracked writer ([`crate::Builder::untracked_writer`]): the fields it changes
/// leave the other managers' sets as on any update, but it gets no entry of its own (one it
/// already had, from before it was untracked, stays as it was). An object without managed
/// fields, before and after, stays without: nothing is computed (the simulated clusters' hot
/// path, where only users' writes are tracked).
fn untracked_update(
    info: &ResourceInfo,
    old: Option<&Value>,
    object: &mut Value,
    manager: &str,
    time: &str,
    subresource: Option<&str>,
) {
    let entries = |object: &Value| {
        object["metadata"]["managedFields"]
            .as_array()
            .filter(|entries| !entries.is_empty())
            .cloned()
    };
    let Some(stored) = old.and_then(|old| {
        old["metadata"]["managedFields"]
            .as_array()
            .filter(|entries| !entries.is_empty())
    }) else {
        object::metadata_mut(object).remove("managedFields");
        return;
    };
    // A status write changes `status` alone (the rest was carried from `old`): when no entry
    // owns anything in it, nobody loses a field and the entries stay as they were, without
    // comparing the objects (a simulated member's controllers writing the status of the
    // Deployments the control plane created). A patch carries them over already: they are
    // copied only when the writer sent others.
    if subresource == Some("status")
        && !stored
            .iter()
            .any(|entry| entry["fieldsV1"].get("f:status").is_some())
    {
        if object["metadata"]["managedFields"].as_array() != Some(stored) {
            object::metadata_mut(object)
                .insert("managedFields".into(), Value::Array(stored.clone()));
        }
        return;
    }
    let before = stored.clone();
    let own = |entry: &Value| {
        entry["manager"] == manager
            && entry["operation"] == "Update"
            && entry["subresource"].as_str() == subresource
    };
    match (subresource, old) {
        (Some("status"), Some(old)) => {
            crate::managed::record_status_update(info, old, object, manager, time);
        }
        _ => crate::managed::record_update_in(info, old, object, manager, time, subresource),
    }
    let mut after: Vec<Value> = entries(object)
        .unwrap_or_default()
        .into_iter()
        .filter(|entry| !own(entry))
        .collect();
    after.extend(before.into_iter().filter(own));
    let meta = object::metadata_mut(object);
    if after.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert("managedFields".into(), Value::Array(after));
    }
}
