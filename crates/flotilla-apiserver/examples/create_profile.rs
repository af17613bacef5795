//! A focused micro-benchmark of the API server's hot paths, for profilers: Deployment creates
//! through the tower service (no TLS, no sockets) on the memory store, then lists of them.
//! Everything runs on one thread, so `valgrind --tool=callgrind` counts are repeatable:
//!
//! ```text
//! cargo build --release -p flotilla-apiserver --example create_profile
//! valgrind --tool=callgrind target/release/examples/create_profile 2000 2
//! ```
//!
//! Arguments: creates (default 2,000), lists (default 2). Prints microseconds per create and
//! milliseconds per list. The first create of a kind builds its schema for field validation
//! once (about 70 M instructions): compare runs of N and N + 500 creates to get the cost of
//! 500.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use flotilla_apiserver::auth::authn::UserInfo;
use flotilla_apiserver::{Builder, Identity};
use flotilla_store::{MemoryStore, Store};
use http::Request;
use tower::ServiceExt as _;

/// The body kube-rs sends for the `flotilla bench apiserver` Deployment.
fn body(i: usize) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"labels":{{"app":"bench"}},"name":"bench-{i:07}"}},"spec":{{"replicas":3,"selector":{{"matchLabels":{{"app":"bench"}}}},"template":{{"metadata":{{"labels":{{"app":"bench"}}}},"spec":{{"containers":[{{"image":"nginx:1.27","name":"main","ports":[{{"containerPort":80}}],"resources":{{"requests":{{"cpu":"100m","memory":"128Mi"}}}}}}]}}}}}}}}"#
    )
}

fn admin() -> Identity {
    Identity(Some(UserInfo {
        name: "profile-admin".into(),
        groups: vec!["system:masters".into(), "system:authenticated".into()],
        ..Default::default()
    }))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let creates: usize = args.next().map_or(Ok(2_000), |a| a.parse())?;
    let lists: usize = args.next().map_or(Ok(2), |a| a.parse())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let running = Builder::new(store).start().await?;
        let router = running.server.clone().router();
        let started = Instant::now();
        for i in 0..creates {
            let mut request = Request::post("/apis/apps/v1/namespaces/default/deployments")
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "application/json")
                .header(http::header::USER_AGENT, "kube-rs/5.0.0")
                .body(Body::from(body(i)))?;
            request.extensions_mut().insert(admin());
            let response = router.clone().oneshot(request).await?;
            if response.status() != http::StatusCode::CREATED {
                return Err(format!("create {i}: {}", response.status()).into());
            }
            axum::body::to_bytes(response.into_body(), usize::MAX).await?;
            // Let the watch cache feeder and the garbage collector take in the change, as
            // the worker threads of a real server would.
            tokio::task::yield_now().await;
        }
        let per_create = started.elapsed().as_secs_f64() * 1e6 / creates.max(1) as f64;
        println!("{creates} creates: {per_create:.1} us each");
        for _ in 0..lists {
            let mut request = Request::get("/apis/apps/v1/namespaces/default/deployments")
                .header(http::header::ACCEPT, "application/json")
                .body(Body::empty())?;
            request.extensions_mut().insert(admin());
            let started = Instant::now();
            let response = router.clone().oneshot(request).await?;
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await?;
            println!(
                "list: {:.1} ms, {} bytes",
                started.elapsed().as_secs_f64() * 1e3,
                bytes.len()
            );
        }
        Ok(())
    })
}
