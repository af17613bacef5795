//! Writing a template's ResourceBinding or ClusterResourceBinding: created when missing,
//! otherwise its owner, claim, finalizer and specification brought in line with the template
//! and replaced only when something changed.

use flotilla_api::karmada::{ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};
use serde_json::Value;
use tracing::debug;

use super::claim::PolicyClaim;
use super::{Detector, DetectorError, build};

/// What the writer needs of either binding kind.
trait BindingObject:
    kube::Resource<DynamicType = ()>
    + Clone
    + PartialEq
    + std::fmt::Debug
    + serde::Serialize
    + serde::de::DeserializeOwned
{
    /// Its finalizer.
    const FINALIZER: &'static str;
    fn with(metadata: ObjectMeta, spec: ResourceBindingSpec) -> Self;
    fn parts(&mut self) -> (&mut ObjectMeta, &mut ResourceBindingSpec);
}

impl BindingObject for ResourceBinding {
    const FINALIZER: &'static str = build::RB_FINALIZER;
    fn with(metadata: ObjectMeta, spec: ResourceBindingSpec) -> Self {
        Self {
            metadata,
            spec,
            ..Self::default()
        }
    }
    fn parts(&mut self) -> (&mut ObjectMeta, &mut ResourceBindingSpec) {
        (&mut self.metadata, &mut self.spec)
    }
}

impl BindingObject for ClusterResourceBinding {
    const FINALIZER: &'static str = build::CRB_FINALIZER;
    fn with(metadata: ObjectMeta, spec: ResourceBindingSpec) -> Self {
        Self {
            metadata,
            spec,
            ..Self::default()
        }
    }
    fn parts(&mut self) -> (&mut ObjectMeta, &mut ResourceBindingSpec) {
        (&mut self.metadata, &mut self.spec)
    }
}

impl Detector {
    /// Creates or refreshes the template's binding: a ClusterResourceBinding for a
    /// cluster-scoped template, else a ResourceBinding. Returns whether it wrote.
    pub(super) async fn ensure_binding(
        &self,
        template: &Value,
        claim: &PolicyClaim,
        desired: ResourceBindingSpec,
        extensions: &std::collections::BTreeMap<String, String>,
        cluster_scoped: bool,
    ) -> Result<bool, DetectorError> {
        let mut meta = build::binding_metadata(template, claim, cluster_scoped);
        build::apply_extensions(&mut meta, extensions);
        if cluster_scoped {
            let api = Api::<ClusterResourceBinding>::all(self.client.clone());
            write(&api, meta, template, claim, desired, extensions).await
        } else {
            let namespace = meta.namespace.clone().unwrap_or_default();
            let api = Api::<ResourceBinding>::namespaced(self.client.clone(), &namespace);
            write(&api, meta, template, claim, desired, extensions).await
        }
    }
}

/// Creates the binding `meta` names, or brings the stored one in line and replaces it when
/// something changed.
async fn write<B: BindingObject>(
    api: &Api<B>,
    meta: ObjectMeta,
    template: &Value,
    claim: &PolicyClaim,
    desired: ResourceBindingSpec,
    extensions: &std::collections::BTreeMap<String, String>,
) -> Result<bool, DetectorError> {
    let name = meta.name.clone().unwrap_or_default();
    let binding = format!("{}/{}", meta.namespace.as_deref().unwrap_or_default(), name);
    let Some(existing) = api.get_opt(&name).await? else {
        api.create(&PostParams::default(), &B::with(meta, desired))
            .await?;
        debug!(%binding, kind = %B::kind(&()), "created the binding");
        return Ok(true);
    };
    let mut updated = existing.clone();
    let (meta, spec) = updated.parts();
    build::apply_extensions(meta, extensions);
    refresh(meta, spec, template, claim, desired, B::FINALIZER, &name)?;
    if updated == existing {
        return Ok(false);
    }
    api.replace(&name, &PostParams::default(), &updated).await?;
    debug!(%binding, kind = %B::kind(&()), "updated the binding");
    Ok(true)
}

fn refresh(
    meta: &mut ObjectMeta,
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
