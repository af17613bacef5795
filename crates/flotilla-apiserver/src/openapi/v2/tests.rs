//! Unit tests of the Swagger document: the downgrade to what kubectl's model parser accepts,
//! and the protobuf encoding read back.

use prost::Message as _;
use serde_json::{Value, json};

use super::proto::{self, Schema};
use super::{PATCH_DEFINITION, document, downgrade};
use crate::catalog::Catalog;

fn decoded() -> proto::Document {
    let doc = document(&Catalog::with_builtins());
    let bytes = super::convert::document(&doc).encode_to_vec();
    proto::Document::decode(bytes.as_slice()).expect("the encoding decodes")
}

fn extension<'a>(extensions: &'a [proto::NamedAny], name: &str) -> Option<&'a str> {
    extensions
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_ref())
        .map(|v| v.yaml.as_str())
}

fn property<'a>(schema: &'a Schema, name: &str) -> Option<&'a Schema> {
    schema
        .properties
        .as_ref()?
        .additional_properties
        .iter()
        .find(|p| p.name == name)?
        .value
        .as_ref()
}

#[test]
fn downgrade_keeps_one_type_and_one_item_schema() {
    let schema = downgrade::schema(&json!({
        "type": "object",
        "nullable": true,
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"type": "array"},
            "c": {"type": "array", "items": [{"type": "integer"}, {"type": "string"}]},
            "d": {"oneOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true},
            "e": {"$ref": "#/components/schemas/Elsewhere", "type": "object"},
            "f": {"type": "null"},
            "g": true,
        },
        "additionalProperties": false,
    }));
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {}},
                "c": {"type": "array", "items": {"type": "integer"}},
                "d": {"x-kubernetes-int-or-string": true},
                "e": {"type": "object"},
                "f": {},
                "g": {},
            },
            "additionalProperties": false,
        })
    );
}

#[test]
fn downgrade_keeps_definition_references_alone() {
    let schema = downgrade::schema(
        &json!({"$ref": "#/definitions/x.Y", "type": "object", "description": "d"}),
    );
    assert_eq!(
        schema,
        json!({"$ref": "#/definitions/x.Y", "description": "d"})
    );
}

#[test]
fn deployment_definition_has_its_kind_and_an_integer_replicas() {
    let doc = decoded();
    let definitions = &doc.definitions.expect("definitions").additional_properties;
    let deployment = definitions
        .iter()
        .find(|d| d.name == "io.k8s.api.apps.v1.Deployment")
        .and_then(|d| d.value.as_ref())
        .expect("the Deployment definition");
    let gvk: Value = yaml_serde::from_str(
        extension(
            &deployment.vendor_extension,
            "x-kubernetes-group-version-kind",
        )
        .expect("the GVK extension"),
    )
    .expect("YAML");
    assert_eq!(
        gvk,
        json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
    );
    let replicas = property(deployment, "spec")
        .and_then(|spec| property(spec, "replicas"))
        .expect("spec.replicas");
    assert_eq!(
        replicas.r#type.as_ref().map(|t| t.value.clone()),
        Some(vec!["integer".to_owned()])
    );
    assert!(!replicas.description.is_empty());
}

#[test]
fn core_kinds_carry_an_empty_group() {
    let doc = decoded();
    let definitions = &doc.definitions.expect("definitions").additional_properties;
    let config_map = definitions
        .iter()
        .find(|d| d.name == "io.k8s.api.core.v1.ConfigMap")
        .and_then(|d| d.value.as_ref())
        .expect("the ConfigMap definition");
    let gvk: Value = yaml_serde::from_str(
        extension(
            &config_map.vendor_extension,
            "x-kubernetes-group-version-kind",
        )
        .expect("the GVK extension"),
    )
    .expect("YAML");
    assert_eq!(
        gvk,
        json!([{"group": "", "version": "v1", "kind": "ConfigMap"}])
    );
}

