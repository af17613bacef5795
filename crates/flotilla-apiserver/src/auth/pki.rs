//! The cluster PKI: a self-signed CA, the API server's serving certificate and the admin client
//! certificate, kept as PEM files in the data directory and reused across restarts.
//!
//! Client certificates follow the Kubernetes convention: CN is the user name, each O is a group.
//! Keys are ECDSA P-256 (PKCS#8 PEM), written with mode 0600. The CA is never replaced
//! automatically; leaf certificates are re-issued when they no longer fit (hosts changed, expiring
//! within 30 days, not signed by the CA, key mismatch).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PublicKeyData, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::AuthError;
use super::authz::MASTERS_GROUP;
use super::files::{PUBLIC_MODE, SECRET_MODE, ensure_private_dir, pem_encode, read_optional};
use hosts::{Host, cert_hosts, serving_hosts};

mod hosts;
mod signing;
mod subject;

pub use signing::LeafRequest;
#[cfg(test)]
mod tests;

pub const CA_CERT_FILE: &str = "ca.crt";
pub const CA_KEY_FILE: &str = "ca.key";
pub const SERVING_CERT_FILE: &str = "apiserver.crt";
pub const SERVING_KEY_FILE: &str = "apiserver.key";
pub const ADMIN_CERT_FILE: &str = "admin.crt";
pub const ADMIN_KEY_FILE: &str = "admin.key";
/// Common name of the CA certificate.
pub const CA_COMMON_NAME: &str = "flotilla-ca";
/// Common name of the serving certificate.
pub const SERVING_COMMON_NAME: &str = "flotilla-apiserver";
/// User name in the admin client certificate; its group is [`MASTERS_GROUP`].
pub const ADMIN_USER: &str = "flotilla-admin";
/// Hosts every serving certificate covers, before the caller's.
pub const DEFAULT_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

const DAY: Duration = Duration::from_secs(24 * 60 * 60);
const CA_LIFETIME: Duration = Duration::from_secs(3650 * 24 * 60 * 60);
const LEAF_LIFETIME: Duration = Duration::from_secs(365 * 24 * 60 * 60);
/// Leaves closer than this to expiry are re-issued on start.
const RENEW_BEFORE: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// notBefore is set this far in the past so clients with a slightly slow clock accept new certs.
const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// The CA (with its key, to issue more certificates) and the certificates the server needs.
pub struct Pki {
    dir: PathBuf,
    ca: Ca,
    serving: IssuedCert,
    admin: IssuedCert,
}

/// A certificate and its private key, both PEM. `Debug` never shows the key.
#[derive(Clone)]
pub struct IssuedCert {
    pub cert_pem: String,
    pub key_pem: String,
}

struct Ca {
    cert_pem: String,
    cert_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
    /// Leaves never outlive the CA.
    not_after_unix: u64,
}

impl Pki {
    /// Loads the PKI from `dir`, creating whatever is missing. `hosts` are extra DNS names or IP
    /// addresses for the serving certificate, on top of [`DEFAULT_HOSTS`]; if the existing serving
    /// certificate does not cover them all it is re-issued under the same CA.
    pub fn load_or_create(dir: &Path, hosts: &[String]) -> Result<Pki, AuthError> {
        let hosts = serving_hosts(hosts)?;
        ensure_private_dir(dir)?;
        let ca = Ca::load_or_create(dir)?;
        let serving = load_or_issue_leaf(
            dir,
            SERVING_CERT_FILE,
            SERVING_KEY_FILE,
            &ca,
            |cert| {
                let present = cert_hosts(cert);
                match hosts.iter().find(|h| !present.contains(h)) {
                    Some(missing) => Err(format!("does not cover host {missing:?}")),
                    None => Ok(()),
                }
            },
            || ca.issue_serving(&hosts),
        )?;
        let admin = load_or_issue_leaf(
            dir,
            ADMIN_CERT_FILE,
            ADMIN_KEY_FILE,
            &ca,
            |_| Ok(()),
            || {
                ca.issue(
                    ADMIN_USER,
                    &[MASTERS_GROUP.to_string()],
                    "admin client certificate",
                )
            },
        )?;
        Ok(Pki {
            dir: dir.to_path_buf(),
            ca,
            serving,
            admin,
        })
    }

    /// Issues a client certificate for `user` in `groups` (CN = user, one O per group), valid for
    /// a year. Nothing is written to disk.
    pub fn issue_client_cert(
        &self,
        user: &str,
        groups: &[String],
    ) -> Result<IssuedCert, AuthError> {
        if user.is_empty() {
            return Err(AuthError::BadSubject {
                reason: "the user name (CN) must not be empty".into(),
            });
        }
        if groups.iter().any(String::is_empty) {
            return Err(AuthError::BadSubject {
                reason: "group names (O) must not be empty".into(),
            });
        }
        self.ca.issue(user, groups, "client certificate")
    }

