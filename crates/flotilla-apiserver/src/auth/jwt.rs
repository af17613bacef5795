//! Compact JSON Web Tokens signed with ES256 (ECDSA P-256, SHA-256; RFC 7515/7518), the
//! algorithm family kube-apiserver accepts for service-account keys. The signing key is a
//! PKCS#8 PEM file (`sa.key`) kept with the PKI, so tokens survive restarts; anything holding
//! the key's public half can verify a token without reading the store.

use std::fmt;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::pki_types::pem::PemObject;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::AuthError;
use super::files::{SECRET_MODE, ensure_private_dir, pem_encode, read_optional, write_atomic};

/// The service-account signing key's file in the PKI directory.
pub const SA_KEY_FILE: &str = "sa.key";

/// An ES256 signing key. `Debug` shows only its key id.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    kid: String,
}

impl SigningKey {
    /// A fresh key that lives in memory only (tokens die with the process).
    pub fn generate() -> Result<SigningKey, AuthError> {
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|_| {
                AuthError::SigningKey {
                    reason: "the system random number generator failed".into(),
                }
            })?;
        SigningKey::from_pkcs8(pkcs8.as_ref())
    }

    /// The key in `dir/sa.key`, created (mode 0600) if there is none.
    pub fn load_or_create(dir: &Path) -> Result<SigningKey, AuthError> {
        ensure_private_dir(dir)?;
        let path = dir.join(SA_KEY_FILE);
        if let Some(pem) = read_optional(&path)? {
            let der = PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| {
                AuthError::BadCertificate {
                    path: path.clone(),
                    reason: format!("not a PKCS#8 private key: {e}"),
                }
            })?;
            return SigningKey::from_pkcs8(der.secret_pkcs8_der()).map_err(|_| {
                AuthError::BadCertificate {
                    path,
                    reason: "not an ECDSA P-256 key".into(),
                }
            });
        }
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|_| {
                AuthError::SigningKey {
                    reason: "the system random number generator failed".into(),
                }
            })?;
        write_atomic(
            &path,
            pem_encode("PRIVATE KEY", pkcs8.as_ref()).as_bytes(),
            SECRET_MODE,
        )?;
        SigningKey::from_pkcs8(pkcs8.as_ref())
    }

    fn from_pkcs8(pkcs8: &[u8]) -> Result<SigningKey, AuthError> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8,
            &SystemRandom::new(),
        )
        .map_err(|e| AuthError::SigningKey {
            reason: e.to_string(),
        })?;
        let digest = ring::digest::digest(&ring::digest::SHA256, pair.public_key().as_ref());
        let kid = URL_SAFE_NO_PAD.encode(digest.as_ref());
        Ok(SigningKey { pair, kid })
    }

    /// The key id put in every token's header (a digest of the public key).
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Signs `claims` into a compact JWT.
    pub fn sign(&self, claims: &impl Serialize) -> Result<String, AuthError> {
        let header = serde_json::json!({"alg": "ES256", "kid": self.kid});
        let encode = |value: &serde_json::Value| URL_SAFE_NO_PAD.encode(value.to_string());
        let claims = serde_json::to_value(claims).map_err(|e| AuthError::SigningKey {
            reason: format!("cannot encode claims: {e}"),
        })?;
        let signing_input = format!("{}.{}", encode(&header), encode(&claims));
        let signature = self
            .pair
            .sign(&SystemRandom::new(), signing_input.as_bytes())
            .map_err(|_| AuthError::SigningKey {
                reason: "signing failed".into(),
            })?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }

    /// The claims of `token` if it is an ES256 JWT signed by this key; `None` otherwise (wrong
    /// shape, algorithm, signature or claims type). Time and audience are the caller's checks.
    pub fn verify<T: DeserializeOwned>(&self, token: &str) -> Option<T> {
        let mut parts = token.split('.');
        let (header, claims, signature) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
        if header.get("alg").and_then(|a| a.as_str()) != Some("ES256") {
            return None;
        }
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        let signing_input = &token[..header_len(token)?];
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, self.pair.public_key().as_ref())
            .verify(signing_input.as_bytes(), &signature)
            .ok()?;
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).ok()?).ok()
    }
}

/// Length of `header.claims`, the signed part of a compact JWT.
fn header_len(token: &str) -> Option<usize> {
    token.rfind('.')
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
