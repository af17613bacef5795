//! Label and field selectors as the registry applies them to objects.

use std::collections::BTreeMap;

use flotilla_api::selector::{field, label};
use serde_json::Value;

use crate::cache::CachedObject;
use crate::catalog::ResourceInfo;
use crate::error::ApiError;

/// The selectors of a list or watch request.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    labels: Option<label::LabelSelector>,
    fields: Option<field::FieldSelector>,
    /// The field selector only looks at `metadata.name`/`metadata.namespace`.
    fields_from_key: bool,
}

impl Filter {
    /// Parses `labelSelector` and `fieldSelector` for `info`.
    pub fn parse(
        info: &ResourceInfo,
        labels: Option<&str>,
        fields: Option<&str>,
    ) -> Result<Self, ApiError> {
        let labels =
            match labels.filter(|s| !s.trim().is_empty()) {
                Some(text) => Some(label::parse(text).map_err(|e| {
                    ApiError::bad_request(format!("unable to parse requirement: {e}"))
                })?),
                None => None,
            };
        let (fields, fields_from_key) = match fields.filter(|s| !s.trim().is_empty()) {
            Some(text) => {
                let selector = field::parse(text).map_err(|e| {
                    ApiError::bad_request(format!("invalid field selector {text:?}: {e}"))
                })?;
                // A view of another group's objects (events.k8s.io/v1) selects by the stored
                // resource's labels.
                let selector = crate::events::field_selector_to_stored(info, selector)?
                    .convert_for(info.stored_group(), &info.plural)
                    .map_err(|e| ApiError::bad_request(e.to_string()))?;
                let from_key = selector
                    .requirements
                    .iter()
                    .all(|r| matches!(r.field.as_str(), "metadata.name" | "metadata.namespace"));
                (Some(selector), from_key)
            }
            None => (None, true),
        };
        Ok(Filter {
            labels,
            fields,
            fields_from_key,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    /// Whether an object matches. Its JSON is read only when a field selector needs it.
    pub fn matches(&self, info: &ResourceInfo, object: &CachedObject) -> bool {
        if let Some(selector) = &self.labels
            && !selector.matches_with(|key| object.labels.get(key))
        {
            return false;
        }
        let Some(selector) = &self.fields else {
            return true;
        };
        let fields = if self.fields_from_key {
            key_fields(info, &object.key)
        } else {
            match serde_json::from_slice::<Value>(&object.raw()) {
                Ok(value) => field::fields_of(info.stored_group(), &info.plural, &value),
                Err(_) => return false,
            }
        };
        selector.matches(&fields)
    }
}

/// `metadata.name` and `metadata.namespace` read from a storage key.
fn key_fields(info: &ResourceInfo, key: &[u8]) -> BTreeMap<String, String> {
    let prefix = info.storage_prefix();
    let rest = String::from_utf8_lossy(&key[prefix.len().min(key.len())..]).into_owned();
    let (namespace, name) = match rest.split_once('/') {
        Some((ns, name)) if info.namespaced => (ns.to_owned(), name.to_owned()),
        _ => (String::new(), rest),
    };
    BTreeMap::from([
        ("metadata.name".to_owned(), name),
        ("metadata.namespace".to_owned(), namespace),
    ])
}