    /// The directory the PEM files live in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn ca_cert_pem(&self) -> &str {
        &self.ca.cert_pem
    }

    pub fn ca_cert_der(&self) -> &CertificateDer<'static> {
        &self.ca.cert_der
    }

    /// The serving certificate and key, PEM.
    pub fn serving(&self) -> &IssuedCert {
        &self.serving
    }

    /// The admin client certificate (`flotilla-admin`, group `system:masters`) and key, PEM.
    pub fn admin(&self) -> &IssuedCert {
        &self.admin
    }

    /// The serving certificate chain and key in the form rustls takes.
    pub fn serving_identity(
        &self,
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), AuthError> {
        let bad = |reason: String| AuthError::BadCertificate {
            path: self.dir.join(SERVING_CERT_FILE),
            reason,
        };
        let cert = CertificateDer::from_pem_slice(self.serving.cert_pem.as_bytes())
            .map_err(|e| bad(e.to_string()))?;
        let key = PrivateKeyDer::from_pem_slice(self.serving.key_pem.as_bytes())
            .map_err(|e| bad(format!("key: {e}")))?;
        Ok((vec![cert], key))
    }
}

impl fmt::Debug for Pki {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pki")
            .field("dir", &self.dir)
            .field("keys", &"[redacted]")
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for IssuedCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IssuedCert")
            .field("cert_pem", &self.cert_pem)
            .field("key_pem", &"[redacted]")
            .finish()
    }
}

impl Ca {
    fn load_or_create(dir: &Path) -> Result<Ca, AuthError> {
        let cert_path = dir.join(CA_CERT_FILE);
        let key_path = dir.join(CA_KEY_FILE);
        match (read_optional(&cert_path)?, read_optional(&key_path)?) {
            (Some(cert_pem), Some(key_pem)) => Ca::load(&cert_path, cert_pem, &key_path, &key_pem),
            (None, None) => Ca::create(&cert_path, &key_path),
            (Some(_), None) => Err(AuthError::PartialCa {
                present: cert_path,
                missing: key_path,
            }),
            (None, Some(_)) => Err(AuthError::PartialCa {
                present: key_path,
                missing: cert_path,
            }),
        }
    }

    fn load(
        cert_path: &Path,
        cert_pem: String,
        key_path: &Path,
        key_pem: &str,
    ) -> Result<Ca, AuthError> {
        let bad = |reason: String| AuthError::BadCertificate {
            path: cert_path.to_path_buf(),
            reason,
        };
        let key = KeyPair::from_pem(key_pem).map_err(|source| AuthError::LoadKey {
            path: key_path.to_path_buf(),
            source,
        })?;
        let cert_der =
            CertificateDer::from_pem_slice(cert_pem.as_bytes()).map_err(|e| bad(e.to_string()))?;
        let (_, cert) = X509Certificate::from_der(&cert_der).map_err(|e| bad(e.to_string()))?;
        if cert.public_key().raw != key.subject_public_key_info().as_slice() {
            return Err(bad(format!(
                "does not match the key in {}",
                key_path.display()
            )));
        }
        if !cert.is_ca() {
            return Err(bad("is not a CA certificate".into()));
        }
        if !cert.validity().is_valid() {
            return Err(bad(
                "is expired or not yet valid; remove ca.crt and ca.key to create a new CA".into(),
            ));
        }
        let not_after_unix = u64::try_from(cert.validity().not_after.timestamp()).unwrap_or(0);
        let issuer = Issuer::from_ca_cert_der(&cert_der, key).map_err(|e| bad(e.to_string()))?;
        tracing::debug!(path = %cert_path.display(), "loaded CA");
        Ok(Ca {
            cert_pem,
            cert_der,
            issuer,
            not_after_unix,
        })
    }

