//! `certRotation` (Karmada agent's `cert-rotation-controller`): the agent renews its own client
//! certificate before it expires. Every `--cert-rotation-checking-interval` it reads the
//! certificate in its control-plane kubeconfig; once no more than
//! `--cert-rotation-remaining-time-threshold` of the certificate's lifetime remains, it asks as
//! itself for a new one — a fresh ECDSA P-256 key, a CertificateSigningRequest
//! `<cluster>-<5 random characters>` for signer `kubernetes.io/kube-apiserver-client` with the
//! same subject, which `agentcsrapproving` approves by its `selfclusteragent` rule — waits for it
//! to be issued, and replaces the key and certificate in the kubeconfig (a private temporary
//! file renamed over it). The running agent notices the file changed and reconnects with the
//! new certificate. A failure is logged with the request's name and tried again at the next
//! check; it never stops the agent.
//!
//! Only a kubeconfig whose user carries its certificate and key inline, the certificate being
//! `system:karmada:agent:<cluster>`'s (what bootstrap writes), is rotated; otherwise the task
//! says once why it stays idle. Karmada's controller rewrites the `karmada-kubeconfig` Secret
//! `karmadactl register` leaves in the member instead, and is off unless named in
//! `--controllers`; Flotilla's agent owns its kubeconfig file, so the task is on by default.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use base64::Engine as _;
use flotilla_runtime::Shutdown;
use jiff::{SignedDuration, Timestamp};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use yaml_serde::Value;

use super::bootstrap::{self, AGENT_USER_PREFIX, Issued};
use super::discovery;

/// The `--controllers` name (Karmada's agent's).
pub const NAME: &str = "certRotation";

/// What the task needs, from the flags.
#[derive(Debug, Clone)]
pub struct Rotation {
    /// The agent's control-plane kubeconfig, rewritten when the certificate is renewed.
    pub kubeconfig: PathBuf,
    /// Its context (default: the current one).
    pub context: Option<String>,
    pub cluster_name: String,
    /// `--cert-rotation-checking-interval`.
    pub interval: Duration,
    /// `--cert-rotation-remaining-time-threshold`.
    pub threshold: f64,
    /// `expirationSeconds` of the request (`--cert-expiration-seconds`).
    pub expiration_seconds: i32,
    /// How long a request may wait for its certificate (`--discovery-timeout`).
    pub timeout: Duration,
}

/// The task's counter: `flotilla_agent_certificate_rotations_total{result="success"|"failure"}`.
#[derive(Debug, Clone, Default)]
pub struct RotationMetrics {
    rotations: Family<Vec<(&'static str, &'static str)>, Counter>,
}

impl RotationMetrics {
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "flotilla_agent_certificate_rotations",
            "Renewals of the agent's client certificate (certRotation), by result.",
            self.rotations.clone(),
        );
    }

    fn count(&self, result: &'static str) {
        self.rotations
            .get_or_create(&vec![("result", result)])
            .inc();
    }
}

/// When a certificate may be used (the intersection over its chain, as Karmada reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    pub not_before: Timestamp,
    pub not_after: Timestamp,
}

impl Validity {
    /// The share of the lifetime still ahead at `now`: 1 when issued, 0 at `not_after`,
    /// negative past it; 0 for a certificate whose lifetime is empty.
    pub fn remaining_fraction(&self, now: Timestamp) -> f64 {
        let total = self.not_after.duration_since(self.not_before).as_secs_f64();
        if total <= 0.0 {
            return 0.0;
        }
        self.not_after.duration_since(now).as_secs_f64() / total
    }

    /// Whether the certificate is renewed at `now`: Karmada rotates unless more than
    /// `threshold` of the lifetime remains.
    pub fn is_due(&self, now: Timestamp, threshold: f64) -> bool {
        self.remaining_fraction(now) <= threshold
    }

    /// The first instant [`Validity::is_due`] holds.
    pub fn due_at(&self, threshold: f64) -> Timestamp {
        let total = self.not_after.duration_since(self.not_before).as_secs_f64();
        let ahead = SignedDuration::try_from_secs_f64(total.max(0.0) * threshold)
            .unwrap_or(SignedDuration::MAX);
        self.not_after
            .saturating_sub(ahead)
            .unwrap_or(Timestamp::MIN)
    }
}

/// What one check found in the kubeconfig.
#[derive(Debug)]
pub enum Plan {
    /// Nothing this task can rotate, and why.
    Idle(String),
    /// The certificate is fine until `due_at`.
    NotDue {
        validity: Validity,
        due_at: Timestamp,
    },
    /// Renew now.
    Due(Credentials),
}

