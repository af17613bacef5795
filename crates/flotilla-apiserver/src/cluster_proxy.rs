//! The cluster proxy, `/apis/cluster.karmada.io/v1alpha1/clusters/{name}/proxy/{path}`: after
//! authentication, a caller allowed the `clusters/proxy` subresource (verb from the method, as
//! for kube-apiserver's connect subresources) has the request handed to the injected
//! [`ClusterProxy`], which forwards it to the member. This crate knows nothing of members: the
//! binary injects the implementation with [`crate::Builder::cluster_proxy`].
//!
//! Upgrades (`kubectl exec`/`attach`/`port-forward` through the proxy: WebSocket, or SPDY for
//! older clients) pass through as kube-apiserver's upgrade-aware proxy passes them: the request
//! keeps its `Connection: Upgrade` and `Upgrade` headers, and when the member answers
//! `101 Switching Protocols` the caller's connection and the member's are spliced byte for byte
//! until either side closes.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode};
use http_body_util::BodyExt as _;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;

use crate::auth::authn::UserInfo;
use crate::auth::authz::{RequestAttributes, forbidden_error};
use crate::error::ApiError;
use crate::server::{ApiServer, MAX_BODY_BYTES, error_response};

/// The body type of proxied responses (streamed).
pub type ProxyBody = Body;

/// What the server calls for a proxy request it has authorized.
pub trait ClusterProxy: Send + Sync + fmt::Debug {
    /// Forwards `request` (URI: the member path and query, e.g. `/api/v1/nodes?watch=1`) to the
    /// member `cluster` on behalf of `caller` (authenticated, and allowed `clusters/proxy`).
    fn forward(
        &self,
        cluster: String,
        caller: UserInfo,
        request: http::Request<bytes::Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<http::Response<ProxyBody>, ApiError>> + Send>>;
}

/// A shared hook.
pub type SharedClusterProxy = Arc<dyn ClusterProxy>;

const PREFIX: &str = "/apis/cluster.karmada.io/v1alpha1/clusters/";

/// `(cluster, member path)` when `path` is a cluster proxy path.
pub fn target(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(PREFIX)?;
    let (name, rest) = rest.split_once('/')?;
    let member = rest.strip_prefix("proxy")?;
    if !(member.is_empty() || member.starts_with('/')) || name.is_empty() {
        return None;
    }
    Some((name, member))
}

/// The verb of a connect request (kube-apiserver's mapping of HTTP methods).
pub(crate) fn verb(method: &Method) -> String {
    match *method {
        Method::GET | Method::HEAD => "get".into(),
        Method::POST => "create".into(),
        Method::PUT => "update".into(),
        Method::PATCH => "patch".into(),
        Method::DELETE => "delete".into(),
        ref other => other.as_str().to_lowercase(),
    }
}

/// Copies bytes both ways between the caller's upgraded connection and the member's until
/// either side closes.
async fn splice(cluster: String, caller: OnUpgrade, member: OnUpgrade) {
    let (caller, member) = tokio::join!(caller, member);
    match (caller, member) {
        (Ok(caller), Ok(member)) => {
            let mut caller = TokioIo::new(caller);
            let mut member = TokioIo::new(member);
            match tokio::io::copy_bidirectional(&mut caller, &mut member).await {
                Ok((up, down)) => {
                    tracing::debug!(%cluster, up, down, "cluster proxy: upgraded stream closed");
                }
                Err(error) => {
                    tracing::debug!(%cluster, %error, "cluster proxy: upgraded stream ended");
                }
            }
        }
        (Err(error), _) | (_, Err(error)) => {
            tracing::debug!(%cluster, %error, "cluster proxy: upgrade failed");
        }
    }
}

/// Authorizes and forwards one proxy request.
pub(crate) async fn serve(
    server: &ApiServer,
    user: &UserInfo,
    cluster: &str,
    member_path: &str,
    mut request: Request,
) -> Response {
    let path = request.uri().path().to_owned();
    let verb = verb(request.method());
    let attributes = RequestAttributes {
        user,
        verb: &verb,
        group: "cluster.karmada.io",
        resource: "clusters",
        subresource: "proxy",
        namespace: None,
        name: Some(cluster),
        path: &path,
    };
    let decision = server.authorizer.authorize(&attributes);
    if !decision.allowed {
        return error_response(&forbidden_error(&attributes, &decision));
    }
    let Some(proxy) = server.cluster_proxy.clone() else {
        return error_response(&ApiError::new(
            503,
            "ServiceUnavailable",
            "the cluster proxy is not enabled on this server",
        ));
    };
    let member_uri = match request.uri().query() {
        Some(q) => format!(
            "{}?{q}",
            if member_path.is_empty() {
                "/"
            } else {
                member_path
            }
        ),
        None => if member_path.is_empty() {
            "/"
        } else {
            member_path
        }
        .to_owned(),
    };
    // Taken before the body is read: the caller's side of an upgrade (hyper offers one only
    // for requests that ask to switch protocols), spliced to the member's once the member
    // answers 101.
    let caller_upgrade = hyper::upgrade::on(&mut request);
    let (parts, body) = request.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return error_response(&ApiError::new(
                413,
                "RequestEntityTooLarge",
                "the request body is too large for the cluster proxy",
            ));
        }
    };
    let mut builder = http::Request::builder()
        .method(parts.method)
        .uri(member_uri);
    for (name, value) in &parts.headers {
        builder = builder.header(name, value);
    }
    let forwarded = match builder.body(body) {
        Ok(r) => r,
        Err(e) => return error_response(&ApiError::bad_request(e.to_string())),
    };
    match proxy
        .forward(cluster.to_owned(), user.clone(), forwarded)
        .await
    {
        Ok(mut response) if response.status() == StatusCode::SWITCHING_PROTOCOLS => {
            let member_upgrade = hyper::upgrade::on(&mut response);
            tokio::spawn(splice(cluster.to_owned(), caller_upgrade, member_upgrade));
            response
        }
        Ok(response) => response,
        Err(error) => error_response(&error),
    }
}
