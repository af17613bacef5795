//! Service-account tokens, RBAC and the review endpoints, through the tower service with the
//! same authentication step the HTTPS server uses (`serve::identify`).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::{Builder, Clock, Running};
use flotilla_store::{MemoryStore, Store};
use http::{Request, StatusCode};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::support::{Reply, eventually, get, json as json_request, send, send_as};

/// Bootstrap tokens, their cleaner and the anonymous cluster-info path.
mod bootstrap_tokens;
/// CertificateSigningRequests, their approval and the signer.
mod certificates;
/// The token lifecycle tests; the RBAC and review tests are here.
mod service_accounts;

const PATIENCE: Duration = Duration::from_secs(10);
const CA_PEM: &str = "-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n";

/// A clock the test moves by hand.
#[derive(Debug)]
struct ManualClock(Mutex<jiff::Timestamp>);

impl Clock for ManualClock {
    fn now(&self) -> jiff::Timestamp {
        *self.0.lock()
    }
}

impl ManualClock {
    fn advance(&self, seconds: i64) {
        let mut now = self.0.lock();
        *now = now
            .checked_add(jiff::SignedDuration::from_secs(seconds))
            .expect("in range");
    }
}

async fn control_plane_with_clock() -> (Running, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock(Mutex::new(
        "2026-01-01T00:00:00Z".parse().expect("timestamp"),
    )));
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let running = Builder::new(store)
        .clock(clock.clone())
        .root_ca(CA_PEM)
        .start()
        .await
        .expect("API server starts");
    (running, clock)
}

/// Sends `request` with `Authorization: Bearer <token>`, authenticated as the HTTPS server would.
async fn send_token(cp: &Running, token: &str, mut request: Request<Body>) -> Reply {
    request.headers_mut().insert(
        http::header::AUTHORIZATION,
        format!("Bearer {token}").parse().expect("header"),
    );
    let identity = flotilla_apiserver::serve::identify(
        &cp.authenticator(),
        None,
        request.uri().path(),
        request.headers(),
    )
    .await;
    send_as(cp, identity.0, request).await
}

async fn whoami(cp: &Running, token: &str) -> Reply {
    send_token(
        cp,
        token,
        json_request(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        ),
    )
    .await
}

async fn create(cp: &Running, uri: &str, body: Value) -> Value {
    let reply = send(cp, json_request("POST", uri, &body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{uri}: {}", reply.body);
    reply.body
}

async fn service_account(cp: &Running, ns: &str, name: &str) -> Value {
    create(
        cp,
        &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}),
    )
    .await
}

async fn token_secret(cp: &Running, ns: &str, name: &str, sa: &str) {
    create(
        cp,
        &format!("/api/v1/namespaces/{ns}/secrets"),
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "annotations": {"kubernetes.io/service-account.name": sa}},
            "type": "kubernetes.io/service-account-token",
        }),
    )
    .await;
}

/// Waits for the tokens controller to fill the Secret and returns it.
async fn filled_secret(cp: &Running, ns: &str, name: &str) -> Value {
    let uri = format!("/api/v1/namespaces/{ns}/secrets/{name}");
    eventually(PATIENCE, || async {
        send(cp, get(&uri)).await.body["data"]["token"].is_string()
    })
    .await;
    send(cp, get(&uri)).await.body
}

fn decode(data: &Value, key: &str) -> String {
    let bytes = STANDARD
        .decode(data["data"][key].as_str().expect("field present"))
        .expect("base64");
    String::from_utf8(bytes).expect("utf-8")
}

async fn request_token(cp: &Running, ns: &str, sa: &str, seconds: i64) -> Reply {
    send(
        cp,
        json_request(
            "POST",
            &format!("/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token"),
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"expirationSeconds": seconds}}),
        ),
    )
    .await
}

fn assert_unauthorized(reply: &Reply) {
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.body);
    assert_eq!(
        reply.body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );
}

fn user(name: &str) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: vec!["system:authenticated".into()],
        ..UserInfo::default()
    }
}

async fn status_as(cp: &Running, who: &UserInfo, request: Request<Body>) -> StatusCode {
    send_as(cp, Some(who.clone()), request).await.status
}

