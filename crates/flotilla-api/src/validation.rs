//! Validation of object names and metadata, with the error strings kube-apiserver returns.
//!
//! Follows k8s.io/apimachinery v0.33 (Kubernetes 1.33): `pkg/util/validation` (name formats and
//! their messages), `pkg/util/validation/field` (the [`FieldError`] type and its rendering),
//! `pkg/api/validation` (object metadata, generateName) and `pkg/apis/meta/v1/validation` (label
//! maps). The API server turns a `Vec<FieldError>` into a 422 `Status` with reason `Invalid`, one
//! cause per error ([`FieldError::to_status_cause`], [`invalid_message`]).

mod field_error;
pub mod karmada;
mod names;
mod object_meta;

pub use field_error::{
    BadValue, FieldError, FieldErrorKind, FieldPath, aggregate_message, invalid_message,
};
pub use names::{
    DNS1035_LABEL_MAX_LENGTH, DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH,
    GENERATED_NAME_SUFFIX_ALPHABET, GENERATED_NAME_SUFFIX_LENGTH, LABEL_VALUE_MAX_LENGTH,
    MAX_GENERATED_NAME_LENGTH, NameRule, QUALIFIED_NAME_MAX_LENGTH, generate_name,
    is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_label_value, is_valid_path_segment_name, is_valid_path_segment_prefix,
};
pub use object_meta::{
    TOTAL_ANNOTATION_SIZE_LIMIT_BYTES, validate_annotations, validate_finalizers, validate_labels,
    validate_object_meta, validate_object_meta_update, validate_owner_references,
};

#[cfg(test)]
mod tests;
