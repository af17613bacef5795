//! kube-apiserver's `fieldValidation` (`Ignore` | `Warn` | `Strict`) for create, update and
//! patch bodies: duplicate object keys and fields the kind's schema does not declare.
//!
//! `Strict` turns findings into the errors kube-apiserver answers (`strict decoding error:
//! unknown field "spec.foo", duplicate field "spec.replicas"`), `Warn` (the default) into
//! `Warning: 299 - "…"` response headers, `Ignore` into nothing. Unknown fields never reach the
//! store, whatever the directive: kube-apiserver drops them when it decodes into its types.
//! Built-in and Karmada kinds are checked against their compiled-in schemas while the body is
//! decoded; custom resources after decoding, against their CRD version's structural schema
//! (apiextensions-apiserver's decoder: unknown `metadata` fields, then the fields pruning drops,
//! sorted; [`custom_resource_findings`]).
//!
//! Follows k8s.io/apiserver `pkg/endpoints/handlers` (create.go, update.go, patch.go:
//! `transformDecodeError`, `addStrictDecodingWarnings`), sigs.k8s.io/json's strict decoding
//! (field paths) and `pkg/endpoints/filters/warning.go` (header limits).

mod decode;
mod patch;
mod schema;
mod warning;

use std::fmt;

use flotilla_api::validation::{FieldError, invalid_message};
use serde_json::Value;

use crate::catalog::ResourceInfo;
use crate::error::{ApiError, Cause, Details};
use crate::request::FieldValidation;

pub use decode::{decode_json, decode_json_checked, decode_yaml};
pub use patch::PatchCheck;
pub use schema::{TypeMismatch, for_resource, strip_unknown, type_mismatch};
pub use warning::{add_warning_headers, warning_header};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingKind {
    /// A key given twice in one JSON or YAML object (the last one wins).
    Duplicate,
    /// A field the kind's schema does not declare.
    Unknown,
}

/// One strict-decoding finding, rendered as kube-apiserver words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// kube's path format: `spec.template.spec.containers[0].name`.
    pub path: String,
    /// Found in the operations of a JSON patch (`json patch unknown field "[0].foo"`).
    pub in_json_patch: bool,
}

impl Finding {
    pub fn duplicate(path: impl Into<String>) -> Self {
        Finding {
            kind: FindingKind::Duplicate,
            path: path.into(),
            in_json_patch: false,
        }
    }

    pub fn unknown(path: impl Into<String>) -> Self {
        Finding {
            kind: FindingKind::Unknown,
            path: path.into(),
            in_json_patch: false,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.in_json_patch {
            f.write_str("json patch ")?;
        }
        let kind = match self.kind {
            FindingKind::Duplicate => "duplicate",
            FindingKind::Unknown => "unknown",
        };
        write!(f, "{kind} field {}", go_quote(&self.path))
    }
}

/// `strict decoding error: <finding>, <finding>` (apimachinery's `StrictDecodingError`).
pub fn strict_message(findings: &[Finding]) -> String {
    let list: Vec<String> = findings.iter().map(Finding::to_string).collect();
    format!("strict decoding error: {}", list.join(", "))
}

/// Applies the directive to findings: the warnings to send (Warn), nothing (Ignore), or the
/// error `strict` builds (Strict, when there is anything to report).
pub fn resolve(
    mode: FieldValidation,
    findings: &[Finding],
    strict: impl FnOnce(&[Finding]) -> ApiError,
) -> Result<Vec<String>, ApiError> {
    match mode {
        _ if findings.is_empty() => Ok(Vec::new()),
        FieldValidation::Ignore => Ok(Vec::new()),
        FieldValidation::Warn => Ok(findings.iter().map(Finding::to_string).collect()),
        FieldValidation::Strict => Err(strict(findings)),
    }
}

/// The unknown fields of a custom resource (nothing for other kinds), in the order kube's
/// custom-resource decoder reports them: `metadata` fields ObjectMeta does not declare, then the
/// fields the version's structural schema does not specify (sorted).
pub fn custom_resource_findings(info: &ResourceInfo, object: &Value) -> Vec<Finding> {
    if info.crd.is_none() {
        return Vec::new();
    }
    let mut findings = match object.get("metadata") {
        Some(metadata) => strip_unknown_metadata(&mut metadata.clone()),
        None => Vec::new(),
    };
    findings.extend(
        crate::crd::unknown_fields(info, object)
            .into_iter()
            .map(Finding::unknown),
    );
    findings
}

/// Removes from `metadata` (an object's) the fields ObjectMeta does not declare and returns them
/// as `metadata.<path>`, as kube's custom-resource decoder drops and reports them (built-in
/// kinds get the same from their decoding).
pub fn strip_unknown_metadata(metadata: &mut Value) -> Vec<Finding> {
    // Every kind's `metadata` is ObjectMeta; a ConfigMap's schema carries it.
    let Some(meta_schema) = crate::openapi::schemas::cached("", "v1", "ConfigMap")
        .and_then(|s| s.pointer("/properties/metadata"))
    else {
        return Vec::new();
    };
    if !metadata.is_object() {
        return Vec::new();
    }
    let mut findings = schema::strip_unknown(metadata, meta_schema);
    for finding in &mut findings {
        finding.path = format!("metadata.{}", finding.path);
    }
    findings
}

/// The 400 a create or update body fails with (create.go's `transformDecodeError`):
/// `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: …`.
pub fn decode_error(info: &ResourceInfo, findings: &[Finding]) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version {version} cannot be handled as a {kind}: {}",
        strict_message(findings),
        kind = info.kind,
        version = go_quote(&info.version),
    ))
}

