//! The CSR signer (kube-controller-manager's `csrsigning`, run inside the API server like the
//! tokens controller, since it holds the CA key): an approved, not failed request for a signer
//! Flotilla serves ([`lifted::signing::SERVED_SIGNERS`]) without a certificate yet gets one
//! from the cluster CA in `status.certificate`, with the request's subject, names and key, the
//! usages of `spec.usages`, and a lifetime of `expirationSeconds` bounded by the signing
//! duration (`up --cluster-signing-duration`, default 8760h). A request the signer refuses gets
//! a `Failed` condition, reason `SignerValidationFailure`, with why.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::lifted::{self, signing};
use crate::auth::pki::{LeafRequest, Pki};
use crate::cache::{CachedObject, ChangeKind};
use crate::catalog::ResourceInfo;
use crate::registry::write::Part;
use crate::registry::{Registry, WriteOptions, format_time};

/// The field manager of the signer's writes.
const MANAGER: &str = "flotilla-csr-signer";

/// How the control plane signs: its CA and the longest lifetime it issues.
#[derive(Debug, Clone)]
pub struct SigningConfig {
    pub pki: Arc<Pki>,
    pub duration: Duration,
}

/// Runs until dropped.
pub async fn run(registry: Registry, config: SigningConfig) {
    let info = registry
        .catalog()
        .get(super::GROUP, "v1", super::PLURAL)
        .expect("CSRs are built in");
    let prefix = info.storage_prefix();
    loop {
        let subscription = match registry.cache().subscribe(prefix.as_bytes(), None) {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        for change in subscription.backlog {
            handle(&registry, &info, &config, &change.object).await;
        }
        let mut live = subscription.live;
        loop {
            match live.recv().await {
                // The live feed carries every change in the store: decode only the requests.
                Ok(change)
                    if change.kind != ChangeKind::Deleted
                        && change.object.key.starts_with(prefix.as_bytes()) =>
                {
                    handle(&registry, &info, &config, &change.object).await;
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => break,
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// What the signer does with one request.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do (not approved, failed, issued, or another signer's).
    Skip,
    /// The certificate to write, PEM.
    Issue(String),
    /// The reason for a `Failed` condition.
    Fail(String),
}

/// The signer's decision for `csr` at `now`.
pub fn decide(csr: &Value, config: &SigningConfig, now: SystemTime) -> Outcome {
    if !lifted::is_approved(csr) || lifted::has_failed(csr) {
        return Outcome::Skip;
    }
    let signer = csr["spec"]["signerName"].as_str().unwrap_or("");
    if !signing::SERVED_SIGNERS.contains(&signer)
        || csr["status"]["certificate"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    {
        return Outcome::Skip;
    }
    let Ok(request) = lifted::parse_request(&lifted::request_bytes(csr).unwrap_or_default()) else {
        // Validation admitted it: it cannot fail to parse. Leave it be, as the signer does.
        return Outcome::Skip;
    };
    let usages: Vec<String> = csr["spec"]["usages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| u.as_str().map(str::to_owned))
        .collect();
    if let Err(reason) = signing::check(&request, &usages, signer) {
        return Outcome::Fail(reason);
    }
    let issued = (|| {
        let (key_usages, extended_key_usages) = signing::usages(&usages)?;
        let ttl = signing::duration(config.duration, csr["spec"]["expirationSeconds"].as_i64());
        let (not_before, not_after) = signing::validity(now, ttl, config.pki.ca_not_after())?;
        config.pki.sign(&LeafRequest {
            spki_der: &request.spki_der,
            subject_der: &request.subject_der,
            sans: signing::sans(&request)?,
            key_usages,
            extended_key_usages,
            not_before,
            not_after,
        })
    })();
    match issued {
        Ok(pem) => Outcome::Issue(pem),
        Err(reason) => {
            tracing::warn!(name = csr["metadata"]["name"].as_str().unwrap_or(""), %reason, "cannot sign the certificate signing request");
            Outcome::Skip
        }
    }
}

async fn handle(
    registry: &Registry,
    info: &ResourceInfo,
    config: &SigningConfig,
    cached: &CachedObject,
) {
    let mut csr = cached.value();
    let name = csr["metadata"]["name"].as_str().unwrap_or("").to_owned();
    match decide(&csr, config, SystemTime::now()) {
        Outcome::Skip => return,
        Outcome::Issue(pem) => {
            csr["status"]["certificate"] = STANDARD.encode(pem).into();
        }
        Outcome::Fail(reason) => {
            let now = format_time(registry.clock.now());
            let condition = json!({
                "type": lifted::FAILED,
                "status": "True",
                "reason": "SignerValidationFailure",
                "message": reason,
                "lastUpdateTime": now,
            });
            match csr["status"]["conditions"].as_array_mut() {
                Some(list) => list.push(condition),
                None => csr["status"]["conditions"] = json!([condition]),
            }
        }
    }
    // The version read makes the write conditional: a request changed meanwhile is looked at
    // again when its change arrives.
    crate::object::set_resource_version(&mut csr, cached.revision);
    let options = WriteOptions {
        field_manager: Some(MANAGER.to_owned()),
        ..WriteOptions::default()
    };
    match registry
        .update(info, None, &name, csr, Part::Status, &options)
        .await
    {
        Ok(_) => tracing::info!(name, "signed or failed the certificate signing request"),
        Err(e) if e.code == 409 || e.code == 404 => {}
        Err(e) => {
            tracing::warn!(name, error = %e, "cannot write the certificate signing request's status")
        }
    }
}
