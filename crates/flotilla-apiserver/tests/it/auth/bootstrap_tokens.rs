//! Bootstrap tokens: authentication against their Secrets, expiry and the cleaner, and the
//! one anonymous path (`kube-public/cluster-info`).

use super::*;

const TOKEN: &str = "abcdef.0123456789abcdef";

async fn bootstrap_secret(cp: &Running, id: &str, extra: &[(&str, &str)]) -> Value {
    let mut string_data = json!({
        "token-id": id,
        "token-secret": "0123456789abcdef",
        "usage-bootstrap-authentication": "true",
    });
    for (key, value) in extra {
        string_data[*key] = (*value).into();
    }
    create(
        cp,
        "/api/v1/namespaces/kube-system/secrets",
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("bootstrap-token-{id}")},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": string_data,
        }),
    )
    .await
}

#[tokio::test]
async fn a_bootstrap_token_is_its_secrets_bootstrap_user() {
    let (cp, _clock) = control_plane_with_clock().await;
    assert_unauthorized(&whoami(&cp, TOKEN).await);
    bootstrap_secret(
        &cp,
        "abcdef",
        &[(
            "auth-extra-groups",
            "system:bootstrappers:karmada:default-cluster-token",
        )],
    )
    .await;
    let reply = whoami(&cp, TOKEN).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(
        reply.body["status"]["userInfo"],
        json!({"username": "system:bootstrap:abcdef", "groups": [
            "system:bootstrappers",
            "system:bootstrappers:karmada:default-cluster-token",
            "system:authenticated",
        ]})
    );
    assert_unauthorized(&whoami(&cp, "abcdef.0123456789abcdee").await);
    // Deleting the Secret revokes the token (once the watch cache has the deletion).
    let deleted = send(
        &cp,
        Request::delete("/api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef")
            .body(Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    eventually(PATIENCE, || async {
        whoami(&cp, TOKEN).await.status == StatusCode::UNAUTHORIZED
    })
    .await;
}

#[tokio::test]
async fn a_token_without_the_authentication_usage_or_with_a_foreign_group_is_refused() {
    let (cp, _clock) = control_plane_with_clock().await;
    create(
        &cp,
        "/api/v1/namespaces/kube-system/secrets",
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "bootstrap-token-abcdef"},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": {"token-id": "abcdef", "token-secret": "0123456789abcdef"},
        }),
    )
    .await;
    assert_unauthorized(&whoami(&cp, TOKEN).await);
    bootstrap_secret(&cp, "ghijkl", &[("auth-extra-groups", "system:masters")]).await;
    assert_unauthorized(&whoami(&cp, "ghijkl.0123456789abcdef").await);
}

#[tokio::test]
async fn expired_tokens_stop_authenticating_and_the_cleaner_deletes_them() {
    let (cp, clock) = control_plane_with_clock().await;
    // Already expired when written: deleted as soon as the cleaner sees it.
    bootstrap_secret(&cp, "zzzzzz", &[("expiration", "2025-12-31T23:59:59Z")]).await;
    let uri = "/api/v1/namespaces/kube-system/secrets/bootstrap-token-zzzzzz";
    eventually(PATIENCE, || async {
        send(&cp, get(uri)).await.status == StatusCode::NOT_FOUND
    })
    .await;
    // Expiring in two seconds: valid until then, refused and deleted after.
    bootstrap_secret(&cp, "abcdef", &[("expiration", "2026-01-01T00:00:02Z")]).await;
    assert_eq!(whoami(&cp, TOKEN).await.status, StatusCode::CREATED);
    clock.advance(3);
    assert_unauthorized(&whoami(&cp, TOKEN).await);
    let uri = "/api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef";
    eventually(PATIENCE, || async {
        send(&cp, get(uri)).await.status == StatusCode::NOT_FOUND
    })
    .await;
}
