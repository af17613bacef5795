//! The Service side of a CrossCluster MultiClusterService: the Service claimed from policies
//! and bound (by its own ResourceBinding) to the provider and consumer clusters, and given
//! back when the MultiClusterService goes or drops `CrossCluster` (Karmada's
//! `claimMultiClusterServiceForService`, `buildResourceBinding`, `retrieveService`).

use std::collections::BTreeMap;

use flotilla_api::karmada::names::binding_name;
use flotilla_api::karmada::{
    ClusterAffinity, MCS_NAME_ANNOTATION, MCS_NAMESPACE_ANNOTATION, MCS_PERMANENT_ID_LABEL,
    MULTI_CLUSTER_SERVICE_KIND, MultiClusterService, ObjectReference, Placement, ResourceBinding,
    ResourceBindingSpec,
};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::reflector::ObjectRef;
use serde_json::{Value, json};
use tracing::info;

use super::{
    BINDING_FINALIZER, BINDING_MANAGED_BY_LABEL, CLAIMED_BY_LABEL, Controller, McsError,
    POLICY_ANNOTATIONS, POLICY_LABELS, key_of, permanent_id,
};

impl Controller {
    /// Takes the Service from any policy: MultiClusterService propagates it.
    pub(super) async fn claim_service(
        &self,
        mcs: &MultiClusterService,
        service: &Service,
    ) -> Result<(), McsError> {
        let labels = service.metadata.labels.clone().unwrap_or_default();
        let annotations = service.metadata.annotations.clone().unwrap_or_default();
        let mut label_patch = serde_json::Map::new();
        let mut annotation_patch = serde_json::Map::new();
        for key in POLICY_LABELS {
            if labels.contains_key(*key) {
                label_patch.insert((*key).into(), Value::Null);
            }
        }
        for key in POLICY_ANNOTATIONS {
            if annotations.contains_key(*key) {
                annotation_patch.insert((*key).into(), Value::Null);
            }
        }
        let id = permanent_id(mcs);
        for (key, value) in [
            (CLAIMED_BY_LABEL, MULTI_CLUSTER_SERVICE_KIND),
            (MCS_PERMANENT_ID_LABEL, id.as_str()),
        ] {
            if labels.get(key).map(String::as_str) != Some(value) {
                label_patch.insert(key.into(), value.into());
            }
        }
        let (namespace, name) = key_of(mcs);
        for (key, value) in [
            (MCS_NAME_ANNOTATION, name.as_str()),
            (MCS_NAMESPACE_ANNOTATION, namespace.as_str()),
        ] {
            if annotations.get(key).map(String::as_str) != Some(value) {
                annotation_patch.insert(key.into(), value.into());
            }
        }
        if label_patch.is_empty() && annotation_patch.is_empty() {
            return Ok(());
        }
        let patch = json!({"metadata": {"labels": label_patch, "annotations": annotation_patch}});
        Api::<Service>::namespaced(self.client.clone(), &namespace)
            .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await?;
        Ok(())
    }

