//! Request bodies: size limit, content types (JSON, YAML, Kubernetes protobuf), and duplicate
//! or unknown field handling.

use axum::body::Body;
use bytes::Bytes;
use http::HeaderMap;
use serde_json::Value;

use super::MAX_BODY_BYTES;
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::fieldvalidation;
use crate::request::FieldValidation;

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`].
pub async fn read(body: Body) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            ApiError::too_large(format!(
                "the request body is larger than the limit of {MAX_BODY_BYTES} bytes"
            ))
        })
}

/// The media type of a request (no parameters), `application/json` when absent.
pub fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "application/json".to_owned())
}

/// Decodes an object body by content type.
pub fn decode_object(content_type: &str, bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    match content_type {
        "application/json" | "*/*" => decode_json(bytes),
        "application/yaml" | "application/x-yaml" | "text/yaml" => decode_yaml(bytes),
        "application/vnd.kubernetes.protobuf" => crate::protobuf::decode(bytes)
            .map_err(|e| ApiError::bad_request(format!("unable to decode protobuf body: {e}"))),
        other => Err(ApiError::unsupported_media_type(other)),
    }
}

// --- fieldValidation (see crate::fieldvalidation) ---

/// Decodes a create or update body and applies `fieldValidation` to its duplicate and unknown
/// fields: the object (unknown fields dropped) and the warnings to send, or the Strict error.
pub fn decode_object_validated(
    info: &ResourceInfo,
    content_type: &str,
    bytes: &[u8],
    mode: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let schema = fieldvalidation::for_resource(info);
    let (object, findings, mismatch) = match content_type {
        "application/json" | "*/*" => {
            fieldvalidation::decode_json_checked(bytes, schema).map_err(|e| {
                ApiError::bad_request(format!("error decoding the request body as JSON: {e}"))
            })?
        }
        "application/yaml" | "application/x-yaml" | "text/yaml" => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| ApiError::bad_request("the YAML request body is not UTF-8"))?;
            let (object, findings) = fieldvalidation::decode_yaml(text, schema).map_err(|e| {
                ApiError::bad_request(format!("error decoding the request body as YAML: {e}"))
            })?;
            let mismatch =
                schema.and_then(|schema| fieldvalidation::type_mismatch(&object, schema));
            (object, findings, mismatch)
        }
        // Protobuf carries neither duplicate nor undeclared fields, nor values of another type.
        _ => return Ok((decode_object(content_type, bytes)?, Vec::new())),
    };
    // Typed decoding stops at a value its field cannot hold, whatever `fieldValidation` says.
    if let Some(mismatch) = mismatch {
        return Err(fieldvalidation::type_error(info, &mismatch));
    }
    let mut findings = findings;
    if mode != FieldValidation::Ignore {
        findings.extend(fieldvalidation::custom_resource_findings(info, &object));
    }
    let warnings = fieldvalidation::resolve(mode, &findings, |findings| {
        fieldvalidation::decode_error(info, findings)
    })?;
    Ok((object, warnings))
}

// --- end fieldValidation ---

/// Parses JSON (the last of duplicate keys wins; [`decode_object_validated`] reports them).
pub fn decode_json(bytes: &[u8]) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad_request(format!("error decoding the request body as JSON: {e}"))
    })?;
    Ok(value)
}

/// Parses YAML (one document) into JSON.
pub fn decode_yaml(bytes: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ApiError::bad_request("the YAML request body is not UTF-8"))?;
    yaml_serde::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body as YAML: {e}")))
}
