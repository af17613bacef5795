//! Validation of `metadata` on create and update, as kube-apiserver runs it for every kind.
//!
//! Provenance: k8s.io/apimachinery v0.33 `pkg/api/validation/objectmeta.go`
//! (`ValidateObjectMetaAccessor`, `ValidateObjectMetaAccessorUpdate`, `ValidateAnnotations`,
//! `ValidateOwnerReferences`, `ValidateFinalizers`) and `pkg/apis/meta/v1/validation`
//! (`ValidateLabels`). Map entries are checked in key order (upstream walks a Go map), so the
//! error order is deterministic. `managedFields` is not validated here.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

use super::field_error::{BadValue, FieldError, FieldPath, go_quote};
use super::names::{NameRule, is_qualified_name, is_valid_label_value};

/// Largest total size of a map of annotations, keys plus values, in bytes (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES: usize = 256 * 1024;

const FINALIZER_ORPHAN: &str = "orphan";
const FINALIZER_FOREGROUND: &str = "foregroundDeletion";
const FIELD_IMMUTABLE: &str = "field is immutable";

/// Label keys must be qualified names and values valid label values. Errors carry `path` itself
/// (e.g. `metadata.labels`), as upstream does.
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, value) in labels {
        errs.extend(
            is_qualified_name(key)
                .into_iter()
                .map(|m| FieldError::invalid(path, key, m)),
        );
        errs.extend(
            is_valid_label_value(value)
                .into_iter()
                .map(|m| FieldError::invalid(path, value, m)),
        );
    }
    errs
}

