//! The API server's share of scheduling one binding, for profilers: what the live scheduler sends
//! for each ResourceBinding (a merge patch of `spec.clusters` and the applied-placement annotation,
//! a merge patch of the status, an Event on the binding and one on its template), through the
//! tower service on the memory store, one thread, so `valgrind --tool=callgrind` counts repeat:
//!
//! ```text
//! cargo build --release -p flotilla-apiserver --example binding_profile
//! valgrind --tool=callgrind target/release/examples/binding_profile 1000
//! ```
//!
//! Argument: bindings (default 1,000). The bindings are created first (timed apart), then each is
//! "scheduled". Prints microseconds per create and per scheduled binding. Compare runs of N and
//! N + 500 to take out the one-time costs (schemas are built on first use).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::{Builder, Identity};
use flotilla_store::{MemoryStore, Store};
use http::{Method, Request};
use tower::ServiceExt as _;

/// A binding as the detector creates it (the shape `flotilla bench schedule` uses).
fn binding(i: usize) -> String {
    format!(
        r#"{{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","metadata":{{"name":"app-{i}-deployment","namespace":"bench","labels":{{"propagationpolicy.karmada.io/permanent-id":"3c1f9a52-7d64-4b8e-9f0a-5e2d8c6b1a47"}}}},"spec":{{"resource":{{"apiVersion":"apps/v1","kind":"Deployment","namespace":"bench","name":"app-{i}","uid":"uid-{i:08x}"}},"replicas":{replicas},"replicaRequirements":{{"resourceRequest":{{"cpu":"500m","memory":"1Gi"}}}},"placement":{{"clusterAffinity":{{"labelSelector":{{"matchLabels":{{"tier":"gpu"}}}}}},"replicaScheduling":{{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted","weightPreference":{{"staticWeightList":[{{"targetCluster":{{"clusterNames":["member-001"]}},"weight":2}},{{"targetCluster":{{"clusterNames":["member-002","member-003"]}},"weight":1}}]}}}}}}}}}}"#,
        replicas = 1 + (i * 7) % 40
    )
}

/// The scheduler's result patch (`run/status.rs`, `result_patch`).
fn result_patch() -> &'static str {
    r#"{"metadata":{"annotations":{"policy.karmada.io/applied-placement":"{\"clusterAffinity\":{\"labelSelector\":{\"matchLabels\":{\"tier\":\"gpu\"}}},\"replicaScheduling\":{\"replicaSchedulingType\":\"Divided\",\"replicaDivisionPreference\":\"Weighted\",\"weightPreference\":{\"staticWeightList\":[{\"targetCluster\":{\"clusterNames\":[\"member-001\"]},\"weight\":2},{\"targetCluster\":{\"clusterNames\":[\"member-002\",\"member-003\"]},\"weight\":1}]}}}"}},"spec":{"clusters":[{"name":"member-001","replicas":4},{"name":"member-002","replicas":2},{"name":"member-003","replicas":2}]}}"#
}

/// The scheduler's status patch (`run/status.rs`, `status_patch`).
fn status_patch() -> &'static str {
    r#"{"status":{"conditions":[{"type":"Scheduled","status":"True","reason":"Success","message":"Binding has been scheduled successfully.","lastTransitionTime":"2026-12-04T10:00:00Z"}],"schedulerObservedGeneration":1,"lastScheduledTime":"2026-12-04T10:00:00Z"}}"#
}

/// A v1 Event as the scheduler's recorder posts it.
fn event(i: usize, kind: &str, name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Event","metadata":{{"name":"{name}.{i:016x}","namespace":"bench"}},"involvedObject":{{"apiVersion":"work.karmada.io/v1alpha2","kind":"{kind}","name":"{name}","namespace":"bench","uid":"uid-{i:08x}"}},"reason":"ScheduleBindingSucceed","message":"Binding has been scheduled successfully. Result: {{member-001:4, member-002:2, member-003:2}}","source":{{"component":"karmada-scheduler"}},"firstTimestamp":"2026-12-04T10:00:00Z","lastTimestamp":"2026-12-04T10:00:00Z","count":1,"type":"Normal","eventTime":null,"reportingComponent":"karmada-scheduler","reportingInstance":""}}"#
    )
}

fn admin() -> Identity {
    Identity(Some(UserInfo {
        name: "profile-admin".into(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        ..Default::default()
    }))
}

type Router = axum::Router;

async fn send(
    router: &Router,
    method: Method,
    uri: &str,
    content_type: &str,
    body: String,
    expect: http::StatusCode,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::USER_AGENT, "kube-rs/5.0.0")
        .body(Body::from(body))?;
    request.extensions_mut().insert(admin());
    let response = router.clone().oneshot(request).await?;
    if response.status() != expect {
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
        return Err(format!("{uri}: {status}: {}", String::from_utf8_lossy(&body)).into());
    }
    axum::body::to_bytes(response.into_body(), usize::MAX).await?;
    // Let the watch cache feeder take in the change, as a real server's workers would.
    tokio::task::yield_now().await;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let bindings: usize = std::env::args().nth(1).map_or(Ok(1_000), |a| a.parse())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let running = Builder::new(store).start().await?;
        let router = running.server.clone().router();
        let json = "application/json";
        let merge = "application/merge-patch+json";
        send(
            &router,
            Method::POST,
            "/api/v1/namespaces",
            json,
            r#"{"metadata":{"name":"bench"}}"#.to_owned(),
            http::StatusCode::CREATED,
        )
        .await?;
        let bindings_uri = "/apis/work.karmada.io/v1alpha2/namespaces/bench/resourcebindings";
        let started = Instant::now();
        for i in 0..bindings {
            send(
                &router,
                Method::POST,
                bindings_uri,
                json,
                binding(i),
                http::StatusCode::CREATED,
            )
            .await?;
        }
        let per_create = started.elapsed().as_secs_f64() * 1e6 / bindings.max(1) as f64;
        let started = Instant::now();
        for i in 0..bindings {
            let name = format!("app-{i}-deployment");
            let uri = format!("{bindings_uri}/{name}");
            let ok = http::StatusCode::OK;
            send(&router, Method::PATCH, &uri, merge, result_patch().to_owned(), ok).await?;
            let status = format!("{uri}/status");
            send(&router, Method::PATCH, &status, merge, status_patch().to_owned(), ok).await?;
            let events = "/api/v1/namespaces/bench/events";
            let created = http::StatusCode::CREATED;
            let on_binding = event(i, "ResourceBinding", &name);
            send(&router, Method::POST, events, json, on_binding, created).await?;
            let on_template = event(i, "Deployment", &format!("app-{i}"));
            send(&router, Method::POST, events, json, on_template, created).await?;
        }
        let per_binding = started.elapsed().as_secs_f64() * 1e6 / bindings.max(1) as f64;
        if std::env::var_os("PROFILE_SHOW").is_some() {
            let mut request = Request::get(format!("{bindings_uri}/app-0-deployment"))
                .header(http::header::ACCEPT, "application/json")
                .body(Body::empty())?;
            request.extensions_mut().insert(admin());
            let response = router.clone().oneshot(request).await?;
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
            println!("{}", String::from_utf8_lossy(&bytes));
        }
        println!(
            "{bindings} bindings: create {per_create:.1} us each; scheduled (2 patches + 2 Events) {per_binding:.1} us each"
        );
        Ok(())
    })
}
