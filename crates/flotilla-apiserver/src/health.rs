//! `/healthz`, `/livez` and `/readyz` (and `/<endpoint>/<check>`), answered as kube-apiserver
//! answers them ([`crate::lifted::healthz`]), with the checks that mean something here: `ping`
//! and `log` (the server is serving), `etcd` (the store answers a status read within
//! [`STORE_TIMEOUT`]: with `--store etcd`, an instance that lost etcd is not ready, so a load
//! balancer in front of several stops sending it requests) and, on `/readyz`, `etcd-readiness`
//! (the same read, as kube-apiserver has both) and `shutdown` (fails once the process got its
//! shutdown signal, while `--shutdown-delay-duration` keeps it serving).
//!
//! Served before authentication (kube binds them to everyone through
//! `system:public-info-viewer`); a failure's reason is logged, never shown.

use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

use crate::lifted::healthz::{self, Checked};
use crate::server::ApiServer;

/// How long the store may take to answer the `etcd` check.
pub const STORE_TIMEOUT: Duration = Duration::from_secs(2);

const ENDPOINTS: [&str; 3] = ["healthz", "livez", "readyz"];

/// The answer for a health path, or `None` when `path` is not one.
pub(crate) async fn serve(server: &ApiServer, path: &str, query: Option<&str>) -> Option<Response> {
    let rest = path.strip_prefix('/')?;
    let (endpoint, check) = match rest.split_once('/') {
        Some((endpoint, check)) => (endpoint, Some(check)),
        None => (rest, None),
    };
    let endpoint = ENDPOINTS.into_iter().find(|e| *e == endpoint)?;
    let checks = run(server, endpoint).await;
    for failed in checks.iter().filter(|c| c.result.is_err()) {
        tracing::warn!(endpoint, check = failed.name, reason = ?failed.result, "health check failed");
    }
    let (status, body) = match check {
        Some(name) => match checks.iter().find(|c| c.name == name) {
            Some(checked) => healthz::single(checked),
            None => (404, "404 page not found\n".to_owned()),
        },
        None => {
            let mut verbose = false;
            let mut excluded = Vec::new();
            for (key, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
                match key.as_ref() {
                    "verbose" => verbose = true,
                    "exclude" => excluded.push(value.into_owned()),
                    _ => {}
                }
            }
            let excluded: Vec<&str> = excluded.iter().map(String::as_str).collect();
            healthz::root(endpoint, &checks, &excluded, verbose)
        }
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    Some(
        (
            status,
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            body,
        )
            .into_response(),
    )
}

async fn run(server: &ApiServer, endpoint: &str) -> Vec<Checked> {
    let store = match tokio::time::timeout(STORE_TIMEOUT, server.registry.store.status()).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer from the store within {STORE_TIMEOUT:?}")),
    };
    let mut checks = vec![
        Checked {
            name: "ping",
            result: Ok(()),
        },
        Checked {
            name: "log",
            result: Ok(()),
        },
        Checked {
            name: "etcd",
            result: store.clone(),
        },
    ];
    if endpoint == "readyz" {
        checks.push(Checked {
            name: "etcd-readiness",
            result: store,
        });
        checks.push(Checked {
            name: "shutdown",
            result: if server.is_shutting_down() {
                Err("process is shutting down".to_owned())
            } else {
                Ok(())
            },
        });
    }
    checks
}
