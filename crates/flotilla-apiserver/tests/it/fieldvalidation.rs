//! `fieldValidation` through HTTP: Strict rejects unknown and duplicate fields with
//! kube-apiserver's wording, Warn answers `Warning` headers, Ignore stays silent; unknown
//! fields never reach the store.

use axum::body::Body;
use flotilla_apiserver::{Identity, Running};
use http::{Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::support::{admin, control_plane, deployment, get, json, send, with_body};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// A reply with its `Warning` headers (support's `Reply` has no headers).
struct Answer {
    status: StatusCode,
    warnings: Vec<String>,
    body: Value,
}

async fn send_with_headers(cp: &Running, mut request: Request<Body>) -> Answer {
    request.extensions_mut().insert(Identity(Some(admin())));
    let response = cp
        .server
        .clone()
        .router()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    let warnings = response
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .map(|v| v.to_str().expect("ASCII warning").to_owned())
        .collect();
    let raw = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    Answer {
        status,
        warnings,
        body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
    }
}

fn with_typo(name: &str) -> Value {
    let mut body = deployment(name, 2);
    let spec = body["spec"].as_object_mut().expect("spec");
    let replicas = spec.remove("replicas").expect("replicas");
    spec.insert("replicass".into(), replicas);
    body
}

#[tokio::test]
async fn strict_create_with_an_unknown_field_is_rejected_and_not_stored() {
    let cp = control_plane().await;
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
            &with_typo("typo"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(reply.body["reason"], "BadRequest");
    assert_eq!(
        reply.body["message"],
        r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replicass""#
    );
    let stored = send(&cp, get(&format!("{DEPLOYMENTS}/typo"))).await;
    assert_eq!(stored.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn warn_creates_with_a_warning_header_and_drops_the_field() {
    let cp = control_plane().await;
    // Warn is the default when the parameter is absent.
    for (uri, name) in [
        (format!("{DEPLOYMENTS}?fieldValidation=Warn"), "warned"),
        (DEPLOYMENTS.to_owned(), "default-warned"),
    ] {
        let reply = send_with_headers(&cp, json("POST", &uri, &with_typo(name))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        assert_eq!(
            reply.warnings,
            vec![r#"299 - "unknown field \"spec.replicass\"""#]
        );
        assert!(reply.body["spec"].get("replicass").is_none());
        let stored = send(&cp, get(&format!("{DEPLOYMENTS}/{name}"))).await;
        assert!(stored.body["spec"].get("replicass").is_none());
    }
}

#[tokio::test]
async fn ignore_creates_without_warnings() {
    let cp = control_plane().await;
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{DEPLOYMENTS}?fieldValidation=Ignore"),
            &with_typo("ignored"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert!(reply.warnings.is_empty(), "{:?}", reply.warnings);
}

#[tokio::test]
async fn strict_rejects_a_duplicate_field_naming_it() {
    let cp = control_plane().await;
    let body = deployment("dupe", 1).to_string().replacen(
        r#""replicas":1"#,
        r#""replicas":1,"replicas":2"#,
        1,
    );
    assert!(body.contains(r#""replicas":2"#), "{body}");
    let reply = send_with_headers(
        &cp,
        with_body(
            "POST",
            &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
            "application/json",
            body.clone(),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        r#"Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: duplicate field "spec.replicas""#
    );
    let reply = send_with_headers(
        &cp,
        with_body("POST", DEPLOYMENTS, "application/json", body),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![r#"299 - "duplicate field \"spec.replicas\"""#]
    );
    assert_eq!(reply.body["spec"]["replicas"], 2, "the last duplicate wins");
}

#[tokio::test]
async fn strict_update_with_an_unknown_field_is_rejected() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", DEPLOYMENTS, &deployment("upd", 1))).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let mut body = created.body.clone();
    body["spec"]["template"]["spec"]["containers"][0]["imagee"] = json!("nginx");
    let reply = send_with_headers(
        &cp,
        json(
            "PUT",
            &format!("{DEPLOYMENTS}/upd?fieldValidation=Strict"),
            &body,
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(
        reply.body["message"].as_str().unwrap_or("").ends_with(
            r#"strict decoding error: unknown field "spec.template.spec.containers[0].imagee""#
        ),
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn merge_patch_adding_an_unknown_field_follows_the_directive() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", DEPLOYMENTS, &deployment("pat", 1))).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let patch = r#"{"spec": {"paused": true, "paused": false, "foo": 1}}"#;
    let merge = |query: &str| {
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/pat{query}"),
            "application/merge-patch+json",
            patch,
        )
    };
    let reply = send_with_headers(&cp, merge("?fieldValidation=Strict")).await;
    // kube-apiserver answers a strict patch failure as 422 Invalid on the field "patch".
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let message = reply.body["message"].as_str().unwrap_or("");
    assert!(
        message.ends_with(
            r#"strict decoding error: duplicate field "spec.paused", unknown field "spec.foo""#
        ),
        "{message}"
    );
    assert_eq!(reply.body["details"]["causes"][0]["field"], "patch");
    let stored = send(&cp, get(&format!("{DEPLOYMENTS}/pat"))).await;
    assert!(
        stored.body["spec"].get("paused").is_none(),
        "nothing was written"
    );

    let reply = send_with_headers(&cp, merge("")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![
            r#"299 - "duplicate field \"spec.paused\"""#,
            r#"299 - "unknown field \"spec.foo\"""#
        ]
    );
    assert!(reply.body["spec"].get("foo").is_none());
    assert_eq!(reply.body["spec"]["paused"], false);
}

#[tokio::test]
async fn json_patch_operations_and_results_are_checked() {
    let cp = control_plane().await;
    send(&cp, json("POST", DEPLOYMENTS, &deployment("jp", 1))).await;
    let patch = r#"[{"op": "add", "path": "/spec/unknown1", "value": "v", "foo": "bar"}]"#;
    let reply = send_with_headers(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/jp"),
            "application/json-patch+json",
            patch,
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![
            r#"299 - "json patch unknown field \"[0].foo\"""#,
            r#"299 - "unknown field \"spec.unknown1\"""#
        ]
    );
}

#[tokio::test]
async fn apply_with_an_unknown_field_under_strict_is_rejected() {
    let cp = control_plane().await;
    let reply = send_with_headers(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/applied?fieldManager=test&fieldValidation=Strict"),
            "application/apply-patch+yaml",
            with_typo("applied").to_string(),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        "failed to create typed patch object (default/applied; apps/v1, Kind=Deployment): .spec.replicass: field not declared in schema"
    );
}

const POLICIES: &str = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";

/// A PropagationPolicy whose `placement` is misspelt: Karmada's CRD schema has no such field.
fn misspelt_policy(name: &str) -> Value {
    json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "placment": {"clusterAffinity": {"clusterNames": ["member1"]}}
        }
    })
}

/// Karmada's kinds are CRDs with structural schemas there: a misspelt field is refused under
/// Strict (what kubectl asks for) with kube-apiserver's message, and pruned with a warning
/// otherwise — never stored, where it would silently mean "no placement".
#[tokio::test]
async fn karmada_kinds_refuse_or_prune_unknown_fields_as_their_crds_do() {
    let cp = control_plane().await;
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{POLICIES}?fieldValidation=Strict"),
            &misspelt_policy("strict"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        r#"PropagationPolicy in version "v1alpha1" cannot be handled as a PropagationPolicy: strict decoding error: unknown field "spec.placment""#
    );
    let stored = send(&cp, get(&format!("{POLICIES}/strict"))).await;
    assert_eq!(stored.status, StatusCode::NOT_FOUND);

    let reply = send_with_headers(&cp, json("POST", POLICIES, &misspelt_policy("warned"))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![r#"299 - "unknown field \"spec.placment\"""#]
    );
    let stored = send(&cp, get(&format!("{POLICIES}/warned"))).await;
    assert!(
        stored.body["spec"].get("placment").is_none(),
        "{}",
        stored.body
    );
    assert_eq!(
        stored.body["spec"]["resourceSelectors"][0]["kind"],
        "Deployment"
    );
}

/// Free-form fields of Karmada's schemas (an overrider's `value`, a Work's manifests) keep
/// whatever they hold, as `x-kubernetes-preserve-unknown-fields` does in Karmada's CRDs.
#[tokio::test]
async fn free_form_fields_of_karmada_kinds_keep_everything() {
    let cp = control_plane().await;
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1",
        "kind": "OverridePolicy",
        "metadata": {"name": "op"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "overrideRules": [{"overriders": {"plaintext": [{
                "path": "/spec/template/metadata/annotations",
                "operator": "add",
                "value": {"anything": {"nested": [1, "two"]}}
            }]}}]
        }
    });
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            "/apis/policy.karmada.io/v1alpha1/namespaces/default/overridepolicies?fieldValidation=Strict",
            &policy,
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert!(reply.warnings.is_empty(), "{:?}", reply.warnings);
    assert_eq!(
        reply.body["spec"]["overrideRules"][0]["overriders"]["plaintext"][0]["value"],
        json!({"anything": {"nested": [1, "two"]}})
    );
}

/// A MultiClusterIngress (an Ingress spec across clusters; no Flotilla controller reads it) is
/// checked against the CRD's shape too: an Ingress field is kept, a misspelt one refused.
#[tokio::test]
async fn multi_cluster_ingresses_are_checked_as_ingresses() {
    let cp = control_plane().await;
    let ingress = |name: &str, rules: &str| {
        json!({
            "apiVersion": "networking.karmada.io/v1alpha1",
            "kind": "MultiClusterIngress",
            "metadata": {"name": name},
            "spec": {
                "ingressClassName": "nginx",
                rules: [{"host": "demo.example.com", "http": {"paths": [{
                    "path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "web", "port": {"number": 80}}}
                }]}}]
            }
        })
    };
    const INGRESSES: &str =
        "/apis/networking.karmada.io/v1alpha1/namespaces/default/multiclusteringresses";
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{INGRESSES}?fieldValidation=Strict"),
            &ingress("good", "rules"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(reply.body["spec"]["rules"][0]["host"], "demo.example.com");
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{INGRESSES}?fieldValidation=Strict"),
            &ingress("typo", "rulez"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(
        reply.body["message"]
            .as_str()
            .is_some_and(|m| m.ends_with(r#"strict decoding error: unknown field "spec.rulez""#)),
        "{}",
        reply.body
    );
}

/// A value its field's type cannot hold is refused as kube-apiserver's typed decoding refuses
/// it — a 400 naming the field, whatever `fieldValidation` says — in JSON and YAML bodies, on
/// create and update; nothing is stored.
#[tokio::test]
async fn values_of_the_wrong_type_are_refused_naming_the_field() {
    let cp = control_plane().await;
    let mut bad = deployment("web", 2);
    bad["spec"]["replicas"] = json!("three");
    let expected = "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot \
        unmarshal string into Go struct field Deployment.spec.replicas of type int32";
    for validation in ["Ignore", "Warn", "Strict"] {
        let reply = send(
            &cp,
            json(
                "POST",
                &format!("{DEPLOYMENTS}?fieldValidation={validation}"),
                &bad,
            ),
        )
        .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        assert_eq!(reply.body["reason"], "BadRequest");
        assert_eq!(reply.body["message"], expected);
    }
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    version: 2\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers: [{name: main, image: nginx}]\n";
    let reply = send(
        &cp,
        with_body("POST", DEPLOYMENTS, "application/yaml", yaml.to_owned()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot \
         unmarshal number into Go struct field Deployment.metadata.labels of type string"
    );
    let gone = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);

    // The same object with the right types is created; an update that breaks a type is refused.
    let created = send(&cp, json("POST", DEPLOYMENTS, &deployment("web", 2))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut update = created.body.clone();
    update["spec"]["template"]["spec"]["containers"] = json!("nginx");
    let reply = send(&cp, json("PUT", &format!("{DEPLOYMENTS}/web"), &update)).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert!(
        reply.body["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("Deployment.spec.template.spec.containers of type array")),
        "{}",
        reply.body
    );
    let read = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(read.body["spec"], created.body["spec"]);

    // Patches: the patched object is checked where the patch wrote (merge, strategic) or
    // whole (JSON patch); a 422 naming the field, as kube-apiserver's patch handler answers.
    for (content_type, patch) in [
        (
            "application/merge-patch+json",
            json!({"spec": {"replicas": "two"}}).to_string(),
        ),
        (
            "application/strategic-merge-patch+json",
            json!({"spec": {"replicas": "two"}}).to_string(),
        ),
        (
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/spec/replicas", "value": "two"}]).to_string(),
        ),
    ] {
        let reply = send(
            &cp,
            with_body("PATCH", &format!("{DEPLOYMENTS}/web"), content_type, patch),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{content_type}: {}",
            reply.body
        );
        assert!(
            reply.body["message"].as_str().is_some_and(|m| m.ends_with(
                "json: cannot unmarshal string into Go struct field Deployment.spec.replicas of type int32"
            )),
            "{content_type}: {}",
            reply.body
        );
    }
    let read = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(read.body["spec"]["replicas"], 2);
}

const GADGETS: &str = "/apis/example.com/v1/namespaces/default/gadgets";

/// A CRD with a list of objects and a free-form subtree, created on `cp`.
async fn gadget_crd(cp: &Running) {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "properties": {
                            "size": {"type": "integer"},
                            "parts": {"type": "array", "items": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                            }},
                            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        },
                    }},
                }},
            }],
        },
    });
    let created = send(
        cp,
        json(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
}

/// A Gadget with a misspelt field at each level, a metadata field ObjectMeta lacks, and
/// anything under the free-form `extra`.
fn misspelt_gadget(name: &str) -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "lables": {"a": "b"}},
        "spec": {
            "size": 2,
            "colour": "red",
            "parts": [{"name": "a"}, {"name": "b", "weight": 3}],
            "extra": {"anything": {"goes": true}},
        },
    })
}

#[tokio::test]
async fn custom_resources_have_their_unknown_fields_reported_as_kube_does() {
    let cp = control_plane().await;
    gadget_crd(&cp).await;

    // Strict: refused, naming metadata's field first, then the schema's in sorted order.
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{GADGETS}?fieldValidation=Strict"),
            &misspelt_gadget("strict"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "metadata.lables", unknown field "spec.colour", unknown field "spec.parts[1].weight""#
    );
    let stored = send(&cp, get(&format!("{GADGETS}/strict"))).await;
    assert_eq!(stored.status, StatusCode::NOT_FOUND);

    // Warn (the default): created without them, one warning each; `extra` kept whole.
    let reply = send_with_headers(&cp, json("POST", GADGETS, &misspelt_gadget("warned"))).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![
            r#"299 - "unknown field \"metadata.lables\"""#,
            r#"299 - "unknown field \"spec.colour\"""#,
            r#"299 - "unknown field \"spec.parts[1].weight\"""#,
        ]
    );
    let stored = send(&cp, get(&format!("{GADGETS}/warned"))).await;
    assert_eq!(
        stored.body["spec"],
        json!({"size": 2, "parts": [{"name": "a"}, {"name": "b"}], "extra": {"anything": {"goes": true}}})
    );
    assert!(stored.body["metadata"].get("lables").is_none());

    // Ignore: silent.
    let reply = send_with_headers(
        &cp,
        json(
            "POST",
            &format!("{GADGETS}?fieldValidation=Ignore"),
            &misspelt_gadget("ignored"),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert!(reply.warnings.is_empty(), "{:?}", reply.warnings);

    // A merge patch: only what it adds is reported; Strict refuses it as kube's patch handler.
    let patch = r#"{"spec": {"size": 3, "shape": "round"}}"#;
    let merge = |query: &str| {
        with_body(
            "PATCH",
            &format!("{GADGETS}/warned{query}"),
            "application/merge-patch+json",
            patch,
        )
    };
    let reply = send_with_headers(&cp, merge("?fieldValidation=Strict")).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let message = reply.body["message"].as_str().unwrap_or("");
    assert!(
        message.ends_with(r#"strict decoding error: unknown field "spec.shape""#),
        "{message}"
    );
    let stored = send(&cp, get(&format!("{GADGETS}/warned"))).await;
    assert_eq!(stored.body["spec"]["size"], 2, "nothing was written");
    let reply = send_with_headers(&cp, merge("")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![r#"299 - "unknown field \"spec.shape\"""#]
    );
    assert_eq!(reply.body["spec"]["size"], 3);
    assert!(reply.body["spec"].get("shape").is_none());

    // An update (PUT) carrying an unknown field under Strict is refused too.
    let mut current = send(&cp, get(&format!("{GADGETS}/warned"))).await.body;
    current["spec"]["parts"][0]["colour"] = json!("blue");
    let reply = send_with_headers(
        &cp,
        json(
            "PUT",
            &format!("{GADGETS}/warned?fieldValidation=Strict"),
            &current,
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.parts[0].colour""#
    );

    // A server-side apply: Strict names the field as kube's typed conversion does, Warn warns.
    let config = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: applied}\nspec: {size: 1, colour: red}\n";
    let apply = |query: &str| {
        with_body(
            "PATCH",
            &format!("{GADGETS}/applied?fieldManager=test{query}"),
            "application/apply-patch+yaml",
            config,
        )
    };
    let reply = send_with_headers(&cp, apply("&fieldValidation=Strict")).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap_or("");
    assert!(
        message.ends_with(".spec.colour: field not declared in schema"),
        "{message}"
    );
    let reply = send_with_headers(&cp, apply("")).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(
        reply.warnings,
        vec![r#"299 - "unknown field \"spec.colour\"""#]
    );
    assert_eq!(reply.body["spec"], json!({"size": 1}));
}
