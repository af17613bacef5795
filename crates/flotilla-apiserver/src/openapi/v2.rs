//! OpenAPI v2 (Swagger 2.0): one document of every served resource, as JSON and as gnostic
//! protobuf (`openapi_v2.Document`). kubectl 1.27 and 1.28 read it (protobuf) to learn whether
//! the server takes `fieldValidation` for a kind (cli-runtime's `QueryParamVerifier`), for
//! `explain`, and to choose the patch type of client-side apply. Built from the same per-kind
//! parts as the v3 documents; encoded once per catalog state.

pub(crate) mod convert;
mod downgrade;
pub mod proto;

use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use parking_lot::Mutex;
use prost::Message as _;
use serde_json::{Map, Value, json};

use super::{FORCE_PARAM, WRITE_PARAMS, collection_path, gvk, kind_schema, schema_name};
use crate::catalog::{Catalog, ResourceInfo};

/// The Content-Type of the protobuf reply. kube-apiserver answers with this spelling even to
/// clients that ask for [`PROTOBUF_ACCEPT`]: Go's `mime.ParseMediaType` rejects the `@` one,
/// and client-go fails the request on a Content-Type it cannot parse.
pub const PROTOBUF_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The media type kubectl 1.27/1.28 put in `Accept` (the deprecated spelling).
pub const PROTOBUF_ACCEPT: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// kube's definition of a PATCH body, which the patch operations reference.
const PATCH_DEFINITION: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

/// The patch types the patch operations consume. Strategic merge patch is left out on
/// purpose: the schemas carry no `x-kubernetes-patch-*` extensions, and without the content
/// type kubectl's client-side apply falls back to its compiled-in patch metadata.
const PATCH_CONSUMES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// One encoding of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Protobuf,
}

impl Format {
    /// The encoding served at `path` for an `Accept` header, `None` when `path` is not a v2
    /// document path. `/swagger-2.0.0.pb-v1` is the legacy protobuf path clients fall back to.
    pub fn for_request(path: &str, accept: &str) -> Option<Format> {
        match path {
            "/openapi/v2" if accept_protobuf(accept) => Some(Format::Protobuf),
            "/openapi/v2" | "/swagger.json" => Some(Format::Json),
            "/swagger-2.0.0.pb-v1" => Some(Format::Protobuf),
            _ => None,
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Protobuf => PROTOBUF_CONTENT_TYPE,
        }
    }
}

