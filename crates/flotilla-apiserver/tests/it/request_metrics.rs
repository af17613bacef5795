//! kube-apiserver's request metrics, counted through the router and served at `/metrics` on the
//! API port to callers allowed `get` on that URL.

use std::sync::Arc;

use axum::body::Body;
use flotilla_apiserver::auth::authn::UserInfo;
use http::{Request, StatusCode};
use serde_json::json;
use tower::ServiceExt as _;

use crate::support::{
    admin, control_plane, deployment, get, json, merge, send, send_as, with_body,
};

/// The `/metrics` text as `user`: status and body.
async fn scrape(cp: &flotilla_apiserver::Running, user: UserInfo) -> (StatusCode, String) {
    let mut request = get("/metrics");
    request
        .extensions_mut()
        .insert(flotilla_apiserver::Identity(Some(user)));
    let response = cp.server.clone().router().oneshot(request).await.unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test]
async fn requests_are_counted_with_kubes_labels_and_served_on_metrics() {
    let cp = control_plane().await;
    let mut registry = prometheus_client::registry::Registry::default();
    cp.server.register_metrics(&mut registry);
    let registry = Arc::new(registry);
    cp.server.metrics_text().bind(Arc::new(move || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry)?;
        Ok(text)
    }));

    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    assert_eq!(
        send(&cp, json("POST", deployments, &deployment("web", 2)))
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        send(&cp, get(&format!("{deployments}/web"))).await.status,
        StatusCode::OK
    );
    assert_eq!(
        send(&cp, get(&format!("{deployments}/web"))).await.status,
        StatusCode::OK
    );
    assert_eq!(send(&cp, get(deployments)).await.status, StatusCode::OK);
    assert_eq!(
        send(&cp, get("/apis/apps/v1/deployments")).await.status,
        StatusCode::OK
    );
    assert_eq!(
        send(&cp, get(&format!("{deployments}/missing")))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(
            &cp,
            merge(
                &format!("{deployments}/web/scale"),
                json!({"spec": {"replicas": 3}})
            )
        )
        .await
        .status,
        StatusCode::OK
    );
    let apply = with_body(
        "PATCH",
        &format!("{deployments}/web?fieldManager=tester&force=true"),
        "application/apply-patch+yaml",
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":4}}"#,
    );
    assert_eq!(send(&cp, apply).await.status, StatusCode::OK);
    assert_eq!(
        send(
            &cp,
            json(
                "POST",
                &format!("{deployments}?dryRun=All"),
                &deployment("dry", 1)
            )
        )
        .await
        .status,
        StatusCode::CREATED
    );
    // A watch that ends by itself is counted when it ends, with its whole duration.
    let watch = send(
        &cp,
        get(&format!("{deployments}?watch=true&timeoutSeconds=1")),
    )
    .await;
    assert_eq!(watch.status, StatusCode::OK);
    assert_eq!(send(&cp, get("/apis")).await.status, StatusCode::OK);

    let (status, text) = scrape(&cp, admin()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let total = |labels: &str| sample(&text, &format!("apiserver_request_total{{{labels}}}"));
    let resource = |verb: &str, dry_run: &str, sub: &str, scope: &str, code: u16| {
        format!(
            "verb=\"{verb}\",dry_run=\"{dry_run}\",group=\"apps\",version=\"v1\",resource=\"deployments\",subresource=\"{sub}\",scope=\"{scope}\",component=\"apiserver\",code=\"{code}\""
        )
    };
    assert_eq!(
        total(&resource("POST", "", "", "resource", 201)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("POST", "All", "", "resource", 201)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("GET", "", "", "resource", 200)),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("GET", "", "", "resource", 404)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("LIST", "", "", "namespace", 200)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("LIST", "", "", "cluster", 200)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("PATCH", "", "scale", "resource", 200)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("APPLY", "", "", "resource", 200)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(&resource("WATCH", "", "", "namespace", 200)),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        total(
            "verb=\"GET\",dry_run=\"\",group=\"\",version=\"\",resource=\"\",subresource=\"/apis\",scope=\"\",component=\"apiserver\",code=\"200\""
        ),
        Some(1.0),
        "{text}"
    );
    // The watch lasted about its timeout.
    let watch_seconds = sample(
        &text,
        "apiserver_request_duration_seconds_sum{verb=\"WATCH\",dry_run=\"\",group=\"apps\",version=\"v1\",resource=\"deployments\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"}",
    )
    .expect("the watch's duration");
    assert!(watch_seconds >= 0.9, "{watch_seconds}");
    assert_eq!(
        sample(
            &text,
            "apiserver_longrunning_requests{verb=\"WATCH\",group=\"apps\",version=\"v1\",resource=\"deployments\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"}"
        ),
        Some(0.0),
        "{text}"
    );
    // The scrape itself is being served: one read-only request in flight.
    assert_eq!(
        sample(
            &text,
            "apiserver_current_inflight_requests{request_kind=\"readOnly\"}"
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "apiserver_current_inflight_requests{request_kind=\"mutating\"}"
        ),
        Some(0.0),
        "{text}"
    );
    assert!(
        text.lines().any(
            |l| l.starts_with("apiserver_request_duration_seconds_bucket{")
                && l.contains("verb=\"POST\"")
                && l.contains("le=\"0.005\"")
        ),
        "{text}"
    );
}

