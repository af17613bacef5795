//! Authentication: who is making a request. Sources, tried in Kubernetes' order: the verified
//! TLS client certificate (CN = user, each O = a group), then an `Authorization: Bearer <token>`
//! header checked against a static token file in kube-apiserver's `--token-auth-file` format,
//! then as a service-account token ([`super::service_accounts`]), then as a bootstrap token
//! ([`super::bootstrap_tokens`]). No credential means anonymous, which the server answers with
//! 401 (except on the one path kubeadm-style discovery reads, see [`anonymous_user`]), as it
//! does a token no source accepts.
//!
//! The certificate is parsed once per connection ([`user_from_certificate`], see
//! [`super::serve`]); the header once per request ([`Authenticator::authenticate`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::AuthError;
use super::bootstrap_tokens::BootstrapTokens;
pub use super::lifted::token_file::TokenFile;
use super::service_accounts::ServiceAccountTokens;

/// Group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";
/// The user of a request without credentials where anonymous requests are allowed.
pub const ANONYMOUS_USER: &str = "system:anonymous";
/// The group of [`ANONYMOUS_USER`].
pub const UNAUTHENTICATED_GROUP: &str = "system:unauthenticated";
/// The one path anonymous requests may reach: the `kube-public/cluster-info` ConfigMap that
/// bootstrap-token discovery reads before it has credentials (`karmadactl register`,
/// `kubeadm join`). kube-apiserver's structured authentication configuration narrows anonymous
/// access the same way (`anonymous.conditions[].path`); RBAC still decides what the anonymous
/// user may do there (a Role in `kube-public` grants `get` on that one ConfigMap).
pub const ANONYMOUS_PATHS: &[&str] = &["/api/v1/namespaces/kube-public/configmaps/cluster-info"];

/// An authenticated identity, as in Kubernetes' `user.Info`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    pub name: String,
    pub uid: Option<String>,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// Why a request that carried credentials is not authenticated (the server answers 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthnError {
    #[error("invalid bearer token")]
    InvalidToken,
    #[error("malformed Authorization header")]
    MalformedHeader,
}

/// Resolves requests to users. Cheap to share behind an `Arc`.
#[derive(Debug, Default)]
pub struct Authenticator {
    tokens: Option<TokenFile>,
    service_accounts: Option<Arc<ServiceAccountTokens>>,
    bootstrap_tokens: Option<Arc<BootstrapTokens>>,
}

impl Authenticator {
    /// Certificates only; bearer tokens are rejected.
    pub fn new() -> Authenticator {
        Authenticator::default()
    }

    /// Also accepts the bearer tokens in `tokens`.
    pub fn with_tokens(mut self, tokens: TokenFile) -> Authenticator {
        self.tokens = Some(tokens);
        self
    }

    /// Also accepts service-account tokens (what [`crate::Running::authenticator`] sets up).
    pub fn with_service_accounts(mut self, tokens: Arc<ServiceAccountTokens>) -> Authenticator {
        self.service_accounts = Some(tokens);
        self
    }

    /// Also accepts bootstrap tokens (what [`crate::Running::authenticator`] sets up).
    pub fn with_bootstrap_tokens(mut self, tokens: Arc<BootstrapTokens>) -> Authenticator {
        self.bootstrap_tokens = Some(tokens);
        self
    }

    /// Also accepts the bearer tokens in the token file at `path`.
    pub fn with_token_file(self, path: &Path) -> Result<Authenticator, AuthError> {
        Ok(self.with_tokens(TokenFile::load(path)?))
    }

