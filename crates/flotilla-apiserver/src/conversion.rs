//! Conversion between the stored form of an object and the form a resource serves: custom
//! resources get their version's `apiVersion` and defaults ([`crate::crd`]), events.k8s.io/v1
//! Events are core/v1 Events converted ([`crate::events`]). The registry, lists and watches
//! call these at every boundary with the store.

use bytes::Bytes;
use serde_json::Value;

use crate::catalog::ResourceInfo;

/// Whether objects of `info` are served in a form other than the stored bytes.
pub fn converts(info: &ResourceInfo) -> bool {
    info.crd.is_some() || info.storage_group.is_some()
}

/// A stored object as `info` serves it.
pub fn to_served(info: &ResourceInfo, object: &mut Value) {
    crate::crd::convert(info, object);
    crate::events::to_served(info, object);
}

/// [`to_served`] on serialized JSON; copies nothing when there is nothing to change.
pub fn to_served_bytes(info: &ResourceInfo, json: &Bytes) -> Bytes {
    if info.storage_group.is_none() {
        return crate::crd::convert_bytes(info, json);
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(json) else {
        return json.clone();
    };
    to_served(info, &mut value);
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .unwrap_or_else(|_| json.clone())
}

/// An object as `info` serves it, in the form it is stored in (`None`: stored as it is).
pub fn to_stored(info: &ResourceInfo, object: &Value) -> Option<Value> {
    crate::events::to_stored(info, object)
}