/// Whether the most preferred media range of `accept` that names an encoding names protobuf
/// (kube-apiserver negotiates the same way: JSON for `*/*`, `application/*` or nothing).
fn accept_protobuf(accept: &str) -> bool {
    let mut ranges: Vec<(f32, &str)> = accept
        .split(',')
        .map(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            (q, media)
        })
        .collect();
    // Stable: equal weights keep the client's order.
    ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranges
        .into_iter()
        .find_map(|(_, media)| match media {
            PROTOBUF_ACCEPT | PROTOBUF_CONTENT_TYPE => Some(true),
            "application/json" | "application/*" | "*/*" => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// The Swagger 2.0 document of every resource in the catalog.
pub fn document(catalog: &Catalog) -> Value {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    definitions.insert(
        PATCH_DEFINITION.to_owned(),
        json!({"description": "A patch: JSON patch, merge patch or apply configuration.", "type": "object"}),
    );
    for info in catalog.all() {
        let (collection, item) = resource_paths(&info);
        paths.insert(collection_path(&info), collection);
        paths.insert(format!("{}/{{name}}", collection_path(&info)), item);
        definitions.insert(schema_name(&info), downgrade::schema(&kind_schema(&info)));
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Flotilla", "version": env!("CARGO_PKG_VERSION")},
        "paths": paths,
        "definitions": definitions,
    })
}

/// The path items of a resource's collection and of one object.
fn resource_paths(info: &ResourceInfo) -> (Value, Value) {
    let reference = json!({"$ref": format!("#/definitions/{}", schema_name(info))});
    let ok = json!({"200": {"description": "OK", "schema": reference}, "401": {"description": "Unauthorized"}});
    let status = json!({"200": {"description": "OK"}, "401": {"description": "Unauthorized"}});
    let body =
        |schema: &Value| json!({"name": "body", "in": "body", "required": true, "schema": schema});
    let query = |(name, description, type_): (&str, &str, &str)| json!({"name": name, "in": "query", "description": description, "type": type_, "uniqueItems": true});
    let path_param = |name: &str, description: &str| json!({"name": name, "in": "path", "required": true, "description": description, "type": "string", "uniqueItems": true});
    let mut writes: Vec<Value> = WRITE_PARAMS.into_iter().map(query).collect();
    let mut patch_params = writes.clone();
    patch_params.push(query(FORCE_PARAM));
    patch_params.insert(
        0,
        body(&json!({"$ref": format!("#/definitions/{PATCH_DEFINITION}")})),
    );
    writes.insert(0, body(&reference));
    let gvk = gvk(info);
    let operation = |verb: &str,
                     action: &str,
                     consumes: &[&str],
                     params: &[Value],
                     responses: &Value| {
        json!({
            "operationId": operation_id(verb, info),
            "consumes": consumes,
            "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
            "schemes": ["https"],
            "parameters": params,
            "responses": responses,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        })
    };
    let mut shared = Vec::new();
    if info.namespaced {
        shared.push(path_param(
            "namespace",
            "object name and auth scope, such as for teams and projects",
        ));
    }
    let collection = json!({
        "get": operation("list", "list", &["*/*"], &[], &status),
        "post": operation("create", "post", &["*/*"], &writes, &ok),
        "parameters": shared,
    });
    let mut item_params = vec![path_param("name", &format!("name of the {}", info.kind))];
    item_params.extend(shared);
    let item = json!({
        "get": operation("read", "get", &["*/*"], &[], &ok),
        "put": operation("replace", "put", &["*/*"], &writes, &ok),
        "patch": operation("patch", "patch", &PATCH_CONSUMES, &patch_params, &ok),
        "delete": operation("delete", "delete", &["*/*"], &[], &status),
        "parameters": item_params,
    });
    (collection, item)
}

/// kube's operation id style: `patchAppsV1NamespacedDeployment`, `readCoreV1Namespace`.
fn operation_id(verb: &str, info: &ResourceInfo) -> String {
    let group = if info.group.is_empty() {
        "core"
    } else {
        &info.group
    };
    let mut id = verb.to_owned();
    for word in group.split(['.', '-']).chain([info.version.as_str()]) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            id.extend(first.to_uppercase());
            id.push_str(chars.as_str());
        }
    }
    if info.namespaced {
        id.push_str("Namespaced");
    }
    id.push_str(&info.kind);
    id
}

/// Both encodings of one catalog state.
#[derive(Debug)]
struct Encoded {
    key: u64,
    /// A hash of the document's content: the ETag's, so that a client holding the document of
    /// another Flotilla build (other schemas, same resources) fetches it again.
    content: u64,
    json: Bytes,
    protobuf: Bytes,
}

/// The last encoded document, keyed by a hash of the catalog's resources: CRDs come and go at
/// run time, and a changed catalog gets a new key. Keyed by content, so one cache serves every
/// API server in the process.
static CACHE: Mutex<Option<Arc<Encoded>>> = Mutex::new(None);

fn catalog_key(catalog: &Catalog) -> u64 {
    super::resources_key(catalog.all().iter().map(|info| &**info))
}

fn encoded(catalog: &Catalog) -> Arc<Encoded> {
    let key = catalog_key(catalog);
    if let Some(cached) = CACHE.lock().as_ref().filter(|c| c.key == key) {
        return cached.clone();
    }
    // Built outside the lock: concurrent first requests may both build, and agree.
    let doc = document(catalog);
    let json: Bytes = serde_json::to_vec(&doc)
        .expect("JSON values serialize")
        .into();
    let encoded = Arc::new(Encoded {
        key,
        content: super::content_hash(&json),
        json,
        protobuf: convert::document(&doc).encode_to_vec().into(),
    });
    *CACHE.lock() = Some(encoded.clone());
    encoded
}

/// The reply to `GET /openapi/v2`, `/swagger-2.0.0.pb-v1` or `/swagger.json`, with an ETag
/// (and 304 for a matching `If-None-Match`) as kube-apiserver sends; `None` for other paths.
pub(crate) fn respond(catalog: &Catalog, path: &str, headers: &HeaderMap) -> Option<Response> {
    let header_text = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let format = Format::for_request(path, header_text(header::ACCEPT))?;
    let encoded = encoded(catalog);
    let etag = format!(
        "\"{:016X}{}\"",
        encoded.content,
        if format == Format::Json { "J" } else { "P" }
    );
    let not_modified = header_text(header::IF_NONE_MATCH) == etag;
    let mut response = if not_modified {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(match format {
            Format::Json => encoded.json.clone(),
            Format::Protobuf => encoded.protobuf.clone(),
        }))
    };
    if not_modified {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
    }
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    Some(response)
}

#[cfg(test)]
mod tests;