/// The 400 a create or update body whose value does not fit its field's type fails with
/// (create.go's `transformDecodeError` of Go's `UnmarshalTypeError`):
/// `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string
/// into Go struct field Deployment.spec.replicas of type int32`.
pub fn type_error(info: &ResourceInfo, mismatch: &TypeMismatch) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version {version} cannot be handled as a {kind}: {}",
        mismatch.message(&info.kind),
        kind = info.kind,
        version = go_quote(&info.version),
    ))
}

/// The 422 a JSON, merge or strategic merge patch fails with (patch.go):
/// ` "" is invalid: patch: Invalid value: "<patched object>": strict decoding error: …`.
pub fn patch_error(rendered: &Value, findings: &[Finding]) -> ApiError {
    patch_invalid(rendered, strict_message(findings))
}

/// The 422 of a patch whose result fails to decode with `message` (patch.go):
/// ` "" is invalid: patch: Invalid value: "<patched object>": <message>`.
pub fn patch_invalid(rendered: &Value, message: String) -> ApiError {
    let error = FieldError::invalid("patch", rendered.to_string().as_str(), message);
    let details = Details {
        causes: vec![Cause {
            reason: error.kind.reason().to_owned(),
            message: error.body(),
            field: error.field.clone(),
        }],
        ..Default::default()
    };
    ApiError::new(422, "Invalid", invalid_message("", "", "", &[error])).with_details(details)
}

/// The 400 an apply patch fails with: duplicates as a strict decoding error of the patch,
/// unknown fields as the structured-merge error kube-apiserver gives them
/// (`failed to create typed patch object (…): .spec.foo: field not declared in schema`).
pub fn apply_error(
    info: &ResourceInfo,
    namespace: Option<&str>,
    object: &Value,
    findings: &[Finding],
) -> ApiError {
    let duplicates: Vec<Finding> = findings
        .iter()
        .filter(|f| f.kind == FindingKind::Duplicate)
        .cloned()
        .collect();
    if !duplicates.is_empty() {
        return ApiError::bad_request(format!(
            "error strict decoding patch: {}",
            strict_message(&duplicates)
        ));
    }
    let unknown: Vec<String> = findings
        .iter()
        .map(|f| format!(".{}: field not declared in schema", f.path))
        .collect();
    let errors = if unknown.len() == 1 {
        unknown[0].clone()
    } else {
        format!("errors:\n  {}", unknown.join("\n  "))
    };
    let name = crate::object::name(object).unwrap_or("");
    // Go's `types.NamespacedName` rendering: `<namespace>/<name>`, `/<name>` when cluster-scoped.
    let namespace = namespace
        .or_else(|| crate::object::namespace(object))
        .unwrap_or("");
    let nn = format!("{namespace}/{name}");
    ApiError::bad_request(format!(
        "failed to create typed patch object ({nn}; {}, Kind={}): {errors}",
        info.api_version(),
        info.kind
    ))
}

/// Quotes like Go's `strconv.Quote`: kube renders paths and warning texts with it.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                let n = c as u32;
                if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
