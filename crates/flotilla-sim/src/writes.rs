//! Writes whose answer nobody reads. `kube::Api` decodes every response into the typed object
//! (managedFields and all); the control loops here only need to know whether a write
//! succeeded, so the answer is checked for an error and otherwise skipped, not decoded.

use kube::Resource;
use kube::api::{Patch, PatchParams};
use serde::de::IgnoredAny;
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
    ctx.client.request::<IgnoredAny>(request).await.map(|_| ())
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
    ctx.client.request::<IgnoredAny>(request).await.map(|_| ())
}