    /// Gives the Service back to policies (Karmada's `retrieveService`).
    pub(super) async fn release_service(&self, mcs: &MultiClusterService) -> Result<(), McsError> {
        let (namespace, name) = key_of(mcs);
        let Some(service) = self
            .templates
            .get(&ObjectRef::new(&name).within(&namespace))
        else {
            return Ok(());
        };
        let labels = service.metadata.labels.clone().unwrap_or_default();
        if labels.contains_key(CLAIMED_BY_LABEL) || labels.contains_key(MCS_PERMANENT_ID_LABEL) {
            let patch = json!({"metadata": {"labels": {CLAIMED_BY_LABEL: null, MCS_PERMANENT_ID_LABEL: null}}});
            match Api::<Service>::namespaced(self.client.clone(), &namespace)
                .patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                Err(error) => return Err(error.into()),
            }
        }
        let binding = binding_name("Service", &name);
        if let Some(rb) = self
            .bindings
            .get(&ObjectRef::new(&binding).within(&namespace))
        {
            let labels = rb.metadata.labels.clone().unwrap_or_default();
            let annotations = rb.metadata.annotations.clone().unwrap_or_default();
            if labels.contains_key(BINDING_MANAGED_BY_LABEL)
                || labels.contains_key(MCS_PERMANENT_ID_LABEL)
                || annotations.contains_key(MCS_NAME_ANNOTATION)
                || annotations.contains_key(MCS_NAMESPACE_ANNOTATION)
            {
                let patch = json!({"metadata": {
                    "labels": {BINDING_MANAGED_BY_LABEL: null, MCS_PERMANENT_ID_LABEL: null},
                    "annotations": {MCS_NAME_ANNOTATION: null, MCS_NAMESPACE_ANNOTATION: null},
                }});
                match Api::<ResourceBinding>::namespaced(self.client.clone(), &namespace)
                    .patch(&binding, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(error) => return Err(error.into()),
                }
            }
        }
        Ok(())
    }

    /// The Service's binding, placed on `clusters` (Karmada's `buildResourceBinding` and its
    /// create-or-update).
    pub(super) async fn write_binding<'a>(
        &self,
        mcs: &MultiClusterService,
        service: &Service,
        clusters: impl Iterator<Item = &'a String>,
    ) -> Result<(), McsError> {
        let (namespace, name) = key_of(service);
        let binding = binding_name("Service", &name);
        let uid = service.metadata.uid.clone().unwrap_or_default();
        let mut names: Vec<String> = clusters.cloned().collect();
        names.sort();
        names.dedup();
        let placement = Placement {
            cluster_affinity: Some(ClusterAffinity {
                cluster_names: names,
                ..ClusterAffinity::default()
            }),
            ..Placement::default()
        };
        let resource = ObjectReference {
            api_version: "v1".into(),
            kind: "Service".into(),
            namespace: namespace.clone(),
            name: name.clone(),
            uid: uid.clone(),
            resource_version: service
                .metadata
                .resource_version
                .clone()
                .unwrap_or_default(),
        };
        let owner = OwnerReference {
            api_version: "v1".into(),
            kind: "Service".into(),
            name: name.clone(),
            uid: uid.clone(),
            ..OwnerReference::default()
        };
        let labels: BTreeMap<String, String> = [
            (
                BINDING_MANAGED_BY_LABEL.to_owned(),
                MULTI_CLUSTER_SERVICE_KIND.to_owned(),
            ),
            (MCS_PERMANENT_ID_LABEL.to_owned(), permanent_id(mcs)),
        ]
        .into();
        let (mcs_namespace, mcs_name) = key_of(mcs);
        let annotations: BTreeMap<String, String> = [
            (MCS_NAME_ANNOTATION.to_owned(), mcs_name),
            (MCS_NAMESPACE_ANNOTATION.to_owned(), mcs_namespace),
        ]
        .into();
        let api = Api::<ResourceBinding>::namespaced(self.client.clone(), &namespace);
        let Some(stored) = self
            .bindings
            .get(&ObjectRef::new(&binding).within(&namespace))
        else {
            let desired = ResourceBinding {
                metadata: ObjectMeta {
                    name: Some(binding.clone()),
                    namespace: Some(namespace.clone()),
                    owner_references: Some(vec![owner]),
                    labels: Some(labels),
                    annotations: Some(annotations),
                    finalizers: Some(vec![BINDING_FINALIZER.into()]),
                    ..ObjectMeta::default()
                },
                spec: ResourceBindingSpec {
                    placement: Some(placement),
                    conflict_resolution: "Overwrite".into(),
                    resource,
                    ..ResourceBindingSpec::default()
                },
                ..ResourceBinding::default()
            };
            match api.create(&PostParams::default(), &desired).await {
                Ok(_) => {
                    info!(%namespace, %binding, "created the MultiClusterService's binding");
                    return Ok(());
                }
                // Another writer got there first: the binding's watch event queues us again.
                Err(kube::Error::Api(status)) if status.code == 409 => return Ok(()),
                Err(error) => return Err(error.into()),
            }
        };
        if let Some(owner_ref) = stored
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true))
            && owner_ref.uid != uid
        {
            return Err(McsError::Api(kube::Error::Api(
                kube::core::Status::failure(
                    "failed to update binding due to different owner reference UID, will try again later after binding is garbage collected",
                    "Conflict",
                )
                .with_code(409)
                .boxed(),
            )));
        }
        let mut updated = (*stored).clone();
        updated
            .metadata
            .labels
            .get_or_insert_with(Default::default)
            .extend(labels);
        updated
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .extend(annotations);
        updated.metadata.owner_references = Some(vec![owner]);
        updated.metadata.finalizers = Some(vec![BINDING_FINALIZER.into()]);
        updated.spec.placement = Some(placement);
        updated.spec.resource = resource;
        updated.spec.conflict_resolution = "Overwrite".into();
        if updated == *stored {
            return Ok(());
        }
        api.replace(&binding, &PostParams::default(), &updated)
            .await?;
        Ok(())
    }
}
