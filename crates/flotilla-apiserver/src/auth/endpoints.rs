//! The identity endpoints that are not stored objects, each answered from the request alone:
//! TokenRequest (`POST …/serviceaccounts/<name>/token`, `kubectl create token`),
//! SelfSubjectAccessReview (`kubectl auth can-i`), SelfSubjectRulesReview
//! (`kubectl auth can-i --list`) and SelfSubjectReview (`kubectl auth whoami`), and the reviews
//! other components ask on someone else's behalf: SubjectAccessReview, LocalSubjectAccessReview
//! and TokenReview (what kube-rbac-proxy and webhook authorizers call).
//! The server authorizes the request (verb `create`) before any of these run.

use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::authn::UserInfo;
use super::authz::RequestAttributes;
use super::service_accounts::{BoundObject, ObjectClaim};
use crate::error::{ApiError, Cause, Details};
use crate::registry::format_time;
use crate::request::ResourcePath;
use crate::server::body;
use crate::server::{ApiServer, error_response, json_response};
use flotilla_api::validation::{BadValue, FieldError, invalid_message};

/// The shortest and longest lifetimes a TokenRequest may ask for (kube-apiserver's validation).
const MIN_EXPIRATION_SECONDS: i64 = 600;
const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// The lifetime of a TokenRequest that names none (upstream's defaulting).
const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;

/// One of the endpoints this module serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    TokenRequest,
    SelfSubjectAccessReview,
    SelfSubjectRulesReview,
    SelfSubjectReview,
    SubjectAccessReview,
    LocalSubjectAccessReview,
    TokenReview,
}

impl Endpoint {
    /// The endpoint a resource path names, if it is one of these.
    pub fn of(target: &ResourcePath) -> Option<Endpoint> {
        match (
            target.group.as_str(),
            target.version.as_str(),
            target.resource.as_str(),
            target.subresource.as_deref(),
        ) {
            ("", "v1", "serviceaccounts", Some("token")) if target.name.is_some() => {
                Some(Endpoint::TokenRequest)
            }
            ("authorization.k8s.io", "v1", "selfsubjectaccessreviews", None)
                if target.name.is_none() =>
            {
                Some(Endpoint::SelfSubjectAccessReview)
            }
            ("authorization.k8s.io", "v1", "selfsubjectrulesreviews", None)
                if target.name.is_none() =>
            {
                Some(Endpoint::SelfSubjectRulesReview)
            }
            // kubectl 1.27 asks v1beta1.
            (
                "authentication.k8s.io",
                "v1" | "v1beta1" | "v1alpha1",
                "selfsubjectreviews",
                None,
            ) if target.name.is_none() => Some(Endpoint::SelfSubjectReview),
            ("authorization.k8s.io", "v1", "subjectaccessreviews", None)
                if target.name.is_none() && target.namespace.is_none() =>
            {
                Some(Endpoint::SubjectAccessReview)
            }
            ("authorization.k8s.io", "v1", "localsubjectaccessreviews", None)
                if target.name.is_none() =>
            {
                Some(Endpoint::LocalSubjectAccessReview)
            }
            ("authentication.k8s.io", "v1", "tokenreviews", None)
                if target.name.is_none() && target.namespace.is_none() =>
            {
                Some(Endpoint::TokenReview)
            }
            _ => None,
        }
    }
}

