//! `certificates.k8s.io/v1` CertificateSigningRequests: kube-apiserver's strategies and
//! validation (`lifted`), the `approval` subresource, the three admission plugins that guard
//! them (`CertificateApproval`, `CertificateSigning`, `CertificateSubjectRestriction`: see
//! [`CsrGuard`]) and the signer controller that issues approved requests from the cluster CA
//! ([`signer`]).
//!
//! The registry calls [`on_create`], [`on_update`] and [`validate`] for CSRs; the subresource
//! of an update is in [`crate::registry::WriteOptions::subresource`] (`approval` is written as
//! a status-part update whose strategy keeps the certificate instead of the approval
//! conditions).

use std::sync::Arc;

use serde_json::Value;

use crate::auth::authn::UserInfo;
use crate::auth::authz::{Authorizer, RequestAttributes};
use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::registry::write::{Part, WriteGuard, WriteOptions};

pub mod lifted;
pub(crate) mod pem;
pub mod signer;

pub use lifted::Write;

pub const GROUP: &str = "certificates.k8s.io";
pub const PLURAL: &str = "certificatesigningrequests";

/// Whether `info` is the built-in CSR resource.
pub fn is_csr(info: &ResourceInfo) -> bool {
    info.group == GROUP && info.plural == PLURAL && info.crd.is_none()
}

/// Which strategy an update of `part` with `options` follows.
pub fn write_of(part: Part, options: &WriteOptions) -> Write {
    match part {
        Part::Main => Write::Main,
        Part::Status if options.subresource.as_deref() == Some("approval") => Write::Approval,
        Part::Status => Write::Status,
    }
}

/// `PrepareForCreate`: the requester's identity, an empty status.
pub(crate) fn on_create(info: &ResourceInfo, body: &mut Value, options: &WriteOptions) {
    if is_csr(info) {
        lifted::prepare_for_create(body, options.requester.as_ref());
    }
}

/// `PrepareForUpdate` of the strategy `part` and `options` choose.
pub(crate) fn on_update(
    info: &ResourceInfo,
    new: &mut Value,
    old: &Value,
    part: Part,
    options: &WriteOptions,
    now: &str,
) {
    if is_csr(info) {
        lifted::prepare_for_update(new, old, write_of(part, options), now);
    }
}

/// CSR validation of a create (`old` none) or an update.
pub(crate) fn validate(
    info: &ResourceInfo,
    new: &Value,
    old: Option<&Value>,
    part: Part,
    options: &WriteOptions,
) -> Result<(), ApiError> {
    if !is_csr(info) {
        return Ok(());
    }
    let write = old.map(|_| write_of(part, options));
    let errors = lifted::errors(new, old, write);
    if errors.is_empty() {
        Ok(())
    } else {
        let name = crate::object::name(new).unwrap_or("");
        Err(ApiError::invalid(info, name, &errors))
    }
}

/// kube-apiserver's CSR admission plugins, for one request's user:
/// - `CertificateApproval`: an approval write needs `approve` on `certificates.k8s.io/signers`
///   named by the request's signer (or `<domain>/*`);
/// - `CertificateSigning`: a status write that changes the certificate needs `sign` there;
/// - `CertificateSubjectRestriction`: a `kube-apiserver-client` request may not ask for group
///   `system:masters`.
///
/// Follows `plugin/pkg/admission/certificates/{approval,signing,subjectrestriction}` and
/// `certificates.IsAuthorizedForSignerName` (Kubernetes v1.32).
#[derive(Debug)]
pub struct CsrGuard {
    user: UserInfo,
    authorizer: Authorizer,
    subresource: Option<String>,
}

impl CsrGuard {
    /// The guard of a write to `info` through `subresource`, or `None` for other resources.
    pub fn for_request(
        info: &ResourceInfo,
        user: &UserInfo,
        authorizer: &Authorizer,
        subresource: Option<&str>,
    ) -> Option<Arc<dyn WriteGuard>> {
        is_csr(info).then(|| {
            Arc::new(CsrGuard {
                user: user.clone(),
                authorizer: authorizer.clone(),
                subresource: subresource.map(str::to_owned),
            }) as Arc<dyn WriteGuard>
        })
    }

    fn authorized_for_signer(&self, verb: &str, signer: &str) -> bool {
        let allowed = |name: &str| {
            let path = format!("/apis/{GROUP}/v1/signers/{name}");
            self.authorizer
                .authorize(&RequestAttributes {
                    user: &self.user,
                    verb,
                    group: GROUP,
                    resource: "signers",
                    subresource: "",
                    namespace: None,
                    name: Some(name),
                    path: &path,
                })
                .allowed
        };
        if allowed(signer) {
            return true;
        }
        let domain = signer.split('/').next().unwrap_or("");
        allowed(&format!("{domain}/*"))
    }
}

impl WriteGuard for CsrGuard {
    fn check(
        &self,
        _info: &ResourceInfo,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let signer = new["spec"]["signerName"].as_str().unwrap_or("");
        let masters = || {
            let request = lifted::request_bytes(new).unwrap_or_default();
            lifted::parse_request(&request).is_ok_and(|request| {
                request
                    .organizations
                    .iter()
                    .any(|o| o == crate::auth::authz::MASTERS_GROUP)
            })
        };
        match (self.subresource.as_deref(), old) {
            (None, None) if signer == lifted::KUBE_APISERVER_CLIENT && masters() => {
                Err(ApiError::forbidden(format!(
                    "use of {signer} signer with system:masters group is not allowed"
                )))
            }
            (Some("approval"), Some(_)) if !self.authorized_for_signer("approve", signer) => {
                Err(ApiError::forbidden(format!(
                    "user not permitted to approve requests with signerName {signer:?}"
                )))
            }
            (Some("status"), Some(old))
                if new["status"].get("certificate") != old["status"].get("certificate")
                    && !self.authorized_for_signer("sign", signer) =>
            {
                Err(ApiError::forbidden(format!(
                    "user not permitted to sign requests with signerName {signer:?}"
                )))
            }
            _ => Ok(()),
        }
    }
}
