//! Events: one stored resource, two views. core/v1 Events are stored under
//! `/registry/core/events/`; events.k8s.io/v1 serves the same objects converted ([`lifted`]),
//! so an Event written through either group is read, listed and watched through both with the
//! same uid and resourceVersion. Field selectors of events.k8s.io/v1 are translated to the core
//! labels, and Event writes are validated by request version as kube-apiserver does.
//!
//! Knows nothing about HTTP or the store: the registry and [`crate::conversion`] call it.

pub mod lifted;
pub mod ttl;

use std::borrow::Cow;

use flotilla_api::selector::field::{FieldRequirement, FieldSelector};
use flotilla_api::validation::FieldError;
use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::error::ApiError;

pub use lifted::RequestVersion;

/// The events.k8s.io group.
pub const GROUP: &str = "events.k8s.io";

/// Where Events of both views are stored. The watch cache does not keep them (kube-apiserver's
/// `DefaultWatchCacheSizes` gives `events` and `events.k8s.io/events` no watch cache: they are
/// the most numerous objects, written once or twice and rarely read), so lists and the initial
/// state of watches read them from the store.
pub const STORAGE_PREFIX: &str = "/registry/core/events/";

/// Whether `info` is an Event resource of either view.
pub fn is_event(info: &ResourceInfo) -> bool {
    info.kind == "Event" && info.crd.is_none() && (info.group.is_empty() || info.group == GROUP)
}

/// Whether a PUT of an object of `info` that does not exist creates it: true for Events of
/// either view, as kube-apiserver's event strategy allows create on update
/// (kubernetes/kubernetes, pkg/registry/core/event/strategy.go, `AllowCreateOnUpdate`; the
/// events.k8s.io/v1 view shares that storage).
pub fn allows_create_on_update(info: &ResourceInfo) -> bool {
    is_event(info)
}

/// Whether `info` is the events.k8s.io/v1 view (stored as core/v1).
pub fn is_events_view(info: &ResourceInfo) -> bool {
    is_event(info) && info.group == GROUP
}

/// A stored (core/v1) Event as `info` serves it.
pub fn to_served(info: &ResourceInfo, object: &mut Value) {
    if is_events_view(info) && object.is_object() {
        *object = lifted::core_to_events(object);
    }
}

/// An Event as `info` serves it, in the core/v1 form it is stored in.
pub fn to_stored(info: &ResourceInfo, object: &Value) -> Option<Value> {
    is_events_view(info).then(|| lifted::events_to_core(object))
}

/// A field selector of `info`'s view with the labels of the stored resource (events.k8s.io/v1's
/// `regarding.name` is core's `involvedObject.name`), or kube's `field label not supported`.
pub fn field_selector_to_stored(
    info: &ResourceInfo,
    selector: FieldSelector,
) -> Result<FieldSelector, ApiError> {
    if !is_events_view(info) {
        return Ok(selector);
    }
    let mut converted = Vec::with_capacity(selector.requirements.len());
    for requirement in selector.requirements {
        let Some(field) = lifted::field_label_to_core(&requirement.field) else {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {}",
                requirement.field
            )));
        };
        converted.push(FieldRequirement {
            field: field.to_owned(),
            ..requirement
        });
    }
    Ok(FieldSelector::new(converted))
}

/// The Event rules for a write through `info` of `object` (served form; `old` on update).
pub fn errors(info: &ResourceInfo, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    if !is_event(info) {
        return Vec::new();
    }
    // Core Events are validated as they are (no copy: every Event write passes here).
    let (version, core, old_core) = if is_events_view(info) {
        (
            RequestVersion::EventsV1,
            Cow::Owned(lifted::events_to_core(object)),
            old.map(|old| Cow::Owned(lifted::events_to_core(old))),
        )
    } else {
        (
            RequestVersion::Core,
            Cow::Borrowed(object),
            old.map(Cow::Borrowed),
        )
    };
    match old_core {
        Some(old) => lifted::validate_update(&core, &old, version),
        None => lifted::validate_create(&core, version),
    }
}

/// Converts Events between their two views for managed fields: a manager recorded through
/// one group is compared in that group's fields when the other group writes (kube compares
/// every manager in its own version). Objects of other kinds are left as they are.
#[derive(Debug, Clone, Copy, Default)]
pub struct ManagedVersions;

impl crate::lifted::smd::update::Converter for ManagedVersions {
    fn convert(&self, object: &Value, api_version: &str) -> Option<Value> {
        if object["kind"] != "Event" {
            return None;
        }
        match (object["apiVersion"].as_str()?, api_version) {
            (lifted::CORE_API_VERSION, lifted::EVENTS_API_VERSION) => {
                Some(lifted::core_to_events(object))
            }
            (lifted::EVENTS_API_VERSION, lifted::CORE_API_VERSION) => {
                Some(lifted::events_to_core(object))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
