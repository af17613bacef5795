//! The life of service-account tokens: legacy Secret tokens filled by the tokens controller,
//! TokenRequest tokens, and their revocation (the helpers are the parent module's).

use super::*;

#[tokio::test]
async fn a_token_secret_is_filled_and_its_token_authenticates_the_service_account() {
    let (cp, _clock) = control_plane_with_clock().await;
    let sa = service_account(&cp, "default", "bot").await;
    token_secret(&cp, "default", "bot-token", "bot").await;
    let secret = filled_secret(&cp, "default", "bot-token").await;
    assert_eq!(decode(&secret, "namespace"), "default");
    assert_eq!(decode(&secret, "ca.crt"), CA_PEM);
    assert_eq!(
        secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"],
        sa["metadata"]["uid"]
    );
    let token = decode(&secret, "token");
    let me = whoami(&cp, &token).await;
    assert_eq!(me.status, StatusCode::CREATED, "{}", me.body);
    assert_eq!(
        me.body["status"]["userInfo"],
        json!({
            "username": "system:serviceaccount:default:bot",
            "uid": sa["metadata"]["uid"],
            "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
        })
    );
    // Authenticated is not authorized: no binding grants the service account pods.
    let denied = send_token(&cp, &token, get("/api/v1/namespaces/default/pods/web")).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    assert_eq!(
        denied.body["message"],
        r#"pods "web" is forbidden: User "system:serviceaccount:default:bot" cannot get resource "pods" in API group "" in the namespace "default""#
    );
    assert_eq!(denied.body["reason"], "Forbidden");
    assert_eq!(
        denied.body["details"],
        json!({"name": "web", "kind": "pods"})
    );
    // A token that was never issued, or was tampered with, is 401.
    assert_unauthorized(&whoami(&cp, "not-a-token").await);
    let at = token.len() - 10;
    let swapped = if &token[at..=at] == "A" { "B" } else { "A" };
    let tampered = format!("{}{swapped}{}", &token[..at], &token[at + 1..]);
    assert_unauthorized(&whoami(&cp, &tampered).await);
}

#[tokio::test]
async fn deleting_the_secret_or_the_service_account_revokes_the_token() {
    let (cp, _clock) = control_plane_with_clock().await;
    service_account(&cp, "default", "bot").await;
    token_secret(&cp, "default", "first", "bot").await;
    let first = decode(&filled_secret(&cp, "default", "first").await, "token");
    token_secret(&cp, "default", "second", "bot").await;
    let second = decode(&filled_secret(&cp, "default", "second").await, "token");
    assert_eq!(whoami(&cp, &first).await.status, StatusCode::CREATED);

    let reply = send(
        &cp,
        Request::delete("/api/v1/namespaces/default/secrets/first")
            .body(Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    eventually(PATIENCE, || async {
        whoami(&cp, &first).await.status == StatusCode::UNAUTHORIZED
    })
    .await;
    assert_eq!(whoami(&cp, &second).await.status, StatusCode::CREATED);

    // Deleting the service account revokes its tokens and deletes their Secrets.
    let reply = send(
        &cp,
        Request::delete("/api/v1/namespaces/default/serviceaccounts/bot")
            .body(Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    eventually(PATIENCE, || async {
        whoami(&cp, &second).await.status == StatusCode::UNAUTHORIZED
    })
    .await;
    eventually(PATIENCE, || async {
        send(&cp, get("/api/v1/namespaces/default/secrets/second"))
            .await
            .status
            == StatusCode::NOT_FOUND
    })
    .await;
    // A service account recreated under the same name does not revive old tokens.
    service_account(&cp, "default", "bot").await;
    assert_unauthorized(&whoami(&cp, &second).await);
}

/// A token that verified is remembered, but only while the objects it was checked against are
/// unchanged: rewriting its Secret's token turns it away as soon as the watch cache has the
/// write (kube-apiserver would keep accepting it for up to 10 s), and changes elsewhere leave
/// it working.
#[tokio::test]
async fn a_remembered_token_is_checked_again_when_its_secret_changes() {
    let (cp, _clock) = control_plane_with_clock().await;
    service_account(&cp, "default", "bot").await;
    token_secret(&cp, "default", "bot-token", "bot").await;
    let token = decode(&filled_secret(&cp, "default", "bot-token").await, "token");
    for _ in 0..3 {
        assert_eq!(whoami(&cp, &token).await.status, StatusCode::CREATED);
    }
    // Unrelated writes: another Secret, and another ServiceAccount.
    create(
        &cp,
        "/api/v1/namespaces/default/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "unrelated"}}),
    )
    .await;
    service_account(&cp, "default", "other").await;
    assert_eq!(whoami(&cp, &token).await.status, StatusCode::CREATED);

    let replaced = STANDARD.encode("not the token");
    let reply = send(
        &cp,
        Request::patch("/api/v1/namespaces/default/secrets/bot-token")
            .header("content-type", "application/merge-patch+json")
            .body(Body::from(json!({"data": {"token": replaced}}).to_string()))
            .expect("request"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    // Well under kube-apiserver's 10 s success cache.
    eventually(Duration::from_secs(1), || async {
        whoami(&cp, &token).await.status == StatusCode::UNAUTHORIZED
    })
    .await;
}

#[tokio::test]
async fn a_token_secret_for_a_missing_service_account_is_deleted() {
    let (cp, _clock) = control_plane_with_clock().await;
    token_secret(&cp, "default", "orphan", "nobody").await;
    eventually(PATIENCE, || async {
        send(&cp, get("/api/v1/namespaces/default/secrets/orphan"))
            .await
            .status
            == StatusCode::NOT_FOUND
    })
    .await;
}

#[tokio::test]
async fn token_request_tokens_work_until_they_expire() {
    let (cp, clock) = control_plane_with_clock().await;
    service_account(&cp, "karmada-cluster", "karmada-member1").await;
    let reply = request_token(&cp, "karmada-cluster", "karmada-member1", 600).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(reply.body["kind"], "TokenRequest");
    assert_eq!(reply.body["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(
        reply.body["status"]["expirationTimestamp"],
        "2026-01-01T00:10:00Z"
    );
    assert_eq!(
        reply.body["spec"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let token = reply.body["status"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let me = whoami(&cp, &token).await;
    assert_eq!(
        me.body["status"]["userInfo"]["username"],
        "system:serviceaccount:karmada-cluster:karmada-member1"
    );
    clock.advance(599);
    assert_eq!(whoami(&cp, &token).await.status, StatusCode::CREATED);
    clock.advance(1);
    assert_unauthorized(&whoami(&cp, &token).await);

    let short = request_token(&cp, "karmada-cluster", "karmada-member1", 599).await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        short.body["message"],
        r#"TokenRequest.authentication.k8s.io "karmada-member1" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"#
    );
    let missing = request_token(&cp, "karmada-cluster", "nobody", 600).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(
        missing.body["message"],
        r#"serviceaccounts "nobody" not found"#
    );
}

#[tokio::test]
async fn a_bound_token_dies_with_its_service_account() {
    let (cp, _clock) = control_plane_with_clock().await;
    service_account(&cp, "default", "bot").await;
    let reply = request_token(&cp, "default", "bot", 3600).await;
    let token = reply.body["status"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    assert_eq!(whoami(&cp, &token).await.status, StatusCode::CREATED);
    send(
        &cp,
        Request::delete("/api/v1/namespaces/default/serviceaccounts/bot")
            .body(Body::empty())
            .expect("request"),
    )
    .await;
    eventually(PATIENCE, || async {
        whoami(&cp, &token).await.status == StatusCode::UNAUTHORIZED
    })
    .await;
}
