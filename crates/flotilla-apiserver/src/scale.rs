//! The `/scale` subresource: an `autoscaling/v1 Scale` view of a workload's replicas, read and
//! written at the resource's [`ScalePaths`] (a CRD's `specReplicasPath`, `statusReplicasPath`
//! and `labelSelectorPath`).

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use flotilla_api::validation::FieldError;

use crate::catalog::{ResourceInfo, ScalePaths};
use crate::error::ApiError;
use crate::registry::write::Part;
use crate::registry::{PatchKind, Registry, WriteOptions};
use crate::request::{Query, ResourcePath};
use crate::server::json_response;

fn replicas_at(object: &Value, path: &str) -> i64 {
    crate::table::jsonpath(object, path)
        .first()
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// Sets the field at a simple dotted path (`.spec.replicas`), creating objects on the way.
fn set_at(object: &mut Value, path: &str, value: Value) {
    let mut current = object;
    let mut fields = path.trim_start_matches('.').split('.').peekable();
    while let Some(field) = fields.next() {
        if !current.is_object() {
            *current = json!({});
        }
        if fields.peek().is_none() {
            current[field] = value;
            return;
        }
        current = &mut current[field];
    }
}

fn scale_of(paths: &ScalePaths, builtin: bool, object: &Value) -> Value {
    let meta = &object["metadata"];
    // Built-in workloads keep their selector as a LabelSelector in `.spec.selector`; a CRD's
    // labelSelectorPath points at a serialized selector string.
    let selector_path = if builtin {
        Some(".spec.selector")
    } else {
        paths.label_selector.as_deref()
    };
    let selector = selector_path
        .and_then(|path| crate::table::jsonpath(object, path).into_iter().next())
        .map(|value| match value {
            Value::String(s) => s,
            other => crate::table::selector_text(&other),
        })
        .unwrap_or_default();
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": replicas_at(object, &paths.spec_replicas)},
        "status": {
            "replicas": replicas_at(object, &paths.status_replicas),
            "selector": selector,
        },
    })
}

pub async fn handle(
    registry: &Registry,
    info: &Arc<ResourceInfo>,
    namespace: Option<&str>,
    target: &ResourcePath,
    method: &Method,
    query: &Query,
    request: Request,
) -> Result<Response, ApiError> {
    let name = target.name.as_deref().ok_or_else(ApiError::no_route)?;
    let user_agent = request
        .headers()
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut options = WriteOptions::for_request(query, &user_agent)?;
    // The writer's managed-fields entry names the subresource (kube's scale handler records
    // `subresource: scale` owning the replicas field of the parent).
    options.subresource = Some("scale".to_owned());
    let paths = info.scale.clone().ok_or_else(ApiError::no_route)?;
    let builtin = info.crd.is_none();
    let current = registry.get(info, namespace, name).await?;
    let scale = scale_of(&paths, builtin, &current);
    let desired = match method.as_str() {
        "GET" => return Ok(json_response(StatusCode::OK, &scale)),
        "PUT" => {
            let headers = request.headers().clone();
            let bytes = crate::server::body::read(request.into_body()).await?;
            crate::server::body::decode_object(
                &crate::server::body::content_type(&headers),
                &bytes,
            )?
        }
        "PATCH" => {
            let content_type = crate::server::body::content_type(request.headers());
            let kind = PatchKind::from_content_type(&content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(&content_type))?;
            let bytes = crate::server::body::read(request.into_body()).await?;
            crate::patch_apply::patch_plain(&scale, kind, &bytes)?
        }
        _ => {
            return Err(ApiError::method_not_allowed(
                "scale supports get, update and patch",
            ));
        }
    };
    let replicas = desired["spec"]["replicas"].as_i64().ok_or_else(|| {
        ApiError::invalid(info, name, &[FieldError::required("spec.replicas", "")])
    })?;
    if replicas < 0 {
        return Err(ApiError::invalid(
            info,
            name,
            &[FieldError::invalid(
                "spec.replicas",
                replicas,
                "must be greater than or equal to 0",
            )],
        ));
    }
    let mut updated = current.clone();
    set_at(&mut updated, &paths.spec_replicas, replicas.into());
    if let Some(rv) = desired["metadata"]["resourceVersion"].as_str()
        && !rv.is_empty()
    {
        updated["metadata"]["resourceVersion"] = rv.into();
    }
    let written = registry
        .update(info, namespace, name, updated, Part::Main, &options)
        .await?;
    Ok(json_response(
        StatusCode::OK,
        &scale_of(&paths, builtin, &written),
    ))
}
