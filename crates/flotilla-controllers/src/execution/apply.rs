//! Applying one manifest to a member (Karmada pkg/util/objectwatcher): create when absent,
//! otherwise update with the member-owned fields retained — only when Flotilla manages the
//! member object or the manifest says `work.karmada.io/conflict-resolution: overwrite` — and
//! skip the write when nothing would change. Deletion removes only objects Flotilla manages.

use std::collections::HashMap;

use flotilla_api::karmada::{
    CONFLICT_RESOLUTION_ANNOTATION, CONFLICT_RESOLUTION_OVERWRITE, CPP_CLAIM_ANNOTATIONS,
    CPP_CLAIM_LABELS, MANAGED_BY_KARMADA_LABEL, MANAGED_RESOURCE_ANNOTATIONS,
    MANAGED_RESOURCE_LABELS, PP_CLAIM_ANNOTATIONS, PP_CLAIM_LABELS,
};
use flotilla_api::validation::karmada::prune_manifest;
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use kube::core::request::Error as RequestError;
use parking_lot::Mutex;
use serde_json::Value;

use crate::interpreter::retain::{RetainError, retain_cluster_fields, retain_kind_fields};
use crate::member_cache::{Cached, InformerKey, MemberCache, ResolveError};
use crate::metrics::{Metrics, UpdateResult};

/// How many times a create/update is retried after a 409 (client-go's `retry.DefaultRetry`).
const CONFLICT_RETRIES: usize = 5;

/// What an apply did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Created,
    Updated,
    Unchanged,
}

/// Why a manifest was not applied; the message is what the Work's `Applied` condition shows.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    #[error(
        "resource(kind={kind}, {namespace}/{name}) already exists in the cluster {cluster} and the {CONFLICT_RESOLUTION_ANNOTATION} strategy value is empty, Karmada will not manage this resource"
    )]
    NotManaged {
        kind: String,
        namespace: String,
        name: String,
        cluster: String,
    },
    #[error("{0}")]
    Retain(#[from] RetainError),
    #[error("{}", api_message(.0))]
    Api(#[source] kube::Error),
    #[error("invalid manifest: {0}")]
    Manifest(String),
    /// A ResourceInterpreterCustomization's `Retain` failed.
    #[error("{0}")]
    Customized(String),
}

/// Whether resolving failed because the member does not serve the kind at all.
fn not_served(error: &ResolveError) -> bool {
    match error {
        ResolveError::NoMatch { .. } => true,
        ResolveError::Discovery {
            source: kube::Error::Api(status),
            ..
        } => status.code == 404,
        _ => false,
    }
}

/// The Go client's rendering of an API error: the Status message.
pub use flotilla_runtime::errors::message as api_message;

fn code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// Identity of a member object.
pub type ObjectId = (InformerKey, String, String);

/// The resourceVersion Flotilla last wrote per member object, so its own writes are not taken
/// for drift (Karmada's `VersionRecord`).
#[derive(Debug, Default)]
pub struct Versions(Mutex<HashMap<ObjectId, String>>);

impl Versions {
    pub fn record(&self, id: ObjectId, version: String) {
        self.0.lock().insert(id, version);
    }

    pub fn get(&self, id: &ObjectId) -> Option<String> {
        self.0.lock().get(id).cloned()
    }

    pub fn forget(&self, id: &ObjectId) {
        self.0.lock().remove(id);
    }
}

/// One member cluster's view for applying manifests.
pub struct Applier<'a> {
    pub cache: &'a MemberCache,
    pub versions: &'a Versions,
    pub cluster: &'a str,
    pub client: kube::Client,
    /// Counts every create, update and delete sent to the member (Karmada's
    /// `*_resource_to_cluster` counters).
    pub metrics: &'a Metrics,
    /// ResourceInterpreterCustomizations (`Retain`).
    pub interpreter: &'a crate::interpreter::Customizations,
}

impl std::fmt::Debug for Applier<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applier")
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

struct Target {
    api: Api<DynamicObject>,
    informer: InformerKey,
    namespace: String,
    name: String,
    kind: String,
}