    fn create(cert_path: &Path, key_path: &Path) -> Result<Ca, AuthError> {
        let what = "CA certificate";
        let key = KeyPair::generate().map_err(|source| AuthError::Generate { what, source })?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::CommonName, CA_COMMON_NAME);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let not_after_unix = set_validity(&mut params, CA_LIFETIME, u64::MAX);
        let cert = params
            .self_signed(&key)
            .map_err(|source| AuthError::Generate { what, source })?;
        let cert_pem = cert.pem();
        // Key first: a crash in between leaves a key without a certificate, which load refuses
        // loudly instead of silently minting a second CA next to a distributed certificate.
        super::files::write_atomic(key_path, key.serialize_pem().as_bytes(), SECRET_MODE)?;
        super::files::write_atomic(cert_path, cert_pem.as_bytes(), PUBLIC_MODE)?;
        tracing::info!(path = %cert_path.display(), "created a new CA");
        Ok(Ca {
            cert_pem,
            cert_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
            not_after_unix,
        })
    }

    fn issue_serving(&self, hosts: &[Host]) -> Result<IssuedCert, AuthError> {
        let sans = hosts
            .iter()
            .map(|h| match h {
                Host::Ip(ip) => Ok(SanType::IpAddress(*ip)),
                Host::Dns(name) => {
                    name.clone()
                        .try_into()
                        .map(SanType::DnsName)
                        .map_err(|source| AuthError::Generate {
                            what: "serving certificate",
                            source,
                        })
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.sign_leaf(
            SERVING_COMMON_NAME,
            &[],
            sans,
            ExtendedKeyUsagePurpose::ServerAuth,
            "serving certificate",
        )
    }

    fn issue(
        &self,
        user: &str,
        groups: &[String],
        what: &'static str,
    ) -> Result<IssuedCert, AuthError> {
        self.sign_leaf(
            user,
            groups,
            Vec::new(),
            ExtendedKeyUsagePurpose::ClientAuth,
            what,
        )
    }

    fn sign_leaf(
        &self,
        common_name: &str,
        organizations: &[String],
        sans: Vec<SanType>,
        usage: ExtendedKeyUsagePurpose,
        what: &'static str,
    ) -> Result<IssuedCert, AuthError> {
        let generate = |source| AuthError::Generate { what, source };
        let key = KeyPair::generate().map_err(generate)?;
        let mut params = CertificateParams::default();
        // Go's pkix.Name order (O before CN), like kubeadm's certificates.
        params.distinguished_name = DistinguishedName::new();
        if let [org] = organizations {
            params
                .distinguished_name
                .push(DnType::OrganizationName, org.as_str());
        }
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.subject_alt_names = sans;
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        set_validity(&mut params, LEAF_LIFETIME, self.not_after_unix);
        let cert = params.signed_by(&key, &self.issuer).map_err(generate)?;
        let cert_pem = if organizations.len() > 1 {
            let name = subject::encode_name(common_name, organizations);
            let der = subject::with_subject(cert.der(), &name, self.issuer.key())
                .map_err(|reason| AuthError::BadSubject { reason })?;
            pem_encode("CERTIFICATE", &der)
        } else {
            cert.pem()
        };
        Ok(IssuedCert {
            cert_pem,
            key_pem: key.serialize_pem(),
        })
    }

    /// Why `issued` cannot be reused, if it cannot: unparsable, key mismatch, not signed by this
    /// CA, or expiring soon.
    fn check_leaf(&self, issued: &IssuedCert) -> Result<Vec<u8>, String> {
        let der = CertificateDer::from_pem_slice(issued.cert_pem.as_bytes())
            .map_err(|e| format!("unreadable: {e}"))?;
        let (_, cert) = X509Certificate::from_der(&der).map_err(|e| format!("unparsable: {e}"))?;
        let key = KeyPair::from_pem(&issued.key_pem).map_err(|e| format!("unreadable key: {e}"))?;
        if cert.public_key().raw != key.subject_public_key_info().as_slice() {
            return Err("does not match its key".into());
        }
        let (_, ca) = X509Certificate::from_der(&self.cert_der).map_err(|e| e.to_string())?;
        if cert.verify_signature(Some(ca.public_key())).is_err() {
            return Err("is not signed by the current CA".into());
        }
        match cert.validity().time_to_expiration() {
            Some(left) if left.whole_seconds() > RENEW_BEFORE.as_secs() as i64 => {}
            _ => {
                return Err(format!(
                    "expires within {} days",
                    RENEW_BEFORE.as_secs() / DAY.as_secs()
                ));
            }
        }
        Ok(der.to_vec())
    }
}

/// Loads a leaf certificate and key if both exist and pass the CA's checks and `fits`; otherwise
/// issues a new one with `issue` and writes it.
fn load_or_issue_leaf(
    dir: &Path,
    cert_file: &str,
    key_file: &str,
    ca: &Ca,
    fits: impl Fn(&X509Certificate<'_>) -> Result<(), String>,
    issue: impl FnOnce() -> Result<IssuedCert, AuthError>,
) -> Result<IssuedCert, AuthError> {
    let cert_path = dir.join(cert_file);
    let key_path = dir.join(key_file);
    let existing = match (read_optional(&cert_path)?, read_optional(&key_path)?) {
        (Some(cert_pem), Some(key_pem)) => Some(IssuedCert { cert_pem, key_pem }),
        _ => None,
    };
    let reason = match &existing {
        None => "missing".to_string(),
        Some(issued) => {
            let checked = ca.check_leaf(issued).and_then(|der| {
                let (_, cert) = X509Certificate::from_der(&der).map_err(|e| e.to_string())?;
                fits(&cert)
            });
            match checked {
                Ok(()) => return Ok(existing.expect("matched Some above")),
                Err(reason) => reason,
            }
        }
    };
    let issued = issue()?;
    super::files::write_atomic(&key_path, issued.key_pem.as_bytes(), SECRET_MODE)?;
    super::files::write_atomic(&cert_path, issued.cert_pem.as_bytes(), PUBLIC_MODE)?;
    tracing::info!(path = %cert_path.display(), %reason, "issued a new certificate");
    Ok(issued)
}

/// Sets notBefore a little in the past and notAfter `lifetime` ahead, capped at `cap_unix`;
/// returns notAfter as Unix seconds.
fn set_validity(params: &mut CertificateParams, lifetime: Duration, cap_unix: u64) -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the system clock is after 1970");
    let not_after = (now + lifetime).min(Duration::from_secs(cap_unix));
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    params.not_before = epoch + now.saturating_sub(BACKDATE);
    params.not_after = epoch + not_after;
    not_after.as_secs()
}