#[tokio::test]
async fn an_open_watch_is_a_long_running_request_until_it_ends() {
    let cp = control_plane().await;
    let mut request = Request::get("/api/v1/namespaces/default/configmaps?watch=1")
        .body(Body::empty())
        .unwrap();
    request
        .extensions_mut()
        .insert(flotilla_apiserver::Identity(Some(admin())));
    let response = cp.server.clone().router().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let open = "apiserver_longrunning_requests{verb=\"WATCH\",group=\"\",version=\"v1\",resource=\"configmaps\",subresource=\"\",scope=\"namespace\",component=\"apiserver\"}";
    let read = |cp: &flotilla_apiserver::Running| {
        let mut registry = prometheus_client::registry::Registry::default();
        cp.server.metrics().register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text
    };
    assert_eq!(sample(&read(&cp), open), Some(1.0));
    assert_eq!(
        sample(
            &read(&cp),
            "apiserver_request_total{verb=\"WATCH\",dry_run=\"\",group=\"\",version=\"v1\",resource=\"configmaps\",subresource=\"\",scope=\"namespace\",component=\"apiserver\",code=\"200\"}"
        ),
        None,
        "counted only when it ends"
    );
    drop(response);
    assert_eq!(sample(&read(&cp), open), Some(0.0));
}

#[tokio::test]
async fn metrics_need_get_on_the_metrics_url() {
    let cp = control_plane().await;
    cp.server
        .metrics_text()
        .bind(Arc::new(|| Ok("# EOF\n".to_owned())));
    let nobody = UserInfo {
        name: "nobody".into(),
        groups: vec!["system:authenticated".into()],
        ..Default::default()
    };
    let (status, body) = scrape(&cp, nobody).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("cannot get path \\\"/metrics\\\""), "{body}");
    // kube's system:monitoring group may scrape.
    let prometheus = UserInfo {
        name: "prometheus".into(),
        groups: vec!["system:monitoring".into(), "system:authenticated".into()],
        ..Default::default()
    };
    let (status, body) = scrape(&cp, prometheus).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, "# EOF\n");
    let reply = send_as(&cp, None, get("/metrics")).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn karmadas_admission_is_counted_under_its_webhook_paths() {
    let cp = control_plane().await;
    let mut registry = prometheus_client::registry::Registry::default();
    cp.server.register_metrics(&mut registry);
    let policy = |name: &str, placement: serde_json::Value| {
        json!({
            "apiVersion": "policy.karmada.io/v1alpha1",
            "kind": "PropagationPolicy",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
                "placement": placement,
            },
        })
    };
    let policies = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
    assert_eq!(
        send(&cp, json("POST", policies, &policy("good", json!({}))))
            .await
            .status,
        StatusCode::CREATED
    );
    // Refused by validation: the webhook still answered (200, allowed: false).
    let refused = policy(
        "bad",
        json!({"replicaScheduling": {"replicaSchedulingType": "Sideways"}}),
    );
    assert_eq!(
        send(&cp, json("POST", policies, &refused)).await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    // Deployments are no webhook's business.
    send(
        &cp,
        json(
            "POST",
            "/apis/apps/v1/namespaces/default/deployments",
            &deployment("web", 1),
        ),
    )
    .await;
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    let count = |webhook: &str| {
        sample(
            &text,
            &format!(
                "controller_runtime_webhook_requests_total{{webhook=\"{webhook}\",code=\"200\"}}"
            ),
        )
    };
    assert_eq!(count("/mutate-propagationpolicy"), Some(2.0), "{text}");
    assert_eq!(count("/validate-propagationpolicy"), Some(2.0), "{text}");
    assert_eq!(count("/validate-overridepolicy"), Some(0.0), "{text}");
}