/// The kubeconfig as read, and where its user's credentials are.
#[derive(Debug)]
pub struct Credentials {
    /// The file's text when it was read (a rewrite only replaces this).
    text: String,
    document: Value,
    user_index: usize,
    pub common_name: String,
    pub validity: Validity,
}

/// Reads the kubeconfig `text` (`context`, or its current context) and decides whether its
/// certificate, which must be `user`'s, is renewed at `now`.
pub fn plan(text: &str, context: Option<&str>, user: &str, now: Timestamp, threshold: f64) -> Plan {
    match credentials(text, context, user) {
        Err(reason) => Plan::Idle(reason),
        Ok(found) if found.validity.is_due(now, threshold) => Plan::Due(found),
        Ok(found) => Plan::NotDue {
            validity: found.validity,
            due_at: found.validity.due_at(threshold),
        },
    }
}

fn credentials(text: &str, context: Option<&str>, user: &str) -> Result<Credentials, String> {
    let document: Value =
        yaml_serde::from_str(text).map_err(|e| format!("is not a kubeconfig: {e}"))?;
    let context = match context {
        Some(name) => name.to_owned(),
        None => document["current-context"]
            .as_str()
            .filter(|c| !c.is_empty())
            .ok_or("has no current-context")?
            .to_owned(),
    };
    let entry = named(&document["contexts"], &context)
        .ok_or_else(|| format!("has no context {context:?}"))?;
    let user_name = document["contexts"][entry]["context"]["user"]
        .as_str()
        .ok_or_else(|| format!("names no user in context {context:?}"))?
        .to_owned();
    let user_index = named(&document["users"], &user_name)
        .ok_or_else(|| format!("has no user {user_name:?}"))?;
    let fields = &document["users"][user_index]["user"];
    let inline = |field: &str| {
        fields[field].as_str().ok_or_else(|| {
            format!(
                "has no {field} for user {user_name:?} (only a certificate and key held in the kubeconfig are rotated)"
            )
        })
    };
    let certificate = base64::engine::general_purpose::STANDARD
        .decode(inline("client-certificate-data")?.trim())
        .map_err(|_| {
            format!("has client-certificate-data for user {user_name:?} that is not base64")
        })?;
    inline("client-key-data")?;
    let (common_name, validity) = read_certificate(&certificate)?;
    if common_name != user {
        return Err(format!(
            "holds a certificate for {common_name:?}, not this agent's {user:?}"
        ));
    }
    Ok(Credentials {
        text: text.to_owned(),
        document,
        user_index,
        common_name,
        validity,
    })
}

/// The index of the entry of a kubeconfig list (`contexts`, `users`) called `name`.
fn named(list: &Value, name: &str) -> Option<usize> {
    list.as_sequence()?
        .iter()
        .position(|entry| entry["name"].as_str() == Some(name))
}

/// The first certificate's common name, and the validity shared by the chain.
pub fn read_certificate(pem: &[u8]) -> Result<(String, Validity), String> {
    let ders =
        discovery::pem_certificates(pem).map_err(|e| format!("has a broken certificate: {e}"))?;
    let at = |t: x509_parser::time::ASN1Time| {
        Timestamp::from_second(t.timestamp()).unwrap_or(Timestamp::MIN)
    };
    let mut common_name = None;
    let mut validity: Option<Validity> = None;
    for der in &ders {
        let (_, certificate) = x509_parser::parse_x509_certificate(der)
            .map_err(|e| format!("has a broken certificate: {e}"))?;
        let this = Validity {
            not_before: at(certificate.validity().not_before),
            not_after: at(certificate.validity().not_after),
        };
        validity = Some(match validity {
            None => this,
            Some(v) => Validity {
                not_before: v.not_before.max(this.not_before),
                not_after: v.not_after.min(this.not_after),
            },
        });
        common_name.get_or_insert_with(|| {
            certificate
                .subject()
                .iter_common_name()
                .next()
                .and_then(|cn| cn.as_str().ok())
                .unwrap_or_default()
                .to_owned()
        });
    }
    let validity = validity.ok_or("has no certificate")?;
    Ok((common_name.unwrap_or_default(), validity))
}

impl Credentials {
    /// The kubeconfig with `issued` in place of the user's certificate and key.
    fn rewritten(mut self, issued: &Issued) -> anyhow::Result<String> {
        let b64 = |text: &str| Value::from(base64::engine::general_purpose::STANDARD.encode(text));
        let fields = self.document["users"][self.user_index]
            .get_mut("user")
            .and_then(Value::as_mapping_mut)
            .context("the kubeconfig's user is not a mapping")?;
        fields.insert(
            "client-certificate-data".into(),
            b64(&issued.certificate_pem),
        );
        fields.insert("client-key-data".into(), b64(&issued.key_pem));
        yaml_serde::to_string(&self.document).context("render the kubeconfig")
    }
}

