//! Writes whose answer is read for its versions only. kube's `Api` decodes every write's answer
//! into the whole typed object (metadata with its managed fields, spec, status), which a
//! controller that goes on from its informer's copy then drops; these read the two members a
//! writer may need and skip the rest while parsing.

use serde::Deserialize;

/// What a write's answer is read for.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Written {
    #[serde(default)]
    pub metadata: WrittenMeta,
}

/// The versions of the written object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WrittenMeta {
    pub resource_version: Option<String>,
    pub generation: Option<i64>,
}

/// Sends `request` (built with `kube::core::Request`), tagged with `verb` as kube's `Api` tags
/// its own requests (for tracing layers), and reads [`Written`] from the answer. Errors are
/// kube's: an API error status is `kube::Error::Api`.
pub async fn send(
    client: &kube::Client,
    mut request: http::Request<Vec<u8>>,
    verb: &'static str,
) -> Result<Written, kube::Error> {
    request.extensions_mut().insert(verb);
    client.request(request).await
}

/// A JSON merge patch of `K`'s status subresource (`namespace` for a namespaced kind), read
/// for its versions only: [`send`] of kube's `Api::patch_status` without decoding the object.
pub async fn merge_patch_status<K>(
    client: &kube::Client,
    namespace: Option<&str>,
    name: &str,
    patch: &serde_json::Value,
) -> Result<Written, kube::Error>
where
    K: kube::Resource<DynamicType = ()>,
{
    let request = kube::core::Request::new(K::url_path(&(), namespace))
        .patch_subresource(
            "status",
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .map_err(kube::Error::BuildRequest)?;
    send(client, request, "patch_status").await
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http_body_util::Full;
    use serde_json::json;

    use super::*;

    /// A client answering every request with `status` and `body`, recording the verb tag.
    fn client(
        status: u16,
        body: serde_json::Value,
        verbs: std::sync::Arc<parking_lot::Mutex<Vec<&'static str>>>,
    ) -> kube::Client {
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            let (body, verbs) = (body.clone(), verbs.clone());
            if let Some(verb) = request.extensions().get::<&'static str>() {
                verbs.lock().push(verb);
            }
            async move {
                let response = http::Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(body.to_string())))?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
            }
        });
        kube::Client::new(service, "default")
    }

    fn request() -> http::Request<Vec<u8>> {
        kube::core::Request::new("/api/v1/namespaces/n/configmaps")
            .create(&Default::default(), b"{}".to_vec())
            .expect("request")
    }

    #[tokio::test]
    async fn a_write_answer_is_read_for_its_versions_only() {
        let verbs = Default::default();
        let answer = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "resourceVersion": "42", "generation": 3,
                "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}]},
            "data": {"k": "v"}});
        let client = client(201, answer, std::sync::Arc::clone(&verbs));
        let written = send(&client, request(), "create").await.expect("written");
        assert_eq!(written.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(written.metadata.generation, Some(3));
        assert_eq!(*verbs.lock(), vec!["create"]);
    }

    #[tokio::test]
    async fn an_error_status_is_a_kube_api_error() {
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "Conflict", "message": "the object has been modified", "code": 409});
        let client = client(409, status, Default::default());
        match send(&client, request(), "create").await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 409);
                assert_eq!(status.message, "the object has been modified");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_status_merge_patch_goes_to_the_status_subresource() {
        let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&seen);
        let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
            sink.lock().push((
                request.method().to_string(),
                request.uri().path().to_owned(),
                request.headers()["content-type"]
                    .to_str()
                    .unwrap_or("")
                    .to_owned(),
            ));
            async move {
                let answer = json!({"metadata": {"name": "w", "resourceVersion": "7"},
                    "status": {"conditions": [{"type": "Applied"}]}});
                let response = http::Response::builder()
                    .status(200)
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(answer.to_string())))?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
            }
        });
        let client = kube::Client::new(service, "default");
        let written = merge_patch_status::<k8s_openapi::api::core::v1::ConfigMap>(
            &client,
            Some("ns"),
            "w",
            &json!({"status": {}}),
        )
        .await
        .expect("written");
        assert_eq!(written.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(
            *seen.lock(),
            vec![(
                "PATCH".to_owned(),
                "/api/v1/namespaces/ns/configmaps/w/status".to_owned(),
                "application/merge-patch+json".to_owned()
            )]
        );
    }
}
