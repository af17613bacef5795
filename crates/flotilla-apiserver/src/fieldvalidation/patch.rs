//! Field validation of patches, as kube-apiserver's patch handler does it (patch.go): duplicate
//! keys of the patch document first, then the unknown fields of the patched object (JSON,
//! merge, strategic) or of the applied configuration (apply). JSON patch operations are checked
//! against the operation schema (`json patch unknown field "[0].foo"`).

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::{Finding, decode_json, decode_yaml, resolve, schema};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::registry::{PatchKind, WriteOptions};

/// The fields of a JSON patch operation (evanphx/json-patch's `Operation`).
static JSON_PATCH_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    json!({"type": "array", "items": {"type": "object", "properties": {
        "op": {"type": "string"},
        "path": {"type": "string"},
        "from": {"type": "string"},
        "value": {"x-kubernetes-preserve-unknown-fields": true},
    }}})
});

/// What is known about a patch before it is applied; finished once per patched object.
#[derive(Debug)]
pub struct PatchCheck {
    kind: PatchKind,
    schema: Option<&'static Value>,
    /// Findings in the patch document (and, for apply, in the configuration).
    early: Vec<Finding>,
    /// The parsed patch, for rendering a strategic merge patch in the error.
    patch: Option<Value>,
}

impl PatchCheck {
    /// Scans the patch document. Parse errors are left to the patch engines, which word them.
    pub fn new(info: &ResourceInfo, kind: PatchKind, bytes: &[u8]) -> Self {
        let schema = schema::for_resource(info);
        let (patch, mut early) = match kind {
            PatchKind::Json => match decode_json(bytes, Some(&JSON_PATCH_SCHEMA)) {
                Ok((_, mut findings)) => {
                    for f in &mut findings {
                        f.in_json_patch = true;
                    }
                    (None, findings)
                }
                Err(_) => (None, Vec::new()),
            },
            PatchKind::Merge | PatchKind::Strategic => match decode_json(bytes, None) {
                Ok((patch, findings)) => (Some(patch), findings),
                Err(_) => (None, Vec::new()),
            },
            PatchKind::Apply => {
                let parsed = decode_json(bytes, None).ok().or_else(|| {
                    std::str::from_utf8(bytes)
                        .ok()
                        .and_then(|text| decode_yaml(text, None).ok())
                });
                parsed.map_or((None, Vec::new()), |(v, f)| (Some(v), f))
            }
        };
        if kind == PatchKind::Apply
            && let (Some(schema), Some(config)) = (schema, &patch)
        {
            early.extend(schema::strip_unknown(&mut config.clone(), schema));
        }
        if kind == PatchKind::Apply
            && let Some(config) = &patch
        {
            early.extend(super::custom_resource_findings(info, config));
        }
        PatchCheck {
            kind,
            schema,
            early,
            patch,
        }
    }

    /// The merge or strategic merge patch document as decoded here (`None` for other kinds, or
    /// when it is not JSON: the patch engine parses it and words the error): the patch engine
    /// applies this one instead of parsing the body again.
    pub fn parsed(&self) -> Option<&Value> {
        match self.kind {
            PatchKind::Merge | PatchKind::Strategic => self.patch.as_ref(),
            PatchKind::Json | PatchKind::Apply => None,
        }
    }

    /// Drops unknown fields from the patched (or, for apply on create, the applied) object and
    /// applies the directive: the warnings to send, or the Strict error.
    pub fn finish(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        object: &mut Value,
        options: &WriteOptions,
    ) -> Result<Vec<String>, ApiError> {
        let mut findings = self.early.clone();
        if let Some(schema) = self.schema {
            let stripped = match (self.kind, &self.patch) {
                (PatchKind::Merge | PatchKind::Strategic, Some(patch)) => {
                    schema::strip_unknown_patched(object, schema, patch)
                }
                _ => schema::strip_unknown(object, schema),
            };
            if self.kind != PatchKind::Apply {
                findings.extend(stripped);
            }
            // Typed decoding of the patched object stops at a value its field cannot hold,
            // whatever `fieldValidation` says (an apply's typed merge checks its own).
            let mismatch = match (self.kind, &self.patch) {
                (PatchKind::Merge | PatchKind::Strategic, Some(patch)) => {
                    schema::type_mismatch_patched(object, schema, patch)
                }
                (PatchKind::Json, _) => schema::type_mismatch(object, schema),
                _ => None,
            };
            if let Some(mismatch) = mismatch {
                let rendered = match self.kind {
                    PatchKind::Strategic => self.patch.as_ref().unwrap_or(object),
                    _ => object,
                };
                return Err(super::patch_invalid(rendered, mismatch.message(&info.kind)));
            }
        }
        if self.kind != PatchKind::Apply
            && options.field_validation != crate::request::FieldValidation::Ignore
        {
            findings.extend(super::custom_resource_findings(info, object));
        }
        resolve(options.field_validation, &findings, |findings| {
            match self.kind {
                PatchKind::Apply => super::apply_error(info, namespace, object, findings),
                PatchKind::Strategic => {
                    super::patch_error(self.patch.as_ref().unwrap_or(object), findings)
                }
                PatchKind::Json | PatchKind::Merge => super::patch_error(object, findings),
            }
        })
    }
}
