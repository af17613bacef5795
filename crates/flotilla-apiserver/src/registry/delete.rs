//! Deletes: preconditions, finalizers, the deletion timestamp, grace periods and the
//! propagation policy the garbage collector follows.

use flotilla_store::StoreError;
use serde_json::Value;

use super::write::{MAX_PATCH_RETRIES, encode_stored};
use super::{Registry, format_time};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::object;
use crate::request::Query;

/// Options of a delete.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub dry_run: bool,
    pub propagation_policy: Option<String>,
    pub grace_period_seconds: Option<i64>,
    pub precondition_uid: Option<String>,
    pub precondition_resource_version: Option<String>,
}

impl DeleteOptions {
    /// From the query and an optional `DeleteOptions` body (the body wins, as in Kubernetes).
    pub fn parse(query: &Query, body: Option<&Value>) -> Result<Self, ApiError> {
        let mut options = DeleteOptions {
            dry_run: query.dry_run()?,
            propagation_policy: query.get("propagationPolicy").map(str::to_owned),
            grace_period_seconds: query.int("gracePeriodSeconds")?,
            ..Default::default()
        };
        if let Some(body) = body {
            if let Some(policy) = body.get("propagationPolicy").and_then(Value::as_str) {
                options.propagation_policy = Some(policy.to_owned());
            }
            if let Some(grace) = body.get("gracePeriodSeconds").and_then(Value::as_i64) {
                options.grace_period_seconds = Some(grace);
            }
            if let Some(dry) = body.get("dryRun").and_then(Value::as_array) {
                options.dry_run |= dry.iter().any(|v| v == "All");
            }
            let pre = &body["preconditions"];
            options.precondition_uid = pre["uid"].as_str().map(str::to_owned);
            options.precondition_resource_version =
                pre["resourceVersion"].as_str().map(str::to_owned);
        }
        match options.propagation_policy.as_deref() {
            None | Some("Background") | Some("Foreground") | Some("Orphan") => Ok(options),
            Some(other) => Err(ApiError::bad_request(format!(
                "propagationPolicy: Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
            ))),
        }
    }
}

/// The label that protects an object from deletion (with the value `Always`), Karmada's
/// `resourcetemplate.karmada.io/deletion-protected`.
pub const DELETION_PROTECTION_LABEL: &str = "resourcetemplate.karmada.io/deletion-protected";

/// Refuses the delete of a protected object as Karmada does: Clusters through their registry
/// (`clusters.cluster.karmada.io "m1" is forbidden: …`), everything else through its
/// `resourcedeletionprotection.karmada.io` webhook; 403 either way. Whoever deletes (a user,
/// the namespace controller emptying a namespace, the garbage collector) is refused alike, so
/// a namespace holding a protected object stays `Terminating`.
fn check_deletion_protection(info: &ResourceInfo, obj: &Value, name: &str) -> Result<(), ApiError> {
    if obj["metadata"]["labels"][DELETION_PROTECTION_LABEL] != "Always" {
        return Ok(());
    }
    let reason = format!(
        "This resource is protected, please make sure to remove the label: {DELETION_PROTECTION_LABEL}"
    );
    let message = if info.group == "cluster.karmada.io" && info.kind == "Cluster" {
        format!(
            "{}.{} {name:?} is forbidden: {reason}",
            info.plural, info.group
        )
    } else {
        format!(
            "admission webhook \"resourcedeletionprotection.karmada.io\" denied the request: {reason}"
        )
    };
    Err(ApiError::forbidden(message))
}

/// The namespaces kube-apiserver's `NamespaceLifecycle` admission never lets anyone delete.
pub const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// kube's `NamespaceLifecycle` refusal to delete an immortal namespace (`403`, `namespaces
/// "default" is forbidden: this namespace may not be deleted`).
fn check_immortal(info: &ResourceInfo, name: &str) -> Result<(), ApiError> {
    if info.group.is_empty() && info.kind == "Namespace" && IMMORTAL_NAMESPACES.contains(&name) {
        return Err(ApiError::forbidden(format!(
            "namespaces {name:?} is forbidden: this namespace may not be deleted"
        )));
    }
    Ok(())
}