#[tokio::test]
async fn rbac_allows_by_verb_namespace_name_and_subresource() {
    let (cp, _clock) = control_plane_with_clock().await;
    for ns in ["team-a", "team-b"] {
        create(
            &cp,
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
    }
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "deployer"},
            "rules": [
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "create"]},
                {"apiGroups": ["apps"], "resources": ["deployments/scale"], "verbs": ["patch"]},
                {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"], "verbs": ["get"]},
            ],
        }),
    )
    .await;
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "alice-deploys"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "deployer"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
        }),
    )
    .await;
    let alice = user("alice");
    let deployments = "/apis/apps/v1/namespaces/team-a/deployments";
    eventually(PATIENCE, || async {
        status_as(&cp, &alice, get(deployments)).await == StatusCode::OK
    })
    .await;
    let created = send_as(
        &cp,
        Some(alice.clone()),
        json_request("POST", deployments, &crate::support::deployment("web", 1)),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    // Allowed verbs only.
    let delete = Request::delete(format!("{deployments}/web"))
        .body(Body::empty())
        .expect("request");
    assert_eq!(status_as(&cp, &alice, delete).await, StatusCode::FORBIDDEN);
    // Only in the Role's namespace.
    assert_eq!(
        status_as(
            &cp,
            &alice,
            get("/apis/apps/v1/namespaces/team-b/deployments")
        )
        .await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        status_as(&cp, &alice, get("/apis/apps/v1/deployments")).await,
        StatusCode::FORBIDDEN
    );
    // The scale subresource by its own rule; status is not granted.
    let scale = crate::support::with_body(
        "PATCH",
        &format!("{deployments}/web/scale"),
        "application/merge-patch+json",
        r#"{"spec":{"replicas":3}}"#,
    );
    let scaled = send_as(&cp, Some(alice.clone()), scale).await;
    assert_eq!(scaled.status, StatusCode::OK, "{}", scaled.body);
    let status_read = send_as(
        &cp,
        Some(alice.clone()),
        get(&format!("{deployments}/web/status")),
    )
    .await;
    assert_eq!(status_read.status, StatusCode::FORBIDDEN);
    assert_eq!(
        status_read.body["message"],
        r#"deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments/status" in API group "apps" in the namespace "team-a""#
    );
    // resourceNames: the named ConfigMap only (a 404 means authorization passed).
    assert_eq!(
        status_as(
            &cp,
            &alice,
            get("/api/v1/namespaces/team-a/configmaps/settings")
        )
        .await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        status_as(
            &cp,
            &alice,
            get("/api/v1/namespaces/team-a/configmaps/other")
        )
        .await,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        status_as(&cp, &alice, get("/api/v1/namespaces/team-a/configmaps")).await,
        StatusCode::FORBIDDEN
    );
    // Cluster scope message.
    let nodes = send_as(&cp, Some(alice.clone()), get("/api/v1/nodes")).await;
    assert_eq!(
        nodes.body["message"],
        r#"nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope"#
    );
}

