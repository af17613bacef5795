//! Serving one simulated cluster's API over HTTPS with injectable network faults: `down` closes
//! the listening socket (connections are refused), `blackhole` accepts and never answers,
//! `slow` delays every response, `readyz-fail` answers `/readyz` with 500 while the API works.
//! Entering `down` or `blackhole` also drops open connections, as a dead or partitioned server
//! would. The identity comes from the client certificate, as in `flotilla up`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use flotilla_apiserver::ApiServer;
use flotilla_apiserver::auth::authn::Authenticator;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// How the cluster's network behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Up,
    /// Connections refused.
    Down,
    /// Connections accepted, never answered.
    Blackhole,
}

/// The network faults in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetFault {
    pub mode: Mode,
    /// Added before every response.
    pub delay: Duration,
    /// `/readyz` answers 500.
    pub readyz_fail: bool,
}

const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves until the task is aborted. `listener` is bound to `address`; `down` closes it and the
/// return to `up` binds the same address again.
pub async fn serve(
    mut listener: Option<TcpListener>,
    address: SocketAddr,
    server: ApiServer,
    tls: Arc<rustls::ServerConfig>,
    authenticator: Authenticator,
    faults: watch::Receiver<NetFault>,
) {
    let acceptor = TlsAcceptor::from(tls);
    let router = server.router();
    let authenticator = Arc::new(authenticator);
    let mut changes = faults.clone();
    loop {
        let mode = changes.borrow_and_update().mode;
        if mode == Mode::Down {
            listener = None;
            if changes.changed().await.is_err() {
                return;
            }
            continue;
        }
        let current = match &listener {
            Some(l) => l,
            None => match TcpListener::bind(address).await {
                Ok(l) => listener.insert(l),
                Err(error) => {
                    tracing::warn!(%address, %error, "cannot listen again; retrying");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            },
        };
        let (tcp, peer) = tokio::select! {
            accepted = current.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::debug!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let mut faults = faults.clone();
        if mode == Mode::Blackhole {
            // Hold the connection, read nothing, answer nothing, until the fault is lifted.
            tokio::spawn(async move {
                let _held = tcp;
                while faults.changed().await.is_ok() {
                    if faults.borrow().mode != Mode::Blackhole {
                        break;
                    }
                }
            });
            continue;
        }
        let acceptor = acceptor.clone();
        let router = router.clone();
        let authenticator = authenticator.clone();
        tokio::spawn(async move {
            let accepted = tokio::time::timeout(
                HANDSHAKE_TIMEOUT,
                flotilla_apiserver::auth::serve::accept(&acceptor, tcp),
            )
            .await;
            let (stream, certificate_user) = match accepted {
                Ok(Ok(accepted)) => accepted,
                _ => {
                    tracing::debug!(%peer, "TLS handshake failed");
                    return;
                }
            };
            let requests = faults.clone();
            let service =
                tower::service_fn(move |mut request: http::Request<hyper::body::Incoming>| {
                    let router = router.clone();
                    let fault = *requests.borrow();
                    let authenticator = authenticator.clone();
                    let certificate_user = certificate_user.clone();
                    async move {
                        // Certificates, and service-account tokens such as `flotilla join` makes.
                        let identity = flotilla_apiserver::serve::identify(
                            &authenticator,
                            certificate_user.as_ref(),
                            request.uri().path(),
                            request.headers(),
                        )
                        .await;
                        request.extensions_mut().insert(identity);
                        if !fault.delay.is_zero() {
                            tokio::time::sleep(fault.delay).await;
                        }
                        if fault.readyz_fail && request.uri().path().starts_with("/readyz") {
                            let mut response = http::Response::new(Body::from(
                                "[-]etcd failed: reason withheld\nreadyz check failed\n",
                            ));
                            *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
                            return Ok::<_, std::convert::Infallible>(response);
                        }
                        router.oneshot(request.map(Body::new)).await
                    }
                });
            let builder = auto::Builder::new(TokioExecutor::new());
            let connection = builder.serve_connection_with_upgrades(
                TokioIo::new(stream),
                TowerToHyperService::new(service),
            );
            tokio::pin!(connection);
            loop {
                tokio::select! {
                    result = &mut connection => {
                        if let Err(error) = result {
                            tracing::debug!(%peer, %error, "connection ended with an error");
                        }
                        return;
                    }
                    changed = faults.changed() => {
                        let cut = changed.is_err() || faults.borrow().mode != Mode::Up;
                        if cut {
                            return;
                        }
                    }
                }
            }
        });
    }
}
