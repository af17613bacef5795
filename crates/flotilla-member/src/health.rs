//! The health probe Karmada's cluster status controller runs against a member: `GET /readyz`,
//! falling back to `/healthz` when `/readyz` answers 404, bounded by a timeout.

use std::time::Duration;

use http_body_util::BodyExt as _;

/// What one probe saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// The health endpoint answered 200.
    Healthy,
    /// The member answered, but not with 200 (status and the start of the body).
    Unhealthy { status: u16, body: String },
    /// No answer: connection refused, TLS or authentication failure before HTTP, or timeout.
    Unreachable { reason: String },
}

impl Health {
    /// The member answered at all.
    pub fn online(&self) -> bool {
        !matches!(self, Health::Unreachable { .. })
    }

    pub fn healthy(&self) -> bool {
        matches!(self, Health::Healthy)
    }
}

/// Probes `client`'s `/readyz` (then `/healthz` on 404), each request bounded by `timeout`.
pub async fn probe(client: &kube::Client, timeout: Duration) -> Health {
    match get(client, "/readyz", timeout).await {
        Health::Unhealthy { status: 404, .. } => get(client, "/healthz", timeout).await,
        other => other,
    }
}

async fn get(client: &kube::Client, path: &str, timeout: Duration) -> Health {
    let request = match http::Request::get(path).body(kube::client::Body::empty()) {
        Ok(r) => r,
        Err(error) => {
            return Health::Unreachable {
                reason: error.to_string(),
            };
        }
    };
    let exchange = async {
        let response = client.send(request).await?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        Ok::<_, kube::Error>((status, body))
    };
    match tokio::time::timeout(timeout, exchange).await {
        Err(_) => Health::Unreachable {
            reason: format!("GET {path}: no answer within {timeout:?}"),
        },
        Ok(Err(error)) => Health::Unreachable {
            reason: format!("GET {path}: {error}"),
        },
        Ok(Ok((200, _))) => Health::Healthy,
        Ok(Ok((status, body))) => {
            let text = String::from_utf8_lossy(&body);
            Health::Unhealthy {
                status,
                body: text.chars().take(200).collect(),
            }
        }
    }
}
