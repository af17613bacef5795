//! rustls configuration for the API server: ring crypto only, HTTP/2 and HTTP/1.1 offered via
//! ALPN, client certificates verified against the given CAs but optional, so requests with a
//! bearer token or no credentials at all still reach the authenticator (which answers 401).

use std::sync::Arc;

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::server::WebPkiClientVerifier;

use super::AuthError;
use super::pki::Pki;

/// ALPN protocols in preference order; kubectl and client-go negotiate h2.
pub const ALPN_PROTOCOLS: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Makes ring the process-wide rustls provider. Idempotent; call at start-up before any client
/// (kube, reqwest) builds a TLS config, since rustls refuses to guess when none is installed.
pub fn install_crypto_provider() {
    // Err means a provider is already installed, which is what we want either way.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A server configuration presenting the PKI's serving certificate and accepting client
/// certificates issued by any of `client_cas` (normally `[pki.ca_cert_der().clone()]`).
/// `client_cas` must not be empty. Uses ring explicitly, whatever provider is installed.
pub fn server_config(
    pki: &Pki,
    client_cas: &[CertificateDer<'static>],
) -> Result<Arc<ServerConfig>, AuthError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for ca in client_cas {
        roots.add(ca.clone()).map_err(AuthError::TlsConfig)?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .map_err(AuthError::ClientVerifier)?;
    let (chain, key) = pki.serving_identity()?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(AuthError::TlsConfig)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(AuthError::TlsConfig)?;
    config.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The ring provider, for callers building client configs (tests, agents) without relying on
/// the process default.
pub fn ring_provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

#[cfg(test)]
mod tests;