    /// [`Authenticator::authenticate`], giving a service-account token this server signed a
    /// second chance after the watch cache has caught up with the store: a client that just
    /// created a ServiceAccount or read its token Secret may be a few milliseconds ahead of the
    /// cache (kube-apiserver falls back to a live lookup for the same reason).
    pub async fn authenticate_current(
        &self,
        certificate_user: Option<&UserInfo>,
        authorization: Option<&[u8]>,
    ) -> Result<Option<UserInfo>, AuthnError> {
        let result = self.authenticate(certificate_user, authorization);
        if result != Err(AuthnError::InvalidToken) {
            return result;
        }
        let Some(token) = authorization.and_then(bearer_token) else {
            return result;
        };
        if let Some(tokens) = &self.service_accounts
            && tokens.signed_here(token)
            && tokens.catch_up().await
        {
            return self.authenticate(certificate_user, authorization);
        }
        if let Some(tokens) = &self.bootstrap_tokens
            && BootstrapTokens::is_bootstrap_token(token)
            && tokens.catch_up().await
        {
            return self.authenticate(certificate_user, authorization);
        }
        result
    }

    /// Identifies a request from the identity of its connection's client certificate (if any,
    /// from [`user_from_certificate`]) and its `Authorization` header value (if any).
    ///
    /// `Ok(None)` is an anonymous request. A valid certificate wins over the header, as in
    /// kube-apiserver, so a client whose kubeconfig has both still works; a header that is
    /// present but not a valid token fails when there is no certificate identity.
    pub fn authenticate(
        &self,
        certificate_user: Option<&UserInfo>,
        authorization: Option<&[u8]>,
    ) -> Result<Option<UserInfo>, AuthnError> {
        let user = match (certificate_user, authorization) {
            (Some(user), _) => user.clone(),
            (None, None) => return Ok(None),
            (None, Some(header)) => {
                let token = bearer_token(header).ok_or(AuthnError::MalformedHeader)?;
                let from_file = self
                    .tokens
                    .as_ref()
                    .and_then(|tokens| tokens.lookup(token))
                    .cloned();
                from_file
                    .or_else(|| {
                        self.service_accounts
                            .as_ref()
                            .and_then(|sa| sa.authenticate(token))
                    })
                    .or_else(|| {
                        self.bootstrap_tokens
                            .as_ref()
                            .and_then(|bootstrap| bootstrap.authenticate(token))
                    })
                    .ok_or(AuthnError::InvalidToken)?
            }
        };
        Ok(Some(with_authenticated_group(user)))
    }
}

/// The identity of a request without credentials to `path`: `system:anonymous` in
/// `system:unauthenticated` on [`ANONYMOUS_PATHS`], nobody (401) elsewhere.
pub fn anonymous_user(path: &str) -> Option<UserInfo> {
    ANONYMOUS_PATHS.contains(&path).then(|| UserInfo {
        name: ANONYMOUS_USER.to_owned(),
        groups: vec![UNAUTHENTICATED_GROUP.to_owned()],
        ..UserInfo::default()
    })
}

/// The user a verified client certificate names (CN = user, each O = a group), or `None` if the
/// certificate has no common name (Kubernetes does not authenticate such certificates).
/// Verification is rustls' job; this only reads the subject.
pub fn user_from_certificate(cert: &CertificateDer<'_>) -> Option<UserInfo> {
    let (_, cert) = X509Certificate::from_der(cert).ok()?;
    let subject = cert.subject();
    let name = subject
        .iter_common_name()
        .next()?
        .as_str()
        .ok()?
        .to_string();
    if name.is_empty() {
        return None;
    }
    let groups = subject
        .iter_organization()
        .filter_map(|attr| attr.as_str().ok())
        .map(str::to_string)
        .collect();
    Some(UserInfo {
        name,
        groups,
        ..UserInfo::default()
    })
}

/// The token of a `Bearer` header, read the way kube-apiserver's bearer-token authenticator
/// does (k8s.io/apiserver/pkg/authentication/request/bearertoken): surrounding whitespace
/// trimmed, scheme case-insensitive, token up to the next single space, non-empty.
fn bearer_token(header: &[u8]) -> Option<&str> {
    let header = std::str::from_utf8(header).ok()?.trim();
    let mut parts = header.splitn(3, ' ');
    let (scheme, token) = (parts.next()?, parts.next()?);
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return None;
    }
    Some(token)
}

fn with_authenticated_group(mut user: UserInfo) -> UserInfo {
    if !user.groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
        user.groups.push(AUTHENTICATED_GROUP.to_string());
    }
    user
}

#[cfg(test)]
mod tests;
