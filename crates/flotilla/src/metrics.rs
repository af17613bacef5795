//! The Prometheus endpoint of `flotilla up`: one registry for every component in the process
//! (the scheduler's `karmada_scheduler_*`, the controllers', ...), served as text on a plain
//! HTTP listener like Karmada's components serve theirs on `:8080` (`--metrics-bind-address`).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use prometheus_client::registry::Registry;

/// The content type of the Prometheus text format (OpenMetrics, as prometheus-client encodes).
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Encodes `registry` in the text format.
pub fn encode(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut out = String::new();
    prometheus_client::encoding::text::encode(&mut out, registry)?;
    Ok(out)
}

/// The router: `GET /metrics`, and `GET /healthz` for liveness probes.
pub fn router(registry: Arc<Registry>) -> axum::Router {
    axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let registry = registry.clone();
                async move {
                    match encode(&registry) {
                        Ok(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
                        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "encoding metrics failed")
                            .into_response(),
                    }
                }
            }),
        )
        .route("/healthz", axum::routing::get(|| async { "ok" }))
}

/// Binds `address` and serves the registry until `shutdown` is cancelled.
pub async fn serve(
    address: SocketAddr,
    registry: Arc<Registry>,
    shutdown: flotilla_runtime::Shutdown,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("listen for metrics on {address}"))?;
    let bound = listener.local_addr().context("read the metrics address")?;
    tracing::info!(address = %bound, "serving metrics on http://{bound}/metrics");
    Ok(serve_on(listener, registry, shutdown))
}

/// Serves the registry on a bound listener until `shutdown` is cancelled.
pub fn serve_on(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
    shutdown: flotilla_runtime::Shutdown,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let served = axum::serve(listener, router(registry))
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
        if let Err(error) = served {
            tracing::warn!(%error, "the metrics server stopped");
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_metrics_carry_karmada_names() {
        let metrics = flotilla_scheduler::run::Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics
            .schedule_attempts
            .get_or_create(&flotilla_scheduler::run::metrics::AttemptLabels {
                result: "scheduled".into(),
                schedule_type: "ReconcileSchedule".into(),
            })
            .inc();
        metrics
            .e2e_duration
            .get_or_create(&flotilla_scheduler::run::metrics::AttemptLabels {
                result: "scheduled".into(),
                schedule_type: "ReconcileSchedule".into(),
            })
            .observe(0.002);
        metrics
            .incoming_bindings
            .get_or_create(&flotilla_scheduler::run::metrics::IncomingLabels {
                event: "BindingAdd".into(),
            })
            .inc();
        let text = encode(&registry).expect("encodes");
        for name in [
            "karmada_scheduler_schedule_attempts_total{result=\"scheduled\",schedule_type=\"ReconcileSchedule\"} 1",
            "karmada_scheduler_e2e_scheduling_duration_seconds",
            "karmada_scheduler_queue_incoming_bindings_total",
            "karmada_scheduler_pending_workloads",
        ] {
            assert!(text.contains(name), "{name} missing from:\n{text}");
        }
    }

    #[tokio::test]
    async fn the_endpoint_serves_the_registry() {
        use tower::ServiceExt as _;
        let metrics = flotilla_scheduler::run::Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.pending_workloads.set(3);
        let response = router(Arc::new(registry))
            .oneshot(
                axum::http::Request::get("/metrics")
                    .body(axum::body::Body::empty())
                    .expect("request"),
            )
            .await
            .expect("served");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], CONTENT_TYPE);
        let body = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("body");
        let text = String::from_utf8(body.to_vec()).expect("UTF-8");
        assert!(
            text.contains("karmada_scheduler_pending_workloads 3"),
            "{text}"
        );
    }
}
