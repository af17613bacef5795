//! Certificates for requests the CA did not make the key for: the CSR signer's issuance. The
//! caller decides subject, names, usages and lifetime (see
//! [`crate::certificates::lifted::signing`]); this only builds and signs the certificate, with
//! the request's public key and its subject kept byte for byte.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    CertificateParams, DistinguishedName, ExtendedKeyUsagePurpose, IsCa, KeyUsagePurpose, SanType,
    SerialNumber, SubjectPublicKeyInfo,
};

use super::Pki;
use crate::auth::files::pem_encode;

/// What a certificate issued for a request says.
#[derive(Debug, Clone)]
pub struct LeafRequest<'a> {
    /// The request's SubjectPublicKeyInfo, DER.
    pub spki_der: &'a [u8],
    /// The request's subject Name, DER (kept as is: every O survives).
    pub subject_der: &'a [u8],
    pub sans: Vec<SanType>,
    pub key_usages: Vec<KeyUsagePurpose>,
    pub extended_key_usages: Vec<ExtendedKeyUsagePurpose>,
    pub not_before: SystemTime,
    pub not_after: SystemTime,
}

impl Pki {
    /// When the CA expires: no certificate it issues outlives it.
    pub fn ca_not_after(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.ca.not_after_unix)
    }

    /// Signs `request` with the CA; the certificate as PEM, or why it cannot be issued.
    pub fn sign(&self, request: &LeafRequest<'_>) -> Result<String, String> {
        let public_key =
            SubjectPublicKeyInfo::from_der(request.spki_der).map_err(|e| e.to_string())?;
        let mut params = CertificateParams::default();
        params.distinguished_name = DistinguishedName::new();
        params.subject_alt_names = request.sans.clone();
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = request.key_usages.clone();
        params.extended_key_usages = request.extended_key_usages.clone();
        params.use_authority_key_identifier_extension = true;
        let mut serial = *uuid::Uuid::new_v4().as_bytes();
        serial[0] &= 0x7f;
        params.serial_number = Some(SerialNumber::from(serial.to_vec()));
        let epoch = rcgen::date_time_ymd(1970, 1, 1);
        let since = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default();
        params.not_before = epoch + since(request.not_before);
        params.not_after = epoch + since(request.not_after);
        let cert = params
            .signed_by(&public_key, &self.ca.issuer)
            .map_err(|e| e.to_string())?;
        let der =
            super::subject::with_subject(cert.der(), request.subject_der, self.ca.issuer.key())?;
        Ok(pem_encode("CERTIFICATE", &der))
    }
}
