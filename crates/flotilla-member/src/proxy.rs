//! Forwarding one HTTP request to a member for the cluster proxy, with the credentials of the
//! client given (the control plane's, or the member's impersonator acting as the caller). The
//! caller's own credentials, any `Impersonate-*` headers it sent and hop-by-hop headers are
//! dropped; the response body is streamed back as it arrives (watches work).

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

fn dropped(name: &http::HeaderName) -> bool {
    let name = name.as_str();
    DROPPED.contains(&name) || name.starts_with("impersonate-")
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
    let mut builder = http::Request::builder().method(parts.method).uri(parts.uri);
    for (name, value) in &parts.headers {
        if !dropped(name) {
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