/// Checks at once, then every interval, until `shutdown`.
pub async fn run(rotation: Rotation, metrics: RotationMetrics, shutdown: Shutdown) {
    let user = format!("{AGENT_USER_PREFIX}{}", rotation.cluster_name);
    let path = rotation.kubeconfig.display().to_string();
    let mut idle: Option<String> = None;
    let mut ticks = tokio::time::interval(rotation.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let text = match std::fs::read_to_string(&rotation.kubeconfig) {
            Ok(text) => text,
            Err(error) => {
                tracing::error!(kubeconfig = %path, %error, "certRotation: cannot read the agent's kubeconfig; checking again at the next interval");
                continue;
            }
        };
        let found = match plan(
            &text,
            rotation.context.as_deref(),
            &user,
            Timestamp::now(),
            rotation.threshold,
        ) {
            Plan::Idle(reason) => {
                if idle.as_ref() != Some(&reason) {
                    tracing::info!(kubeconfig = %path, "certRotation: not rotating: the kubeconfig {reason}");
                    idle = Some(reason);
                }
                continue;
            }
            Plan::NotDue { validity, due_at } => {
                idle = None;
                tracing::debug!(not_after = %validity.not_after, %due_at, "certRotation: the certificate is not due for renewal");
                continue;
            }
            Plan::Due(found) => found,
        };
        idle = None;
        let csr = match bootstrap::random_name(5) {
            Ok(suffix) => format!("{}-{suffix}", rotation.cluster_name),
            Err(error) => {
                metrics.count("failure");
                tracing::error!(
                    error = format!("{error:#}"),
                    "certRotation: cannot name the certificate request; trying again at the next interval"
                );
                continue;
            }
        };
        tracing::info!(%csr, not_after = %found.validity.not_after, threshold = rotation.threshold, "certRotation: renewing the agent's certificate");
        match rotate(&rotation, found, &csr).await {
            Ok(Some(validity)) => {
                metrics.count("success");
                tracing::info!(%csr, not_after = %validity.not_after, kubeconfig = %path, "certRotation: rotated the agent's certificate");
            }
            Ok(None) => {
                tracing::warn!(%csr, kubeconfig = %path, "certRotation: the kubeconfig changed while the certificate was being renewed; left as it is, the new certificate is not used")
            }
            Err(error) => {
                metrics.count("failure");
                tracing::error!(%csr, error = format!("{error:#}"), retry_in = ?rotation.interval, "certRotation: cannot renew the agent's certificate; trying again at the next interval");
            }
        }
    }
}

/// Requests the new certificate as the agent and writes it; `None` when the kubeconfig was
/// replaced meanwhile (it is left alone).
async fn rotate(
    rotation: &Rotation,
    found: Credentials,
    csr: &str,
) -> anyhow::Result<Option<Validity>> {
    let client =
        flotilla_agent::KubeconfigSource::new(&rotation.kubeconfig, rotation.context.clone())
            .load()
            .await?
            .client;
    let issued = bootstrap::request_certificate(
        &client,
        csr,
        &found.common_name,
        rotation.expiration_seconds,
        rotation.timeout,
        refused,
    )
    .await?;
    let (_, validity) = read_certificate(issued.certificate_pem.as_bytes())
        .map_err(|e| anyhow!("CertificateSigningRequest {csr}: the issued certificate {e}"))?;
    let current = std::fs::read_to_string(&rotation.kubeconfig)
        .with_context(|| format!("read {}", rotation.kubeconfig.display()))?;
    if current != found.text {
        return Ok(None);
    }
    let text = found.rewritten(&issued)?;
    bootstrap::write_private(&rotation.kubeconfig, &text)?;
    Ok(Some(validity))
}

fn refused(error: kube::Error, name: &str) -> anyhow::Error {
    match &error {
        kube::Error::Api(status) if status.code == 401 => anyhow!(
            "create CertificateSigningRequest {name}: the control plane refused the agent's certificate (expired? bootstrap again with a token): {error}"
        ),
        _ => anyhow!("create CertificateSigningRequest {name}: {error}"),
    }
}

/// `--cert-rotation-remaining-time-threshold`: a fraction between 0 and 1.
pub fn parse_threshold(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("invalid threshold {text:?}: expected a fraction such as 0.2"))?;
    if !(0.0..=1.0).contains(&value) {
        return Err(format!(
            "invalid threshold {text:?}: the remaining fraction of a certificate's lifetime is between 0 and 1"
        ));
    }
    Ok(value)
}

/// `--cert-rotation-checking-interval`: a duration above zero.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = crate::bench::parse_duration(text)?;
    if interval.is_zero() {
        return Err(format!("invalid interval {text:?}: must be above zero"));
    }
    Ok(interval)
}

#[cfg(test)]
mod tests;
