//! CustomResourceDefinitions: a CRD makes its kind usable at once (discovery, OpenAPI, CRUD,
//! schema validation, defaults, pruning, status, scale, tables), and deleting it removes its
//! custom resources and the kind.

use std::time::Duration;

use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";
const PATIENCE: Duration = Duration::from_secs(10);

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.size",
                        "statusReplicasPath": ".status.size",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["color"],
                            "properties": {
                                "color": {"type": "string", "enum": ["red", "green"]},
                                "size": {"type": "integer", "minimum": 1, "default": 1},
                            },
                        },
                        "status": {
                            "type": "object",
                            "properties": {"size": {"type": "integer"}, "selector": {"type": "string"}},
                        },
                    },
                }},
            }],
        },
    })
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

fn condition<'a>(crd: &'a Value, type_: &str) -> Option<&'a Value> {
    crd["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

#[tokio::test]
async fn a_crd_serves_its_kind_with_schema_status_scale_and_tables_until_deleted() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", CRDS, &widget_crd())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(created.body["spec"]["names"]["singular"], "widget");

    // Usable at once: the very next request creates a custom resource. Defaults are applied
    // and unknown fields pruned.
    let cr = send(
        &cp,
        json(
            "POST",
            WIDGETS,
            &widget("one", json!({"color": "red", "extra": 1})),
        ),
    )
    .await;
    assert_eq!(cr.status, StatusCode::CREATED, "{}", cr.body);
    assert_eq!(cr.body["spec"], json!({"color": "red", "size": 1}));
    assert_eq!(cr.body["metadata"]["generation"], 1);

    // Established, with kube's status.
    eventually(PATIENCE, || async {
        let crd = send(&cp, get(&format!("{CRDS}/widgets.example.com")))
            .await
            .body;
        condition(&crd, "Established").is_some_and(|c| c["status"] == "True")
    })
    .await;
    let crd = send(&cp, get(&format!("{CRDS}/widgets.example.com")))
        .await
        .body;
    let names_accepted = condition(&crd, "NamesAccepted").expect("NamesAccepted");
    assert_eq!(names_accepted["status"], "True");
    assert_eq!(names_accepted["reason"], "NoConflicts");
    assert_eq!(
        condition(&crd, "Established").expect("Established")["reason"],
        "InitialNamesAccepted"
    );
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");
    assert_eq!(crd["status"]["acceptedNames"]["shortNames"], json!(["wd"]));
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));

    // Discovery lists the kind with its subresources.
    let resources = send(&cp, get("/apis/example.com/v1")).await;
    assert_eq!(resources.status, StatusCode::OK, "{}", resources.body);
    let names: Vec<&str> = resources.body["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["widgets", "widgets/status", "widgets/scale"]);
    let groups = send(&cp, get("/apis")).await;
    assert!(
        groups.body.to_string().contains("example.com"),
        "{}",
        groups.body
    );

    // OpenAPI v3 publishes the schema with the GVK, for kubectl explain.
    let openapi = send(&cp, get("/openapi/v3/apis/example.com/v1")).await;
    assert_eq!(openapi.status, StatusCode::OK, "{}", openapi.body);
    let schema = openapi.body["components"]["schemas"]
        .as_object()
        .expect("schemas")
        .values()
        .find(|s| s["x-kubernetes-group-version-kind"][0]["kind"] == "Widget")
        .expect("the Widget schema")
        .clone();
    assert_eq!(
        schema["properties"]["spec"]["properties"]["color"]["enum"],
        json!(["red", "green"])
    );

    // A custom resource breaking the schema is refused with the field named.
    let bad = send(
        &cp,
        json(
            "POST",
            WIDGETS,
            &widget("bad", json!({"color": "blue", "size": "big"})),
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert_eq!(
        bad.body["message"],
        "Widget.example.com \"bad\" is invalid: [spec.color: Unsupported value: \"blue\": supported values: \"red\", \"green\", \
         spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"]"
    );
    let missing = send(
        &cp,
        json("POST", WIDGETS, &widget("bad", json!({"size": 0}))),
    )
    .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    let fields: Vec<&str> = missing.body["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(fields, ["spec.color", "spec.size"]);

    // The status subresource: status changes only through it.
    let mut with_status = cr.body.clone();
    with_status["status"] = json!({"size": 2, "selector": "app=one"});
    let status = send(
        &cp,
        json("PUT", &format!("{WIDGETS}/one/status"), &with_status),
    )
    .await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    assert_eq!(status.body["status"]["size"], 2);

    // The scale subresource reads and writes the CRD's replica paths.
    let scale = send(&cp, get(&format!("{WIDGETS}/one/scale"))).await;
    assert_eq!(scale.status, StatusCode::OK, "{}", scale.body);
    assert_eq!(scale.body["kind"], "Scale");
    assert_eq!(scale.body["spec"]["replicas"], 1);
    assert_eq!(
        scale.body["status"],
        json!({"replicas": 2, "selector": "app=one"})
    );
    let scaled = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{WIDGETS}/one/scale"),
            "application/merge-patch+json",
            r#"{"spec":{"replicas":4}}"#,
        ),
    )
    .await;
    assert_eq!(scaled.status, StatusCode::OK, "{}", scaled.body);
    assert_eq!(scaled.body["spec"]["replicas"], 4);
    let one = send(&cp, get(&format!("{WIDGETS}/one"))).await;
    assert_eq!(one.body["spec"]["size"], 4);
    assert_eq!(one.body["metadata"]["generation"], 2);

    // A Table with the printer column (and one Age column).
    let mut request = get(WIDGETS);
    request.headers_mut().insert(
        http::header::ACCEPT,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            .parse()
            .expect("header"),
    );
    let table = send(&cp, request).await;
    assert_eq!(table.body["kind"], "Table", "{}", table.body);
    let columns: Vec<&str> = table.body["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(columns, ["Name", "Color", "Age"]);
    assert_eq!(table.body["rows"][0]["cells"][0], "one");
    assert_eq!(table.body["rows"][0]["cells"][1], "red");

    // Deleting the CRD deletes its custom resources, then the CRD and the kind.
    let deleted = send(
        &cp,
        with_body(
            "DELETE",
            &format!("{CRDS}/widgets.example.com"),
            "application/json",
            "",
        ),
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.body);
    assert!(
        deleted.body["metadata"]["finalizers"]
            .to_string()
            .contains("customresourcecleanup.apiextensions.k8s.io"),
        "{}",
        deleted.body
    );
    eventually(PATIENCE, || async {
        send(&cp, get(&format!("{CRDS}/widgets.example.com")))
            .await
            .status
            == StatusCode::NOT_FOUND
    })
    .await;
    eventually(PATIENCE, || async {
        cp.server
            .registry()
            .catalog()
            .get("example.com", "v1", "widgets")
            .is_none()
    })
    .await;
    let gone = send(&cp, get(WIDGETS)).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
    let discovery = send(&cp, get("/apis/example.com/v1")).await;
    assert_eq!(discovery.status, StatusCode::NOT_FOUND);

    // Recreating the CRD shows no leftover custom resources.
    let again = send(&cp, json("POST", CRDS, &widget_crd())).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    let list = send(&cp, get(WIDGETS)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert_eq!(list.body["items"], json!([]));
}

#[tokio::test]
async fn an_invalid_crd_is_refused_with_kube_messages() {
    let cp = control_plane().await;
    let mut crd = widget_crd();
    crd["metadata"]["name"] = "gadgets.example.com".into();
    let refused = send(&cp, json("POST", CRDS, &crd)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(
        refused.body["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"gadgets.example.com\" is invalid: \
         metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group"
    );
    let mut upper = widget_crd();
    upper["metadata"]["name"] = "Widgets.example.com".into();
    upper["spec"]["names"]["plural"] = "Widgets".into();
    let refused = send(&cp, json("POST", CRDS, &upper)).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        refused.body["message"]
            .as_str()
            .expect("message")
            .contains("spec.names.plural: Invalid value: \"Widgets\""),
        "{}",
        refused.body
    );
}

#[tokio::test]
async fn every_served_version_shares_storage_and_reports_its_own_api_version() {
    let cp = control_plane().await;
    let mut crd = widget_crd();
    let mut beta = crd["spec"]["versions"][0].clone();
    beta["name"] = "v1beta1".into();
    beta["storage"] = false.into();
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(beta);
    let created = send(&cp, json("POST", CRDS, &crd)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let cr = send(
        &cp,
        json("POST", WIDGETS, &widget("one", json!({"color": "green"}))),
    )
    .await;
    assert_eq!(cr.status, StatusCode::CREATED, "{}", cr.body);
    let beta = send(
        &cp,
        get("/apis/example.com/v1beta1/namespaces/default/widgets/one"),
    )
    .await;
    assert_eq!(beta.status, StatusCode::OK, "{}", beta.body);
    assert_eq!(beta.body["apiVersion"], "example.com/v1beta1");
    let list = send(
        &cp,
        get("/apis/example.com/v1beta1/namespaces/default/widgets"),
    )
    .await;
    assert_eq!(list.body["items"][0]["apiVersion"], "example.com/v1beta1");
    let patched = send(
        &cp,
        with_body(
            "PATCH",
            "/apis/example.com/v1beta1/namespaces/default/widgets/one",
            "application/merge-patch+json",
            r#"{"spec":{"color":"red"}}"#,
        ),
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["apiVersion"], "example.com/v1beta1");
    let group = send(&cp, get("/apis/example.com")).await;
    assert_eq!(
        group.body["preferredVersion"]["version"], "v1",
        "{}",
        group.body
    );
}

#[tokio::test]
async fn stored_crds_are_served_as_soon_as_a_server_starts() {
    let store: std::sync::Arc<dyn flotilla_store::Store> =
        std::sync::Arc::new(flotilla_store::MemoryStore::new());
    let first = flotilla_apiserver::Builder::new(store.clone())
        .start()
        .await
        .expect("API server starts");
    let created = send(&first, json("POST", CRDS, &widget_crd())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    drop(first);
    let second = flotilla_apiserver::Builder::new(store)
        .start()
        .await
        .expect("API server restarts");
    let cr = send(
        &second,
        json("POST", WIDGETS, &widget("one", json!({"color": "red"}))),
    )
    .await;
    assert_eq!(cr.status, StatusCode::CREATED, "{}", cr.body);
}

#[tokio::test]
async fn a_crd_whose_names_clash_is_not_established() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", CRDS, &widget_crd())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut clash = widget_crd();
    clash["metadata"]["name"] = "gizmos.example.com".into();
    clash["spec"]["names"]["plural"] = "gizmos".into();
    clash["spec"]["names"]["shortNames"] = json!(["gz"]);
    let created = send(&cp, json("POST", CRDS, &clash)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    eventually(PATIENCE, || async {
        let crd = send(&cp, get(&format!("{CRDS}/gizmos.example.com")))
            .await
            .body;
        condition(&crd, "NamesAccepted")
            .is_some_and(|c| c["status"] == "False" && c["reason"] == "SingularConflict")
    })
    .await;
    let crd = send(&cp, get(&format!("{CRDS}/gizmos.example.com")))
        .await
        .body;
    assert_eq!(
        condition(&crd, "Established").expect("Established")["status"],
        "False"
    );
    let gizmos = send(&cp, get("/apis/example.com/v1/namespaces/default/gizmos")).await;
    assert_eq!(gizmos.status, StatusCode::NOT_FOUND);

    // Once the holder of the names is gone, the other CRD is established.
    let deleted = send(
        &cp,
        with_body(
            "DELETE",
            &format!("{CRDS}/widgets.example.com"),
            "application/json",
            "",
        ),
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.body);
    eventually(PATIENCE, || async {
        let crd = send(&cp, get(&format!("{CRDS}/gizmos.example.com")))
            .await
            .body;
        condition(&crd, "Established").is_some_and(|c| c["status"] == "True")
    })
    .await;
    let gizmos = send(&cp, get("/apis/example.com/v1/namespaces/default/gizmos")).await;
    assert_eq!(gizmos.status, StatusCode::OK, "{}", gizmos.body);
}

/// A Karmada chart's CRD for a kind Flotilla serves natively: accepted, but it serves nothing
/// (not even a version the built-in lacks), and deleting it leaves the built-in's objects alone
/// (kube's `OverlappingBuiltInResource`).
#[tokio::test]
async fn a_crd_for_a_built_in_kind_never_takes_its_objects() {
    let cp = control_plane().await;
    let pps = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "keep-me"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
            "placement": {"clusterAffinity": {"clusterNames": ["m1"]}},
        },
    });
    let created = send(&cp, json("POST", pps, &policy)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let version = |name: &str| {
        json!({"name": name, "served": true, "storage": name == "v1alpha1",
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
    };
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "propagationpolicies.policy.karmada.io"},
        "spec": {
            "group": "policy.karmada.io",
            "scope": "Namespaced",
            "names": {"plural": "propagationpolicies", "singular": "propagationpolicy",
                "kind": "PropagationPolicy", "shortNames": ["pp"]},
            "versions": [version("v1alpha1"), version("v1beta9")],
        },
    });
    let created = send(&cp, json("POST", CRDS, &crd)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    // The built-in still answers, with its own validation; the CRD's extra version is not served.
    let misspelt = json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": "typo"},
        "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap"}], "placment": {}},
    });
    let refused = send(
        &cp,
        json("POST", &format!("{pps}?fieldValidation=Strict"), &misspelt),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    let other_version = send(
        &cp,
        get("/apis/policy.karmada.io/v1beta9/namespaces/default/propagationpolicies"),
    )
    .await;
    assert_eq!(other_version.status, StatusCode::NOT_FOUND);

    // Deleting the CRD releases it without touching the PropagationPolicy.
    let deleted = send(
        &cp,
        with_body(
            "DELETE",
            &format!("{CRDS}/propagationpolicies.policy.karmada.io"),
            "application/json",
            "",
        ),
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.body);
    eventually(PATIENCE, || async {
        send(
            &cp,
            get(&format!("{CRDS}/propagationpolicies.policy.karmada.io")),
        )
        .await
        .status
            == StatusCode::NOT_FOUND
    })
    .await;
    let kept = send(&cp, get(&format!("{pps}/keep-me"))).await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    assert_eq!(kept.body["metadata"]["name"], "keep-me");
}
