//! Serving the API over HTTPS: the TLS accept loop, HTTP/1.1 and HTTP/2 on one listener, the
//! caller's identity from its client certificate or bearer token, and graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt as _;

use crate::auth::authn::Authenticator;
use crate::server::{ApiServer, Identity};

/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long open requests (watches) get to finish after shutdown is asked for.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The identity of a request from its connection's certificate user, its path and its headers;
/// a request whose credentials no authenticator accepts is anonymous (and gets 401). A request
/// without credentials is `system:anonymous` on the paths anonymous requests may reach
/// ([`crate::auth::authn::anonymous_user`]).
pub async fn identify(
    authenticator: &Authenticator,
    certificate_user: Option<&crate::auth::authn::UserInfo>,
    path: &str,
    headers: &http::HeaderMap,
) -> Identity {
    let header = headers
        .get(http::header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    let user = match authenticator
        .authenticate_current(certificate_user, header)
        .await
    {
        Ok(Some(user)) => Some(user),
        Ok(None) => crate::auth::authn::anonymous_user(path),
        Err(error) => {
            tracing::debug!(%error, "authentication failed");
            None
        }
    };
    Identity(user)
}

/// Serves `server` on `listener` until `shutdown` completes, then closes connections.
pub async fn serve_tls(
    listener: TcpListener,
    server: ApiServer,
    tls: Arc<rustls::ServerConfig>,
    authenticator: Arc<Authenticator>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let acceptor = TlsAcceptor::from(tls);
    let delay = server.shutdown_delay;
    let flag = server.clone();
    let router = server.router();
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    let mut draining_at: Option<tokio::time::Instant> = None;
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown, if draining_at.is_none() => {
                // kube-apiserver's shutdown: `/readyz` fails at once; requests are still
                // served for the shutdown delay, so load balancers can take this instance out.
                flag.begin_shutdown();
                if delay.is_zero() {
                    break;
                }
                tracing::info!(?delay, "shutting down: /readyz fails, still serving for the delay");
                draining_at = Some(tokio::time::Instant::now() + delay);
                continue;
            }
            () = sleep_until(draining_at) => break,
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let router = router.clone();
        let authenticator = authenticator.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let (stream, certificate_user) = match tokio::time::timeout(
                HANDSHAKE_TIMEOUT,
                crate::auth::serve::accept(&acceptor, tcp),
            )
            .await
            {
                Ok(Ok(accepted)) => accepted,
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let service =
                tower::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let router = router.clone();
                    let authenticator = authenticator.clone();
                    let certificate_user = certificate_user.clone();
                    async move {
                        let identity = identify(
                            &authenticator,
                            certificate_user.as_ref(),
                            request.uri().path(),
                            request.headers(),
                        )
                        .await;
                        let mut request = request.map(axum::body::Body::new);
                        request.extensions_mut().insert(identity);
                        router.oneshot(request).await
                    }
                });
            let builder = auto::Builder::new(TokioExecutor::new());
            let connection = builder.serve_connection_with_upgrades(
                TokioIo::new(stream),
                TowerToHyperService::new(service),
            );
            if let Err(error) = watcher.watch(connection.into_owned()).await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("closing connections still open after {DRAIN_TIMEOUT:?}");
    }
    Ok(())
}

/// Sleeps until `at`, or forever without one.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
