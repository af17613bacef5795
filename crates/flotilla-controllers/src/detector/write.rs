//! Writing a template's ResourceBinding or ClusterResourceBinding: created when missing,
//! otherwise its owner, claim, finalizer and specification brought in line with the template
//! and replaced only when something changed.

use flotilla_api::karmada::{ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
use kube::api::{Api, PostParams};
use serde_json::Value;
use tracing::{debug, info};

use super::claim::PolicyClaim;
use super::{Detector, DetectorError, build};

impl Detector {
    pub(super) async fn ensure_binding(
        &self,
        template: &Value,
        claim: &PolicyClaim,
        desired: ResourceBindingSpec,
        extensions: &std::collections::BTreeMap<String, String>,
    ) -> Result<bool, DetectorError> {
        let mut meta = build::binding_metadata(template, claim, false);
        build::apply_extensions(&mut meta, extensions);
        let name = meta.name.clone().unwrap_or_default();
        let namespace = meta.namespace.clone().unwrap_or_default();
        let api = Api::<ResourceBinding>::namespaced(self.client.clone(), &namespace);
        match api.get_opt(&name).await? {
            None => {
                let binding = ResourceBinding {
                    metadata: meta,
                    spec: desired,
                    ..ResourceBinding::default()
                };
                api.create(&PostParams::default(), &binding).await?;
                debug!(binding = %format!("{namespace}/{name}"), "created ResourceBinding");
                Ok(true)
            }
            Some(existing) => {
                let mut updated = existing.clone();
                build::apply_extensions(&mut updated.metadata, extensions);
                refresh(
                    &mut updated.metadata,
                    &mut updated.spec,
                    template,
                    claim,
                    desired,
                    build::RB_FINALIZER,
                    &name,
                )?;
                if updated == existing {
                    return Ok(false);
                }
                api.replace(&name, &PostParams::default(), &updated).await?;
                debug!(binding = %format!("{namespace}/{name}"), "updated ResourceBinding");
                Ok(true)
            }
        }
    }

    pub(super) async fn ensure_cluster_binding(
        &self,
        template: &Value,
        claim: &PolicyClaim,
        desired: ResourceBindingSpec,
        extensions: &std::collections::BTreeMap<String, String>,
    ) -> Result<bool, DetectorError> {
        let mut meta = build::binding_metadata(template, claim, true);
        build::apply_extensions(&mut meta, extensions);
        let name = meta.name.clone().unwrap_or_default();
        let api = Api::<ClusterResourceBinding>::all(self.client.clone());
        match api.get_opt(&name).await? {
            None => {
                let binding = ClusterResourceBinding {
                    metadata: meta,
                    spec: desired,
                    ..ClusterResourceBinding::default()
                };
                api.create(&PostParams::default(), &binding).await?;
                info!(binding = %name, "created ClusterResourceBinding");
                Ok(true)
            }
            Some(existing) => {
                let mut updated = existing.clone();
                build::apply_extensions(&mut updated.metadata, extensions);
                refresh(
                    &mut updated.metadata,
                    &mut updated.spec,
                    template,
                    claim,
                    desired,
                    build::CRB_FINALIZER,
                    &name,
                )?;
                if updated == existing {
                    return Ok(false);
                }
                api.replace(&name, &PostParams::default(), &updated).await?;
                Ok(true)
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn refresh(
    meta: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    spec: &mut ResourceBindingSpec,
    template: &Value,
    claim: &PolicyClaim,
    desired: ResourceBindingSpec,
    finalizer: &str,
    name: &str,
) -> Result<(), DetectorError> {
    let template_uid = template
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("");
    match build::controller_uid(meta) {
        Some(uid) if uid != template_uid => {
            return Err(DetectorError::OwnerMismatch {
                binding: name.to_owned(),
                owner: uid.to_owned(),
            });
        }
        Some(_) => {}
        None => meta.owner_references = Some(vec![build::owner_reference(template)]),
    }
    build::apply_claim(meta, claim);
    build::ensure_finalizer(meta, finalizer);
    build::refresh_spec(spec, desired);
    Ok(())
}
