//! Resource requests: the verb from method and query, and its handler.

use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::{ApiServer, body, error_response, json_bytes, json_response};
use crate::auth::authn::UserInfo;
use crate::auth::escalation::EscalationGuard;
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::object;
use crate::registry::write::Part;
use crate::registry::{DeleteOptions, ListOptions, PatchKind, WriteOptions};
use crate::request::{Query, ResourcePath};
use crate::{scale, table};

/// The Kubernetes verb of a request.
pub fn verb(method: &Method, target: &ResourcePath, query: &Query) -> &'static str {
    // kube-apiserver ≥ 1.31 authorizes the GET that opens a WebSocket for exec, attach or
    // port-forward as `create`, as it does the POST that opens SPDY.
    if target.group.is_empty()
        && target.resource == "pods"
        && matches!(
            target.subresource.as_deref(),
            Some("exec" | "attach" | "portforward")
        )
        && matches!(method.as_str(), "GET" | "POST")
    {
        return "create";
    }
    let watch = query.flag("watch").unwrap_or(false);
    method_verb(method.as_str(), target.name.is_some(), watch)
}

/// The Kubernetes verb of an HTTP method on one object (`named`) or a collection.
pub fn method_verb(method: &str, named: bool, watch: bool) -> &'static str {
    match (method, named) {
        ("GET", _) if watch => "watch",
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "unknown",
    }
}

fn is_core_pods(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "pods"
}

