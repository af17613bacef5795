//! CustomResourceDefinitions served live, as kube-apiserver's apiextensions server does.
//!
//! A CRD is stored like any built-in object. Each stored CRD puts one [`ResourceInfo`] per
//! served version into the [`Catalog`] (so discovery, OpenAPI, tables and the registry serve
//! its kind) and gets the status kube writes (`NamesAccepted`, `Established`,
//! `acceptedNames`, `storedVersions`). Custom resources of every version share the storage
//! prefix `/registry/<group>/<plural>/` and are served with the requested `apiVersion`
//! ([`convert`], [`convert_bytes`]); admission prunes, defaults and validates them against the
//! version's structural schema ([`lifted`]).
//!
//! When a new kind becomes usable: the registry registers a CRD in the catalog synchronously
//! when its create or update is stored ([`after_write`]), so `kubectl apply -f crd.yaml &&
//! kubectl apply -f cr.yaml` finds the kind in discovery at once; the background task
//! ([`controller::run`]) then writes the status, keeps the catalog in step with CRDs written
//! by other API server replicas sharing the store, and runs the cleanup finalizer on deletion.

mod controller;
pub mod definition;
pub mod lifted;
pub mod schema;

use bytes::Bytes;
use serde_json::Value;

use flotilla_api::validation::FieldError;

use crate::catalog::{Catalog, ResourceInfo};
use crate::registry::Registry;

pub use controller::run;
pub use definition::CLEANUP_FINALIZER;

/// The group of CustomResourceDefinitions.
pub const GROUP: &str = "apiextensions.k8s.io";

/// Whether `info` is the CustomResourceDefinition resource itself.
pub fn is_definition(info: &ResourceInfo) -> bool {
    info.crd.is_none() && info.group == GROUP && info.kind == "CustomResourceDefinition"
}

/// Why a CRD's names cannot be accepted: (reason, message) as kube reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamesConflict {
    pub reason: &'static str,
    pub message: String,
}

/// Serves `crd`'s versions from `catalog`, unless its names clash with another CRD of the
/// same group. A CRD for a resource the server serves natively (its group and plural are a
/// built-in's, such as Karmada's own CRDs applied from a Karmada chart) serves nothing: the
/// built-in resource keeps every version, and its objects are not the CRD's.
pub fn register(catalog: &Catalog, crd: &Value) -> Result<(), NamesConflict> {
    let Some(infos) = definition::resource_infos(crd) else {
        return Ok(());
    };
    let Some(first) = infos.first() else {
        catalog.replace_crd(crate::object::name(crd).unwrap_or(""), Vec::new());
        return Ok(());
    };
    if overlaps_built_in(catalog, first) {
        catalog.replace_crd(crate::object::name(crd).unwrap_or(""), Vec::new());
        return Ok(());
    }
    if let Some(conflict) = names_conflict(catalog, first) {
        return Err(conflict);
    }
    let name = first.crd.clone().unwrap_or_default();
    catalog.replace_crd(&name, infos);
    Ok(())
}

/// Whether the custom resources `info` describes would be stored where a built-in resource
/// keeps its objects (kube's `OverlappingBuiltInResources`, which for Flotilla are every
/// natively served kind: Karmada's included).
pub fn overlaps_built_in(catalog: &Catalog, info: &ResourceInfo) -> bool {
    let prefix = info.storage_prefix();
    catalog
        .all()
        .iter()
        .any(|other| other.crd.is_none() && other.storage_prefix() == prefix)
}

/// Checked in the order of kube's naming controller: plural, singular, short names, kind,
/// list kind.
fn names_conflict(catalog: &Catalog, wanted: &ResourceInfo) -> Option<NamesConflict> {
    let in_use = |reason: &'static str, name: &str| NamesConflict {
        reason,
        message: format!("{name:?} is already in use"),
    };
    for other in catalog.all() {
        if other.group != wanted.group || other.crd.is_none() || other.crd == wanted.crd {
            continue;
        }
        if other.plural == wanted.plural {
            return Some(in_use("PluralConflict", &wanted.plural));
        }
        if other.singular == wanted.singular {
            return Some(in_use("SingularConflict", &wanted.singular));
        }
        if let Some(short) = wanted
            .short_names
            .iter()
            .find(|s| other.short_names.contains(s))
        {
            return Some(in_use("ShortNamesConflict", short));
        }
        if other.kind == wanted.kind {
            return Some(in_use("KindConflict", &wanted.kind));
        }
        if other.list_kind == wanted.list_kind {
            return Some(in_use("ListKindConflict", &wanted.list_kind));
        }
    }
    None
}

