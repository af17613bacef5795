//! Writes whose answer nobody reads. `kube::Api` decodes every response into the typed object
//! (managedFields and all); the control loops here only need to know whether a write
//! succeeded, so the answer's status is checked (an error's `Status` decoded as kube does) and
//! a successful body is dropped unread.

use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde_json::Value;

use crate::cluster::Ctx;

/// A JSON merge patch of `name` (or of its `subresource`), as `Api::patch` sends it.
pub async fn merge_patch<K: Resource<DynamicType = ()>>(
    ctx: &Ctx,
    namespace: Option<&str>,
    name: &str,
    subresource: Option<&str>,
    patch: &Value,
) -> Result<(), kube::Error> {
    let request = kube::core::Request::new(K::url_path(&(), namespace));
    let params = PatchParams::default();
    let patch = Patch::Merge(patch);
    let request = match subresource {
        Some(sub) => request.patch_subresource(sub, name, &params, &patch),
        None => request.patch(name, &params, &patch),
    }
    .map_err(kube::Error::BuildRequest)?;
    send(ctx, request).await
}

/// A status merge patch from a controller that recomputes from its caches every period
/// (quotas, disruption budgets, HPAs): a failure is logged and left to the next sync.
pub async fn resync_status<K: Resource<DynamicType = ()>>(
    ctx: &Ctx,
    namespace: Option<&str>,
    name: &str,
    patch: &Value,
) {
    if let Err(error) = merge_patch::<K>(ctx, namespace, name, Some("status"), patch).await {
        tracing::debug!(
            cluster = %ctx.name,
            kind = %K::kind(&()),
            name,
            %error,
            "status not written; retrying at the next sync"
        );
    }
}

/// Creates `object` in its collection, as `Api::create` does.
pub async fn create<K: Resource<DynamicType = ()> + serde::Serialize>(
    ctx: &Ctx,
    namespace: Option<&str>,
    object: &K,
) -> Result<(), kube::Error> {
    let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
    let request = kube::core::Request::new(K::url_path(&(), namespace))
        .create(&kube::api::PostParams::default(), body)
        .map_err(kube::Error::BuildRequest)?;
    send(ctx, request).await
}

/// Replaces `name` with `object` (a PUT, checked against the object's `resourceVersion`), as
/// `Api::replace` does.
pub async fn replace<K: Resource<DynamicType = ()> + serde::Serialize>(
    ctx: &Ctx,
    namespace: Option<&str>,
    name: &str,
    object: &K,
) -> Result<(), kube::Error> {
    let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
    let request = kube::core::Request::new(K::url_path(&(), namespace))
        .replace(name, &kube::api::PostParams::default(), body)
        .map_err(kube::Error::BuildRequest)?;
    send(ctx, request).await
}

/// Sends `request` on the cluster's in-process client: `Ok` for a 2xx answer, whose body is not
/// read; the `kube::Error` that `Client::request` gives for an error answer.
async fn send(ctx: &Ctx, request: http::Request<Vec<u8>>) -> Result<(), kube::Error> {
    send_on(&ctx.client, request).await
}

async fn send_on(
    client: &kube::Client,
    request: http::Request<Vec<u8>>,
) -> Result<(), kube::Error> {
    client.request_stream(request).await.map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client answering every request with `status` and `body`.
    fn answering(status: u16, body: &'static str) -> kube::Client {
        let service = tower::service_fn(
            move |_request: http::Request<kube::client::Body>| async move {
                http::Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(http_body_util::Full::new(bytes::Bytes::from_static(
                        body.as_bytes(),
                    )))
            },
        );
        kube::Client::new(service, "default")
    }

    fn request() -> http::Request<Vec<u8>> {
        http::Request::post("/api/v1/namespaces/default/pods")
            .body(b"{}".to_vec())
            .expect("a request")
    }

    #[tokio::test]
    async fn a_success_is_not_read_and_an_error_is_kubes() {
        // Whatever a successful answer holds, it is not decoded.
        assert!(
            send_on(&answering(201, "not JSON"), request())
                .await
                .is_ok()
        );
        let conflict = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"a\" already exists","reason":"AlreadyExists","code":409}"#;
        match send_on(&answering(409, conflict), request()).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 409);
                assert_eq!(status.reason, "AlreadyExists");
            }
            other => panic!("expected the API's 409, got {other:?}"),
        }
    }
}