impl Registry {
    /// Deletes an object: at once when nothing holds it, else marks it with a deletion
    /// timestamp and leaves it to its finalizers. Returns the object and whether it is gone.
    pub async fn delete(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<(Value, bool), ApiError> {
        check_immortal(info, name)?;
        for _ in 0..MAX_PATCH_RETRIES {
            let current = self.read_kv(info, namespace, name).await?;
            let mut obj = object::decode(&current)?;
            crate::conversion::to_served(info, &mut obj);
            if self.deletion_protection {
                // Karmada's webhook sees deletes of objects carrying the label at all.
                let labelled = obj["metadata"]["labels"]
                    .get(DELETION_PROTECTION_LABEL)
                    .is_some();
                let webhook = labelled.then_some(crate::metrics::webhook::DELETION_PROTECTION);
                self.webhooks
                    .call(webhook, || check_deletion_protection(info, &obj, name))?;
            }
            if let Some(uid) = &options.precondition_uid
                && object::meta_str(&obj, "uid") != Some(uid.as_str())
            {
                return Err(ApiError::conflict(info, name).with_message(format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    object::meta_str(&obj, "uid").unwrap_or("")
                )));
            }
            if let Some(rv) = &options.precondition_resource_version
                && object::parse_resource_version(rv)? != Some(current.mod_revision)
            {
                return Err(ApiError::conflict(info, name).with_message(format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    current.mod_revision
                )));
            }
            let mut finalizers = object::finalizers(&obj);
            match options.propagation_policy.as_deref() {
                Some("Foreground") if !finalizers.iter().any(|f| f == "foregroundDeletion") => {
                    finalizers.push("foregroundDeletion".into())
                }
                Some("Orphan") if !finalizers.iter().any(|f| f == "orphan") => {
                    finalizers.push("orphan".into())
                }
                _ => {}
            }
            crate::crd::finalizers_on_delete(info, &obj, &mut finalizers);
            let namespace_finalizers = info.kind == "Namespace" && info.group.is_empty();
            if finalizers.is_empty() && !namespace_finalizers {
                if options.dry_run {
                    return Ok((obj, true));
                }
                let key = Self::key(info, namespace, name);
                match self
                    .store
                    .delete(key.clone(), Some(current.mod_revision))
                    .await
                {
                    Ok((_, revision)) => {
                        self.note_write(&key, revision);
                        object::set_resource_version(&mut obj, revision);
                        self.fence_namespace_write(info, revision);
                        return Ok((obj, true));
                    }
                    Err(StoreError::Conflict { .. }) => continue,
                    Err(e) => return Err(ApiError::from_store(e, info, name)),
                }
            }
            // Something holds the object: mark it as being deleted.
            if obj["metadata"].get("deletionTimestamp").is_some()
                && object::finalizers(&obj) == finalizers
            {
                return Ok((obj, false));
            }
            let now = format_time(self.clock.now());
            let meta = object::metadata_mut(&mut obj);
            meta.entry("deletionTimestamp").or_insert(now.into());
            meta.entry("deletionGracePeriodSeconds")
                .or_insert(options.grace_period_seconds.unwrap_or(0).into());
            if !finalizers.is_empty() {
                meta.insert("finalizers".into(), finalizers.into());
            }
            if namespace_finalizers {
                obj["status"]["phase"] = "Terminating".into();
            }
            if options.dry_run {
                return Ok((obj, false));
            }
            let key = Self::key(info, namespace, name);
            match self
                .store
                .update(
                    key.clone(),
                    encode_stored(info, &obj, self.compact)?,
                    current.mod_revision,
                )
                .await
            {
                Ok(kv) => {
                    self.note_write(&key, kv.mod_revision);
                    object::set_resource_version(&mut obj, kv.mod_revision);
                    self.fence_namespace_write(info, kv.mod_revision);
                    return Ok((obj, false));
                }
                Err(StoreError::Conflict { .. }) => continue,
                Err(e) => return Err(ApiError::from_store(e, info, name)),
            }
        }
        Err(ApiError::conflict(info, name))
    }
}