/// What cli-runtime's `QueryParamVerifier` reads: the PATCH operation of the kind's path with
/// a query parameter named `fieldValidation`.
#[test]
fn deployment_patch_takes_field_validation_and_no_strategic_merge() {
    let doc = decoded();
    let paths = doc.paths.expect("paths").path;
    let item = paths
        .iter()
        .find(|p| p.name == "/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
        .and_then(|p| p.value.as_ref())
        .expect("the deployment path");
    let patch = item.patch.as_ref().expect("a patch operation");
    let gvk: Value = yaml_serde::from_str(
        extension(&patch.vendor_extension, "x-kubernetes-group-version-kind").expect("GVK"),
    )
    .expect("YAML");
    assert_eq!(
        gvk,
        json!({"group": "apps", "version": "v1", "kind": "Deployment"})
    );
    let query_names: Vec<&str> = patch
        .parameters
        .iter()
        .filter_map(|p| match p.oneof.as_ref()? {
            proto::parameters_item::Oneof::Parameter(proto::Parameter {
                oneof: Some(proto::parameter::Oneof::NonBodyParameter(non_body)),
            }) => match non_body.oneof.as_ref()? {
                proto::non_body_parameter::Oneof::QueryParameterSubSchema(q) => {
                    Some(q.name.as_str())
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        query_names,
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );
    assert!(
        !patch.consumes.iter().any(|c| c.contains("strategic")),
        "{:?}",
        patch.consumes
    );
}

/// Mirrors kube-openapi's `proto.NewOpenAPIData`, which kubectl runs over the whole document
/// and which fails the whole document over one schema it cannot parse.
fn assert_parseable(schema: &Schema, names: &[String], at: &str) {
    if !schema.xref.is_empty() {
        let target = schema
            .xref
            .strip_prefix("#/definitions/")
            .unwrap_or_else(|| panic!("{at}: bad $ref"));
        assert!(
            names.iter().any(|n| n == target),
            "{at}: dangling $ref {target}"
        );
        assert!(
            schema.r#type.is_none() && schema.properties.is_none(),
            "{at}: $ref with siblings"
        );
        return;
    }
    let types = schema
        .r#type
        .as_ref()
        .map(|t| t.value.as_slice())
        .unwrap_or_default();
    assert!(types.len() <= 1, "{at}: several types {types:?}");
    match types.first().map(String::as_str) {
        Some("array") => {
            let items = schema
                .items
                .as_ref()
                .map(|i| i.schema.as_slice())
                .unwrap_or_default();
            assert_eq!(
                items.len(),
                1,
                "{at}: array without exactly one item schema"
            );
            assert_parseable(&items[0], names, &format!("{at}[]"));
        }
        Some("object") | None => {}
        Some(t) => assert!(
            ["string", "integer", "number", "boolean"].contains(&t),
            "{at}: type {t}"
        ),
    }
    for property in schema
        .properties
        .iter()
        .flat_map(|p| &p.additional_properties)
    {
        let value = property
            .value
            .as_ref()
            .unwrap_or_else(|| panic!("{at}: empty property"));
        assert_parseable(value, names, &format!("{at}.{}", property.name));
    }
    if let Some(proto::AdditionalPropertiesItem {
        oneof: Some(proto::additional_properties_item::Oneof::Schema(sub)),
    }) = &schema.additional_properties
    {
        assert_parseable(sub, names, &format!("{at}{{}}"));
    }
    for extension in &schema.vendor_extension {
        let yaml = extension
            .value
            .as_ref()
            .map(|v| v.yaml.as_str())
            .unwrap_or("");
        yaml_serde::from_str::<Value>(yaml)
            .unwrap_or_else(|e| panic!("{at}: extension {}: {e}", extension.name));
    }
}

#[test]
fn every_definition_parses_as_kubectl_parses_it() {
    let doc = decoded();
    let definitions = doc.definitions.expect("definitions").additional_properties;
    let names: Vec<String> = definitions.iter().map(|d| d.name.clone()).collect();
    assert!(names.iter().any(|n| n == PATCH_DEFINITION));
    for definition in &definitions {
        assert_parseable(
            definition.value.as_ref().expect("a schema"),
            &names,
            &definition.name,
        );
    }
    for path in doc.paths.expect("paths").path {
        let item = path.value.expect("a path item");
        for op in [&item.get, &item.put, &item.post, &item.delete, &item.patch]
            .into_iter()
            .flatten()
        {
            for response in op.responses.iter().flat_map(|r| &r.response_code) {
                if let Some(proto::ResponseValue {
                    oneof:
                        Some(proto::response_value::Oneof::Response(proto::Response {
                            schema:
                                Some(proto::SchemaItem {
                                    oneof: Some(proto::schema_item::Oneof::Schema(s)),
                                }),
                            ..
                        })),
                }) = &response.value
                {
                    assert_parseable(s, &names, &path.name);
                }
            }
        }
    }
}

#[test]
fn operation_ids_follow_kube() {
    let catalog = Catalog::with_builtins();
    let deployments = catalog
        .get("apps", "v1", "deployments")
        .expect("deployments");
    let namespaces = catalog.get("", "v1", "namespaces").expect("namespaces");
    assert_eq!(
        super::operation_id("patch", &deployments),
        "patchAppsV1NamespacedDeployment"
    );
    assert_eq!(
        super::operation_id("read", &namespaces),
        "readCoreV1Namespace"
    );
}

#[test]
fn accept_negotiation_follows_preference() {
    use super::{Format, PROTOBUF_ACCEPT, PROTOBUF_CONTENT_TYPE};
    let cases = [
        ("", Format::Json),
        ("*/*", Format::Json),
        (PROTOBUF_ACCEPT, Format::Protobuf),
        (PROTOBUF_CONTENT_TYPE, Format::Protobuf),
        (
            "application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            Format::Json,
        ),
        (
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json",
            Format::Protobuf,
        ),
        (
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.5, application/json",
            Format::Json,
        ),
    ];
    for (accept, expected) in cases {
        assert_eq!(
            Format::for_request("/openapi/v2", accept),
            Some(expected),
            "{accept}"
        );
    }
    assert_eq!(
        Format::for_request("/swagger-2.0.0.pb-v1", ""),
        Some(Format::Protobuf)
    );
    assert_eq!(
        Format::for_request("/swagger.json", PROTOBUF_ACCEPT),
        Some(Format::Json)
    );
    assert_eq!(Format::for_request("/openapi/v3", ""), None);
    // Go's mime.ParseMediaType, which client-go runs on every reply, rejects '@'.
    assert!(!PROTOBUF_CONTENT_TYPE.contains('@'));
}

/// The ETag is the document's content hash, so a client that cached the document of another
/// Flotilla build (the same resources, other schemas) gets the new one instead of a 304; and a
/// matching `If-None-Match` is answered 304.
#[test]
fn the_etag_follows_the_content() {
    use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
    let catalog = Catalog::with_builtins();
    let response = super::respond(&catalog, "/openapi/v2", &HeaderMap::new()).expect("served");
    let etag = response.headers()[header::ETAG]
        .to_str()
        .expect("ASCII")
        .to_owned();
    let body = futures::executor::block_on(axum::body::to_bytes(response.into_body(), usize::MAX))
        .expect("the body");
    assert_eq!(
        etag,
        format!("\"{:016X}J\"", crate::openapi::content_hash(&body))
    );
    let mut headers = HeaderMap::new();
    headers.insert(
        header::IF_NONE_MATCH,
        HeaderValue::from_str(&etag).expect("a header"),
    );
    let again = super::respond(&catalog, "/openapi/v2", &headers).expect("served");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
}
