//! The run loop's writes to a binding: merge patches of the binding or its status whose answer
//! is read for the generation only (the binding's watch brings the object itself, so decoding
//! the whole answer into a typed binding would be wasted work on every result).

use flotilla_api::karmada::{ClusterResourceBinding, ResourceBinding};
use kube::Resource as _;
use kube::api::{Patch, PatchParams};
use serde_json::Value;

use super::BindingKey;

/// Merge-patches the binding (`status`: its status subresource); returns the generation and
/// resourceVersion it has after the write.
pub(super) async fn patch(
    client: &kube::Client,
    key: &BindingKey,
    patch: &Value,
    status: bool,
) -> Result<flotilla_runtime::write::WrittenMeta, kube::Error> {
    let params = PatchParams::default();
    let patch = Patch::Merge(patch);
    let (request, name) = match key {
        BindingKey::Namespaced { namespace, name } => (
            kube::core::Request::new(ResourceBinding::url_path(&(), Some(namespace))),
            name,
        ),
        BindingKey::Cluster { name } => (
            kube::core::Request::new(ClusterResourceBinding::url_path(&(), None)),
            name,
        ),
    };
    let request = if status {
        request.patch_subresource("status", name, &params, &patch)
    } else {
        request.patch(name, &params, &patch)
    }
    .map_err(kube::Error::BuildRequest)?;
    let written = flotilla_runtime::write::send(client, request, "patch").await?;
    Ok(written.metadata)
}
