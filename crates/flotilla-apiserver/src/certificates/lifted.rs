//! `certificates.k8s.io/v1` CertificateSigningRequest behaviour of kube-apiserver.
//!
//! Follows Kubernetes v1.32: `pkg/registry/certificates/certificates/strategy.go` (the create,
//! update, status and approval strategies: `PrepareForCreate`, `PrepareForUpdate`,
//! `preserveConditionInstances`, `populateConditionTimestamps`),
//! `pkg/apis/certificates/validation/validation.go` (`validateCertificateSigningRequest`,
//! `validateConditions`, `validateCertificate`, `validateCertificateSigningRequestUpdate` and the
//! compatibility options of `getValidationOptions`), `pkg/apis/core/validation`
//! (`ValidateSignerName`), `pkg/apis/certificates/helpers.go` (`ParseCSR`) and
//! `pkg/printers/internalversion/printers.go` (`extractCSRStatus`). Written anew on JSON.
//!
//! Differences: a request or certificate that does not parse reports x509-parser's reason, not
//! Go's `crypto/x509` text; the invalid request is shown as `<request data>` rather than Go's
//! byte dump.

use std::collections::HashSet;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use flotilla_api::validation::{BadValue, FieldError};
use serde_json::{Value, json};
use x509_parser::prelude::{FromDer, GeneralName, ParsedExtension, X509Certificate};

use super::pem;
use crate::auth::authn::UserInfo;

pub mod signing;

pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
pub const KUBE_APISERVER_CLIENT_KUBELET: &str = "kubernetes.io/kube-apiserver-client-kubelet";
pub const KUBELET_SERVING: &str = "kubernetes.io/kubelet-serving";
pub const LEGACY_UNKNOWN: &str = "kubernetes.io/legacy-unknown";

pub const APPROVED: &str = "Approved";
pub const DENIED: &str = "Denied";
pub const FAILED: &str = "Failed";

/// Every usage v1 accepts, in the order `sets.String.List()` prints them.
pub const USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// Which write an update is (each strategy keeps different parts of the old object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Main,
    Status,
    Approval,
}

/// A parsed and signature-checked `CERTIFICATE REQUEST`.
#[derive(Debug, Clone)]
pub struct Request {
    pub der: Vec<u8>,
    pub subject_der: Vec<u8>,
    pub spki_der: Vec<u8>,
    pub common_name: String,
    pub organizations: Vec<String>,
    pub dns_names: Vec<String>,
    pub emails: Vec<String>,
    pub ips: Vec<std::net::IpAddr>,
    pub uris: Vec<String>,
}

/// `ParseCSR` and `CheckSignature` of `spec.request` (PEM bytes).
pub fn parse_request(pem_bytes: &[u8]) -> Result<Request, String> {
    let block = match pem::decode(pem_bytes) {
        Some((block, _)) if block.kind == "CERTIFICATE REQUEST" => block,
        _ => return Err("PEM block type must be CERTIFICATE REQUEST".into()),
    };
    use x509_parser::certification_request::X509CertificationRequest;
    let (_, csr) = X509CertificationRequest::from_der(&block.der)
        .map_err(|e| format!("x509: malformed certificate request: {e}"))?;
    csr.verify_signature()
        .map_err(|e| format!("x509: certificate request signature verification failed: {e}"))?;
    let info = &csr.certification_request_info;
    let text = |attr: &x509_parser::x509::AttributeTypeAndValue<'_>| {
        attr.as_str().map(str::to_owned).unwrap_or_default()
    };
    let mut request = Request {
        der: block.der.clone(),
        subject_der: info.subject.as_raw().to_vec(),
        spki_der: info.subject_pki.raw.to_vec(),
        common_name: info
            .subject
            .iter_common_name()
            .next()
            .map(text)
            .unwrap_or_default(),
        organizations: info.subject.iter_organization().map(text).collect(),
        dns_names: Vec::new(),
        emails: Vec::new(),
        ips: Vec::new(),
        uris: Vec::new(),
    };
    for extension in csr.requested_extensions().into_iter().flatten() {
        if let ParsedExtension::SubjectAlternativeName(san) = extension {
            for name in &san.general_names {
                match name {
                    GeneralName::DNSName(n) => request.dns_names.push((*n).to_owned()),
                    GeneralName::RFC822Name(n) => request.emails.push((*n).to_owned()),
                    GeneralName::URI(n) => request.uris.push((*n).to_owned()),
                    GeneralName::IPAddress(bytes) => match bytes.len() {
                        4 => request
                            .ips
                            .push(<[u8; 4]>::try_from(*bytes).expect("four bytes").into()),
                        16 => request
                            .ips
                            .push(<[u8; 16]>::try_from(*bytes).expect("sixteen bytes").into()),
                        _ => return Err("x509: invalid IP address length".into()),
                    },
                    _ => {}
                }
            }
        }
    }
    Ok(request)
}

