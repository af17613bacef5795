//! The tokens controller (kube-controller-manager's, run inside the API server): a Secret of
//! type `kubernetes.io/service-account-token` naming an existing ServiceAccount in the
//! `kubernetes.io/service-account.name` annotation gets `data.token`, `data.ca.crt` and
//! `data.namespace`, and the ServiceAccount's uid in `kubernetes.io/service-account.uid`. A
//! token Secret whose ServiceAccount is gone (or was recreated with another uid) is deleted, and
//! deleting a ServiceAccount deletes its token Secrets. Follows
//! `pkg/controller/serviceaccount/tokens_controller.go` (Kubernetes v1.32) in behaviour.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::service_accounts::{
    ObjectClaim, SA_NAME_ANNOTATION, SA_UID_ANNOTATION, ServiceAccountTokens, TOKEN_SECRET_TYPE,
};
use crate::cache::{Change, ChangeKind};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::object;
use crate::registry::write::Part;
use crate::registry::{DeleteOptions, Registry, WriteOptions};

const SECRETS_PREFIX: &str = "/registry/core/secrets/";
const SERVICE_ACCOUNTS_PREFIX: &str = "/registry/core/serviceaccounts/";
/// How often one Secret's sync is retried when it keeps conflicting with other writers.
const ATTEMPTS: usize = 5;
/// The field manager of the controller's writes.
const MANAGER: &str = "flotilla-tokens-controller";

