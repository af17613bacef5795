//! OpenAPI v3: the index and one document per served group-version, enough for kubectl's
//! field validation check (a `patch` operation per kind with the `fieldValidation` parameter),
//! `kubectl explain` (schemas with `x-kubernetes-group-version-kind`) and server-side apply.
//! The per-kind parts (schema names, schemas, resource paths, write parameters) are shared
//! with the Swagger 2.0 document of [`v2`].

pub(crate) mod schemas;
pub mod v2;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;
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
                    json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", group_document(registry, &group, &version).1)}),
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
    Ok(Value::clone(&group_document(registry, &group, &version).0))
}

/// One group-version's document and the hash of its content, built once per state of the
/// group-version's resources.
type Built = (u64, Arc<Value>, String);

static DOCUMENTS: LazyLock<Mutex<HashMap<String, Built>>> = LazyLock::new(Default::default);

/// The document of `group`/`version` and its content hash (what the index's `?hash=` says:
/// kubectl keeps a document for as long as its URL is unchanged, so the hash must change with
/// the schemas, not only with the set of resources).
fn group_document(registry: &Registry, group: &str, version: &str) -> (Arc<Value>, String) {
    let resources = registry.catalog().resources(group, version);
    let state = resources_key(resources.iter().map(|info| &**info));
    let key = group_version_path(group, version);
    if let Some((built, doc, hash)) = DOCUMENTS.lock().get(&key)
        && *built == state
    {
        return (doc.clone(), hash.clone());
    }
    let doc = Arc::new(document(&resources));
    let bytes = serde_json::to_vec(&*doc).unwrap_or_default();
    let hash = format!("{:016X}", content_hash(&bytes));
    DOCUMENTS
        .lock()
        .insert(key, (state, doc.clone(), hash.clone()));
    (doc, hash)
}

/// A hash of a set of resources as served (what a document is built from): a document built
/// for one key is reused until the key changes.
pub(crate) fn resources_key<'a>(resources: impl IntoIterator<Item = &'a ResourceInfo>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for info in resources {
        format!("{info:?}").hash(&mut hasher);
    }
    hasher.finish()
}

/// A hash of a document's bytes (for ETags and the index's `?hash=`).
pub fn content_hash(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

fn group_version_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The definition name kube-apiserver gives a kind: Go package paths for the built-in groups
/// (`io.k8s.api.apps.v1.Deployment`), the reversed group for everything else, as kube names
/// CRD schemas (`io.karmada.policy.v1alpha1.PropagationPolicy`).
pub(crate) fn schema_name(info: &ResourceInfo) -> String {
    let (group, version, kind) = (info.group.as_str(), &info.version, &info.kind);
    let package = match group {
        "" => "io.k8s.api.core".to_owned(),
        "apiextensions.k8s.io" => {
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions".to_owned()
        }
        "apiregistration.k8s.io" => "io.k8s.kube-aggregator.pkg.apis.apiregistration".to_owned(),
        g if !g.contains('.') => format!("io.k8s.api.{g}"),
        g if g.ends_with(".k8s.io") => {
            format!("io.k8s.api.{}", g.split('.').next().unwrap_or(g))
        }
        g => g.split('.').rev().collect::<Vec<_>>().join("."),
    };
    format!("{package}.{version}.{kind}")
}

/// The `x-kubernetes-group-version-kind` value of one kind (a single object; definitions carry
/// a list of them).
pub(crate) fn gvk(info: &ResourceInfo) -> Value {
    json!({"group": info.group, "version": info.version, "kind": info.kind})
}

/// The schema of a kind with its `x-kubernetes-group-version-kind` list: k8s-openapi's for
/// built-in kinds, an object preserving unknown fields otherwise.
pub(crate) fn kind_schema(info: &ResourceInfo) -> Value {
    let mut schema = match info.schema.as_deref() {
        Some(crd_schema) => crd_document_schema(&crd_schema.raw),
        None => schemas::cached(&info.group, &info.version, &info.kind).cloned(),
    }
    .unwrap_or_else(|| json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}));
    schema["x-kubernetes-group-version-kind"] = json!([gvk(info)]);
    schema
}

/// The collection path of a resource, `{namespace}` templated for namespaced ones.
pub(crate) fn collection_path(info: &ResourceInfo) -> String {
    format!(
        "/{}/{}",
        group_version_path(&info.group, &info.version),
        if info.namespaced {
            format!("namespaces/{{namespace}}/{}", info.plural)
        } else {
            info.plural.clone()
        }
    )
}

/// The query parameters of writes: (name, description, type). PATCH adds [`FORCE_PARAM`].
pub(crate) const WRITE_PARAMS: [(&str, &str, &str); 3] = [
    (
        "dryRun",
        "When present, modifications are not persisted.",
        "string",
    ),
    (
        "fieldManager",
        "The name of the actor making changes.",
        "string",
    ),
    (
        "fieldValidation",
        "How the server treats unknown and duplicate fields: Ignore, Warn or Strict.",
        "string",
    ),
];

/// The query parameter only PATCH (server-side apply) takes.
pub(crate) const FORCE_PARAM: (&str, &str, &str) = (
    "force",
    "Force apply requests, taking over conflicting fields.",
    "boolean",
);

fn query_param((name, description, type_): (&str, &str, &str)) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": type_, "uniqueItems": true}})
}

/// The document of one group-version.
fn document(resources: &[std::sync::Arc<ResourceInfo>]) -> Value {
    let mut paths = Map::new();
    let mut components = Map::new();
    for info in resources {
        let name = schema_name(info);
        let gvk = json!([gvk(info)]);
        let reference = json!({"$ref": format!("#/components/schemas/{name}")});
        let body = json!({"content": {
            "application/json": {"schema": reference},
            "application/apply-patch+yaml": {"schema": reference},
            "application/merge-patch+json": {"schema": reference},
            "application/json-patch+json": {"schema": reference},
        }});
        let base = collection_path(info);
        let write_params: Vec<Value> = WRITE_PARAMS.into_iter().map(query_param).collect();
        let mut patch_params = write_params.clone();
        patch_params.push(query_param(FORCE_PARAM));
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
        components.insert(name, kind_schema(info));
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