/// Serves an authorized request to `endpoint`.
pub async fn serve(
    server: &ApiServer,
    endpoint: Endpoint,
    user: &UserInfo,
    target: &ResourcePath,
    method: &Method,
    request: Request,
) -> Response {
    if method != Method::POST {
        return error_response(&ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let content_type = body::content_type(request.headers());
    let result = match body::read(request.into_body()).await {
        Ok(bytes) => match body::decode_object(&content_type, &bytes) {
            Ok(object) => match endpoint {
                Endpoint::TokenRequest => token_request(server, target, object).await,
                Endpoint::SelfSubjectAccessReview => {
                    access_review(server, user, object, "SelfSubjectAccessReview")
                }
                Endpoint::SubjectAccessReview => subject_access_review(server, object, None),
                Endpoint::LocalSubjectAccessReview => {
                    subject_access_review(server, object, Some(target.namespace.as_deref()))
                }
                Endpoint::TokenReview => token_review(server, object).await,
                Endpoint::SelfSubjectRulesReview => Ok(rules_review(server, user, object)),
                Endpoint::SelfSubjectReview => Ok(self_review(server, user, &target.version)),
            },
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    match result {
        Ok(value) => json_response(StatusCode::CREATED, &value),
        Err(error) => error_response(&error),
    }
}

async fn token_request(
    server: &ApiServer,
    target: &ResourcePath,
    request: Value,
) -> Result<Value, ApiError> {
    let Some(tokens) = server.service_accounts.as_ref() else {
        return Err(ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource (serviceaccounts/token)",
        ));
    };
    let namespace = target.namespace.as_deref().unwrap_or("");
    let name = target.name.as_deref().unwrap_or("");
    let registry = &server.registry;
    let catalog = registry.catalog();
    let sa_info = catalog
        .get("", "v1", "serviceaccounts")
        .expect("service accounts are built in");
    let sa = registry.get(&sa_info, Some(namespace), name).await?;
    let sa = ObjectClaim {
        name: name.to_owned(),
        uid: sa["metadata"]["uid"].as_str().unwrap_or("").to_owned(),
    };
    let spec = &request["spec"];
    let invalid = |field: &str, value: String, detail: &str| {
        ApiError::new(
            422,
            "Invalid",
            format!(
                "TokenRequest.authentication.k8s.io {:?} is invalid: {field}: Invalid value: {value}: {detail}",
                name
            ),
        )
    };
    let seconds = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    if seconds < MIN_EXPIRATION_SECONDS {
        return Err(invalid(
            "spec.expirationSeconds",
            seconds.to_string(),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if seconds > MAX_EXPIRATION_SECONDS {
        return Err(invalid(
            "spec.expirationSeconds",
            seconds.to_string(),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let mut audiences: Vec<String> = spec["audiences"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if audiences.is_empty() {
        audiences.push(tokens.issuer().to_owned());
    }
    let bound = match spec.get("boundObjectRef").filter(|r| !r.is_null()) {
        None => None,
        Some(reference) => {
            let kind = reference["kind"].as_str().unwrap_or("");
            let plural = match kind {
                "Secret" => "secrets",
                "Pod" => "pods",
                other => {
                    return Err(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount {name:?} to object of kind {other:?}"
                    )));
                }
            };
            let object_name = reference["name"].as_str().unwrap_or("");
            let info = catalog.get("", "v1", plural).expect("built in");
            let object = registry.get(&info, Some(namespace), object_name).await?;
            let uid = object["metadata"]["uid"].as_str().unwrap_or("").to_owned();
            if let Some(wanted) = reference["uid"].as_str().filter(|u| !u.is_empty())
                && wanted != uid
            {
                return Err(ApiError::new(
                    409,
                    "Conflict",
                    format!(
                        "the UID in the bound object reference ({wanted}) does not match the UID in record. The object might have been deleted and then recreated"
                    ),
                ));
            }
            let claim = ObjectClaim {
                name: object_name.to_owned(),
                uid,
            };
            Some(if kind == "Secret" {
                BoundObject::Secret(claim)
            } else {
                BoundObject::Pod(claim)
            })
        }
    };
    let (token, exp) = tokens
        .issue_bound(namespace, &sa, audiences.clone(), seconds, bound)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let expiration = jiff::Timestamp::from_second(exp)
        .map(format_time)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let mut out_spec = json!({"audiences": audiences, "expirationSeconds": seconds});
    if let Some(reference) = spec.get("boundObjectRef").filter(|r| !r.is_null()) {
        out_spec["boundObjectRef"] = reference.clone();
    }
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": format_time(registry.clock.now()),
        },
        "spec": out_spec,
        "status": {"token": token, "expirationTimestamp": expiration},
    }))
}

/// Answers a (Local)SubjectAccessReview: whether the user in the spec may do what it
/// describes. `local` carries the namespace of a LocalSubjectAccessReview request.
fn subject_access_review(
    server: &ApiServer,
    review: Value,
    local: Option<Option<&str>>,
) -> Result<Value, ApiError> {
    let kind = if local.is_some() {
        "LocalSubjectAccessReview"
    } else {
        "SubjectAccessReview"
    };
    let spec = &review["spec"];
    if let Some(namespace) = local {
        let namespace = namespace.unwrap_or("");
        if namespace.is_empty() {
            return Err(ApiError::bad_request("namespace is required on this type"));
        }
        let requested = spec["resourceAttributes"]["namespace"].as_str();
        if spec["resourceAttributes"].is_object() && requested != Some(namespace) {
            return Err(ApiError::bad_request(format!(
                "spec.resourceAttributes.namespace must match namespace: {namespace}"
            )));
        }
        if spec
            .get("nonResourceAttributes")
            .is_some_and(|v| !v.is_null())
        {
            return Err(review_invalid(
                kind,
                FieldError::invalid(
                    "spec.nonResourceAttributes",
                    BadValue::Verbatim(non_resource_text(spec)),
                    "disallowed on this kind of request",
                ),
            ));
        }
    }
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let user = UserInfo {
        name: spec["user"].as_str().unwrap_or("").to_owned(),
        uid: spec["uid"]
            .as_str()
            .filter(|u| !u.is_empty())
            .map(str::to_owned),
        groups: strings(&spec["groups"]),
        extra: spec["extra"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
            .unwrap_or_default(),
    };
    if user.name.is_empty() && user.groups.is_empty() {
        validate_access_review(spec, kind)?;
        return Err(review_invalid(
            kind,
            FieldError::invalid(
                "spec.user",
                "",
                "at least one of user or group must be specified",
            ),
        ));
    }
    access_review(server, &user, review, kind)
}

/// Answers a TokenReview: whether the token authenticates and as whom. Service-account tokens
/// (bound and legacy) are reviewed; tokens of a static token file are not (they are an
/// authentication source of the serving layer only).
async fn token_review(server: &ApiServer, mut review: Value) -> Result<Value, ApiError> {
    let token = review["spec"]["token"].as_str().unwrap_or("").to_owned();
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let requested: Vec<String> = review["spec"]["audiences"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let user = match server.service_accounts() {
        Some(tokens) => {
            let authenticator =
                super::authn::Authenticator::new().with_service_accounts(tokens.clone());
            let header = format!("Bearer {token}");
            authenticator
                .authenticate_current(None, Some(header.as_bytes()))
                .await
                .ok()
                .flatten()
                .map(|user| (user, tokens.issuer().to_owned()))
        }
        None => None,
    };
    let status = match user {
        Some((user, issuer)) => {
            let mut info = json!({"username": user.name, "groups": user.groups});
            if let Some(uid) = &user.uid {
                info["uid"] = uid.clone().into();
            }
            if !user.extra.is_empty() {
                info["extra"] = json!(user.extra);
            }
            let audiences = if requested.is_empty() {
                vec![issuer]
            } else {
                requested
            };
            json!({"authenticated": true, "user": info, "audiences": audiences})
        }
        None => json!({"user": {}, "error": "invalid bearer token"}),
    };
    review["apiVersion"] = "authentication.k8s.io/v1".into();
    review["kind"] = "TokenReview".into();
    if !review["metadata"].is_object() {
        review["metadata"] = json!({});
    }
    review["metadata"]["creationTimestamp"] = format_time(server.registry.clock.now()).into();
    review["status"] = status;
    Ok(review)
}

fn non_resource_text(spec: &Value) -> String {
    let attrs = &spec["nonResourceAttributes"];
    let text = |f: &str| attrs[f].as_str().unwrap_or("").to_owned();
    format!(
        "authorization.NonResourceAttributes{{Path:{:?}, Verb:{:?}}}",
        text("path"),
        text("verb")
    )
}

/// Answers an access review for `user`: whether it may do what the spec describes.
fn access_review(
    server: &ApiServer,
    user: &UserInfo,
    mut review: Value,
    kind: &str,
) -> Result<Value, ApiError> {
    let spec = review["spec"].clone();
    validate_access_review(&spec, kind)?;
    let text = |v: &Value, field: &str| v[field].as_str().unwrap_or("").to_owned();
    let (verb, group, resource, subresource, namespace, name, path);
    if let Some(attrs) = spec.get("resourceAttributes").filter(|a| a.is_object()) {
        verb = text(attrs, "verb");
        group = text(attrs, "group");
        resource = text(attrs, "resource");
        subresource = text(attrs, "subresource");
        namespace = text(attrs, "namespace");
        name = text(attrs, "name");
        path = String::new();
    } else {
        let attrs = &spec["nonResourceAttributes"];
        verb = text(attrs, "verb");
        path = text(attrs, "path");
        (group, resource, subresource, namespace, name) = Default::default();
    }
    let attributes = RequestAttributes {
        user,
        verb: &verb,
        group: &group,
        resource: &resource,
        subresource: &subresource,
        namespace: Some(namespace.as_str()).filter(|n| !n.is_empty()),
        name: Some(name.as_str()).filter(|n| !n.is_empty()),
        path: &path,
    };
    let decision = server.authorizer.authorize(&attributes);
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = decision.reason.into();
    }
    review["apiVersion"] = "authorization.k8s.io/v1".into();
    review["kind"] = kind.into();
    if !review["metadata"].is_object() {
        review["metadata"] = json!({});
    }
    review["metadata"]["creationTimestamp"] = format_time(server.registry.clock.now()).into();
    review["status"] = status;
    Ok(review)
}

/// Answers a SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules RBAC grants the
/// caller in `spec.namespace`, resource and non-resource rules apart.
fn rules_review(server: &ApiServer, user: &UserInfo, mut review: Value) -> Value {
    let namespace = review["spec"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let (rules, errors) = match server.authorizer.rbac() {
        Some(rbac) => rbac.rules_for(user, &namespace),
        None => Default::default(),
    };
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in rules {
        if !rule.resources.is_empty() {
            let mut out = json!({
                "verbs": rule.verbs,
                "apiGroups": rule.api_groups,
                "resources": rule.resources,
            });
            if !rule.resource_names.is_empty() {
                out["resourceNames"] = json!(rule.resource_names);
            }
            resource_rules.push(out);
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules.push(json!({
                "verbs": rule.verbs,
                "nonResourceURLs": rule.non_resource_urls,
            }));
        }
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = errors.join(", ").into();
    }
    review["apiVersion"] = "authorization.k8s.io/v1".into();
    review["kind"] = "SelfSubjectRulesReview".into();
    if !review["metadata"].is_object() {
        review["metadata"] = json!({});
    }
    review["metadata"]["creationTimestamp"] = format_time(server.registry.clock.now()).into();
    review["status"] = status;
    review
}

/// Exactly one of `resourceAttributes` and `nonResourceAttributes`, as kube-apiserver's
/// `Validate(Self)SubjectAccessReviewSpec` requires (same messages).
fn validate_access_review(spec: &Value, kind: &str) -> Result<(), ApiError> {
    let present = |field: &str| spec.get(field).is_some_and(|v| !v.is_null());
    let error = match (
        present("resourceAttributes"),
        present("nonResourceAttributes"),
    ) {
        (true, true) => FieldError::invalid(
            "spec.nonResourceAttributes",
            BadValue::Verbatim(non_resource_text(spec)),
            "cannot be specified in combination with resourceAttributes",
        ),
        (false, false) => FieldError::invalid(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
        _ => return Ok(()),
    };
    Err(review_invalid(kind, error))
}

/// The 422 of an invalid access review.
fn review_invalid(kind: &str, error: FieldError) -> ApiError {
    let message = invalid_message(
        "authorization.k8s.io",
        kind,
        "",
        std::slice::from_ref(&error),
    );
    ApiError::new(422, "Invalid", message).with_details(Details {
        group: "authorization.k8s.io".into(),
        kind: kind.into(),
        causes: vec![Cause {
            reason: error.kind.reason().to_owned(),
            message: error.body(),
            field: error.field.clone(),
        }],
        ..Details::default()
    })
}

/// Answers a SelfSubjectReview with the caller's identity.
fn self_review(server: &ApiServer, user: &UserInfo, version: &str) -> Value {
    let mut info = json!({"username": user.name, "groups": user.groups});
    if let Some(uid) = &user.uid {
        info["uid"] = uid.clone().into();
    }
    if !user.extra.is_empty() {
        info["extra"] = json!(user.extra);
    }
    json!({
        "kind": "SelfSubjectReview",
        "apiVersion": format!("authentication.k8s.io/{version}"),
        "metadata": {"creationTimestamp": format_time(server.registry.clock.now())},
        "status": {"userInfo": info},
    })
}