#[allow(clippy::too_many_arguments)]
pub async fn handle(
    server: &Arc<ApiServer>,
    user: &UserInfo,
    info: Arc<ResourceInfo>,
    target: ResourcePath,
    method: Method,
    query: Query,
    accept: String,
    request: Request,
) -> Response {
    match handle_inner(
        server, user, &info, &target, &method, &query, &accept, request,
    )
    .await
    {
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}

#[allow(clippy::too_many_arguments)]
async fn handle_inner(
    server: &Arc<ApiServer>,
    user: &UserInfo,
    info: &Arc<ResourceInfo>,
    target: &ResourcePath,
    method: &Method,
    query: &Query,
    accept: &str,
    request: Request,
) -> Result<Response, ApiError> {
    let registry = &server.registry;
    let namespace = target.namespace.as_deref();
    if info.namespaced && target.name.is_some() && namespace.is_none() {
        return Err(ApiError::no_route());
    }
    // A cluster-scoped resource has no route under a namespace (kube-apiserver answers 404).
    if !info.namespaced && namespace.is_some() {
        return Err(ApiError::no_route());
    }
    let ns = if info.namespaced { namespace } else { None };
    let part = match target.subresource.as_deref() {
        None => Part::Main,
        Some("status") if info.status => Part::Status,
        // A CSR's approval conditions (see `crate::certificates`).
        Some("approval") if crate::certificates::is_csr(info) => Part::Status,
        Some("scale") if info.scale.is_some() => {
            return scale::handle(registry, info, ns, target, method, query, request).await;
        }
        Some(sub @ ("log" | "exec")) if is_core_pods(info) => {
            let name = target.name.as_deref().unwrap_or("");
            return match (sub, method.as_str()) {
                ("log", "GET") => crate::kubelet::log::serve(server, info, ns, name, query).await,
                ("exec", "GET" | "POST") => {
                    crate::kubelet::exec::serve(server, info, ns, name, request).await
                }
                _ => Err(ApiError::method_not_allowed(format!(
                    "the server does not allow this method on the requested resource (pods/{sub} {name})"
                ))),
            };
        }
        Some(other) => {
            return Err(ApiError::new(
                404,
                "NotFound",
                format!(
                    "the server could not find the requested resource ({} {}/{other})",
                    info.qualified_plural(),
                    target.name.as_deref().unwrap_or("")
                ),
            ));
        }
    };
    let headers = request.headers().clone();
    let user_agent = headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let guard = EscalationGuard::for_request(
        info,
        user,
        &server.authorizer,
        request.uri().path(),
        ns,
        target.name.as_deref(),
    )
    .or_else(|| {
        crate::certificates::CsrGuard::for_request(
            info,
            user,
            &server.authorizer,
            target.subresource.as_deref(),
        )
    });
    if guard.is_some() && matches!(method.as_str(), "POST" | "PUT" | "PATCH") {
        crate::auth::escalation::catch_up(registry, &server.authorizer).await?;
    }
    let write_options = |query: &Query| {
        WriteOptions::for_request(query, &user_agent).map(|options| WriteOptions {
            guard: guard.clone(),
            untracked: server.untracked_writers.contains(&user.name),
            requester: Some(user.clone()),
            subresource: (target.subresource.as_deref() == Some("approval"))
                .then(|| "approval".to_owned()),
            ..options
        })
    };
    let table_wanted = table::wants_table(accept);
    match (method.as_str(), target.name.as_deref()) {
        ("GET", None) if query.flag("watch")? => {
            super::watch::serve(registry, info, ns, query, table_wanted).await
        }
        ("GET", None) => {
            let options = ListOptions::from_query(info, query)?;
            let page = registry.list(info, ns, &options).await?;
            if table_wanted {
                let items: Vec<Value> = page
                    .items
                    .iter()
                    .filter_map(|item| serde_json::from_slice(&item.json()).ok())
                    .collect();
                let doc = table::render(
                    info,
                    &items,
                    page.revision,
                    page.continue_token.as_deref(),
                    registry.clock.now(),
                    query.get("includeObject"),
                );
                return Ok(json_response(StatusCode::OK, &doc));
            }
            Ok(super::json_body(
                StatusCode::OK,
                axum::body::Body::new(super::list_body::ListBody::new(info, page)),
            ))
        }
        ("GET", Some(name)) if !table_wanted => Ok(super::json_bytes(
            StatusCode::OK,
            registry.get_json(info, ns, name).await?,
        )),
        ("GET", Some(name)) => {
            let object = registry.get(info, ns, name).await?;
            let doc = table::render(
                info,
                std::slice::from_ref(&object),
                0,
                None,
                registry.clock.now(),
                query.get("includeObject"),
            );
            Ok(json_response(StatusCode::OK, &doc))
        }
        ("POST", None) if part == Part::Main => {
            let bytes = body::read(request.into_body()).await?;
            let options = write_options(query)?;
            // fieldValidation: decode noting duplicate and unknown fields.
            let (object, warnings) = body::decode_object_validated(
                info,
                &body::content_type(&headers),
                &bytes,
                options.field_validation,
            )?;
            let created = registry.create_written(info, ns, object, &options).await?;
            let response = json_bytes(StatusCode::CREATED, created.json());
            Ok(with_warnings(response, &warnings))
        }
        ("PUT", Some(name)) => {
            let bytes = body::read(request.into_body()).await?;
            let options = write_options(query)?;
            // fieldValidation: decode noting duplicate and unknown fields.
            let (object, warnings) = body::decode_object_validated(
                info,
                &body::content_type(&headers),
                &bytes,
                options.field_validation,
            )?;
            let (updated, created) = registry
                .update_or_create(info, ns, name, object, part, &options)
                .await?;
            let status = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            Ok(with_warnings(json_response(status, &updated), &warnings))
        }
        ("PATCH", Some(name)) => {
            let content_type = body::content_type(&headers);
            let kind = PatchKind::from_content_type(&content_type)
                .ok_or_else(|| ApiError::unsupported_media_type(&content_type))?;
            let bytes = body::read(request.into_body()).await?;
            if kind == PatchKind::Apply && query.get("fieldManager").is_none_or(str::is_empty) {
                return Err(ApiError::bad_request(
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                ));
            }
            let options = write_options(query)?;
            let (written, created, warnings) = registry
                .patch_written(info, ns, name, kind, &bytes, part, &options)
                .await?;
            let status = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            Ok(with_warnings(json_bytes(status, written.json()), &warnings))
        }
        ("DELETE", Some(name)) => {
            let bytes = body::read(request.into_body()).await?;
            let options = delete_options(query, &headers, &bytes)?;
            let (object, gone) = registry.delete(info, ns, name, &options).await?;
            let status = if gone {
                StatusCode::OK
            } else {
                StatusCode::ACCEPTED
            };
            Ok(json_response(status, &object))
        }
        ("DELETE", None) if !info.deletes_collections() => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
        ("DELETE", None) => {
            let bytes = body::read(request.into_body()).await?;
            let options = delete_options(query, &headers, &bytes)?;
            let list_options = ListOptions::from_query(info, query)?;
            let page = registry.list(info, ns, &list_options).await?;
            let mut deleted = Vec::new();
            for item in &page.items {
                let value: Value = serde_json::from_slice(&item.json())
                    .map_err(|e| ApiError::internal(e.to_string()))?;
                let name = object::name(&value).unwrap_or("").to_owned();
                let item_ns = object::namespace(&value).map(str::to_owned);
                match registry
                    .delete(info, item_ns.as_deref(), &name, &options)
                    .await
                {
                    Ok((object, _)) => deleted.push(object),
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let list = json!({
                "apiVersion": info.api_version(),
                "kind": info.list_kind,
                "metadata": {"resourceVersion": page.revision.to_string()},
                "items": deleted,
            });
            Ok(json_response(StatusCode::OK, &list))
        }
        _ => Err(ApiError::method_not_allowed(format!(
            "{method} is not supported on {}",
            if target.name.is_some() {
                "a single object"
            } else {
                "a collection"
            }
        ))),
    }
}

/// Adds `fieldValidation` warnings as `Warning` headers (see [`crate::fieldvalidation`]).
fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    crate::fieldvalidation::add_warning_headers(response.headers_mut(), warnings);
    response
}

/// `DeleteOptions` from the query and an optional body (empty for a plain `kubectl delete`).
fn delete_options(
    query: &Query,
    headers: &http::HeaderMap,
    bytes: &[u8],
) -> Result<DeleteOptions, ApiError> {
    let body = if bytes.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        Some(body::decode_object(&body::content_type(headers), bytes)?)
    };
    DeleteOptions::parse(query, body.as_ref())
}