#[tokio::test]
async fn aggregated_cluster_roles_collect_rules_by_label() {
    let (cp, _clock) = control_plane_with_clock().await;
    // The bootstrap `view` role is filled from system:aggregate-to-view.
    let bob = user("bob");
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "bob-views"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}],
        }),
    )
    .await;
    eventually(PATIENCE, || async {
        status_as(&cp, &bob, get("/api/v1/namespaces/default/pods")).await == StatusCode::OK
    })
    .await;
    assert_eq!(
        status_as(&cp, &bob, get("/api/v1/namespaces/default/secrets")).await,
        StatusCode::FORBIDDEN
    );
    // A role labelled for `view` extends it (and, through `edit` and `admin`, those too).
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "karmada-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
            "rules": [{"apiGroups": ["policy.karmada.io"], "resources": ["propagationpolicies"], "verbs": ["get", "list", "watch"]}],
        }),
    )
    .await;
    eventually(PATIENCE, || async {
        status_as(
            &cp,
            &bob,
            get("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies"),
        )
        .await
            == StatusCode::OK
    })
    .await;
    eventually(PATIENCE, || async {
        let admin = send(
            &cp,
            get("/apis/rbac.authorization.k8s.io/v1/clusterroles/admin"),
        )
        .await;
        admin.body["rules"].as_array().is_some_and(|rules| {
            rules
                .iter()
                .any(|r| r["apiGroups"] == json!(["policy.karmada.io"]))
        })
    })
    .await;
    // Removing the label takes the rules away again.
    let reply = send(
        &cp,
        crate::support::with_body(
            "PATCH",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/karmada-view",
            "application/merge-patch+json",
            r#"{"metadata":{"labels":{"rbac.authorization.k8s.io/aggregate-to-view":null}}}"#,
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    eventually(PATIENCE, || async {
        status_as(
            &cp,
            &bob,
            get("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies"),
        )
        .await
            == StatusCode::FORBIDDEN
    })
    .await;
}

#[tokio::test]
async fn join_style_access_for_a_service_account_token() {
    // What `karmadactl join` sets up in a member: a ServiceAccount in karmada-cluster bound to
    // a ClusterRole that allows everything.
    let (cp, _clock) = control_plane_with_clock().await;
    service_account(&cp, "karmada-cluster", "karmada-member1").await;
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "karmada-controller-manager:karmada-member1"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                      {"nonResourceURLs": ["*"], "verbs": ["get"]}],
        }),
    )
    .await;
    create(
        &cp,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "karmada-controller-manager:karmada-member1"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "karmada-controller-manager:karmada-member1"},
            "subjects": [{"kind": "ServiceAccount", "name": "karmada-member1", "namespace": "karmada-cluster"}],
        }),
    )
    .await;
    token_secret(&cp, "karmada-cluster", "karmada-member1", "karmada-member1").await;
    let token = decode(
        &filled_secret(&cp, "karmada-cluster", "karmada-member1").await,
        "token",
    );
    eventually(PATIENCE, || async {
        send_token(&cp, &token, get("/api/v1/nodes")).await.status == StatusCode::OK
    })
    .await;
    let ns = send_token(&cp, &token, get("/api/v1/namespaces/kube-system")).await;
    assert_eq!(ns.status, StatusCode::OK);
    let review = send_token(
        &cp,
        &token,
        json_request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                    "spec": {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}}),
        ),
    )
    .await;
    assert_eq!(review.body["status"]["allowed"], true, "{}", review.body);
}

#[tokio::test]
async fn self_subject_access_reviews_answer_can_i() {
    let (cp, _clock) = control_plane_with_clock().await;
    let carol = user("carol");
    let ask = |spec: Value| {
        json_request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}),
        )
    };
    let no = send_as(&cp, Some(carol.clone()), ask(json!({"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"}}))).await;
    assert_eq!(no.status, StatusCode::CREATED, "{}", no.body);
    assert_eq!(no.body["status"], json!({"allowed": false}));
    // Discovery is open to every authenticated user, through the bootstrap binding.
    let yes = send_as(
        &cp,
        Some(carol.clone()),
        ask(json!({"nonResourceAttributes": {"verb": "get", "path": "/apis/apps"}})),
    )
    .await;
    assert_eq!(
        yes.body["status"],
        json!({"allowed": true, "reason": r#"RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated""#})
    );
    // The rules carol has in `default`: those of the default bindings to system:authenticated.
    let rules = send_as(
        &cp,
        Some(carol.clone()),
        json_request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": "default"}}),
        ),
    )
    .await;
    assert_eq!(rules.status, StatusCode::CREATED, "{}", rules.body);
    assert_eq!(rules.body["status"]["incomplete"], false);
    assert_eq!(
        rules.body["status"]["resourceRules"][0],
        json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]})
    );
    let urls = rules.body["status"]["nonResourceRules"].to_string();
    assert!(
        urls.contains(r#""/apis/*""#) && urls.contains(r#""/healthz""#),
        "{urls}"
    );
    // The spec must say what to check.
    let empty = send_as(&cp, Some(carol.clone()), ask(json!({}))).await;
    assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        empty.body["message"],
        r#"SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified"#
    );
    // Anonymous callers get 401, not a review.
    let anonymous = send_as(&cp, None, ask(json!({}))).await;
    assert_unauthorized(&anonymous);
}

