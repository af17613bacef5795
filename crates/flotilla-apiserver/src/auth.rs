//! HTTPS and identity for the API server: the on-disk PKI, the admin kubeconfig, the rustls
//! server configuration, authentication (client certificates, static bearer tokens,
//! service-account tokens and the tokens controller that fills token Secrets, bootstrap tokens
//! and the cleaner that deletes expired ones), authorization
//! (`system:masters`, then RBAC with its bootstrap roles and ClusterRole aggregation) and the
//! review endpoints (TokenRequest, SelfSubjectAccessReview, SelfSubjectReview).
//!
//! Nothing here knows about HTTP routing: the server hands in a peer certificate and an
//! `Authorization` header value and gets back a [`authn::UserInfo`] or an error; it hands in
//! [`authz::RequestAttributes`] and gets back an [`authz::Decision`]. Key material never appears in
//! logs or `Debug` output.

use std::path::PathBuf;

pub mod authn;
pub mod authz;
pub mod bootstrap;
pub mod bootstrap_signer;
pub mod bootstrap_tokens;
pub mod endpoints;
pub mod escalation;
mod files;
pub mod impersonation;
pub mod jwt;
pub mod kubeconfig;
pub mod lifted;
pub mod pki;
pub mod rbac;
pub mod serve;
pub mod service_accounts;
pub mod tls;
pub mod token_cleaner;
pub mod tokens_controller;

/// Everything that can go wrong while setting up or using TLS and identity.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create directory {path}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot generate the {what}")]
    Generate {
        what: &'static str,
        #[source]
        source: rcgen::Error,
    },
    #[error("cannot load the private key in {path}")]
    LoadKey {
        path: PathBuf,
        #[source]
        source: rcgen::Error,
    },
    #[error("{path} is not a usable certificate: {reason}")]
    BadCertificate { path: PathBuf, reason: String },
    #[error(
        "{present} exists but {missing} does not; refusing to replace a CA that may still be in use (restore or remove both files)"
    )]
    PartialCa { present: PathBuf, missing: PathBuf },
    #[error("invalid host {host:?} for the serving certificate: {reason}")]
    BadHost { host: String, reason: String },
    #[error("cannot issue a client certificate: {reason}")]
    BadSubject { reason: String },
    #[error("cannot build the TLS server configuration")]
    TlsConfig(#[source] rustls::Error),
    #[error("cannot build the client certificate verifier")]
    ClientVerifier(#[source] rustls::server::VerifierBuilderError),
    #[error("cannot render the kubeconfig")]
    RenderKubeconfig(#[source] yaml_serde::Error),
    #[error("token file {path}, line {line}: {reason}")]
    TokenFile {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("service-account signing key: {reason}")]
    SigningKey { reason: String },
    #[error("TLS handshake failed")]
    Handshake(#[source] std::io::Error),
}