impl Applier<'_> {
    async fn target(&self, manifest: &Value) -> Result<Target, ApplyError> {
        let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
        let kind = manifest["kind"].as_str().unwrap_or_default();
        let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
        if api_version.is_empty() || kind.is_empty() || name.is_empty() {
            return Err(ApplyError::Manifest(
                "apiVersion, kind and metadata.name are required".into(),
            ));
        }
        let namespace = manifest["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default();
        let resolved = self.cache.resolve(self.cluster, api_version, kind).await?;
        let api = if resolved.namespaced {
            Api::namespaced_with(self.client.clone(), namespace, &resolved.resource)
        } else {
            Api::all_with(self.client.clone(), &resolved.resource)
        };
        Ok(Target {
            api,
            informer: InformerKey {
                cluster: self.cluster.to_owned(),
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            },
            namespace: if resolved.namespaced {
                namespace.to_owned()
            } else {
                String::new()
            },
            name: name.to_owned(),
            kind: kind.to_owned(),
        })
    }

    fn id(target: &Target) -> ObjectId {
        (
            target.informer.clone(),
            target.namespace.clone(),
            target.name.clone(),
        )
    }

    /// The member object: from the informer when it has listed and `direct` is false.
    async fn observe(
        &self,
        target: &Target,
        manifest: &Value,
        direct: bool,
    ) -> Result<Option<Value>, ApplyError> {
        let object = match (
            direct,
            self.cache
                .get(&target.informer, &target.namespace, &target.name),
        ) {
            (false, Cached::Synced(object)) => object.map(std::sync::Arc::unwrap_or_clone),
            _ => target
                .api
                .get_opt(&target.name)
                .await
                .map_err(ApplyError::Api)?,
        };
        Ok(object.map(|o| as_value(&o, manifest)))
    }

    /// Creates or updates the member object from `manifest`.
    pub async fn apply(&self, manifest: &Value) -> Result<Outcome, ApplyError> {
        let target = self.target(manifest).await?;
        let mut direct = false;
        let mut last = None;
        for _ in 0..CONFLICT_RETRIES {
            let result = match self.observe(&target, manifest, direct).await? {
                None => self.create(&target, manifest).await,
                Some(observed) => self.update(&target, manifest, &observed).await,
            };
            match result {
                // Exists already (absent from the managed-only cache) or changed meanwhile.
                Err(ApplyError::Api(error)) if code(&error) == Some(409) => {
                    direct = true;
                    last = Some(ApplyError::Api(error));
                }
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| ApplyError::Manifest("conflict".into())))
    }

    async fn create(&self, target: &Target, manifest: &Value) -> Result<Outcome, ApplyError> {
        let object = to_object(manifest.clone())?;
        let created = written(&target.api, "create", |request| {
            let body = serde_json::to_vec(&object).map_err(RequestError::SerializeBody)?;
            request.create(&PostParams::default(), body)
        })
        .await;
        self.metrics.count_create(
            created.is_ok(),
            &target.informer.api_version,
            &target.kind,
            self.cluster,
        );
        let created = created.map_err(ApplyError::Api)?;
        tracing::debug!(cluster = self.cluster, kind = %target.kind, namespace = %target.namespace,
            name = %target.name, "created the resource on the member");
        if let Some(version) = created {
            self.versions.record(Self::id(target), version);
        }
        Ok(Outcome::Created)
    }

    /// Updates the member object, counted by what the update did.
    async fn update(
        &self,
        target: &Target,
        manifest: &Value,
        observed: &Value,
    ) -> Result<Outcome, ApplyError> {
        let result = self.send_update(target, manifest, observed).await;
        let (ok, sent) = match &result {
            Ok((_, sent)) => (true, *sent),
            Err(_) => (false, UpdateResult::None),
        };
        self.metrics.count_update(
            ok,
            &target.informer.api_version,
            &target.kind,
            self.cluster,
            sent,
        );
        result.map(|(outcome, _)| outcome)
    }

    async fn send_update(
        &self,
        target: &Target,
        manifest: &Value,
        observed: &Value,
    ) -> Result<(Outcome, UpdateResult), ApplyError> {
        if !allow_update(manifest, observed) {
            return Err(ApplyError::NotManaged {
                kind: target.kind.clone(),
                namespace: target.namespace.clone(),
                name: target.name.clone(),
                cluster: self.cluster.to_owned(),
            });
        }
        let mut desired = manifest.clone();
        retain_cluster_fields(&mut desired, observed);
        match self.interpreter.retain(&desired, observed).await {
            Some(Ok(retained)) => desired = retained,
            Some(Err(error)) => return Err(ApplyError::Customized(error.to_string())),
            None => retain_kind_fields(&mut desired, observed)?,
        }
        let observed_version = observed["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if unchanged(&desired, observed) {
            self.versions.record(Self::id(target), observed_version);
            return Ok((Outcome::Unchanged, UpdateResult::None));
        }
        let object = to_object(desired)?;
        let version = written(&target.api, "replace", |request| {
            let body = serde_json::to_vec(&object).map_err(RequestError::SerializeBody)?;
            request.replace(&target.name, &PostParams::default(), body)
        })
        .await
        .map_err(ApplyError::Api)?
        .unwrap_or_default();
        self.versions.record(Self::id(target), version.clone());
        if version == observed_version {
            return Ok((Outcome::Unchanged, UpdateResult::Unchanged));
        }
        tracing::debug!(cluster = self.cluster, kind = %target.kind, namespace = %target.namespace,
            name = %target.name, "updated the resource on the member");
        Ok((Outcome::Updated, UpdateResult::Updated))
    }

    /// Deletes the member object (in the background, so a Job's pods go too) if Flotilla
    /// manages it.
    pub async fn delete(&self, manifest: &Value) -> Result<(), ApplyError> {
        let target = match self.target(manifest).await {
            Ok(target) => target,
            // A kind the member does not serve has nothing there to delete (a Work that was
            // never dispatched, such as a MultiClusterService's marker).
            Err(ApplyError::Resolve(error)) if not_served(&error) => return Ok(()),
            Err(error) => return Err(error),
        };
        // Read from the member, not the informer: an object created a moment ago may not be in
        // the cache yet, and "absent" here would remove the Work's finalizer and orphan it.
        let Some(observed) = self.observe(&target, manifest, true).await? else {
            return Ok(());
        };
        if !is_managed(&observed) {
            tracing::info!(cluster = self.cluster, kind = %target.kind, namespace = %target.namespace,
                name = %target.name, "not deleting a member resource Karmada does not manage");
            return Ok(());
        }
        let deleted = match target
            .api
            .delete(&target.name, &DeleteParams::background())
            .await
        {
            Ok(_) => Ok(()),
            Err(error) if code(&error) == Some(404) => Ok(()),
            Err(error) => Err(ApplyError::Api(error)),
        };
        self.metrics.count_delete(
            deleted.is_ok(),
            &target.informer.api_version,
            &target.kind,
            self.cluster,
        );
        deleted?;
        tracing::debug!(cluster = self.cluster, kind = %target.kind, namespace = %target.namespace,
            name = %target.name, "deleted the resource on the member");
        self.versions.forget(&Self::id(&target));
        Ok(())
    }

    /// Keeps the member object but removes every mark of Flotilla and of the policy that
    /// claimed it (`preserveResourcesOnDeletion`).
    pub async fn release(&self, manifest: &Value) -> Result<(), ApplyError> {
        let target = self.target(manifest).await?;
        let Some(observed) = self.observe(&target, manifest, true).await? else {
            return Ok(());
        };
        if !is_managed(&observed) {
            // Released already (or never ours).
            return Ok(());
        }
        let mut desired = manifest.clone();
        let (labels, annotations) = if target.namespace.is_empty() {
            (CPP_CLAIM_LABELS, CPP_CLAIM_ANNOTATIONS)
        } else {
            (PP_CLAIM_LABELS, PP_CLAIM_ANNOTATIONS)
        };
        strip(&mut desired, "labels", labels);
        strip(&mut desired, "annotations", annotations);
        strip(&mut desired, "labels", MANAGED_RESOURCE_LABELS);
        strip(&mut desired, "annotations", MANAGED_RESOURCE_ANNOTATIONS);
        self.update(&target, &desired, &observed).await?;
        self.versions.forget(&Self::id(&target));
        Ok(())
    }
}

