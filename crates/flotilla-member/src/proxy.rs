//! Forwarding one HTTP request to a member for the cluster proxy, with the credentials of the
//! client given (the control plane's, or the member's impersonator acting as the caller). The
//! caller's own credentials, any `Impersonate-*` headers it sent and hop-by-hop headers are
//! dropped; the response body is streamed back as it arrives (watches work). An upgrade request
//! (`Connection: Upgrade` with an `Upgrade` header: exec, attach, port-forward) keeps those two
//! headers, and so does the member's `101 Switching Protocols` answer, whose extensions carry
//! the member side of the upgraded connection (`hyper::upgrade::on`).

/// Request headers never forwarded: the caller's credentials and identity, and hop-by-hop
/// headers (RFC 9110 §7.6.1).
const DROPPED: &[&str] = &[
    "authorization",
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

fn dropped(name: &http::HeaderName, upgrade: bool) -> bool {
    let name = name.as_str();
    if upgrade && matches!(name, "connection" | "upgrade") {
        return false;
    }
    DROPPED.contains(&name) || name.starts_with("impersonate-")
}

/// Whether `headers` ask to switch protocols (`Connection: upgrade` and an `Upgrade` header).
pub fn is_upgrade(headers: &http::HeaderMap) -> bool {
    headers.contains_key(http::header::UPGRADE)
        && headers
            .get_all(http::header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
}

/// Who the member should take a proxied request to come from: `Impersonate-User` and one
/// `Impersonate-Group` per group, as Karmada's proxy sends them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Impersonation {
    pub user: String,
    pub groups: Vec<String>,
}

impl Impersonation {
    /// The caller `user` in `groups`, leaving out `system:authenticated` and
    /// `system:unauthenticated` (the member adds them itself; Karmada's `SkipGroup`).
    pub fn of(user: &str, groups: &[String]) -> Self {
        Self {
            user: user.to_owned(),
            groups: groups
                .iter()
                .filter(|g| {
                    !matches!(
                        g.as_str(),
                        "system:authenticated" | "system:unauthenticated"
                    )
                })
                .cloned()
                .collect(),
        }
    }
}

/// Sends `request` (its URI is the member path with query, e.g. `/api/v1/nodes?watch=1`) to
/// the member behind `client`, and returns the member's response with hop-by-hop headers
/// removed.
pub async fn forward(
    client: &kube::Client,
    request: http::Request<bytes::Bytes>,
) -> Result<http::Response<kube::client::Body>, kube::Error> {
    forward_as(client, request, None).await
}

/// [`forward`], asking the member to act as `caller` (the client must be allowed to
/// impersonate it there).
pub async fn forward_as(
    client: &kube::Client,
    request: http::Request<bytes::Bytes>,
    caller: Option<&Impersonation>,
) -> Result<http::Response<kube::client::Body>, kube::Error> {
    let (parts, body) = request.into_parts();
    let upgrade = is_upgrade(&parts.headers);
    let mut builder = http::Request::builder().method(parts.method).uri(parts.uri);
    for (name, value) in &parts.headers {
        if !dropped(name, upgrade) {
            builder = builder.header(name, value);
        }
    }
    if let Some(caller) = caller {
        builder = builder.header("Impersonate-User", caller.user.as_str());
        for group in &caller.groups {
            builder = builder.header("Impersonate-Group", group.as_str());
        }
    }
    let request = builder
        .body(kube::client::Body::from(body))
        .map_err(kube::Error::HttpError)?;
    let mut response = client.send(request).await?;
    if response.status() == http::StatusCode::SWITCHING_PROTOCOLS {
        return Ok(response);
    }
    let headers = response.headers_mut();
    for name in [
        "connection",
        "keep-alive",
        "transfer-encoding",
        "trailer",
        "upgrade",
    ] {
        headers.remove(name);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    use http_body_util::Empty;
    use hyper::body::Incoming;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;

    /// A member that switches protocols and answers every 5 bytes it reads upper-cased, and
    /// reports the identity headers it was sent.
    async fn upgrading_member() -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            let (stream, _) = listener.accept().await.expect("a connection");
            let service = service_fn(|mut request: http::Request<Incoming>| async move {
                let seen = |name: &str| {
                    request
                        .headers()
                        .get_all(name)
                        .iter()
                        .filter_map(|v| v.to_str().ok())
                        .collect::<Vec<_>>()
                        .join(",")
                };
                let response = http::Response::builder()
                    .status(http::StatusCode::SWITCHING_PROTOCOLS)
                    .header("connection", "Upgrade")
                    .header("upgrade", seen("upgrade"))
                    .header("x-seen-authorization", seen("authorization"))
                    .header("x-seen-impersonate-user", seen("impersonate-user"))
                    .body(Empty::<bytes::Bytes>::new());
                let upgrade = hyper::upgrade::on(&mut request);
                tokio::spawn(async move {
                    let mut io = TokioIo::new(upgrade.await.expect("upgraded"));
                    let mut buf = [0u8; 5];
                    while io.read_exact(&mut buf).await.is_ok() {
                        buf.make_ascii_uppercase();
                        if io.write_all(&buf).await.is_err() {
                            break;
                        }
                    }
                });
                response
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
        addr
    }

    #[tokio::test]
    async fn an_upgrade_keeps_its_headers_and_hands_back_the_members_connection() {
        let addr = upgrading_member().await;
        let config = kube::Config::new(format!("http://{addr}").parse().expect("a url"));
        let client = kube::Client::try_from(config).expect("a client");
        let request = http::Request::get("/api/v1/namespaces/d/pods/p/exec?command=cat")
            .header("Connection", "Upgrade")
            .header("Upgrade", "websocket")
            .header("Authorization", "Bearer the-callers-token")
            .header("Impersonate-User", "mallory")
            .body(bytes::Bytes::new())
            .expect("a request");
        let caller = Impersonation::of("alice", &["dev".to_owned()]);
        let mut response = forward_as(&client, request, Some(&caller))
            .await
            .expect("forwarded");
        assert_eq!(response.status(), http::StatusCode::SWITCHING_PROTOCOLS);
        assert_eq!(response.headers()["upgrade"], "websocket");
        assert_eq!(response.headers()["connection"], "Upgrade");
        // The caller's own credentials and impersonation never reach the member.
        assert_eq!(response.headers()["x-seen-authorization"], "");
        assert_eq!(response.headers()["x-seen-impersonate-user"], "alice");

        let mut io = TokioIo::new(hyper::upgrade::on(&mut response).await.expect("upgraded"));
        io.write_all(b"hello").await.expect("written");
        let mut answer = [0u8; 5];
        io.read_exact(&mut answer).await.expect("read");
        assert_eq!(&answer, b"HELLO");
    }

    #[test]
    fn upgrade_requests_are_recognised_by_both_headers() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = http::HeaderMap::new();
            for (k, v) in pairs {
                map.append(
                    http::HeaderName::from_bytes(k.as_bytes()).expect("a name"),
                    v.parse().expect("a value"),
                );
            }
            map
        };
        assert!(is_upgrade(&headers(&[
            ("connection", "keep-alive, Upgrade"),
            ("upgrade", "SPDY/3.1")
        ])));
        assert!(!is_upgrade(&headers(&[("connection", "Upgrade")])));
        assert!(!is_upgrade(&headers(&[
            ("connection", "keep-alive"),
            ("upgrade", "websocket")
        ])));
    }
}
