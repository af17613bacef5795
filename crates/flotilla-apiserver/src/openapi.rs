//! OpenAPI v3: the index and one document per served group-version, enough for kubectl's
//! field validation check (a `patch` operation per kind with the `fieldValidation` parameter),
//! `kubectl explain` (schemas with `x-kubernetes-group-version-kind`) and server-side apply.

pub(crate) mod schemas;

use serde_json::{Map, Value, json};

use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::registry::Registry;

/// Serves `/openapi/v3` (`rest` empty) or `/openapi/v3/<api|apis/...>`.
pub fn serve(registry: &Registry, rest: &str) -> Result<Value, ApiError> {
    let rest = rest.trim_matches('/');
    let catalog = registry.catalog();
    if rest.is_empty() {
        let mut paths = Map::new();
        for (group, versions) in catalog.groups() {
            for version in versions {
                let key = group_version_path(&group, &version);
                paths.insert(
                    key.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", hash(&key, registry))}),
                );
            }
        }
        return Ok(json!({"paths": paths}));
    }
    let (group, version) = match rest.split('/').collect::<Vec<_>>().as_slice() {
        ["api", version] => (String::new(), (*version).to_owned()),
        ["apis", group, version] => ((*group).to_owned(), (*version).to_owned()),
        _ => return Err(ApiError::no_route()),
    };
    if !catalog.serves(&group, &version) {
        return Err(ApiError::no_route());
    }
    Ok(document(&catalog.resources(&group, &version)))
}

fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// A content hash of a group-version's resources, so clients can cache documents.
fn hash(key: &str, registry: &Registry) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    for info in registry.catalog().all() {
        if group_version_path(&info.group, &info.version) == key {
            format!("{info:?}").hash(&mut hasher);
        }
    }
    format!("{:016X}", hasher.finish())
}

fn schema_name(info: &ResourceInfo) -> String {
    let group = if info.group.is_empty() {
        "core"
    } else {
        &info.group
    };
    // kube-apiserver names schemas by Go package path; reversed-group names are what
    // CRD documents use and kubectl only needs them to be unique.
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{}.{}", reversed.join("."), info.version, info.kind)
}

fn query_param(name: &str, description: &str, type_: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": true}})
}

/// The document of one group-version.
fn document(resources: &[std::sync::Arc<ResourceInfo>]) -> Value {
    let mut paths = Map::new();
    let mut components = Map::new();
    for info in resources {
        let name = schema_name(info);
        let gvk = json!([{"group": info.group, "version": info.version, "kind": info.kind}]);
        let reference = json!({"$ref": format!("#/components/schemas/{name}")});
        let body = json!({"content": {
            "application/json": {"schema": reference},
            "application/apply-patch+yaml": {"schema": reference},
            "application/merge-patch+json": {"schema": reference},
            "application/json-patch+json": {"schema": reference},
        }});
        let base = format!(
            "/{}/{}",
            group_version_path(&info.group, &info.version),
            if info.namespaced {
                format!("namespaces/{{namespace}}/{}", info.plural)
            } else {
                info.plural.clone()
            }
        );
        let write_params = vec![
            query_param(
                "dryRun",
                "When present, modifications are not persisted.",
                "string",
            ),
            query_param(
                "fieldManager",
                "The name of the actor making changes.",
                "string",
            ),
            query_param(
                "fieldValidation",
                "How the server treats unknown and duplicate fields: Ignore, Warn or Strict.",
                "string",
            ),
        ];
        let mut patch_params = write_params.clone();
        patch_params.push(query_param(
            "force",
            "Force apply requests, taking over conflicting fields.",
            "boolean",
        ));
        let ok = json!({"200": {"description": "OK", "content": {"application/json": {"schema": reference}}}});
        paths.insert(
            base.clone(),
            json!({
                "get": {"x-kubernetes-group-version-kind": gvk[0], "x-kubernetes-action": "list", "responses": {"200": {"description": "OK"}}},
                "post": {"x-kubernetes-group-version-kind": gvk[0], "x-kubernetes-action": "post", "parameters": write_params, "requestBody": body, "responses": ok},
            }),
        );
        paths.insert(
            format!("{base}/{{name}}"),
            json!({
                "get": {"x-kubernetes-group-version-kind": gvk[0], "x-kubernetes-action": "get", "responses": ok},
                "put": {"x-kubernetes-group-version-kind": gvk[0], "x-kubernetes-action": "put", "parameters": write_params, "requestBody": body, "responses": ok},
                "patch": {"x-kubernetes-group-version-kind": gvk[0], "x-kubernetes-action": "patch", "parameters": patch_params, "requestBody": body, "responses": ok},
                "delete": {"x-kubernetes-group-version-kind": gvk[0], "x-kubernetes-action": "delete", "responses": {"200": {"description": "OK"}}},
            }),
        );
        let mut schema = match info.schema.as_deref() {
            Some(crd_schema) => crd_document_schema(&crd_schema.raw),
            None => schemas::cached(&info.group, &info.version, &info.kind).cloned(),
        }
        .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
        schema["x-kubernetes-group-version-kind"] = gvk;
        components.insert(name, schema);
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Flotilla", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "components": {"schemas": components},
    })
}

/// A CRD version's schema as published: `apiVersion`, `kind` and `metadata` described the way
/// kube-apiserver adds them to every custom resource schema.
fn crd_document_schema(raw: &Value) -> Option<Value> {
    let mut schema = raw.clone();
    if !schema.is_object() {
        return None;
    }
    if !schema["properties"].is_object() {
        schema["properties"] = json!({});
    }
    let properties = &mut schema["properties"];
    properties["apiVersion"] = json!({
        "type": "string",
        "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
    });
    properties["kind"] = json!({
        "type": "string",
        "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to.",
    });
    if properties
        .get("metadata")
        .is_none_or(|m| m.get("properties").is_none())
    {
        properties["metadata"] = json!({
            "type": "object",
            "description": "Standard object's metadata.",
        });
    }
    Some(schema)
}