/// `spec.request` decoded from its JSON base64.
pub fn request_bytes(csr: &Value) -> Option<Vec<u8>> {
    STANDARD.decode(csr["spec"]["request"].as_str()?).ok()
}

/// `PrepareForCreate`: the requester's identity in `spec`, and an empty status.
pub fn prepare_for_create(csr: &mut Value, requester: Option<&UserInfo>) {
    let Some(map) = csr.as_object_mut() else {
        return;
    };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut() {
        for field in ["username", "uid", "groups", "extra"] {
            spec.remove(field);
        }
        if let Some(user) = requester {
            if !user.name.is_empty() {
                spec.insert("username".into(), user.name.clone().into());
            }
            if let Some(uid) = user.uid.as_ref().filter(|u| !u.is_empty()) {
                spec.insert("uid".into(), uid.clone().into());
            }
            if !user.groups.is_empty() {
                spec.insert("groups".into(), json!(user.groups));
            }
            if !user.extra.is_empty() {
                spec.insert("extra".into(), json!(user.extra));
            }
        }
    }
    map.insert("status".into(), json!({}));
}

/// `PrepareForUpdate` of each strategy, with `now` for missing condition timestamps.
pub fn prepare_for_update(new: &mut Value, old: &Value, write: Write, now: &str) {
    new["spec"] = old.get("spec").cloned().unwrap_or(Value::Null);
    match write {
        Write::Main => {
            new["status"] = old.get("status").cloned().unwrap_or(Value::Null);
        }
        Write::Status => {
            // Approved and Denied are the approval subresource's: kept as they were (a change
            // in how many there are is left for validation to refuse).
            for kind in [APPROVED, DENIED] {
                preserve_condition_instances(new, old, kind);
            }
            populate_condition_timestamps(new, old, now);
        }
        Write::Approval => {
            match old["status"].get("certificate") {
                Some(cert) => new["status"]["certificate"] = cert.clone(),
                None => {
                    if let Some(status) = new["status"].as_object_mut() {
                        status.remove("certificate");
                    }
                }
            }
            populate_condition_timestamps(new, old, now);
        }
    }
    if new["spec"].is_null()
        && let Some(map) = new.as_object_mut()
    {
        map.remove("spec");
    }
    if new["status"].is_null()
        && let Some(map) = new.as_object_mut()
    {
        map.remove("status");
    }
}