/// Registry hook after a create or update is stored: a CRD is served at once.
pub fn after_write(catalog: &Catalog, info: &ResourceInfo, object: &Value) {
    if is_definition(info)
        && let Err(conflict) = register(catalog, object)
    {
        tracing::info!(
            crd = crate::object::name(object).unwrap_or(""),
            reason = conflict.reason,
            "CRD names not accepted"
        );
    }
}

/// Registry hook on the first delete of a CRD: its custom resources must go first.
pub fn finalizers_on_delete(info: &ResourceInfo, object: &Value, finalizers: &mut Vec<String>) {
    if is_definition(info)
        && object["metadata"].get("deletionTimestamp").is_none()
        && !finalizers.iter().any(|f| f == CLEANUP_FINALIZER)
    {
        finalizers.push(CLEANUP_FINALIZER.to_owned());
    }
}

/// Serves every stored CRD from the catalog (start-up, before the first request).
pub fn load(registry: &Registry) {
    let Some(info) = registry
        .catalog()
        .get(GROUP, "v1", "customresourcedefinitions")
    else {
        return;
    };
    let (objects, _) = registry
        .cache()
        .list(info.storage_prefix().as_bytes(), None);
    for object in objects {
        let _ = register(registry.catalog(), &object.value());
    }
}

/// A custom resource as served at `info`'s version: `apiVersion` set, defaults applied.
pub fn convert(info: &ResourceInfo, object: &mut Value) {
    if info.crd.is_none() || !object.is_object() {
        return;
    }
    object["apiVersion"] = info.api_version().into();
    if let Some(schema) = info.schema.as_deref()
        && schema.has_defaults
    {
        lifted::defaulting::default(&schema.root, object);
    }
}

/// [`convert`] on serialized JSON; copies nothing when there is nothing to change.
pub fn convert_bytes(info: &ResourceInfo, json: &Bytes) -> Bytes {
    if info.crd.is_none() {
        return json.clone();
    }
    let needs_defaults = info.schema.as_deref().is_some_and(|s| s.has_defaults);
    if !needs_defaults {
        let marker = format!("\"apiVersion\":\"{}\"", info.api_version());
        if json.windows(marker.len()).any(|w| w == marker.as_bytes()) {
            return json.clone();
        }
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(json) else {
        return json.clone();
    };
    convert(info, &mut value);
    serde_json::to_vec(&value)
        .map(Bytes::from)
        .unwrap_or_else(|_| json.clone())
}

/// Admission of a custom resource before validation: defaults, then pruning of unknown fields
/// (and of the `metadata` fields ObjectMeta does not declare).
pub fn default_and_prune(info: &ResourceInfo, object: &mut Value) {
    if let Some(schema) = info.schema.as_deref() {
        lifted::defaulting::default(&schema.root, object);
        lifted::pruning::prune(&schema.root, object);
    }
    if let Some(metadata) = object.get_mut("metadata") {
        crate::fieldvalidation::strip_unknown_metadata(metadata);
    }
}

/// The fields of a custom resource that its version's schema does not specify (what admission's
/// pruning drops), as kube-apiserver reports them for `fieldValidation`: sorted, in kube's path
/// form (`spec.items[0].foo`). `apiVersion`, `kind` and `metadata` are not among them.
pub fn unknown_fields(info: &ResourceInfo, object: &Value) -> Vec<String> {
    let Some(schema) = info.schema.as_deref() else {
        return Vec::new();
    };
    let mut copy = object.clone();
    let mut paths = lifted::pruning::prune(&schema.root, &mut copy);
    paths.sort();
    paths
}

/// How a custom resource breaks its version's schema.
pub fn schema_errors(info: &ResourceInfo, object: &Value) -> Vec<FieldError> {
    match info.schema.as_deref() {
        Some(schema) => lifted::validation::validate(schema, object),
        None => Vec::new(),
    }
}