/// Karmada's `allowUpdate`: the member object is managed, or the manifest asks to overwrite.
pub fn allow_update(manifest: &Value, observed: &Value) -> bool {
    is_managed(observed)
        || manifest["metadata"]["annotations"][CONFLICT_RESOLUTION_ANNOTATION].as_str()
            == Some(CONFLICT_RESOLUTION_OVERWRITE)
}

/// Whether the member object carries `karmada.io/managed=true`.
pub fn is_managed(object: &Value) -> bool {
    object["metadata"]["labels"][MANAGED_BY_KARMADA_LABEL].as_str() == Some("true")
}

/// Karmada's `resourceDeepEqual`: the retained desired object equals the member object pruned
/// like a manifest, with the fields an update must carry put back.
pub fn unchanged(desired: &Value, observed: &Value) -> bool {
    let mut pruned = observed.clone();
    if let Some(map) = pruned.as_object_mut() {
        prune_manifest(map);
    }
    retain_cluster_fields(&mut pruned, observed);
    *desired == pruned
}

fn strip(object: &mut Value, map: &str, keys: &[&str]) {
    if let Some(entries) = object["metadata"]
        .get_mut(map)
        .and_then(Value::as_object_mut)
    {
        for key in keys {
            entries.remove(*key);
        }
    }
}

/// A member object as JSON, with the manifest's apiVersion and kind (list items may lack them).
pub fn as_value(object: &DynamicObject, manifest: &Value) -> Value {
    let mut value = serde_json::to_value(object).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), manifest["apiVersion"].clone());
        map.insert("kind".into(), manifest["kind"].clone());
    }
    value
}

/// Sends a write of a member object built by `build` and returns the `resourceVersion` it has
/// afterwards, the one member of the answer read (decoded as a `DynamicObject`, the answer's
/// managed fields, spec and status would all be built and dropped).
async fn written(
    api: &Api<DynamicObject>,
    verb: &'static str,
    build: impl FnOnce(kube::core::Request) -> Result<http::Request<Vec<u8>>, RequestError>,
) -> Result<Option<String>, kube::Error> {
    let request =
        build(kube::core::Request::new(api.resource_url())).map_err(kube::Error::BuildRequest)?;
    let client = api.clone().into_client();
    let written = flotilla_runtime::write::send(&client, request, verb).await?;
    Ok(written.metadata.resource_version)
}

fn to_object(value: Value) -> Result<DynamicObject, ApplyError> {
    serde_json::from_value(value).map_err(|e| ApplyError::Manifest(e.to_string()))
}