/// Runs until dropped.
pub async fn run(registry: Registry, tokens: Arc<ServiceAccountTokens>, root_ca: Option<String>) {
    let controller = Controller {
        secrets: registry
            .catalog()
            .get("", "v1", "secrets")
            .expect("secrets are built in"),
        registry,
        tokens,
        root_ca,
    };
    loop {
        let subscription = match controller
            .registry
            .cache()
            .subscribe(SECRETS_PREFIX.as_bytes(), None)
        {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        for change in subscription.backlog {
            controller.handle(&change).await;
        }
        let mut live = subscription.live;
        loop {
            match live.recv().await {
                Ok(change) => controller.handle(&change).await,
                // Missed changes: start over from the current Secrets.
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}

struct Controller {
    registry: Registry,
    secrets: Arc<ResourceInfo>,
    tokens: Arc<ServiceAccountTokens>,
    root_ca: Option<String>,
}

impl Controller {
    async fn handle(&self, change: &Change) {
        let key = &change.object.key;
        if key.starts_with(SECRETS_PREFIX.as_bytes()) && change.kind != ChangeKind::Deleted {
            let value = change.object.value();
            if value["type"].as_str() != Some(TOKEN_SECRET_TYPE) {
                return;
            }
            let (Some(ns), Some(name)) = (object::namespace(&value), object::name(&value)) else {
                return;
            };
            if let Err(error) = self.sync_secret(ns, name).await {
                tracing::warn!(namespace = ns, name, %error, "cannot fill the token Secret");
            }
        } else if key.starts_with(SERVICE_ACCOUNTS_PREFIX.as_bytes())
            && change.kind == ChangeKind::Deleted
        {
            let sa = change.object.value();
            let (Some(ns), Some(name)) = (object::namespace(&sa), object::name(&sa)) else {
                return;
            };
            let uid = sa["metadata"]["uid"].as_str().unwrap_or("");
            self.delete_tokens_of(ns, name, uid).await;
        }
    }

    /// Fills or deletes one token Secret, retrying on conflicts.
    async fn sync_secret(&self, ns: &str, name: &str) -> Result<(), ApiError> {
        for _ in 0..ATTEMPTS {
            let secret = match self.registry.get(&self.secrets, Some(ns), name).await {
                Ok(secret) => secret,
                Err(e) if e.code == 404 => return Ok(()),
                Err(e) => return Err(e),
            };
            if secret["type"].as_str() != Some(TOKEN_SECRET_TYPE)
                || secret["metadata"]
                    .get("deletionTimestamp")
                    .is_some_and(|t| !t.is_null())
            {
                return Ok(());
            }
            let annotations = object::string_map(secret["metadata"].get("annotations"));
            let Some(sa_name) = annotations
                .get(SA_NAME_ANNOTATION)
                .filter(|n| !n.is_empty())
            else {
                return Ok(());
            };
            let wanted_uid = annotations.get(SA_UID_ANNOTATION).filter(|u| !u.is_empty());
            let sa = self.service_account(ns, sa_name).await?;
            let sa_uid = sa
                .as_ref()
                .and_then(|sa| sa["metadata"]["uid"].as_str())
                .map(str::to_owned);
            let Some(sa_uid) = sa_uid.filter(|uid| wanted_uid.is_none_or(|w| w == uid)) else {
                tracing::info!(namespace = ns, name, service_account = %sa_name, "service account does not exist; deleting its token Secret");
                return self.delete_secret(ns, name, &secret).await;
            };
            let Some(updated) = self.filled(ns, name, sa_name, &sa_uid, secret)? else {
                return Ok(());
            };
            let options = WriteOptions {
                field_manager: Some(MANAGER.to_owned()),
                ..WriteOptions::default()
            };
            match self
                .registry
                .update(&self.secrets, Some(ns), name, updated, Part::Main, &options)
                .await
            {
                Ok(_) => {
                    tracing::info!(
                        namespace = ns,
                        name,
                        "filled the service-account token Secret"
                    );
                    return Ok(());
                }
                Err(e) if e.code == 409 => continue,
                Err(e) if e.code == 404 => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Err(ApiError::new(
            409,
            "Conflict",
            format!("secret {ns}/{name} kept changing"),
        ))
    }

    /// The Secret with token, CA and namespace filled in, or `None` if it already is.
    fn filled(
        &self,
        ns: &str,
        name: &str,
        sa_name: &str,
        sa_uid: &str,
        mut secret: Value,
    ) -> Result<Option<Value>, ApiError> {
        let mut data = secret["data"].as_object().cloned().unwrap_or_default();
        let b64 = |s: &str| Value::String(STANDARD.encode(s));
        let mut changed = false;
        if data
            .get("token")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            let sa = ObjectClaim {
                name: sa_name.to_owned(),
                uid: sa_uid.to_owned(),
            };
            let token = self
                .tokens
                .issue_legacy(ns, &sa, name)
                .map_err(|e| ApiError::new(500, "InternalError", e.to_string()))?;
            data.insert("token".into(), b64(&token));
            changed = true;
        }
        if let Some(ca) = &self.root_ca
            && data.get("ca.crt") != Some(&b64(ca))
        {
            data.insert("ca.crt".into(), b64(ca));
            changed = true;
        }
        if data.get("namespace") != Some(&b64(ns)) {
            data.insert("namespace".into(), b64(ns));
            changed = true;
        }
        let meta = object::metadata_mut(&mut secret);
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        if annotations[SA_UID_ANNOTATION].as_str() != Some(sa_uid) {
            annotations[SA_UID_ANNOTATION] = sa_uid.into();
            changed = true;
        }
        secret["data"] = Value::Object(data);
        Ok(changed.then_some(secret))
    }

    async fn service_account(&self, ns: &str, name: &str) -> Result<Option<Value>, ApiError> {
        let info = self
            .registry
            .catalog()
            .get("", "v1", "serviceaccounts")
            .expect("service accounts are built in");
        match self.registry.get(&info, Some(ns), name).await {
            Ok(sa) => Ok(Some(sa)),
            Err(e) if e.code == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn delete_secret(&self, ns: &str, name: &str, secret: &Value) -> Result<(), ApiError> {
        let options = DeleteOptions {
            precondition_uid: secret["metadata"]["uid"].as_str().map(str::to_owned),
            ..DeleteOptions::default()
        };
        match self
            .registry
            .delete(&self.secrets, Some(ns), name, &options)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.code == 404 || e.code == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Deletes the token Secrets of a deleted ServiceAccount.
    async fn delete_tokens_of(&self, ns: &str, sa_name: &str, sa_uid: &str) {
        let prefix = format!("{SECRETS_PREFIX}{ns}/");
        let (secrets, _) = self.registry.cache().list(prefix.as_bytes(), None);
        for cached in secrets {
            let secret = cached.value();
            if secret["type"].as_str() != Some(TOKEN_SECRET_TYPE) {
                continue;
            }
            let annotations = object::string_map(secret["metadata"].get("annotations"));
            let names_it = annotations.get(SA_NAME_ANNOTATION).map(String::as_str) == Some(sa_name);
            let uid_fits = annotations
                .get(SA_UID_ANNOTATION)
                .is_none_or(|uid| uid.is_empty() || uid == sa_uid);
            if !(names_it && uid_fits) {
                continue;
            }
            let Some(name) = object::name(&secret) else {
                continue;
            };
            tracing::info!(
                namespace = ns,
                name,
                service_account = sa_name,
                "service account deleted; deleting its token Secret"
            );
            if let Err(error) = self.delete_secret(ns, name, &secret).await {
                tracing::warn!(namespace = ns, name, %error, "cannot delete the token Secret");
            }
        }
    }
}