/// Annotation keys must be qualified names (checked lower-cased) and all keys and values together
/// at most [`TOTAL_ANNOTATION_SIZE_LIMIT_BYTES`].
pub fn validate_annotations(
    annotations: &BTreeMap<String, String>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0usize;
    for (key, value) in annotations {
        errs.extend(
            is_qualified_name(&key.to_lowercase())
                .into_iter()
                .map(|m| FieldError::invalid(path, key, m)),
        );
        total = total.saturating_add(key.len()).saturating_add(value.len());
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES {
        errs.push(FieldError::too_long(
            path,
            Some(TOTAL_ANNOTATION_SIZE_LIMIT_BYTES),
        ));
    }
    errs
}

/// Finalizers must be qualified names, and `orphan` excludes `foregroundDeletion`.
pub fn validate_finalizers(finalizers: &[String], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for finalizer in finalizers {
        errs.extend(
            is_qualified_name(finalizer)
                .into_iter()
                .map(|m| FieldError::invalid(path, finalizer, m)),
        );
    }
    let has = |name: &str| finalizers.iter().any(|f| f == name);
    if has(FINALIZER_ORPHAN) && has(FINALIZER_FOREGROUND) {
        errs.push(FieldError::invalid(
            path,
            finalizers.to_vec(),
            format!("finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set"),
        ));
    }
    errs
}

/// Each owner reference needs a version, kind, name and uid; core Events cannot own anything; at
/// most one reference may be the controller.
pub fn validate_owner_references(refs: &[OwnerReference], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut first_controller: Option<String> = None;
    for owner in refs {
        let (group, version) = split_api_version(&owner.api_version);
        if version.is_empty() {
            errs.push(FieldError::invalid(
                path.child("apiVersion"),
                &owner.api_version,
                "version must not be empty",
            ));
        }
        if owner.kind.is_empty() {
            errs.push(FieldError::invalid(
                path.child("kind"),
                &owner.kind,
                "kind must not be empty",
            ));
        }
        if owner.name.is_empty() {
            errs.push(FieldError::invalid(
                path.child("name"),
                &owner.name,
                "name must not be empty",
            ));
        }
        if owner.uid.is_empty() {
            errs.push(FieldError::invalid(
                path.child("uid"),
                &owner.uid,
                "uid must not be empty",
            ));
        }
        if group.is_empty() && version == "v1" && owner.kind == "Event" {
            errs.push(FieldError::invalid(
                path,
                BadValue::Verbatim(go_owner_reference(owner)),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if owner.controller == Some(true) {
            let current = format!("{}/{}", owner.kind, owner.name);
            match &first_controller {
                Some(first) => errs.push(FieldError::invalid(
                    path,
                    BadValue::Verbatim(format!(
                        "[]v1.OwnerReference{{{}}}",
                        refs.iter().map(go_owner_reference).collect::<Vec<_>>().join(", ")
                    )),
                    format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                    ),
                )),
                None => first_controller = Some(current),
            }
        }
    }
    errs
}

/// Validates `metadata` of an object being created. `requires_namespace` is true for namespaced
/// kinds; `rule` is the kind's name format. Errors use paths under `path` (normally `metadata`).
/// The name must already be generated from `generateName` (kube-apiserver does that first).
pub fn validate_object_meta(
    meta: &ObjectMeta,
    requires_namespace: bool,
    rule: NameRule,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(generate_name) = meta.generate_name.as_deref().filter(|g| !g.is_empty()) {
        let field = path.child("generateName");
        errs.extend(
            rule.check(generate_name, true)
                .into_iter()
                .map(|m| FieldError::invalid(&field, generate_name, m)),
        );
    }
    match meta.name.as_deref().filter(|n| !n.is_empty()) {
        None => errs.push(FieldError::required(
            path.child("name"),
            "name or generateName is required",
        )),
        Some(name) => {
            let field = path.child("name");
            errs.extend(
                rule.check(name, false)
                    .into_iter()
                    .map(|m| FieldError::invalid(&field, name, m)),
            );
        }
    }
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    let field = path.child("namespace");
    if requires_namespace {
        if namespace.is_empty() {
            errs.push(FieldError::required(&field, ""));
        } else {
            errs.extend(
                NameRule::Dns1123Label
                    .check(namespace, false)
                    .into_iter()
                    .map(|m| FieldError::invalid(&field, namespace, m)),
            );
        }
    } else if !namespace.is_empty() {
        errs.push(FieldError::forbidden(&field, "not allowed on this type"));
    }
    if let Some(generation) = meta.generation.filter(|g| *g < 0) {
        errs.push(FieldError::invalid(
            path.child("generation"),
            generation,
            "must be greater than or equal to 0",
        ));
    }
    errs.extend(common_checks(meta, path));
    if let Some(finalizers) = &meta.finalizers {
        errs.extend(validate_finalizers(finalizers, &path.child("finalizers")));
    }
    errs
}

/// Validates `metadata` of an update from `old` to `new`: identity and timestamps are immutable,
/// `resourceVersion` is required, `generation` never decreases, no finalizer may be added once
/// deletion started, and labels, annotations and owner references are checked as on create.
pub fn validate_object_meta_update(
    new: &ObjectMeta,
    old: &ObjectMeta,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.deletion_timestamp.is_some() {
        let known: BTreeSet<&String> = old.finalizers.iter().flatten().collect();
        let added: BTreeSet<&String> = new
            .finalizers
            .iter()
            .flatten()
            .filter(|f| !known.contains(f))
            .collect();
        if !added.is_empty() {
            let list = BadValue::StrList(added.into_iter().cloned().collect());
            errs.push(FieldError::forbidden(
                path.child("finalizers"),
                format!("no new finalizers can be added if the object is being deleted, found new finalizers {list}"),
            ));
        }
    }
    if new
        .resource_version
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        errs.push(FieldError::invalid(
            path.child("resourceVersion"),
            "",
            "must be specified for an update",
        ));
    }
    let (new_generation, old_generation) =
        (new.generation.unwrap_or(0), old.generation.unwrap_or(0));
    if new_generation < old_generation {
        errs.push(FieldError::invalid(
            path.child("generation"),
            new_generation,
            "must not be decremented",
        ));
    }
    let immutable_str =
        |errs: &mut Vec<FieldError>, name: &str, new: &Option<String>, old: &Option<String>| {
            let (n, o) = (
                new.as_deref().unwrap_or_default(),
                old.as_deref().unwrap_or_default(),
            );
            if n != o {
                errs.push(FieldError::invalid(path.child(name), n, FIELD_IMMUTABLE));
            }
        };
    immutable_str(&mut errs, "name", &new.name, &old.name);
    immutable_str(&mut errs, "namespace", &new.namespace, &old.namespace);
    immutable_str(&mut errs, "uid", &new.uid, &old.uid);
    if new.creation_timestamp != old.creation_timestamp {
        let value = BadValue::Verbatim(go_time(new.creation_timestamp.as_ref()));
        errs.push(FieldError::invalid(
            path.child("creationTimestamp"),
            value,
            FIELD_IMMUTABLE,
        ));
    }
    if new.deletion_timestamp != old.deletion_timestamp {
        let value = match &new.deletion_timestamp {
            Some(time) => BadValue::Verbatim(go_time(Some(time))),
            None => BadValue::Null,
        };
        errs.push(FieldError::invalid(
            path.child("deletionTimestamp"),
            value,
            FIELD_IMMUTABLE,
        ));
    }
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds {
        let value = new
            .deletion_grace_period_seconds
            .map_or(BadValue::Null, BadValue::Int);
        errs.push(FieldError::invalid(
            path.child("deletionGracePeriodSeconds"),
            value,
            FIELD_IMMUTABLE,
        ));
    }
    errs.extend(common_checks(new, path));
    errs
}

/// Labels, annotations and owner references: checked identically on create and update.
fn common_checks(meta: &ObjectMeta, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(labels) = &meta.labels {
        errs.extend(validate_labels(labels, &path.child("labels")));
    }
    if let Some(annotations) = &meta.annotations {
        errs.extend(validate_annotations(
            annotations,
            &path.child("annotations"),
        ));
    }
    if let Some(refs) = &meta.owner_references {
        errs.extend(validate_owner_references(
            refs,
            &path.child("ownerReferences"),
        ));
    }
    errs
}

/// Go's `schema.ParseGroupVersion`, lenient: an unparsable value gives an empty version.
fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.matches('/').count() {
        0 => ("", api_version),
        1 => api_version.split_once('/').unwrap_or(("", "")),
        _ => ("", ""),
    }
}

/// A timestamp as Go's `time.Time.String()` prints it in UTC (`2024-05-01 10:00:00 +0000 UTC`).
fn go_time(time: Option<&Time>) -> String {
    let Some(time) = time else {
        return "0001-01-01 00:00:00 +0000 UTC".to_owned();
    };
    let rfc3339 = serde_json::to_value(time)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let trimmed = rfc3339.trim_end_matches('Z');
    format!("{} +0000 UTC", trimmed.replacen('T', " ", 1))
}

/// An owner reference as Go's `%#v` prints it (pointers shown as nil or set).
fn go_owner_reference(owner: &OwnerReference) -> String {
    let pointer = |value: Option<bool>| match value {
        None => "(*bool)(nil)".to_owned(),
        Some(v) => format!("&{v}"),
    };
    format!(
        "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:{}}}",
        go_quote(&owner.api_version),
        go_quote(&owner.kind),
        go_quote(&owner.name),
        go_quote(&owner.uid),
        pointer(owner.controller),
        pointer(owner.block_owner_deletion),
    )
}