fn conditions(csr: &Value) -> &[Value] {
    csr["status"]["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn indices_of(csr: &Value, kind: &str) -> Vec<usize> {
    conditions(csr)
        .iter()
        .enumerate()
        .filter(|(_, c)| c["type"] == kind)
        .map(|(i, _)| i)
        .collect()
}

fn preserve_condition_instances(new: &mut Value, old: &Value, kind: &str) {
    let (old_at, new_at) = (indices_of(old, kind), indices_of(new, kind));
    if old_at.len() != new_at.len() {
        return;
    }
    for (o, n) in old_at.into_iter().zip(new_at) {
        new["status"]["conditions"][n] = old["status"]["conditions"][o].clone();
    }
}

fn populate_condition_timestamps(new: &mut Value, old: &Value, now: &str) {
    let old_conditions = conditions(old).to_vec();
    let Some(list) = new["status"]["conditions"].as_array_mut() else {
        return;
    };
    for condition in list.iter_mut().filter(|c| c.is_object()) {
        if is_zero(&condition["lastUpdateTime"]) {
            condition["lastUpdateTime"] = now.into();
        }
        if is_zero(&condition["lastTransitionTime"]) {
            let earlier = old_conditions.iter().find(|o| {
                o["type"] == condition["type"]
                    && o["status"] == condition["status"]
                    && !is_zero(&o["lastTransitionTime"])
            });
            condition["lastTransitionTime"] = match earlier {
                Some(o) => o["lastTransitionTime"].clone(),
                None => now.into(),
            };
        }
    }
}

fn is_zero(time: &Value) -> bool {
    time.as_str().is_none_or(str::is_empty)
}

/// The validation options of one write (`getValidationOptions` plus the subresource's).
#[derive(Debug, Default, Clone, Copy)]
struct Options {
    setting_approval: bool,
    setting_certificate: bool,
    both_approved_and_denied: bool,
    legacy_signer_name: bool,
    duplicate_condition_types: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
}

impl Options {
    fn of(new: &Value, old: Option<&Value>, write: Option<Write>) -> Options {
        let Some(old) = old else {
            return Options::default();
        };
        let kinds: Vec<&str> = conditions(old)
            .iter()
            .map(|c| c["type"].as_str().unwrap_or(""))
            .collect();
        let usages = usages(old);
        let old_cert = certificate_bytes(old);
        Options {
            setting_approval: write == Some(Write::Approval),
            setting_certificate: write == Some(Write::Status),
            both_approved_and_denied: kinds.contains(&APPROVED) && kinds.contains(&DENIED),
            legacy_signer_name: old["spec"]["signerName"] == LEGACY_UNKNOWN,
            duplicate_condition_types: kinds.len() != kinds.iter().collect::<HashSet<_>>().len(),
            empty_condition_type: kinds.contains(&""),
            arbitrary_certificate: certificate_bytes(new) == old_cert
                || validate_certificate(&old_cert).is_err(),
            unknown_usages: usages.iter().any(|u| !USAGES.contains(&u.as_str())),
            duplicate_usages: usages.len() != usages.iter().collect::<HashSet<_>>().len(),
        }
    }
}

fn usages(csr: &Value) -> Vec<String> {
    csr["spec"]["usages"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|u| u.as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn certificate_bytes(csr: &Value) -> Vec<u8> {
    csr["status"]["certificate"]
        .as_str()
        .and_then(|b64| STANDARD.decode(b64).ok())
        .unwrap_or_default()
}

/// Validation of a create (`old` none) or of an update through `write`.
pub fn errors(new: &Value, old: Option<&Value>, write: Option<Write>) -> Vec<FieldError> {
    let opts = Options::of(new, old, write);
    let mut errors = csr_errors(new, &opts);
    let Some(old) = old else {
        return errors;
    };
    for kind in [APPROVED, DENIED, FAILED] {
        if indices_of(new, kind).len() < indices_of(old, kind).len() {
            errors.push(FieldError::forbidden(
                "status.conditions",
                format!("updates may not remove a condition of type {kind:?}"),
            ));
        }
    }
    if !opts.setting_approval {
        for kind in [APPROVED, DENIED] {
            let pick = |csr: &Value| -> Vec<Value> {
                conditions(csr)
                    .iter()
                    .filter(|c| c["type"] == kind)
                    .cloned()
                    .collect()
            };
            let (before, after) = (pick(old), pick(new));
            if after.len() > before.len() {
                errors.push(FieldError::forbidden(
                    "status.conditions",
                    format!("updates may not add a condition of type {kind:?}"),
                ));
            } else if after.len() == before.len() && after != before {
                errors.push(FieldError::forbidden(
                    "status.conditions",
                    format!("updates may not modify a condition of type {kind:?}"),
                ));
            }
        }
    }
    if certificate_bytes(new) != certificate_bytes(old) {
        if !opts.setting_certificate {
            errors.push(FieldError::forbidden(
                "status.certificate",
                "updates may not set certificate content",
            ));
        } else if !certificate_bytes(old).is_empty() {
            errors.push(FieldError::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
    }
    errors
}

fn csr_errors(csr: &Value, opts: &Options) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let request = request_bytes(csr).unwrap_or_default();
    if let Err(reason) = parse_request(&request) {
        errors.push(FieldError::invalid(
            "spec.request",
            BadValue::Verbatim("<request data>".into()),
            reason,
        ));
    }
    let usages = usages(csr);
    if usages.is_empty() {
        errors.push(FieldError::required("spec.usages", ""));
    }
    if !opts.unknown_usages {
        for (i, usage) in usages.iter().enumerate() {
            if !USAGES.contains(&usage.as_str()) {
                errors.push(FieldError::not_supported(
                    format!("spec.usages[{i}]"),
                    usage,
                    &USAGES,
                ));
            }
        }
    }
    if !opts.duplicate_usages {
        let mut seen = HashSet::new();
        for (i, usage) in usages.iter().enumerate() {
            if !seen.insert(usage) {
                errors.push(FieldError::duplicate(
                    format!("spec.usages[{i}]"),
                    BadValue::Str(usage.clone()),
                ));
            }
        }
    }
    let signer = csr["spec"]["signerName"].as_str().unwrap_or("");
    if !opts.legacy_signer_name && signer == LEGACY_UNKNOWN {
        errors.push(FieldError::invalid(
            "spec.signerName",
            BadValue::Str(signer.into()),
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errors.extend(signer_name_errors(signer));
    }
    if let Some(seconds) = csr["spec"]["expirationSeconds"].as_i64()
        && seconds < 600
    {
        errors.push(FieldError::invalid(
            "spec.expirationSeconds",
            BadValue::Int(seconds),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errors.extend(condition_errors(csr, opts));
    if !opts.arbitrary_certificate
        && let Err(reason) = validate_certificate(&certificate_bytes(csr))
    {
        errors.push(FieldError::invalid(
            "status.certificate",
            BadValue::Verbatim("\"<certificate data>\"".into()),
            reason,
        ));
    }
    errors
}

fn condition_errors(csr: &Value, opts: &Options) -> Vec<FieldError> {
    const ALL: [&str; 3] = ["False", "True", "Unknown"];
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(csr).iter().enumerate() {
        let kind = c["type"].as_str().unwrap_or("");
        let status = c["status"].as_str().unwrap_or("");
        if !opts.empty_condition_type && kind.is_empty() {
            errors.push(FieldError::required(
                format!("status.conditions[{i}].type"),
                "",
            ));
        }
        let allowed: &[&str] = if [APPROVED, DENIED, FAILED].contains(&kind) {
            &["True"]
        } else {
            &ALL
        };
        if status.is_empty() {
            errors.push(FieldError::required(
                format!("status.conditions[{i}].status"),
                "",
            ));
        } else if !allowed.contains(&status) {
            errors.push(FieldError::not_supported(
                format!("status.conditions[{i}].status"),
                status,
                allowed,
            ));
        }
        if !opts.both_approved_and_denied {
            let clash = match kind {
                APPROVED => {
                    approved = true;
                    denied
                }
                DENIED => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                errors.push(FieldError::invalid(
                    format!("status.conditions[{i}].type"),
                    BadValue::Str(kind.into()),
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !opts.duplicate_condition_types && !seen.insert(kind) {
            errors.push(FieldError::duplicate(
                format!("status.conditions[{i}].type"),
                BadValue::Str(kind.into()),
            ));
        }
    }
    errors
}

/// `validateCertificate`: empty, or only `CERTIFICATE` blocks without headers, each parsing.
pub fn validate_certificate(pem_data: &[u8]) -> Result<(), String> {
    if pem_data.is_empty() {
        return Ok(());
    }
    let mut rest = pem_data;
    let mut blocks = 0;
    while let Some((block, after)) = pem::decode(rest) {
        if block.kind != "CERTIFICATE" {
            return Err(format!(
                "only CERTIFICATE PEM blocks are allowed, found {:?}",
                block.kind
            ));
        }
        if block.has_headers {
            return Err("no PEM block headers are permitted".into());
        }
        blocks += 1;
        X509Certificate::from_der(&block.der).map_err(|e| format!("x509: {e}"))?;
        rest = after;
    }
    if blocks == 0 {
        return Err("must contain at least one CERTIFICATE PEM block".into());
    }
    Ok(())
}

/// `ValidateSignerName`.
pub fn signer_name_errors(signer: &str) -> Vec<FieldError> {
    const FIELD: &str = "spec.signerName";
    let mut errors = Vec::new();
    if signer.is_empty() {
        errors.push(FieldError::required(FIELD, ""));
        return errors;
    }
    let segments: Vec<&str> = signer.split('/').collect();
    let [domain, path] = segments[..] else {
        errors.push(FieldError::invalid(
            FIELD,
            BadValue::Str(signer.into()),
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return errors;
    };
    if domain.len() > 253 {
        errors.push(FieldError::too_long(FIELD, Some(253)));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        let problems = flotilla_api::validation::is_dns1123_label(label);
        if !problems.is_empty() {
            for problem in problems {
                errors.push(FieldError::invalid(
                    FIELD,
                    BadValue::Str(domain.into()),
                    format!("validating label {label:?}: {problem}"),
                ));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errors.push(FieldError::invalid(
            FIELD,
            BadValue::Str(domain.into()),
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for label in path.split('.') {
        let problems = flotilla_api::validation::is_dns1123_subdomain(label);
        if !problems.is_empty() {
            for problem in problems {
                errors.push(FieldError::invalid(
                    FIELD,
                    BadValue::Str(path.into()),
                    format!("validating label {label:?}: {problem}"),
                ));
            }
            break;
        }
    }
    if signer.len() > 253 + (253 + 63 + 1) + 1 {
        errors.push(FieldError::too_long(FIELD, Some(253 + 253 + 63 + 2)));
    }
    errors
}

/// `extractCSRStatus`: what `kubectl get csr` prints under CONDITION.
pub fn condition_column(csr: &Value) -> String {
    let has = |kind: &str| conditions(csr).iter().any(|c| c["type"] == kind);
    let mut status = if has(DENIED) {
        "Denied".to_owned()
    } else if has(APPROVED) {
        "Approved".to_owned()
    } else {
        "Pending".to_owned()
    };
    if has(FAILED) {
        status.push_str(",Failed");
    }
    if !certificate_bytes(csr).is_empty() {
        status.push_str(",Issued");
    }
    status
}

/// `IsCertificateRequestApproved`: an Approved condition and no Denied one.
pub fn is_approved(csr: &Value) -> bool {
    let has = |kind: &str| {
        conditions(csr)
            .iter()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    has(APPROVED) && !has(DENIED)
}

/// `HasTrueCondition(csr, Failed)`.
pub fn has_failed(csr: &Value) -> bool {
    conditions(csr)
        .iter()
        .any(|c| c["type"] == FAILED && c["status"] == "True")
}

#[cfg(test)]
mod tests;