#[tokio::test]
async fn subject_access_reviews_judge_the_user_in_the_spec() {
    let (cp, _clock) = control_plane_with_clock().await;
    let admin = user("admin");
    let admin = UserInfo {
        groups: vec!["system:masters".into()],
        ..admin
    };
    let ask = |uri: &str, kind: &str, spec: Value| {
        json_request(
            "POST",
            uri,
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec}),
        )
    };
    const SAR: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    let discovery = send_as(
        &cp,
        Some(admin.clone()),
        ask(
            SAR,
            "SubjectAccessReview",
            json!({"user": "dave", "groups": ["system:authenticated"],
            "nonResourceAttributes": {"verb": "get", "path": "/apis/apps"}}),
        ),
    )
    .await;
    assert_eq!(discovery.status, StatusCode::CREATED, "{}", discovery.body);
    assert_eq!(discovery.body["kind"], "SubjectAccessReview");
    assert_eq!(discovery.body["status"]["allowed"], true);
    let pods = send_as(
        &cp,
        Some(admin.clone()),
        ask(
            SAR,
            "SubjectAccessReview",
            json!({"user": "dave",
            "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"}}),
        ),
    )
    .await;
    assert_eq!(pods.body["status"], json!({"allowed": false}));
    // The group alone is enough to be judged.
    let masters = send_as(
        &cp,
        Some(admin.clone()),
        ask(SAR, "SubjectAccessReview", json!({"groups": ["system:masters"],
            "resourceAttributes": {"verb": "delete", "resource": "secrets", "namespace": "default"}})),
    )
    .await;
    assert_eq!(masters.body["status"]["allowed"], true);
    let nobody = send_as(
        &cp,
        Some(admin.clone()),
        ask(
            SAR,
            "SubjectAccessReview",
            json!({"resourceAttributes": {"verb": "get", "resource": "pods"}}),
        ),
    )
    .await;
    assert_eq!(nobody.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        nobody.body["message"],
        r#"SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified"#
    );
    // Asking on someone else's behalf needs `create subjectaccessreviews`.
    let carol = send_as(
        &cp,
        Some(user("carol")),
        ask(
            SAR,
            "SubjectAccessReview",
            json!({"user": "dave", "resourceAttributes": {"verb": "get", "resource": "pods"}}),
        ),
    )
    .await;
    assert_eq!(carol.status, StatusCode::FORBIDDEN);

    // The local review lives in a namespace and must ask about it.
    const LOCAL: &str =
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews";
    let local = send_as(
        &cp,
        Some(admin.clone()),
        ask(
            LOCAL,
            "LocalSubjectAccessReview",
            json!({"user": "dave",
            "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"}}),
        ),
    )
    .await;
    assert_eq!(local.status, StatusCode::CREATED, "{}", local.body);
    assert_eq!(local.body["kind"], "LocalSubjectAccessReview");
    assert_eq!(local.body["status"]["allowed"], false);
    let elsewhere = send_as(
        &cp,
        Some(admin),
        ask(LOCAL, "LocalSubjectAccessReview", json!({"user": "dave",
            "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "kube-system"}})),
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        elsewhere.body["message"],
        "spec.resourceAttributes.namespace must match namespace: default"
    );
}

#[tokio::test]
async fn token_reviews_tell_who_a_token_belongs_to() {
    let (cp, _clock) = control_plane_with_clock().await;
    let admin = UserInfo {
        groups: vec!["system:masters".into()],
        ..user("admin")
    };
    service_account(&cp, "default", "prometheus").await;
    let token = request_token(&cp, "default", "prometheus", 3600).await.body["status"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let review = |token: &str| {
        json_request(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}),
        )
    };
    let good = send_as(&cp, Some(admin.clone()), review(&token)).await;
    assert_eq!(good.status, StatusCode::CREATED, "{}", good.body);
    assert_eq!(good.body["status"]["authenticated"], true);
    assert_eq!(
        good.body["status"]["user"]["username"],
        "system:serviceaccount:default:prometheus"
    );
    assert_eq!(
        good.body["status"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let bad = send_as(&cp, Some(admin.clone()), review("not-a-token")).await;
    assert_eq!(bad.status, StatusCode::CREATED);
    assert_eq!(bad.body["status"]["authenticated"], Value::Null);
    assert_eq!(bad.body["status"]["error"], "invalid bearer token");
    let empty = send_as(&cp, Some(admin), review("")).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        empty.body["message"],
        "token is required for TokenReview in authentication"
    );
}
