//! Forwarding one HTTP request to a member with the control plane's credentials (the member
//! client's), for the cluster proxy. The caller's own credentials and hop-by-hop headers are
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

/// Sends `request` (its URI is the member path with query, e.g. `/api/v1/nodes?watch=1`) to
/// the member behind `client`, and returns the member's response with hop-by-hop headers
/// removed.
pub async fn forward(
    client: &kube::Client,
    request: http::Request<bytes::Bytes>,
) -> Result<http::Response<kube::client::Body>, kube::Error> {
    let (parts, body) = request.into_parts();
    let mut builder = http::Request::builder().method(parts.method).uri(parts.uri);
    for (name, value) in &parts.headers {
        if !dropped(name) {
            builder = builder.header(name, value);
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
